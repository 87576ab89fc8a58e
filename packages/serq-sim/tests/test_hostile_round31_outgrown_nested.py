"""A hold that outgrows its pool beside what its own session keeps there: stuck under a horizon, and the
run-time error at its first such preemption under `horizon inf`.

A session that holds the pool in an outer hold too (or by a lease) keeps those units through the
preemption, which releases its holds from the innermost one on the pool: a hold of 10 inside a hold of 60
on a pool of 100, grown to 50, has units below the cap, and is admitted again beside the 60 and preempted
at 50 again, for ever (language.txt §3 re-executes it; under `horizon inf` the run never ended: 193 293
preemptions in 10 s). The units the session keeps count with the hold's (pools.growth.kept_through_preemption),
on the same pool only: under `horizon inf` such a hold is the error at the hold (docs/language.md, "A hold that
outgrows its pool"), naming both; a session that another session's leaving would make room for is not."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from tiers import same_json

pytestmark = pytest.mark.timeout(60)


def _pool(report: dict) -> dict:
    (pool,) = [p for p in report["pools"] if p["name"] == "kv"]
    return pool


def _error(program: str, monkeypatch) -> str:
    """The first line of the run-time error of ``program``, the same on both tiers."""
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(serq_frontend.compile(source=program), seed=1)
        out.append(str(e.value))
    assert out[0] == out[1]
    return out[0].splitlines()[0]


def _message(where: str, units: str, kept: str, total: str) -> str:
    return (f"{where}: hold: its growth takes the hold to {units} units of kv, beside the {kept} the session keeps "
            f"there through the preemption (an outer hold, a lease), {total} in all, above the pool's capacity 100, "
            "so the hold preempted itself and, executed again, would grow into the same preemption for ever; the "
            "run has no horizon (horizon inf) to end it: give the run a horizon (horizon T, or --horizon T), the "
            "pool a larger capacity, the body a cut before the growth, or the hold a reserve of what it will need "
            "(reserve), which rejects it once that is above the capacity")


# By hand: the outer hold takes 60 and the inner 10 at 0 (70 of 100); each pass of the loop waits 1 and
# grows the inner hold by a block of 10: 80 at 1, 90 at 2, 100 at 3, and at 4 the growth to 50 would make 110,
# with no other holder: the session is its own victim, the inner hold is released (the outer kept), and with
# no horizon that is the error at the inner hold (4:26), t=4, session 0: 50 units beside the 60 kept, 110.
NESTED = """pool kv { cap 100; block 10; preempt lifo; }
stage d : delay;
workload { arrive batch(1); }
session { hold kv (60) { hold kv (10) { loop { run d (1); grow kv (10); } } } }
run { horizon inf; }
"""


@pytest.mark.parametrize("program", [
    NESTED,
    # the inner hold takes another pool with kv: kv is what grows and what the preemption releases
    NESTED.replace("pool kv { cap 100; block 10; preempt lifo; }",
                   "pool kv { cap 100; block 10; preempt lifo; }\npool other { cap 5; }")
          .replace("hold kv (10)", "hold other (1), kv (10)"),
], ids=["nested", "inner-of-two-pools"])
def test_a_hold_inside_the_sessions_own_hold_that_outgrows_the_pool(program, monkeypatch):
    line = 5 if "pool other" in program else 4
    assert _error(program, monkeypatch) == _message(f"<source>:{line}:26: error: at t=4, session 0", "50", "60", "110")


# The same under `horizon 10`: language.txt §3 re-executes the inner hold. By hand it is admitted again at 4
# (10 beside the outer 60: 70), grows to 80 at 5, 90 at 6, 100 at 7 and preempts itself at 8 as at 4. A grow
# statement advances no position, so both preemptions find position 0 and the second is stuck (one session);
# the next would be at 12, past the horizon. Admissions: the outer hold at 0, the inner at 0, 4 and 8 (4); two
# preemptions; no rejection. Units in use: 70, 80, 90, 100 over [0, 4] and again over [4, 8], then 70, 80 over
# [8, 10]: (2 x 340 + 150) / 10 = 83; the stuck warning names the livelock (110 units, capacity 100).
def test_a_hold_inside_the_sessions_own_hold_is_stuck_until_the_horizon(monkeypatch):
    report = same_json(serq_frontend.compile(source=NESTED.replace("horizon inf;", "horizon 10;")), monkeypatch,
                       seed=1)
    assert (report["end"], report["ended"]) == (10.0, 0)
    kv = _pool(report)
    assert (kv["preemptions"], kv["rejections"], kv["admissions"], kv["stuck"]) == (2, 0, 4, 1)
    assert kv["used"] == 83.0
    (note,) = [n for n in report["notes"] if n.startswith("warning: 1 session stuck")]
    assert ("on kv 1 session preempted itself again and again at the same position, its hold needing more than "
            "the pool's capacity (110 units for the first, capacity 100)") in note, note


def test_a_growing_run_inside_the_sessions_own_hold(monkeypatch):
    """The step engine's decode grows the inner hold token by token (block 10, cost 0.01 an iteration, one token
    each): the 40 tokens of [0, 0.4] fill the inner hold to 40, and the 41st needs 50 beside the outer 60, 110:
    with no horizon, the error at the inner hold (4:26) at t=0.4, where it cycled for ever."""
    program = """pool kv { cap 100; block 10; preempt lifo; }
