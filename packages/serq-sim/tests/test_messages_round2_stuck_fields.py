"""The stuck warning (serq_sim.notes.stuck) reads its pools' entries by name (notes._Stuck), not by place
(`f[4]`, `f[5]`): the same words for the entries of every length a caller gives, `(label, stuck, preemptions,
positioned)`, with `own`, and with `livelocked, units, cap`."""

from __future__ import annotations

from serq_sim import notes

CYCLE = ("such a session can cycle between admission and preemption for as long as the pool is short, and its "
         "latency grows with it")


def test_an_entry_of_four_counts_every_stuck_session_on_a_pool_with_positions():
    (w,) = notes.stuck([("kv", 2, 3, True)])
    assert w == ("warning: 2 sessions stuck in the run, preempted again without progress (at no greater position "
                 f"than at their previous preemption): kv (2 stuck, 3 preemption(s)); {CYCLE}")
    assert w.code == "stuck"
    assert notes.stuck([("kv", 2, 3, False)]) == []  # no position and no own count: none counted


def test_a_livelock_is_told_after_the_counts_and_only_it_leaves_out_the_cycle():
    (w,) = notes.stuck([("kv", 1, 7, True, 1, 1, 5, 4)])
    assert w == ("warning: 1 session stuck in the run, preempted again without progress (at no greater position than "
                 "at their previous preemption): kv (1 stuck, 7 preemption(s)); on kv 1 session preempted itself "
                 "again and again at the same position, its hold needing more than the pool's capacity (5 units for "
                 "the first, capacity 4), so re-executed it grows into the same preemption for as long as the run "
                 "goes on (a livelock; a larger pool, a cut before the growth or a reserve of what the hold will "
                 "need, which rejects it, ends it)")
    # one more stuck session than the livelocked: the cycle is said too
    (w,) = notes.stuck([("kv", 2, 7, True, 1, 1, 5.5, 4)])
    assert "(5.5 units for the first, capacity 4)" in w and w.endswith(CYCLE)


def test_a_pool_without_positions_counts_its_own_and_names_the_column():
    (w,) = notes.stuck([("gpu", 3, 4, False, 2, 0, 0, 0)])
    assert w.startswith("warning: 2 sessions stuck in the run, preempted again without progress (at no greater "
                        "position than at their previous preemption): gpu (2 stuck, 4 preemption(s)); " + CYCLE)
    assert w.endswith("(the column: 3 on gpu)")
    (w,) = notes.stuck([("gpu", 2, 4, False, 2)])  # the column is what is counted: nothing more to name
    assert "the column" not in w
