"""Conformance of pool-reference.txt's `reserve held`, `preempt by (…) requeue head | tail` and `queue by`
keys, in combinations no earlier test held:

* `reserve held`: "Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap: the growing hold can use its own
  reservation", with `preempt none`, where a growth waits on another hold's unallocated reservation;
* "Reservations end with the hold's scope, release or preemption" together with `requeue tail`, which
  "treats it as a newcomer: FIFO places it last": a victim's reservation no longer blocks the hold that
  was waiting behind it, and `requeue head` puts the victim back ahead of that hold;
* `queue by`: "by reevaluates keys for every waiting hold before each admission attempt" and, "For a
  stage-bound pool, … the policy is evaluated again after every admission": keys that read the pool's
  `used` pick another head once one hold is admitted, on a plain pool and on a stage-bound one.

Each program runs on the tier serQ picks and on the general engine (conform.run: the same report and
samples, byte for byte); every figure is computed by hand in the docstring.
"""

from __future__ import annotations

import pytest
from conform import pool, run


def _at(obs):
    """An observe's samples as ``{session: time}`` (one sample a session)."""
    return {s: t for s, t, _v in obs}


GROW_PAST_RESERVATIONS = """
pool kv { cap 10; HELD preempt none; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) reserve (6) { run d (1); grow kv (4); observe g = now; run d (1); } }
  else { hold kv (2) reserve (2) { run d (0.5); grow kv (3); observe g = now; run d (1); } }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("held, g, done, used", [
    # reserve held: u0 = 6 - 2 = 4 from 0. s1's admission: 2 + 4 + 2 = 8 <= 10. At 0.5 s1 grows by 3:
    # used 4 + u0 4 + 3 = 11 > 10, so it waits (preempt none). At 1 s0 grows by 4 into its own
    # reservation: used 4 + u1 0 + 4 = 8 <= 10 (u0 is not counted against it); u0 is now 0, but s1 still
    # needs 8 + 3 = 11. At 2 s0 ends (used 4) and s1 grows to 5: done at 3.
    # used: s0 2 on [0, 1], 6 on [1, 2]; s1 2 on [0, 2], 5 on [2, 3]: 2 + 6 + 4 + 5 = 17 over 20.
    ("reserve held; ", {0: 1.0, 1: 2.0}, {0: 2.0, 1: 3.0}, 17 / 20),
    # Without it reservations count only at admission: s1 grows at 0.5 (4 + 3 = 7) and ends at 1.5; s0's
    # growth at 1 (7 + 4 = 11) waits until then and s0 ends at 2.5.
    # used: s0 2 on [0, 1.5], 6 on [1.5, 2.5]; s1 2 on [0, 0.5], 5 on [0.5, 1.5]: 3 + 6 + 1 + 5 = 15.
    ("", {0: 1.5, 1: 0.5}, {0: 2.5, 1: 1.5}, 15 / 20),
])
def test_a_growth_counts_the_other_holds_reservations_not_its_own(monkeypatch, held, g, done, used):
    """pool-reference `reserve held`: "each live hold's unallocated reservation also counts against later
    admissions and growth by other holds … Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap: the
    growing hold can use its own reservation"; `preempt none`: "Wait for room, then resume." """
    r, o = run(GROW_PAST_RESERVATIONS.replace("HELD ", held), monkeypatch)
    assert (_at(o["g"]), _at(o["done"])) == (g, done)
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.wait, kv.used) == (2, 0, 0.0, used)


