"""Common random numbers across the arms of a sweep and a comparison, read from the records, and the paired CI of
``serq compare`` recomputed from the per-seed values.

The program is examples/multi-turn/vllm.sq (Poisson sessions of several turns, each turn's new and output
tokens drawn, a tool call of a drawn length between turns) at one session a second; the arms differ only in the
engine's token budget B. docs/language.md ("Common random numbers") draws a session block's numbers from a
stream per (seed, session, turn, place), so under one seed both arms must see, session by session and turn by
turn: the same arrival (the first turn's ``sent``), the same prompt and output lengths, and the same think time
(``sent`` of turn k + 1 less ``last_token`` of turn k: the tool call, the only thing between them), while the
engine serves them at other times. The runs, and so their records, must not depend on where or in which order
they run: the order of the arms, of the seeds, the local pool's worker count, Dask, or a sweep stopped by Ctrl-C
(SIGINT) and resumed.
"""

from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from sweepstop import SERQ, needs_proc, stopped_after
from tquantile import t975 as t_quantile

pytestmark = pytest.mark.timeout(200)

ROOT = Path(__file__).resolve().parents[3]
VLLM = str(ROOT / "examples/multi-turn/vllm.sq")
RUN = ["--set", "Lambda=1", "--horizon", "60", "--warmup", "10", "--no-progress"]
#: Student t, 0.975 quantiles by degrees of freedom (scipy.stats.t.ppf(0.975, df) written out)
T975 = {1: 12.706204736174694, 2: 4.302652729749462, 3: 3.1824463052837078, 4: 2.7764451051977934,
        5: 2.5705818356363146, 6: 2.4469118511449786, 7: 2.364624251592784, 8: 2.306004135204166}


def _sweep(tmp, name, budgets, seeds, *engine, fmt="csv", tier=""):
    out, recs = tmp / f"{name}.{fmt}", tmp / f"{name}.records.{fmt}"
    r = subprocess.run([SERQ, "sweep", VLLM, "--set", f"B={budgets}", "--seeds", seeds, *RUN, *engine,
                        "-o", str(out), "--records", str(recs)], capture_output=True, text=True,
                       env={**os.environ, "SERQ_SIM_TIER": tier})
    assert r.returncode == 0, r.stderr
    return out, recs


def _runs(recs: Path) -> dict:
    """The records of each run, by (B, seed), without the column `point` (an arm's place in the sweep)."""
    frame = pd.read_csv(recs)
    return {k: g.drop(columns="point").reset_index(drop=True) for k, g in frame.groupby(["B", "seed"])}


def test_the_arms_see_the_same_sessions_in_any_order_on_any_engine(tmp_path):
    _, base = _sweep(tmp_path, "base", "512,2048", "1..3", "--workers", "0")
    _, flipped = _sweep(tmp_path, "flipped", "2048,512", "3,1,2", "--workers", "2")
    _, dask = _sweep(tmp_path, "dask", "2048,512", "2,3,1", "--dask", "local", "--workers", "2")
    _, general = _sweep(tmp_path, "general", "512,2048", "1..3", "--workers", "2", tier="general")
    runs = _runs(base)
    assert len(runs) == 6
    assert general.read_bytes() == base.read_bytes()  # the general planning path: the same records, byte for byte
    for other in (flipped, dask):  # each run's records, whatever the arms' and seeds' order and the engine
        got = _runs(other)
        assert got.keys() == runs.keys()
        for key, frame in runs.items():
            pd.testing.assert_frame_equal(got[key], frame, check_exact=True)
    thinks = 0
    for seed in (1, 2, 3):
        a = runs[(512, seed)].set_index(["session", "turn"])
        b = runs[(2048, seed)].set_index(["session", "turn"])
        both = a.index.intersection(b.index)
        assert len(both) >= 0.95 * max(len(a), len(b)) > 120
        for c in ("prompt", "output"):
            assert (a.loc[both, c] == b.loc[both, c]).all(), (seed, c)
        first = [k for k in both if k[1] == 1]
        assert (a.loc[first, "sent"] == b.loc[first, "sent"]).all()  # the arrivals
        assert (a.loc[both, "first_token"] != b.loc[both, "first_token"]).any()  # served otherwise
        # the tool call between turn k and k + 1, recorded in both arms: last_token + think = next sent, each a
        # double, so the differences agree to the rounding of times of some 100 s (1e-14 s a step)
        for s, k in both:
            if (s, k + 1) in both:
                ta = a.loc[(s, k + 1), "sent"] - a.loc[(s, k), "last_token"]
                tb = b.loc[(s, k + 1), "sent"] - b.loc[(s, k), "last_token"]
                assert ta == pytest.approx(tb, abs=1e-9), (seed, s, k)
                thinks += 1
    assert thinks > 200


