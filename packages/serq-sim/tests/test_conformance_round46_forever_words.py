"""The end-of-run warning that sessions wait for ever says why by the cause: a deadlock, or a demand beyond
a pool's capacity.

Sessions waiting for pools that no session outside them will release were all told "each waits for pools
that only they hold: a deadlock, or a demand beyond the capacity", also a session whose demand no release
could ever meet, while another session, not it, held the pool. A waiter whose demand (or its growth on top
of what it holds) is more than a pool's capacity is now told so, with the pool and the two numbers
(engine._beyond_capacity); only the rest, waiting for pools that only waiters hold, are a deadlock. Each
case by hand, on both tiers (conform.run); a third session's long run keeps an event left at the horizon, so
that the run does not end for want of events (that warning says "no event is left that could wake them").
"""

from __future__ import annotations

from conform import run

HEAD = """pool a { cap 4; }
pool b { cap 4; }
stage d : delay;
workload { arrive batch(BATCH); }
"""
KEEP = "run d (100);"  # the session that keeps an event left past the horizon


def _forever(report) -> list[str]:
    return [n for n in report.notes if getattr(n, "code", None) == "waits-for-ever"]


def _prog(batch: int, *arms: str) -> str:
    body = KEEP
    for i in reversed(range(len(arms))):
        body = f"branch (serial == {i}) {{ {arms[i]} }} else {{ {body} }}"
    return HEAD.replace("BATCH", str(batch)) + f"session {{\n  {body}\n  end;\n}}\nrun {{ horizon 50; }}\n"


# s0 holds a, then waits for b; s1 holds b, then waits for a: each holds what the other waits for
CROSS = ("hold a (4) { run d (1); hold b (4) { run d (1); } }", "hold b (4) { run d (1); hold a (4) { run d (1); } }")
# units that read the clock escape the join's rejection: 5 of a pool of 4, beside s1's unit released at 1
BEYOND = ("hold a (max(5, now / 100)) { run d (1); }",)
# a hold of 2 growing by 3 on a pool of 4 that preempts none: it waits, and 5 never fit
GROWN = ("hold a (2) { run d (1); grow a (3); run d (1); }",)


def test_a_deadlock_is_a_deadlock(monkeypatch):
    report, _ = run(_prog(3, *CROSS), monkeypatch)
    assert _forever(report) == [
        "warning: 2 sessions wait for ever at the end of the run (each waits for pools that only they hold: a "
        "deadlock): 1 queued at b (session 0); 1 queued at a (session 1)"]


def test_a_demand_beyond_the_capacity_is_told_so_and_is_no_deadlock(monkeypatch):
    # s0 holds a unit of a from 0 to 1; s1 waits for 5 of 4 beside it, and after it
    report, _ = run(_prog(3, "hold a (1) { run d (1); }", *BEYOND), monkeypatch)
    assert _forever(report) == [
        "warning: 1 session waits for ever at the end of the run (each waits for more of a pool than its capacity, "
        "which never fits whatever is released: a (5 of a capacity of 4)): 1 queued at a (session 1)"]


def test_a_queue_behind_a_demand_beyond_the_capacity_is_blocked_by_it(monkeypatch):
    # s1 joins a's queue behind s0, whose 5 never fit: head-of-line blocking, no deadlock (a has no holder)
    report, _ = run(_prog(3, *BEYOND, "hold a (1) { run d (1); }"), monkeypatch)
    assert _forever(report) == [
        "warning: 2 sessions wait for ever at the end of the run (each waits in the queue of a behind a head that "
        "waits for ever and so blocks the rest: head-of-line blocking; or for more of a pool than its capacity, "
        "which never fits whatever is released: a (5 of a capacity of 4)): 2 queued at a (sessions 0, 1)"]


def test_a_growth_beyond_the_capacity_is_told_so(monkeypatch):
    report, _ = run(_prog(2, *GROWN), monkeypatch)
    assert _forever(report) == [
        "warning: 1 session waits for ever at the end of the run (each waits for more of a pool than its capacity, "
        "which never fits whatever is released: a (5 of a capacity of 4)): 1 growing at a (session 0)"]


def test_a_growth_that_fits_the_capacity_waiting_for_a_waiter_is_a_deadlock(monkeypatch):
    # s0 holds 2 of a and grows by 2 (4 fits the capacity), while s1 holds a's other 2 and waits for b, which s0
    # holds: a deadlock, not a demand beyond the capacity
    arms = ("hold b (4), a (2) { run d (1); grow a (2); run d (1); }",
            "hold a (2) { run d (2); hold b (1) { run d (1); } }")
    report, _ = run(_prog(3, *arms), monkeypatch)
    assert _forever(report) == [
        "warning: 2 sessions wait for ever at the end of the run (each waits for pools that only they hold: a "
        "deadlock): 1 growing at a (session 0); 1 queued at b (session 1)"]


def test_both_causes_at_once_are_told_each(monkeypatch):
    arms = (*CROSS, "hold c (max(5, now / 100)) { run d (1); }")
    report, _ = run(_prog(4, *arms).replace("pool b { cap 4; }", "pool b { cap 4; }\npool c { cap 4; }"), monkeypatch)
    assert _forever(report) == [
        "warning: 3 sessions wait for ever at the end of the run (each waits for pools that only they hold: a "
        "deadlock; or for more of a pool than its capacity, which never fits whatever is released: c (5 of a "
        "capacity of 4)): 1 queued at b (session 0); 1 queued at a (session 1); 1 queued at c (session 2)"]
