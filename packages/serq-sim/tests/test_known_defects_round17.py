"""Known defects, round 17 (serq-sim): a hold that outgrows its pool is rejected, not run again for ever.

A hold that fits at admission and whose body then grows beyond the pool's capacity (a conversation whose
context outgrew the KV pool, examples/multi-turn/replica.sq under a small pool) preempted itself, was
admitted again, grew to the same position and preempted itself again: under `horizon inf` with `arrivals N`
the run never ended. The grower is still preempted (language.txt §3), and its hold is rejected when it joins
the queue again, as a hold that can never fit is (§3: "is rejected: the session ends"; docs/language.md, "A
hold that outgrows its pool")."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_error, same_json

pytestmark = pytest.mark.timeout(60)

OWN_GROWTH = "1 on re-admission after its own growth beyond the capacity preempted it"
BY_RESERVE = "1 on re-admission after a preemption (its units or reserve, evaluated again, above the capacity)"


def compiled(src: str):
    return serq_frontend.compile(source=src, sets={}, defs={})


def pool(report: dict, name: str) -> dict:
    return next(p for p in report["pools"] if p["name"] == name)


# One request on a step engine (budget 8 tokens, cost 1 a step) whose pool kv has 4 blocks of 4 tokens (cap
# 16): its hold takes the prompt, 8 tokens (2 blocks), and must reach 8 + 20 = 28. By hand: it arrives at 100
# (one renewal gap) and is admitted; the prefill of 8 takes the iteration [100, 101]; the decode's tokens take
# one iteration each and reach positions 9 .. 16 over [101, 109] (growing to 3 and 4 blocks on the way); at 109
# the token of position 17 needs 5 blocks, 20 > 16 with no other holder: the grower is its own victim (one
# preemption), and its hold, joining the queue again at 109, is rejected there. So the run ends at 109 with one
# admission, one preemption, one rejection and no session stuck; the body's `a` is observed once (the
# admission at 100) and `done` never. (Before, the session was admitted again at 110, 119, 128, ... for ever.)
ONE_REQUEST = """pool reqs { cap 4; admit via engine; }
pool kv { cap 16; block 4; preempt lifo; }
stage engine : step {
  budget 8;
  cost 1;
  memory kv;
}
workload { arrive renewal(100); }
session {
  hold reqs (1), kv (8) {
    observe a = now;
    prefill on engine (8) growing kv;
    decode on engine (20) growing kv;
  }
  observe done = now;
}
run { horizon inf; arrivals 1; seed 1; }
"""


@pytest.mark.timeout(30)
def test_a_request_that_outgrows_the_pool_ends_on_both_tiers(monkeypatch):
    r = same_json(compiled(ONE_REQUEST), monkeypatch)
    assert (r["end"], r["arrivals"], r["ended"]) == (109, 1, 1)
    kv = pool(r, "kv")
    assert (kv["admissions"], kv["preemptions"], kv["rejections"], kv["stuck"]) == (1, 1, 1, 0)
    assert r["instants"] == {"a": 1, "done": 0}  # (`observe x = now`: samples only, counted)
    [warning] = [n for n in r["notes"] if n.startswith("warning: pool kv rejected")]
    assert warning.startswith("warning: pool kv rejected 1 hold(s) that can never fit its capacity 16 (50 % of "
                              "its 2 rejections and admissions after the warm-up: 1 rejected, 1 admitted;")
    assert OWN_GROWTH in warning and BY_RESERVE not in warning


# The conversation of examples/multi-turn/replica.sq in miniature: each turn's prompt is the whole previous
# sequence plus 3 new tokens, 3 output tokens, recomputed from the prompt after a preemption, on the pool
# above. By hand (budget 8, cost 1), from the arrival at 100: turn 1, prompt 3, prefills over [100, 101] and
# decodes 2 tokens over [101, 103] (position 5), thinks over [103, 104]; turn 2, prompt 9, prefills 8 + 1
# over [104, 106], decodes over [106, 108] (position 11), thinks over [108, 109]; turn 3, prompt 15 (4
# blocks), prefills 8 + 7 over [109, 111], decodes its first token over [111, 112] (position 16); its second
# needs position 17, 5 blocks: preempted at 112 and rejected as its hold joins the queue again. Two responses
# (3 and 4), three admissions, one preemption, one rejection.
CONVERSATION = """pool reqs { cap 4; admit via engine; }
pool kv { cap 16; block 4; preempt lifo; }
stage engine : step {
  budget 8;
  cost 1;
  memory kv;
}
stage user : delay;
workload { arrive renewal(100); }
session {
  set K = 0;
  loop {
    set prompt = K + 3;
    set t0 = now;
    hold reqs (1), kv (prompt) {
      prefill on engine (prompt) growing kv;
      decode on engine (2) growing kv;
    }
    observe response = now - t0;
    set K = prompt + 3;
    run user (1);
  }
}
run { horizon inf; arrivals 1; seed 1; }
"""


@pytest.mark.timeout(30)
def test_a_conversation_that_outgrows_the_pool_ends_on_both_tiers(monkeypatch):
    r = same_json(compiled(CONVERSATION), monkeypatch)
    assert (r["end"], r["ended"]) == (112, 1)
    kv = pool(r, "kv")
    assert (kv["admissions"], kv["preemptions"], kv["rejections"], kv["stuck"]) == (3, 1, 1, 0)
    resp = r["observes"]["response"]
    assert (resp["count"], resp["mean"]) == (2, 3.5)
    assert any(OWN_GROWTH in n for n in r["notes"])


# The same conversation through lib/vllm.sq's request (o = 3, prefix caching): after the preemption its
# `reserve (known)` (the prompt and the kept outputs, 16 + 1 = 17 tokens, 5 blocks) is above the cap, so the
# hold is rejected by its reserve as before, at the same instant, and the warning keeps the words of that
# rejection. By hand: turn 1 at 100, prompt 3, prefills [100, 101], decodes 2 [101, 103] (response 3) and
# caches its computed 5 tokens as 1 block (4); turn 2 at 104, prompt 9, hits those 4, prefills 5 [104, 105],
# decodes [105, 107] (response 3), caches 8 of 11; turn 3 at 108, prompt 15, hits 8 (reusable(15) = 12),
# prefills 7 [108, 109], decodes position 16 [109, 110]; at 110 position 17 preempts it (computed 16), and the
# re-executed hold, reserving known = 17, is rejected. Hits 0, 4, 8.
VLLM = """use "vllm.sq";

