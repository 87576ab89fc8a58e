"""Known defects, round 26 (serq-sim)."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(120)

# 6. a step stage busy after the warm-up with one iteration no figure counts is said (unfinished-iteration):
# one request of 100 tokens on an engine whose cost reads kv_prefill, the units held on kv (one block)
ENGINE = """pool kv { cap 1e20; block BLOCK; }
stage E : step { budget 64; cost 1 + 0.0000001 * kv_prefill; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (100) { prefill on E (100) growing kv; }
}
run { horizon 100; warmup WARMUP; seed 1; }
"""


def _engine(block: str, warmup: str) -> dict:
    return serq_frontend.compile(source=ENGINE.replace("BLOCK", block).replace("WARMUP", warmup))


def test_an_iteration_past_the_run_planned_before_the_warmup_is_said(monkeypatch):
    # one block of 1e16 units: kv_prefill 1e16, an iteration of 1 + 1e9, planned at t = 0, ending at 1e9 + 1
    r = same_json(_engine("1e16", "10"), monkeypatch)
    engine = r["stages"][0]
    assert (engine["iterations"], engine["utilisation"]) == (0, 1.0)
    said = [(n, c) for n, c in zip(r["notes"], r["codes"]) if c == "unfinished-iteration"]
    assert said == [("warning: step stage E was busy after the warm-up with one iteration that no figure counts: "
                     "planned at t=0, before the warm-up's end (t=10), and still under way at the end of the run "
                     "(t=100); its cost ends it at t=1000000001; the cost reads kv_decode or kv_prefill, the units the "
                     "residents hold on kv (a block is 1e+16 units), not tokens; its iterations (0) and engine "
                     "figures describe no iteration of the run", "unfinished-iteration")]


@pytest.mark.parametrize("block, warmup, iterations", [
    # (planned after the warm-up, at it, and never ended: counted, and said since round 27)
    ("16", "10", 0),  # blocks of 16: seven blocks, iterations of 1 s, done at t = 2, before the warm-up's end
    ("16", "0", 2),  # the same with no warm-up: two iterations counted, both ended
])
def test_no_warning_otherwise(monkeypatch, block, warmup, iterations):
    r = same_json(_engine(block, warmup), monkeypatch)
    assert r["stages"][0]["iterations"] == iterations
    assert "unfinished-iteration" not in r["codes"]


# 7. a request queued at an `admit via` pool with room, behind a head that never fits, waits for ever
# (head-of-line blocking), and is told so again; one behind a head that will fit is not (27b0e1b2's case)
HEAD_OF_LINE = """pool reqs { cap 4; admit via E; }
pool kv { cap 10; }
stage E : step { budget 8; cost 1; }
stage d : delay;
workload { arrive renewal(1); }
session {
  set u = serial == 0 ? 8 : (serial == 1 ? 5 : 1);
  set w = serial == 0 ? WORK : 0;
  hold reqs (1), kv (u) {
    run E prefill (2);
    run d (w);
  }
}
run { horizon 10.5; }
"""


def _forever(r: dict) -> list[str]:
    return [n for n, c in zip(r["notes"], r["codes"]) if c == "waits-for-ever"]


def test_requests_behind_a_head_that_never_fits_wait_for_ever(monkeypatch):
    # session 0 holds 8 of kv's 10 for ever (a run of infinite work); session 1, the head of reqs' queue, needs
    # 5 and never fits; sessions 2 to 9 need 1 each, which the 2 free units have room for, but wait behind it
    r = same_json(serq_frontend.compile(source=HEAD_OF_LINE.replace("WORK", "inf")), monkeypatch)
    assert (r["arrivals"], r["ended"]) == (10, 0)
    assert _forever(r) == [
        "warning: 10 sessions wait for ever at the end of the run (each waits in the queue of reqs behind a head "
        "that waits for ever and so blocks the rest: head-of-line blocking; or for pools that only sessions that "
        "never release them hold: session 0, whose run of infinite work never completes; or in a run of infinite "
        "work of its own, which never completes): 1 at stage d, in a run of infinite work (session 0, in the run at "
        "<source>:11:5); 9 queued at reqs (sessions 1, 2, 3, 4, 5, …)"]


def test_requests_behind_a_head_that_will_fit_do_not(monkeypatch):
    # session 0 releases at t = 1001: the head then fits, and so do the others after it
    r = same_json(serq_frontend.compile(source=HEAD_OF_LINE.replace("WORK", "1000")), monkeypatch)
    assert (r["arrivals"], r["ended"]) == (10, 0)
    assert _forever(r) == []
