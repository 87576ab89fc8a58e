"""A hold that outgrows its pool beside what its own session keeps there is rejected, not run again for ever.

The rule of docs/language.md, "A hold that outgrows its pool", judged the growing hold's own units against
the cap. A session that holds the pool in an outer hold too (or by a lease) keeps those units through the
preemption, which releases its holds from the innermost one on the pool: a hold of 10 inside a hold of 60
on a pool of 100, grown to 50, has units below the cap, and was admitted again beside the 60 and preempted
at 50 again, for ever (under `horizon inf` the run never ended: 193 293 preemptions in 10 s). Now the units
the session keeps count with the hold's (pools.growth.kept_through_preemption), on the same pool only; a
session that another session's leaving would make room for is not rejected."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(60)


def _pool(report: dict) -> dict:
    (pool,) = [p for p in report["pools"] if p["name"] == "kv"]
    return pool


# By hand: the outer hold takes 60 and the inner 10 at 0 (70 of 100); each pass of the loop waits 1 and
# grows the inner hold by a block of 10: 80 at 1, 90 at 2, 100 at 3, and at 4 the growth to 50 would make 110,
# with no other holder: the session is its own victim (one preemption), the inner hold is released (the
# outer kept), and joining the queue again at 4 it is rejected. Units in use 70, 80, 90, 100 over the four
# unit intervals: a mean of 85; two holders (the session's two holds); two admissions.
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
    report = same_json(serq_frontend.compile(source=program), monkeypatch, seed=1)
    assert (report["end"], report["events"], report["ended"]) == (4.0, 4, 1)
    kv = _pool(report)
    assert (kv["preemptions"], kv["rejections"], kv["admissions"], kv["stuck"]) == (1, 1, 2, 0)
    assert (kv["used"], kv["holders"]) == (85.0, 2.0)
    # the warning's words hold for it: the hold alone (50) was below the cap; no other session held the pool
    (note,) = [n for n in report["notes"] if n.startswith("warning: pool kv rejected")]
    assert ("1 on re-admission after its own growth beyond the capacity preempted it (no other session's leaving "
            "could make room for it, so admitted again it would grow into the same preemption for ever)") in note


def test_a_growing_run_inside_the_sessions_own_hold(monkeypatch):
    """The step engine's decode grows the inner hold token by token (block 10): past 40 tokens it needs 50
    beside the outer 60; one preemption and one rejection end the run, where it cycled for ever."""
    program = """pool kv { cap 100; block 10; preempt lifo; }
stage e : step { budget 50; cost 0.01; memory kv; }
workload { arrive batch(1); }
session { hold kv (60) { hold kv (10) { decode on e (100) growing kv; } } }
run { horizon inf; }
"""
    report = same_json(serq_frontend.compile(source=program), monkeypatch, seed=1)
    kv = _pool(report)
    assert (kv["preemptions"], kv["rejections"], report["ended"]) == (1, 1, 1)
    assert report["end"] < 1


def test_a_session_another_sessions_leaving_makes_room_for_is_not_rejected(monkeypatch):
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
    kept through the preemption. One preemption and one rejection at 5; units in use 60, 70, 80, 90, 100 over
    the five unit intervals, a mean of 80."""
    program = """pool kv { cap 100; block 10; preempt lifo; }
stage d : delay;
workload { arrive batch(1); }
session { hold kv (60) { run d (1); } lease kv (inf); hold kv (10) { loop { run d (1); grow kv (10); } } }
run { horizon inf; }
"""
    report = same_json(serq_frontend.compile(source=program), monkeypatch, seed=1)
    kv = _pool(report)
    assert (report["end"], report["ended"]) == (5.0, 1)
    assert (kv["preemptions"], kv["rejections"], kv["used"]) == (1, 1, 80.0)


def test_an_outer_holds_reserve_counts_where_the_pool_holds_reserves(monkeypatch):
    """`reserve held`: the outer hold's 10 units and the 50 of its reserve of 60 it has not taken stay through the
    preemption. By hand: 20 units in use at 0 (the outer 10, the inner 10) with 50 reserved, 70 of 100; the inner
    hold grows a block after each unit of time: 80 at 1, 90 at 2, 100 at 3, and at 4 its 50 beside the 60 kept
    make 110. One preemption and one rejection at 4; units in use 20, 30, 40, 50: a mean of 35."""
    program = """pool kv { cap 100; block 10; preempt lifo; reserve held; }
stage d : delay;
workload { arrive batch(1); }
session { hold kv (10) reserve (60) { hold kv (10) { loop { run d (1); grow kv (10); } } } }
run { horizon inf; }
"""
    report = same_json(serq_frontend.compile(source=program), monkeypatch, seed=1)
    kv = _pool(report)
    assert (report["end"], report["ended"]) == (4.0, 1)
    assert (kv["preemptions"], kv["rejections"], kv["used"]) == (1, 1, 35.0)