pool reqs { cap 4; admit via engine; }
pool kv { cap 16; block 4; evict lru; preempt lifo; }
stage engine : step {
  budget 8;
  cost 1;
  memory kv;
}
stage user : delay;
workload { arrive renewal(100); }
session {
  set K = 0;
  loop {
    set prompt = K + 3;
    set o = 3;
    set t0 = now;
    vllm_request(reqs, kv, engine, prompt, o, t0);
    set K = prompt + o;
    run user (1);
  }
}
run { horizon inf; arrivals 1; seed 1; }
"""


@pytest.mark.timeout(30)
def test_a_vllm_request_is_rejected_by_its_reserve_as_before(monkeypatch):
    r = same_json(compiled(VLLM), monkeypatch)
    kv = pool(r, "kv")
    assert (r["end"], kv["admissions"], kv["preemptions"], kv["rejections"], kv["stuck"]) == (110, 3, 1, 1, 0)
    assert (r["observes"]["response"]["count"], r["observes"]["response"]["mean"]) == (2, 3)
    assert (r["observes"]["hit"]["count"], r["observes"]["hit"]["mean"]) == (3, 4)
    [warning] = [n for n in r["notes"] if n.startswith("warning: pool kv rejected")]
    assert BY_RESERVE in warning and OWN_GROWTH not in warning


# A grower that other holders leave no room for, and that is its own victim (the last admitted), is admitted
# again at once and preempts itself again at the same instant: that is still the guard's run-time error at
# the hold, on both tiers (docs/simulator.md), with words that no longer call it a grow beyond what the pool
# can ever give (that one is rejected now). Session 0 holds 2 of 4 and runs; session 1 holds 2 and grows by 1
# (to 3: within the cap, but 2 + 3 > 4).
OTHERS_HOLD = """pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session { run d (1); hold m (2) { grow m (serial); run d (1); } }
run { horizon 10; }
"""


def test_a_grower_other_holders_leave_no_room_for_is_still_the_guards_error(monkeypatch):
    msg = same_error(compiled(OTHERS_HOLD), monkeypatch)
    assert msg == ("<source>:4:22: error: at t=1, session 1: hold: preempted and re-executed 10000 times at one "
                   "instant without simulated time passing (its body makes the pool preempt it again before any "
                   "time passes, as a grow that the other holders leave no room for does where the pool preempts "
                   "the grower itself)")


# The grow statement beyond the cap (no step stage): the pool preempts its last holder, the grower itself,
# and its hold is rejected as it joins the queue again, at the same instant (it was the guard's error after
# 10 000 re-executions at one instant).
def test_a_grow_statement_beyond_the_cap_is_rejected(monkeypatch):
    src = """pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session { run d (1); hold m (2) { grow m (3); run d (1); } observe done = now; }
run { horizon 10; }
"""
    r = same_json(compiled(src), monkeypatch)
    m = pool(r, "m")
    # session 0 grows to 5 > 4 alone: preempted, rejected at 1; session 1 then the same
    assert (m["admissions"], m["preemptions"], m["rejections"]) == (2, 2, 2)
    assert r["instants"] == {"done": 0}


# The reproduction: a conversation of examples/multi-turn/replica.sq (recomputed from its prompt after a
# preemption, no reserve) outgrows a pool of 200 blocks under `horizon inf` and one arrival. It ran for ever
# (18 639 preemptions of its one session in 10 s of wall clock); it ends now, that session rejected once it
# preempted itself to grow past the cap, on both tiers.
@pytest.mark.timeout(30)
def test_the_replica_example_under_a_small_pool_ends(monkeypatch):
    import math
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "multi-turn", "replica.sq")
    program = serq_frontend.compile(path=path, sets={"blocks": 200}, defs={})
    r = same_json(program, monkeypatch, horizon=math.inf, arrivals=1, seed=2, warmup=0)
    kv = pool(r, "kv")
    assert (r["arrivals"], r["ended"], kv["preemptions"], kv["rejections"], kv["stuck"]) == (1, 1, 1, 1, 0)
    assert any(OWN_GROWTH in n for n in r["notes"])