stage e : step { budget 50; cost 0.01; memory kv; }
workload { arrive batch(1); }
session { hold kv (60) { hold kv (10) { decode on e (100) growing kv; } } }
run { horizon inf; }
"""
    assert _error(program, monkeypatch) == _message("<source>:4:26: error: at t=0.4, session 0", "50", "60", "110")


def test_a_session_another_sessions_leaving_makes_room_for_is_not_an_error(monkeypatch):
    """By hand: session 0 holds 40 from 0 to 5.5; session 1 holds 10 and, inside, 10 that it grows by a block
    after each unit of time: 70 of the pool's 100 in use at 1 (with session 0's 40), ..., 100 at 4, and at 5
    its inner hold's growth to 60 would make 110. Session 1, admitted last, is the victim (lifo): its inner
    hold is released, it keeps its outer 10, and 10 + 60 = 70 fits once session 0 leaves, so its hold joins
    the queue again and is admitted at once (50 in use). Its body runs again from 5: the growths at 6 .. 10
    fit (session 0 left at 5.5), and it ends at 10. One preemption, no rejection, both sessions ended."""
    program = """pool kv { cap 100; block 10; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (40) { run d (5.5); } }
  else {
    hold kv (10) {
      hold kv (10) {
        run d (1); grow kv (10); run d (1); grow kv (10); run d (1); grow kv (10);
        run d (1); grow kv (10); run d (1); grow kv (10);
      }
    }
  }
}
run { horizon inf; }
"""
    report = same_json(serq_frontend.compile(source=program), monkeypatch, seed=1)
    kv = _pool(report)
    assert (kv["preemptions"], kv["rejections"], report["ended"], report["end"]) == (1, 0, 2, 10.0), (kv, report)


def test_a_hold_beside_the_sessions_own_lease_that_outgrows_the_pool(monkeypatch):
    """By hand: the first hold takes 60 at 0 and leases it at 1 for ever; the next hold takes 10 at 1 (70 in
    use) and grows a block after each unit of time: 80 at 2, 90 at 3, 100 at 4, and 110 at 5 with the lease
    kept through the preemption: with no horizon, the error at that hold (4:55), t=5."""
    program = """pool kv { cap 100; block 10; preempt lifo; }
stage d : delay;
workload { arrive batch(1); }
session { hold kv (60) { run d (1); } lease kv (inf); hold kv (10) { loop { run d (1); grow kv (10); } } }
run { horizon inf; }
"""
    assert _error(program, monkeypatch) == _message("<source>:4:55: error: at t=5, session 0", "50", "60", "110")


def test_an_outer_holds_reserve_counts_where_the_pool_holds_reserves(monkeypatch):
    """`reserve held`: the outer hold's 10 units and the 50 of its reserve of 60 it has not taken stay through the
    preemption. By hand: 20 units in use at 0 (the outer 10, the inner 10) with 50 reserved, 70 of 100; the inner
    hold grows a block after each unit of time: 80 at 1, 90 at 2, 100 at 3, and at 4 its 50 beside the 60 kept
    make 110: with no horizon, the error at the inner hold (4:39), t=4."""
    program = """pool kv { cap 100; block 10; preempt lifo; reserve held; }
stage d : delay;
workload { arrive batch(1); }
session { hold kv (10) reserve (60) { hold kv (10) { loop { run d (1); grow kv (10); } } } }
run { horizon inf; }
"""
    assert _error(program, monkeypatch) == _message("<source>:4:39: error: at t=4, session 0", "50", "60", "110")