VICTIM_RESERVATION = """
pool kv { cap 10; reserve held; preempt by (admission) REQUEUE; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) reserve (8) { observe a = now; run d (3); } }
  branch (serial == 1) { hold kv (2) { observe a = now; run d (1); grow kv (7); run d (1); } }
  branch (serial == 2) { hold kv (1) { observe a = now; run d (1); } }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("requeue, a, done, wait", [
    # At 0: s0 admitted (r 8, u0 6, used 2); s1 (2 + 6 + 2 = 10 <= 10) admitted; s2 (4 + 6 + 1 = 11) waits.
    # At 1 s1 grows by 7: 4 + 6 + 7 > 10. The candidates are s0 and s1; by (admission) the least is s0, the
    # first admitted: it leaves d, releases 2 and its reservation ends (u0 gone); s1 grows to 9 (2 + 7).
    # requeue tail: s0 goes behind s2, which fits (9 + 1 = 10) and is admitted at 1; s0 (10 + 8 > 10)
    # waits until s1 and s2 end at 2, runs again over [2, 5]. Waits 0, 0, 1 (s2), 1 (s0): mean 0.5.
    ("requeue tail", [(0, 0.0), (1, 0.0), (2, 1.0), (0, 2.0)], {0: 5.0, 1: 2.0, 2: 2.0}, 0.5),
    # requeue head: s0 heads the queue and blocks s2 (only the head is tried) until s1 ends at 2; then s0
    # (2 + 8 = 10) and s2 (2 + u0 6 + 1 = 9) are admitted. Waits 0, 0, 1 (s0), 2 (s2): mean 0.75.
    ("requeue head", [(0, 0.0), (1, 0.0), (0, 2.0), (2, 2.0)], {0: 5.0, 1: 2.0, 2: 3.0}, 0.75),
    # the default is head
    ("", [(0, 0.0), (1, 0.0), (0, 2.0), (2, 2.0)], {0: 5.0, 1: 2.0, 2: 3.0}, 0.75),
])
def test_a_victims_reservation_ends_with_its_preemption(monkeypatch, requeue, a, done, wait):
    """pool-reference `reserve held`: "Reservations end with the hold's scope, release or preemption";
    `preempt`: "Preempt the candidate with the least keys"; "requeue head (the default) places it first,
    ahead of policy keys. requeue tail treats it as a newcomer: FIFO places it last"; `queue`: "Only the
    selected hold is tried: failure to fit blocks the rest."

    used (either way): s0 2 on [0, 1] and [2, 5]; s1 2 on [0, 1], 9 on [1, 2]; s2 1 for one second:
    2 + 6 + 2 + 9 + 1 = 20 over 20."""
    r, o = run(VICTIM_RESERVATION.replace("REQUEUE", requeue), monkeypatch)
    assert [(s, t) for s, t, _v in o["a"]] == a
    assert _at(o["done"]) == done
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.rejections, kv.wait, kv.used) == (4, 1, 0, wait, 1.0)


REEVALUATED = """
pool kv { cap 100; QUEUE; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (96) { run d (1); } }
  else {
    run d (0.5);
    hold kv (45) { observe a = now; run d (1); }
  }
  end;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("queue, a", [
    # s0 holds 96 over [0, 1]; s1, s2, s3 wait from 0.5 (45 + 96 > 100). At 1 used is 0: the keys are
    # the serials, s1 is the head and is admitted (used 45); the keys, read again, are now -serial: s3
    # (45 + 45 <= 100) is admitted, and s2 (90 + 45 > 100) waits until s1 ends at 2.
    ("queue by (used(kv) >= 5 ? -serial : serial)", {1: 1.0, 3: 1.0, 2: 2.0}),
    # The keys read once at 1 would admit s1 and s2: as fifo does.
    ("queue fifo", {1: 1.0, 2: 1.0, 3: 2.0}),
])
def test_the_keys_are_read_again_after_an_admission(monkeypatch, queue, a):
    """pool-reference `queue`: "by reevaluates keys for every waiting hold before each admission attempt,
    compares them lexicographically"; "Keys may read visible session attributes, now and pool/stage
    queries". Waits: 0, 0.5, 0.5, 1.5: mean 0.625."""
    r, o = run(REEVALUATED.replace("QUEUE", queue), monkeypatch)
    assert _at(o["a"]) == a
    kv = pool(r, "kv")
    assert (kv.admissions, kv.wait) == (4, 0.625)


STAGE_BOUND = """
pool kv { cap 100; }
pool reqs { cap 10; admit via e; queue by (used(kv) >= 5 ? -serial : serial); }
stage e : step { budget 100; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold reqs (1), kv (1) { decode on e (3); } }
  else {
    run d (0.5);
    hold reqs (1), kv (5) { observe q = queued(reqs); prefill on e (1); }
  }
  end;
}
run { horizon 100; }
"""


def test_a_stage_bound_pools_keys_are_read_again_after_every_admission(monkeypatch):
    """pool-reference `queue`: "For a stage-bound pool, budget_left(stage) reads the budget remaining for
    that admission, and the policy is evaluated again after every admission"; `admit via`: "A pool on an
    engine is served in each iteration's admit waiting".

    s0 decodes 3 tokens on e, one an iteration, over [0, 3], holding kv 1. s1, s2, s3 join reqs' queue at
    0.5, and the iteration at 1 admits them all (reqs cap 10, kv cap 100, budget 100). The first attempt
    reads used(kv) 1: the keys are the serials and s1 goes first (queued(reqs) 2 behind it); it holds kv 5,
    so the keys read again are -serial: s3 (queued 1), then s2 (queued 0). Each prefills 1 token over
    [1, 2]. kv used: 1 over [0, 3], 5 × 3 over [1, 2]: 18 over 100; reqs waits 0 and 0.5 × 3: 0.375."""
    r, o = run(STAGE_BOUND, monkeypatch)
    assert o["q"] == [(1, 1.0, 2.0), (2, 1.0, 0.0), (3, 1.0, 1.0)]
    assert (pool(r, "kv").used, pool(r, "reqs").wait, pool(r, "reqs").admissions) == (0.18, 0.375, 4)


NESTED_RESERVATIONS = """
pool kv { cap 10; reserve held; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (1) reserve (4) {
      run d (0.5);
      hold kv (1) reserve (3) { observe a = now; observe f = free(kv); run d (2); }
      run d (1);
    }
  }
  else { hold kv (2) { run d (1); grow kv (2); observe g = now; observe fg = free(kv); run d (1); } }
  observe done = now;
}
run { horizon 20; }
"""


