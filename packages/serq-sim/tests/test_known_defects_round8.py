"""Known defects, round 8 (serq-sim).

The SLO attainment: under an SLO the request metrics have ``attainment``, the fraction of the completed
requests that met every SLO (``good / completed``), beside ``good`` and ``goodput`` (docs/language.md,
docs/sweep.md); a capacity planner's ``--find 'requests.attainment >= 0.9'`` had no figure to name.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]

# sessions arrive at 1, 2, …, 6; the k-th (from 0) waits k to its first token and 1 more to its last: TTFT
# 0, 1, 2, 3, 4, 5. The warm-up 1.5 leaves out the first (sent at 1): completed 5, of TTFT 1 … 5
STEPS = """stage a : delay;
workload { arrive renewal(1); }
session {
  set t0 = now; run a (serial); set f = now; run a (1);
  record req { sent = t0; first_token = f; last_token = now; output = 2; }
}
run { horizon 100; warmup 1.5; seed 1; arrivals 6; }
"""


@pytest.fixture(scope="module")
def steps():
    return serq_sim.run(serq_frontend.compile(source=STEPS))


def test_attainment_is_the_fraction_of_the_completed_requests_within_the_slo(steps):
    assert steps.record_table("req").column("first_token") == [3.0, 5.0, 7.0, 9.0, 11.0]  # (the case)
    m = steps.result.requests
    assert m.completed == 5 and m.attainment is None  # no SLO: no attainment (null in JSON), as goodput
    steps.set_slo({"ttft": 2.5})  # TTFT 1 and 2 of the five: 2 / 5 (the one left out, TTFT 0, is not counted)
    m = steps.result.requests
    assert (m.good, m.attainment) == (2, 2 / 5)
    assert m.goodput == 2 / m.duration
    steps.set_slo({"ttft": 10, "e2el": 4})  # E2E latency 2 … 6: 2, 3, 4 meet it
    assert steps.result.requests.attainment == 3 / 5
    steps.set_slo({"ttft": 0.5})  # none
    assert steps.result.requests.attainment == 0.0


def test_attainment_of_no_completed_request_is_nan():
    # ended at 3: the session sent at 2 is in flight (its last token at 4), the one at 1 in the warm-up
    empty = serq_sim.run(serq_frontend.compile(source=STEPS.replace("horizon 100", "horizon 3")
                                               .replace(" arrivals 6;", "")))
    empty.set_slo({"ttft": 1})
    m = empty.result.requests
    assert m.completed == 0 and m.good == 0 and math.isnan(m.attainment)


def test_the_json_report_gives_the_attainment_of_its_records(tmp_path):
    # a vLLM engine's run: the fraction counted by hand from the per-request records, vLLM's definitions
    # (TTFT first_token - sent; TPOT (last_token - first_token) / (output - 1), 0 for a single token)
    recs = tmp_path / "r.csv"
    r = subprocess.run([SERQ, "run", str(ROOT / "examples/multi-turn/vllm_single_turn.sq"), "--arrivals", "200",
                        "--warmup", "0", "--slo", "ttft=0.3,tpot=0.03", "--json", "--records", str(recs)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["requests"]
    with open(recs, newline="") as f:
        rows = list(csv.DictReader(f))
    good = 0
    for row in rows:
        s, f_, la, o = (float(row[c]) for c in ("sent", "first_token", "last_token", "output"))
        good += f_ - s <= 0.3 and ((la - f_) / (o - 1) if o > 1 else 0.0) <= 0.03
    assert m["completed"] == len(rows) == 200
    assert 0 < good < 200  # (the case: some meet the SLO and some do not)
    assert (m["good"], m["attainment"]) == (good, good / 200)
    keys = list(m)
    assert keys[keys.index("goodput") + 1] == "attainment"  # beside the other figures of the SLO
