"""Known defects, round 8 (serq-sim).

The SLO attainment: under an SLO the request metrics have ``attainment``, the fraction of the completed
requests that met every SLO (``good / completed``), beside ``good`` and ``goodput`` (docs/language.md,
docs/sweep.md); a capacity planner's ``--find 'requests.attainment >= 0.9'`` had no figure to name.

A queue by keys is not read when no session waiting in it can fit (``serq_sim.pools.admission.room_floors``,
docs/simulator.md, "No progress"): every join into a full pool scanned every waiting session's keys, so
arrivals the clock cannot resolve into a full pool of ``queue by (waited / 0)`` cost the square of the
sessions waiting before the no-progress guard's check, minutes; now well under a second, in both tiers, with
every result as it was.
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
from serq_sim.pools import admission

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


# arrivals the clock cannot resolve (rate 1e300), each joining the queue of a full pool of one slot whose
# key is NaN or inf for every waiting session (0 / 0 at the join, inf after)
ZENO_KEYS = """pool q { cap 1; queue by (waited / 0); }
stage s : delay;
workload { arrive poisson(1e300); }
session { hold q (1) { run s (1); } }
run { horizon 10; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_arrivals_into_a_full_keyed_pool_meet_the_guard_at_once(tier, monkeypatch):
    import time

    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=ZENO_KEYS)
    t = time.process_time()
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    # the guard's words, at its check of 20 000 events (docs/simulator.md, "No progress"); it came after some
    # 2 x 10^8 key evaluations (72 s of CPU), now after none: far under the 10 s allowed here
    assert "no progress: more than 10000 arrivals in" in str(e.value) and "arrive poisson" in str(e.value)
    assert time.process_time() - t < 10


def test_the_room_floor_of_each_pool_by_hand():
    def floors(src):
        return admission.room_floors(serq_frontend.compile(source=src))

    assert floors(ZENO_KEYS) == [1.0]
    two = ZENO_KEYS.replace("hold q (1) { run s (1); }",
                            "branch (serial % 2 == 0) { hold q (2.5) { run s (1); } } hold q (0.5) { run s (1); }")
    assert floors(two) == [0.5]  # the least of the holds that wait there
    # units that read state, a reserve that does, or a hold of no room: nothing known
    assert floors(two.replace("hold q (0.5)", "hold q (serial)")) == [0.0]
    assert floors(two.replace("hold q (0.5)", "hold q (1) reserve (serial)")) == [0.0]
    assert floors(two.replace("hold q (0.5)", "hold q (0)")) == [0.0]
    # a FIFO queue scans nothing: no floor
    assert floors(ZENO_KEYS.replace("queue by (waited / 0);", "")) == [0.0]


# a key that fails on a session's own index: read at each join into the full pool, the error comes at the
# join of session 2 (t = 3), the pool still held by session 0 until t = 4
FAILING_KEY = """pool r[2] { cap 1; }
pool q { cap 1; queue by (used(r[serial])); }
stage s : delay;
workload { arrive renewal(1); }
session { hold q (1) { run s (3); } }
run { horizon 10; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_key_that_can_fail_is_read_at_every_attempt_as_before(tier, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=FAILING_KEY)
    assert admission.room_floors(prog) == [0.0, 0.0]  # (its error would otherwise come at t = 4)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    assert "error: at t=3, session 2: pool r: index 2 out of range (the family has 2)" in str(e.value)


# priorities drawn at the join into a pool of two slots, served by key with waited breaking nothing: the
# queue is read at every attempt, and is full most of the time
PRIORITIES = """pool q { cap 2; queue by (prio, -waited); }
stage s : fifo(3);
workload { arrive poisson(2.2); }
session {
  set prio = ~uniform(0, 1) < 0.3 ? 0 : 1;
  set t0 = now;
  hold q (1) { run s (~exp(1)); }
  observe response = now - t0;
  branch (prio == 0) { observe urgent = now - t0; }
}
run { horizon 2000; warmup 100; seed 3; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_not_reading_the_keys_of_a_full_pool_changes_no_result(tier, monkeypatch):
    import serq_report

    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=PRIORITIES)
    assert admission.room_floors(prog) == [1.0]
    now = serq_report.render(serq_sim.run(prog), "json")
    # every attempt reads the keys (the floor unknown): the same report, byte for byte
    monkeypatch.setattr(admission, "room_floors", lambda program: [0.0] * len(program.pools))
    assert serq_report.render(serq_sim.run(prog), "json") == now
    assert '"urgent"' in now