def test_an_inner_holds_reservation_ends_with_its_preemption_and_the_outer_one_stays(monkeypatch):
    """pool-reference `reserve held`: "Each hold counts separately, including nested holds. Reservations
    end with the hold's scope, release or preemption"; "A new reservation r requires used + Σ u_i + r ≤
    cap"; `lifo`: "preempt the last admitted"; the victim "re-enters the hold's first pool's queue to
    execute the hold again".

    At 0 s0's outer hold (1, reserve 4: u 3) and s1's hold of 2 (3 + 3 + 2 <= 10) are admitted. At 0.5
    s0's inner hold (1, reserve 3): 3 + 3 + 3 = 9 <= 10, admitted (u 2): free(kv) = 10 - 4 - 5 = 1. At 1
    s1 grows by 2: 4 + (3 + 2) + 2 = 11 > 10; the last admitted is s0's inner hold (0.5), the victim: its
    unit and its reservation go, the outer hold keeps both; s1 grows (3 + 3 + 2 = 8): free 10 - 5 - 3 = 2.
    The inner hold, at the head of kv's queue, needs 5 + 3 + 3 = 11 > 10 (the session's own outer
    reservation counts) and waits until s1 ends at 2: 1 + 3 + 3 = 7, admitted, free 10 - 2 - 5 = 3. It
    runs over [2, 4], the outer hold's d over [4, 5].

    kv: 4 admissions, waits 0, 0, 0, 1: 0.25; used: outer 1 on [0, 5], inner 1 on [0.5, 1] and [2, 4],
    s1 2 on [0, 1] and 4 on [1, 2]: 5 + 2.5 + 6 = 13.5 over 20."""
    r, o = run(NESTED_RESERVATIONS, monkeypatch)
    assert (o["a"], o["f"]) == ([(0, 0.5, 0.5), (0, 2.0, 2.0)], [(0, 0.5, 1.0), (0, 2.0, 3.0)])
    assert (o["g"], o["fg"]) == ([(1, 1.0, 1.0)], [(1, 1.0, 2.0)])
    assert _at(o["done"]) == {0: 5.0, 1: 2.0}
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.wait, kv.used) == (4, 1, 0.25, 13.5 / 20)


AGED = """
pool kv { cap 4; preempt by (-admission) REQUEUE; queue by (waited >= 2 ? 0 : 1, serial); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); run d (1.5); } }
  branch (serial == 1) { run d (2); hold kv (2) { observe a = now; run d (1); } }
  branch (serial == 2) { run d (0.5); hold kv (2) { observe a = now; run d (1); } }
  branch (serial == 3) { hold kv (2) { observe a = now; run d (10); } }
  observe done = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("requeue, a, done", [
    # requeue tail: at 2.5 the keys are s2 (waited 2) (0, 2), s1 (waited 0.5) (1, 1) and s3, whose waited
    # restarted at its preemption at 1, (1, 3): s2 and s1 fill the pool; s3 waits until they end at 3.5.
    # (Had s3's waited counted from its first join at 0, 2.5, its key (0, 3) would have put it before s1.)
    ("requeue tail", [(3, 0.0), (1, 2.5), (2, 2.5), (3, 3.5)], {0: 2.5, 1: 3.5, 2: 3.5, 3: 13.5}),
    # requeue head: s3 first, ahead of the keys, then s2 (0, 2); s1 waits until s2 ends at 3.5.
    ("requeue head", [(3, 0.0), (2, 2.5), (3, 2.5), (1, 3.5)], {0: 2.5, 1: 4.5, 2: 3.5, 3: 12.5}),
])
def test_a_victim_requeued_at_the_tail_ages_from_its_preemption(monkeypatch, requeue, a, done):
    """pool-reference `preempt`: "requeue tail treats it as a newcomer: … queue by places it by its keys, with
    waited reset to 0"; `queue`: "waited supplies seconds since the current hold entered the queue; it resets
    on re-entry"; "A preempted hold re-enters at the head, ahead of policy keys, unless its pool says requeue
    tail".

    kv cap 4. At 0 s0 and s3 hold 2 each; s2 joins at 0.5. At 1 s0 grows by 2: the last admitted, s3, is the
    victim; s0 holds 4 until 2.5. s1 joins at 2. At 2.5 the pool is empty and two holds of 2 fit.
    Waits either way: 0, 0, 2 (s2), and 0.5 + 2.5 or 1.5 + 1.5: mean 1. used: s0 2 + 6, s3 2 + 20, s1 and
    s2 2 each: 34 over 20."""
    r, o = run(AGED.replace("REQUEUE", requeue), monkeypatch)
    assert [(s, t) for s, t, _v in o["a"]] == a
    assert _at(o["done"]) == done
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.wait, kv.used) == (5, 1, 1.0, 1.7)