@needs_proc
@pytest.mark.parametrize("engine, fmt", [(("--workers", "0"), "csv"), (("--workers", "2"), "parquet"),
                                         (("--dask", "local", "--workers", "2"), "csv")])
def test_a_sweep_stopped_by_ctrl_c_and_resumed_writes_the_whole_sweep_s_bytes(tmp_path, engine, fmt):
    whole = _sweep(tmp_path, "whole", "512,2048", "1..2", "--workers", "0", fmt=fmt)
    out, recs = tmp_path / f"r.{fmt}", tmp_path / f"r.records.{fmt}"
    args = ["sweep", VLLM, "--set", "B=512,2048", "--seeds", "1..2", *RUN, *engine, "-o", str(out),
            "--records", str(recs)]
    proc = stopped_after(1, args, Path(f"{out}.journal"))
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    # what it holds, of how many: "1 run(s) of 2 point(s) x 2 seed(s)" read as the sweep's size
    assert "1 of 4 run(s) of 2 point(s) x 2 seed(s) (1 run now, 0 resumed, then stopped): " in err.decode(), err
    r = subprocess.run([SERQ, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "4 run(s) of 2 point(s) x 2 seed(s) (3 run now, 1 resumed)" in r.stderr, r.stderr
    for got, want in ((out, whole[0]), (recs, whole[1]),
                      (tmp_path / f"r.points.{fmt}", tmp_path / f"whole.points.{fmt}")):
        assert got.read_bytes() == want.read_bytes(), got.name
    assert not Path(f"{out}.journal").exists() and not Path(f"{recs}.journal").exists()


def _cells(v):
    if v in ("True", "False"):
        return float(v == "True")
    try:
        x = float(v)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _mean(v):
    return math.fsum(v) / len(v)


def _var(v):
    m = _mean(v)
    return math.fsum((x - m) ** 2 for x in v) / (len(v) - 1)


def test_serq_compare_s_paired_ci_is_the_per_seed_values_by_hand(tmp_path):
    # the comparison's runs are the sweep's (the same IR, seeds and bounds: the same keys); from the sweep's table,
    # per figure, the pairs (a_s, b_s) of the seeds where both are finite, d_s = b_s - a_s, and
    #   diff = mean(d); ci_paired = t(n - 1) sd(d) / sqrt(n);
    #   ci_unpaired = t(floor(df)) sqrt(va + vb), va = var(a) / n, vb = var(b) / n,
    #                 df = (va + vb)^2 / ((va^2 + vb^2) / (n - 1))  (Welch-Satterthwaite, as it is);
    #   variance_reduction = 1 - var(d) / (var(a) + var(b))
    # with var the sample variance (n - 1) and t the 0.975 quantile of the table above
    table, _ = _sweep(tmp_path, "t", "512,2048", "1..4", "--workers", "0")
    out = tmp_path / "c.csv"
    r = subprocess.run([SERQ, "compare", VLLM, "--set", "B=512,2048", "--seeds", "1..4", *RUN, "--workers", "2",
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(table.read_text().splitlines()))
    keys = {row["key"] for row in rows}
    compared = list(csv.DictReader(out.read_text().splitlines()))
    assert len(compared) > 80
    reductions = []
    for c in compared:
        f = c["figure"]
        a = [_cells(row[f]) for row in rows if row["B"] == "512"]
        b = [_cells(row[f]) for row in rows if row["B"] == "2048"]
        pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
        n = len(pairs)
        assert (c["arm"], c["base"], int(c["n"])) == ("B=2048", "B=512", n), f
        if n < 2:
            continue
        xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
        d = [y - x for x, y in pairs]
        want = {"a": _mean(xs), "b": _mean(ys), "diff": _mean(d), "ci_paired": T975[n - 1] * math.sqrt(_var(d) / n)}
        va, vb = _var(xs) / n, _var(ys) / n
        if va + vb > 0:
            df = (va + vb) ** 2 / ((va * va + vb * vb) / (n - 1))
            want["ci_unpaired"] = t_quantile(df) * math.sqrt(va + vb)  # (Welch's df as it is)
            want["variance_reduction"] = 1 - _var(d) / (_var(xs) + _var(ys))
            reductions.append(want["variance_reduction"])
        for k, w in want.items():
            # sums of four values rounded once here and there: within rounding of the values' magnitude
            scale = max(abs(v) for v in xs + ys + [w]) or 1.0
            assert float(c[k]) == pytest.approx(w, rel=1e-9, abs=1e-12 * scale), (f, k, c[k], w)
    # the engine's budget changes when requests are served, not which: pairing removes most of the seeds' noise
    assert sorted(reductions)[len(reductions) // 2] > 0.8
    assert len(keys) == 8
