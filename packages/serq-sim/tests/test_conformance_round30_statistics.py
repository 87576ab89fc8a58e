"""Conformance of language.txt §3, Statistics, by hand: "observe x = e records a sample after warm-up …; the
report gives … An observe whose expression is a test (its outermost operator a comparison, &&, || or !)
and that was 0 over 40 or more samples gets a line under the table … A test that always held is not
noted", with docs/simulator.md's figures: "count, mean, 95 % batch-means half-width over 20 batches (t =
2.093; 20 batches of ⌊n / 20⌋ samples in the order taken, so the last n mod 20 samples are in the mean and
the quantiles but in no batch …), cv² (sample variance / mean²), the quantiles p50, p90, p95, p99 (the
⌈q n⌉-th smallest, nearest rank …); CI and quantiles NaN below 40 samples".

Each program runs on the tier serQ picks and on the general engine (conform.run: the JSON reports and every
observe's samples the same bytes).
"""

from __future__ import annotations

import math

import pytest
from conform import report_json, run

# n sessions at 0, each sampling after 1 s, in serial order: x = serial + 1 (1 … n), a test that never
# holds and one that fails only for serials 0 and 1.
SAMPLES = """
stage d : delay;
workload { arrive batch(N); }
session {
  run d (1);
  observe x = serial + 1;
  observe hit = serial > 100;
  observe y = serial > 1;
}
run { horizon 10; }
"""

# 20 batches of 2: means 1.5, 3.5, …, 39.5, spaced 2: their sample variance 4 · 20 · 21 / 12 = 140
X_CI = 2.093 * math.sqrt(140 / 20)
# y's batches: (0, 0) then nineteen of (1, 1): means 0 and nineteen 1s, mean 0.95, sample variance
# (0.95² + 19 · 0.05²) / 19 = 0.05
Y_CI = 2.093 * math.sqrt(0.05 / 20)


@pytest.mark.parametrize("n, x, y, noted", [
    # 39 samples: no CI and no quantiles; mean 20; cv² = (39 · 40 / 12) / 20² (1 … 39's sample variance
    # 130); y 37 ones: mean 37/39
    (39, {"count": 39, "mean": 20.0, "ci": None, "cv2": 130 / 400, "p50": None, "p99": None},
     {"mean": 37 / 39, "ci": None}, False),
    # 40: x's mean 20.5, sample variance 40 · 41 / 12; p50 the 20th smallest, p90 the 36th, p95 the 38th,
    # p99 the ⌈39.6⌉ = 40th; y: mean 0.95, sample variance 40/39 · 0.95 · 0.05
    (40, {"count": 40, "mean": 20.5, "ci": X_CI, "cv2": (40 * 41 / 12) / 20.5 ** 2, "p50": 20.0, "p90": 36.0,
          "p95": 38.0, "p99": 40.0},
     {"mean": 0.95, "ci": Y_CI, "cv2": 40 / 39 * 0.95 * 0.05 / 0.95 ** 2}, True),
    # 45: batches of ⌊45/20⌋ = 2 take the first 40 (the same CIs); the mean and quantiles take all 45:
    # mean 23, p50 the 23rd, p90 the ⌈40.5⌉ = 41st, p95 the ⌈42.75⌉ = 43rd, p99 the ⌈44.55⌉ = 45th
    (45, {"count": 45, "mean": 23.0, "ci": X_CI, "p50": 23.0, "p90": 41.0, "p95": 43.0, "p99": 45.0},
     {"mean": 43 / 45, "ci": Y_CI}, True),
])
def test_an_observes_figures_by_hand(monkeypatch, n, x, y, noted):
    r, _o = run(SAMPLES.replace("N)", f"{n})"), monkeypatch)
    j = report_json(r)
    obs = j["observes"]
    for name, want in (("x", x), ("y", y)):
        for k, v in want.items():
            got = obs[name][k]
            assert got == v if v is None else math.isclose(got, v, rel_tol=1e-12), (name, k, got, v)
    # the test that never held: mean 0, its cv² undefined (0/0), its CI 0 from 40 samples on
    assert (obs["hit"]["mean"], obs["hit"]["cv2"], obs["hit"]["ci"]) == (0.0, None, 0.0 if n >= 40 else None)
    notes = [m for m in j["notes"] if m.startswith("note: observe")]
    assert notes == ([f"note: observe hit is constant 0 over {n} samples"] if noted else [])
