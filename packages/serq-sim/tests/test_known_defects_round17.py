"""Known defects, round 17 (serq-sim): a hold that outgrows its pool, and a run that would never end.

A hold that fits at admission and whose body then grows beyond the pool's capacity (a conversation whose
context outgrew the KV pool, examples/multi-turn/replica.sq under a small pool) preempts itself, is admitted
again, grows to the same position and preempts itself again: language.txt §3 keeps that livelock, and the
`stuck` count names it ("the report now names the livelock"). Under `horizon inf` with `arrivals N` such a run
never ended: there the hold is a run-time error at its first such preemption, naming the pool, the units and
the cap (docs/language.md, "A hold that outgrows its pool"). (From 8066ccce the hold was rejected when it joined
the queue again, whatever the horizon, which §3 does not say; these cases pinned that rejection.)"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

LIVELOCK = "preempted itself again and again at the same position"
BY_RESERVE = "1 on re-admission after a preemption (its units or reserve, evaluated again, above the capacity)"


def compiled(src: str):
    return serq_frontend.compile(source=src, sets={}, defs={})


def first_line_of_error(prog, monkeypatch, **kw) -> str:
    """The run-time error of ``prog`` on the default tier and the general engine, the same words on both: its
    first line (the place, time, session and message; the source line quoted under it is not compared)."""
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(prog, **kw)
        out.append(str(e.value))
    assert out[0] == out[1]
    return out[1].splitlines()[0]


def no_horizon_message(where: str, units: str, cap: str) -> str:
    return (f"{where}: hold: its growth takes the hold to {units} units of kv, above the pool's capacity {cap}, so "
            "the hold preempted itself and, executed again, would grow into the same preemption for ever; the run "
            "has no horizon (horizon inf) to end it: give the run a horizon (horizon T, or --horizon T), the pool "
            "a larger capacity, the body a cut before the growth, or the hold a reserve of what it will need "
            "(reserve), which rejects it once that is above the capacity")


def pool(report: dict, name: str) -> dict:
    return next(p for p in report["pools"] if p["name"] == name)


# One request on a step engine (budget 8 tokens, cost 1 a step) whose pool kv has 4 blocks of 4 tokens (cap
# 16): its hold takes the prompt, 8 tokens (2 blocks), and must reach 8 + 20 = 28. By hand: it arrives at 100
# (one renewal gap) and is admitted; the prefill of 8 takes the iteration [100, 101]; the decode's tokens take
# one iteration each and reach positions 9 .. 16 over [101, 109] (growing to 3 and 4 blocks on the way); at 109
# the token of position 17 needs 5 blocks, 20 > 16 with no other holder: the grower is its own victim (one
# preemption, the iteration [109, 110] only preempted). Under `horizon inf` that is the run-time error at the
# hold (10:3), at t=109, session 0, naming 20 units and the capacity 16.
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
def test_a_request_that_outgrows_the_pool_with_no_horizon_is_an_error_at_the_hold(monkeypatch):
    msg = first_line_of_error(compiled(ONE_REQUEST), monkeypatch)
    assert msg == no_horizon_message("<source>:10:3: error: at t=109, session 0", "20", "16")


# The same under `horizon 145` (and no arrivals bound): §3 re-executes the hold. By hand it is admitted again
# at 110 (the engine admits after the iteration that only preempted), prefills [110, 111], decodes positions
# 9 .. 16 over [111, 119] and preempts itself at 119 at position 16 again: a cycle of 10. Admissions at 100,
# 110, 120, 130, 140 (5); preemptions at 109, 119, 129, 139 (4), the second at no greater position (16): stuck,
# one session; no rejection, `done` never observed, and the stuck warning names the livelock (20 units, cap 16).
@pytest.mark.timeout(30)
def test_a_request_that_outgrows_the_pool_is_stuck_until_the_horizon_on_both_tiers(monkeypatch):
    src = ONE_REQUEST.replace("run { horizon inf; arrivals 1; seed 1; }", "run { horizon 145; seed 1; }")
    r = same_json(compiled(src), monkeypatch)
    assert (r["end"], r["arrivals"], r["ended"]) == (145, 1, 0)
    kv = pool(r, "kv")
    assert (kv["admissions"], kv["preemptions"], kv["rejections"], kv["stuck"]) == (5, 4, 0, 1)
    assert r["instants"] == {"a": 5, "done": 0}  # (`observe x = now`: samples only, counted)
    [warning] = [n for n in r["notes"] if n.startswith("warning: 1 session stuck")]
    assert ("on kv 1 session preempted itself again and again at the same position, its hold needing more than "
            "the pool's capacity (20 units for the first, capacity 16)") in warning, warning
    assert not any(n.startswith("warning: pool kv rejected") for n in r["notes"])


# The conversation of examples/multi-turn/replica.sq in miniature: each turn's prompt is the whole previous
# sequence plus 3 new tokens, 3 output tokens, recomputed from the prompt after a preemption, on the pool
# above. By hand (budget 8, cost 1), from the arrival at 100: turn 1, prompt 3, prefills over [100, 101] and
# decodes 2 tokens over [101, 103] (position 5), thinks over [103, 104]; turn 2, prompt 9, prefills 8 + 1
# over [104, 106], decodes over [106, 108] (position 11), thinks over [108, 109]; turn 3, prompt 15 (4
# blocks), prefills 8 + 7 over [109, 111], decodes its first token over [111, 112] (position 16); its second
# needs position 17, 5 blocks (20 > 16), its hold alone: it preempts itself at 112. Under `horizon inf` that is
# the run-time error at the hold (15:5), t=112, session 0.
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
def test_a_conversation_that_outgrows_the_pool_with_no_horizon_is_an_error_at_the_hold(monkeypatch):
    msg = first_line_of_error(compiled(CONVERSATION), monkeypatch)
    assert msg == no_horizon_message("<source>:15:5: error: at t=112, session 0", "20", "16")


# The same under `horizon 130`: §3 re-executes turn 3's hold, recomputed from its prompt. By hand it is
# admitted again at 113 (after the iteration [112, 113] that only preempted), prefills 8 + 7 over [113, 115],
# decodes position 16 over [115, 116] and preempts itself at 116: a cycle of 4. Preemptions at 112, 116, 120,
# 124, 128 (5; the second and later at position 16 again: one session stuck); admissions at 100, 104, 109 (the
# three turns), 113, 117, 121, 125, 129 (8); the two responses of turns 1 and 2 (3 and 4: mean 3.5).
@pytest.mark.timeout(30)
def test_a_conversation_that_outgrows_the_pool_is_stuck_until_the_horizon_on_both_tiers(monkeypatch):
    src = CONVERSATION.replace("run { horizon inf; arrivals 1; seed 1; }", "run { horizon 130; seed 1; }")
    r = same_json(compiled(src), monkeypatch)
    assert (r["end"], r["ended"]) == (130, 0)
    kv = pool(r, "kv")
    assert (kv["admissions"], kv["preemptions"], kv["rejections"], kv["stuck"]) == (8, 5, 0, 1)
    resp = r["observes"]["response"]
    assert (resp["count"], resp["mean"]) == (2, 3.5)
    assert any(LIVELOCK in n for n in r["notes"])


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
    assert BY_RESERVE in warning and not any(LIVELOCK in n for n in r["notes"])


# A grower that other holders leave no room for, and that is its own victim (the last admitted), is admitted
# again at once and preempts itself again at the same instant: the guard's run-time error at the hold, on
# both tiers (docs/simulator.md). Session 0 holds 2 of 4 and runs; session 1 holds 2 and grows by 1 (to 3:
# within the cap, but 2 + 3 > 4).
OTHERS_HOLD = """pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session { run d (1); hold m (2) { grow m (serial); run d (1); } }
run { horizon 10; }
"""
REDO = ("hold: preempted and re-executed 10000 times at one instant without simulated time passing (its body "
        "makes the pool preempt it again before any time passes, as a grow beyond what the pool can ever give "
        "does, or one that the other holders leave no room for, where the pool preempts the grower itself)")


def test_a_grower_other_holders_leave_no_room_for_is_still_the_guards_error(monkeypatch):
    msg = first_line_of_error(compiled(OTHERS_HOLD), monkeypatch)
    assert msg == "<source>:4:22: error: at t=1, session 1: " + REDO


# The grow statement beyond the cap (no step stage) under a horizon of 10: at t=1 session 0 is admitted with
# 2 and grows by 3 to 5 > 4, its hold alone: the pool preempts its last holder, the grower itself, and §3
# re-executes the hold at once; it grows again at the same instant, and after 10 000 such re-executions the
# guard stops it: the error at the hold (4:22), t=1, session 0.
GROW_BEYOND = """pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session { run d (1); hold m (2) { grow m (3); run d (1); } observe done = now; }
run { horizon 10; }
"""


def test_a_grow_statement_beyond_the_cap_is_the_guards_error(monkeypatch):
    msg = first_line_of_error(compiled(GROW_BEYOND), monkeypatch)
    assert msg == "<source>:4:22: error: at t=1, session 0: " + REDO


# Under `horizon inf` the same is known at the first preemption (t=1, session 0): the hold's 5 units above the
# capacity 4.
def test_a_grow_statement_beyond_the_cap_with_no_horizon_is_an_error_at_the_hold(monkeypatch):
    msg = first_line_of_error(compiled(GROW_BEYOND.replace("horizon 10;", "horizon inf;")), monkeypatch)
    assert msg == no_horizon_message("<source>:4:22: error: at t=1, session 0", "5", "4").replace("of kv", "of m")


# The reproduction: a conversation of examples/multi-turn/replica.sq (recomputed from its prompt after a
# preemption, no reserve) outgrows a pool of 200 blocks (3200 tokens) under `horizon inf` and one arrival. It
# ran for ever (18 639 preemptions of its one session in 10 s of wall clock); it is the run-time error at the
# conversation's hold (replica.sq:71:5) at its first preemption, t=2.18196: 3216 tokens (201 blocks of 16).
@pytest.mark.timeout(30)
def test_the_replica_example_under_a_small_pool_and_no_horizon_is_an_error(monkeypatch):
    import math
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "multi-turn", "replica.sq")
    program = serq_frontend.compile(path=path, sets={"blocks": 200}, defs={})
    msg = first_line_of_error(program, monkeypatch, horizon=math.inf, arrivals=1, seed=2, warmup=0)
    assert msg.endswith(no_horizon_message("replica.sq:71:5: error: at t=2.18196, session 0", "3216", "3200")), msg
