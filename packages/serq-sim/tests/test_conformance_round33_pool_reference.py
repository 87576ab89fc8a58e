"""Conformance of pool-reference.txt's in-scope options, read sentence by sentence, by hand:

* `preempt`: "`by (k, …)`: Preempt the candidate with the least keys, compared in order; ties go to the last
  admitted"; "Candidates are holders resident in the stage whose memory is this pool. If no stage names it as
  memory, candidates are holders with an active hold scope. Leases are not candidates; the grower can be its
  own victim"; "The victim leaves its stage, releases its hold … It re-enters the hold's first pool's queue
  … requeue head (the default) places it first, ahead of policy keys. requeue tail treats it as a newcomer:
  FIFO places it last, while queue by places it by its keys, with waited reset to 0";
* `reserve held`: "A new reservation r requires used + Σ u_i + r ≤ cap. Growth by d requires used +
  Σ_{i≠grower} u_i + d ≤ cap … Each hold counts separately, including nested holds. Reservations end with
  the hold's scope, release or preemption; leases retain none. Cached prefixes are evicted when units are
  allocated, not when reserved";
* the page's opening rules: "If either units or reserve is independent of deployment state and exceeds
  capacity after block rounding, the hold is rejected and its session ends. State-dependent demand waits for
  admission and is reported as over_cap if it still exceeds capacity at the end of the run";
* `queue by` with `waited` on a stage-bound pool: "waited supplies seconds since the current hold entered the
  queue", read at each iteration's admission attempt.

The sessions of a program differ by `serial` only (`arrive batch(n)`: every session arrives at 0, in serial
order). §3's settle order decides the instants: the sessions that are ready run first, then the pools'
queues admit (a hold joins its queue and is admitted after the other ready sessions have run).

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value)
and the pools' and stages' figures as the JSON report reads them (time averages over the horizon 10). Every
number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
import serq_frontend
from conform import refused, report_json, run

#: sessions 0 and 1 hold one unit; 0 grows after 1 s, 1 after 2 s; each then runs 1 s more
GROWERS = """
pool P { cap 2; PREEMPT }
stage d : delay;
workload { arrive batch(2); }
session {
  hold P (1) { run d (1 + serial); grow P (1); run d (1); observe t = now + 0 * serial; }
}
run { horizon 10; }
"""

#: sessions 0 and 1 hold one unit of two; 0 grows at 1 and the victim goes back; 2 waits from 0; each runs
#: 3 s on a delay (0: 1 s) and then 1 s on a fifo
REQUEUE = """
pool P { cap 2; OPTIONS }
stage d : delay;
stage f : fifo;
workload { arrive batch(3); }
session {
  hold P (1) {
    run d (serial == 0 ? 1 : 3);
    branch (serial == 0) { grow P (1); }
    run f (1);
    observe t = now + 0 * serial;
  }
}
run { horizon 10; }
"""

#: reserve held: session 0 holds 2 reserving 6 and grows 3 at 1; 1 holds 3 for 1.5 s; 2 holds 2
RESERVE = """
pool P { cap 10; OPTIONS }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold P (2) reserve (6) { run d (1); grow P (3); run d (2); }
  } else {
    branch (serial == 1) { hold P (3) { run d (1.5); } } else { hold P (2) { observe t = now; } }
  }
}
run { horizon 10; }
"""

#: reserve held: session 0 holds 1 reserving 5 for 3 s; 1 holds 2 and grows 2 at 1
GROWTH = """
pool P { cap 8; OPTIONS }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (1) reserve (5) { run d (3); }
  } else {
    hold P (2) { run d (1); grow P (2); observe t = now; run d (1); }
  }
}
run { horizon 10; }
"""

#: reserve held: session 0's first statements (FIRST), then session 1 asks for 4 of 8 at 0.5
ENDS = """
pool P { cap 8; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    FIRST
  } else {
    run d (0.5);
    hold P (4) { observe t = now; }
  }
}
run { horizon 10; }
"""


#: evict by KEY: session 0 caches 4 and ends, 1 caches 4 and lives, 2 needs room for 4 at 1
EVICT = """pool P { cap 8; evict by (KEY); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    set k = 1;
    hold P (4) { } cache (4);
    set k = 100;
    end;
  } else {
    branch (serial == 1) {
      set k = 50;
      hold P (4) { } cache (4);
      run d (2);
      observe c1 = cachedin(P);
    } else {
      run d (1);
      hold P (4) { } cache (0);
    }
  }
}
run { horizon 10; }
"""


def fill(src: str, **subs: str) -> str:
    for k, v in subs.items():
        src = src.replace(k, v)
    return src


CASES = [
    # "ties go to the last admitted": the keys are one constant, every candidate ties. At 1 session 0 grows
    # (used 2 of 2): the candidates are both holders (no stage names P as memory), the last admitted is 1,
    # which leaves d (its 2 s job, the d completion it would have had, goes) and re-enters P's queue; 0
    # grows to 2, runs d [1, 2] and ends: t = 2. Session 1 is admitted at 2 and runs its hold again: d [2, 4],
    # grows (room), d [4, 5]: t = 5. P: used 1 + 1 over [0, 1], 2 over [1, 2], 1 over [2, 4], 2 over [4, 5]:
    # 8 / 10; queue 1 over [1, 2]; holders 2 + 1 + 3 = 6; admissions 3 with waits 0, 0, 1; d: jobs present
    # 2 over [0, 1] (1's cut job included), 1 over [1, 5]: 6, completed 4 (1 + 1 + 2 + 1 of service, 1.25).
    ("preempt_by_ties_last_admitted", fill(GROWERS, PREEMPT="preempt by (0);"),
     {"t": [(0, 2.0, 2.0), (1, 5.0, 5.0)]},
     {("P", None): {"used": 0.8, "queue": 0.1, "holders": 0.6, "wait": 1 / 3, "admissions": 3,
                    "preemptions": 1, "stuck": 0},
      ("d", None): {"present": 0.6, "completions": 4, "service": 1.25}}),
    # "the grower can be its own victim": keys (serial), the least first. At 1 session 0 grows: its key 0 is
    # the least, so it is the victim; it releases its 1 and re-enters at the head, and is admitted again at
    # once (used 2 with 1's unit) and runs d (1) [1, 2]. At 2 session 1's job (scheduled at 0, before 0's at 1)
    # ends first: 1 grows, no room, the candidates 0 (key 0) and 1 (key 1): 0 again, whose job leaves d; 1
    # grows, d [2, 3]: t = 3. Session 0 is admitted at 3, d [3, 4], grows, d [4, 5]: t = 5. Two preemptions of
    # 0 at position 1, the second at no greater position: stuck 1 (docs/simulator.md). P: used 2 + 2 + 2 + 1
    # + 2 = 9; queue 1 over [2, 3]; holders 2 + 2 + 1 + 1 + 1 = 7; admissions 4 with waits 0, 0, 0, 1.
    ("preempt_by_grower_own_victim", fill(GROWERS, PREEMPT="preempt by (serial);"),
     {"t": [(1, 3.0, 3.0), (0, 5.0, 5.0)]},
     {("P", None): {"used": 0.9, "queue": 0.1, "holders": 0.7, "wait": 0.25, "admissions": 4,
                    "preemptions": 2, "stuck": 1}}),
    # "requeue tail treats it as a newcomer: FIFO places it last". Sessions 0 and 1 are admitted at 0, 2
    # waits. At 1 session 0 grows (no room): keys tie, the last admitted, 1, is the victim (its 3 s on d
    # cut) and joins the queue behind 2. Session 0 grows, runs f [1, 2]: t = 2, and gives both units back.
    # At 2, 2 then 1 are admitted, both run d (3) [2, 5] and reach f in that order: 2 [5, 6], 1 [6, 7]. P:
    # queue 2 over [0, 2] and 1 over [1, 2]: 3; admissions 4, waits 0, 0, 2, 1: 0.75.
    ("requeue_tail_fifo_last", fill(REQUEUE, OPTIONS="preempt by (0) requeue tail;"),
     {"t": [(0, 2.0, 2.0), (2, 6.0, 6.0), (1, 7.0, 7.0)]},
     {("P", None): {"queue": 0.3, "wait": 0.75, "admissions": 4, "preemptions": 1}}),
    # "requeue head (the default) places it first": the same program without requeue: 1 goes back ahead of
    # 2, admitted first at 2, f [5, 6]; 2 f [6, 7]. The same waits.
    ("requeue_head_default_first", fill(REQUEUE, OPTIONS="preempt by (0);"),
     {"t": [(0, 2.0, 2.0), (1, 6.0, 6.0), (2, 7.0, 7.0)]},
     {("P", None): {"queue": 0.3, "wait": 0.75, "admissions": 4, "preemptions": 1}}),
    # "requeue head … ahead of policy keys": the keys order by serial at 0 (0 and 1 admitted, 2 waits) and by
    # -serial after, which would take 2 (key -2) before 1 (key -1) at 2; but the victim re-enters at the
    # head: 1 first, as above.
    ("requeue_head_ahead_of_keys",
     fill(REQUEUE, OPTIONS="queue by (now < 0.5 ? serial : -serial); preempt by (0) requeue head;"),
     {"t": [(0, 2.0, 2.0), (1, 6.0, 6.0), (2, 7.0, 7.0)]},
     {("P", None): {"wait": 0.75, "admissions": 4}}),
    # "while queue by places it by its keys": requeue tail under the same keys: at 2, 2 (key -2) before 1.
    ("requeue_tail_by_keys_minus",
     fill(REQUEUE, OPTIONS="queue by (now < 0.5 ? serial : -serial); preempt by (0) requeue tail;"),
     {"t": [(0, 2.0, 2.0), (2, 6.0, 6.0), (1, 7.0, 7.0)]},
     {("P", None): {"wait": 0.75, "admissions": 4}}),
    # … and under queue by (serial), 1 (key 1) before 2 (key 2), a newcomer behind 2 in the join order.
    ("requeue_tail_by_keys_plus", fill(REQUEUE, OPTIONS="queue by (serial); preempt by (0) requeue tail;"),
     {"t": [(0, 2.0, 2.0), (1, 6.0, 6.0), (2, 7.0, 7.0)]},
     {("P", None): {"wait": 0.75, "admissions": 4}}),
    # "with waited reset to 0": queue by (waited >= 1.5 ? 1 : 0). At the attempt at 2, session 2 has waited 2
    # (key 1) and the victim 1, back in the queue since 1, has waited 1 (key 0): 1 first, though it joined
    # after 2 and, counted from its first hold at 0, would have waited 2 as well (a tie, 2 first).
    ("requeue_tail_waited_reset",
     fill(REQUEUE, OPTIONS="queue by (waited >= 1.5 ? 1 : 0); preempt by (0) requeue tail;"),
     {"t": [(0, 2.0, 2.0), (1, 6.0, 6.0), (2, 7.0, 7.0)]},
     {("P", None): {"wait": 0.75, "admissions": 4}}),
    # "Leases are not candidates". Keys (serial): session 0 (key 0) would be the victim, but its unit is a
    # lease (its hold's scope ended at 0; it releases it at 2). At 1 session 1 grows (1 leased + 1 held of
    # 2): the only candidate is 1 itself, which goes back and is admitted again at once (d [1, 2]). At 2 0's
    # release comes first (scheduled at 0), then 1 grows to 2 and runs d [2, 3]: t = 3. P: used 2 over
    # [0, 2] and 2 over [2, 3]: 6; holders (the lease counts) 2, 2, 1: 5; admissions 3, one preemption.
    ("lease_is_no_candidate", """
pool P { cap 2; preempt by (serial); }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (1) { } lease P (inf);
    run d (2);
    release P;
  } else {
    hold P (1) { run d (1); grow P (1); run d (1); observe t = now; }
  }
}
run { horizon 10; }
""", {"t": [(1, 3.0, 3.0)]},
     {("P", None): {"used": 0.6, "holders": 0.5, "admissions": 3, "preemptions": 1, "stuck": 0}}),
    # "Candidates are holders resident in the stage whose memory is this pool": sessions 0 and 1 hold one
    # unit of kv and prefill 2 tokens growing it; 2, admitted last, holds 2 units at a delay stage, no
    # resident of E. At 0 the iteration serves 0 first: it grows to 2, kv is full, and preempt lifo takes
    # the last admitted resident, 1 (not 2); 0 grows and takes its 2 tokens: [0, 1], t = 1. At 1 kv has room
    # for 1 again (0's 2 freed, cap 4 with 2's 2): admitted, iteration [1, 2], t = 2. E: iterations 2, 4
    # tokens; kv: preemptions 1, used 4 over [0, 1], 3 then 4 over [1, 2] (1's growth is planned at the
    # iteration's start: 4), 2 (session 2's, to 10) after: 4 + 4 + 16 = 24.
    ("stage_memory_candidates_residents_only", """
pool kv { cap 4; preempt lifo; }
stage E : step { budget 4; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (1) { run E prefill (2) growing kv; observe t = now; }
  } else {
    hold kv (2) { run d (10); }
  }
}
run { horizon 10; }
""", {"t": [(0, 1.0, 1.0), (1, 2.0, 2.0)]},
     {("kv", None): {"used": 2.4, "preemptions": 1, "admissions": 4},
      ("E", None): {"iterations": 2, "completions": 2}}),
    # "A new reservation r requires used + Σ u_i + r ≤ cap" (reserve held). Session 0 holds 2 reserving 6
    # (u = 4); 1's 3: 2 + 4 + 3 = 9 ≤ 10, admitted; 2's 2: 5 + 4 + 2 = 11, waits. At 1 session 0 grows 3:
    # "Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap": 5 + 0 + 3 = 8, grown (u = 1); 2: 8 + 1 + 2 =
    # 11, waits. At 1.5 session 1 ends: 5 + 1 + 2 = 8, 2 is admitted: t = 1.5. P: used 5, 8, 5 over [0, 1],
    # [1, 1.5], [1.5, 3]: 16.5; queue 1.5; admissions 3, wait 0.5.
    ("reserve_held_admission", fill(RESERVE, OPTIONS="reserve held;"), {"t": [(2, 1.5, 1.5)]},
     {("P", None): {"used": 1.65, "queue": 0.15, "admissions": 3, "wait": 0.5}}),
    # "By default, reserve is checked only at admission": without reserve held 2 fits at 0 (5 + 2 ≤ 10).
    ("reserve_checked_at_admission_only", fill(RESERVE, OPTIONS=""), {"t": [(2, 0.0, 0.0)]},
     {("P", None): {"used": 1.65, "queue": 0.0, "admissions": 3, "wait": 0.0}}),
    # Growth waits on another hold's unallocated reservation: session 1's admission, 1 + 4 + 2 = 7 ≤ 8; its
    # growth by 2 at 1: 3 + 4 + 2 = 9 > 8, and under preempt none it waits until 0's scope ends at 3 (its
    # reservation with it): t = 3. P: used 3 over [0, 3], 4 over [3, 4]: 13.
    ("reserve_held_growth_waits", fill(GROWTH, OPTIONS="reserve held;"), {"t": [(1, 3.0, 3.0)]},
     {("P", None): {"used": 1.3, "admissions": 2, "preemptions": 0}}),
    # … and without reserve held the growth fits at once (3 + 2 ≤ 8): t = 1; used 3 over [0, 1], 5 over
    # [1, 2] (1 ends at 2), 1 over [2, 3]: 9.
    ("growth_without_reserve_held", fill(GROWTH, OPTIONS=""), {"t": [(1, 1.0, 1.0)]},
     {("P", None): {"used": 0.9, "admissions": 2}}),
    # "Each hold counts separately, including nested holds": session 0's outer hold has 1 of 4 (u = 3), its
    # inner 1 of 3 (u = 2) until 2, then runs 1 s more. Session 1's 4 at 0.5: 2 + 5 + 4 = 11 > 8; at 2 the
    # inner's reservation ends: 1 + 3 + 4 = 8, admitted: t = 2 (counting the outer alone, 2 + 3 + 4 = 9
    # would have waited too; counting neither, at 0.5).
    ("reserve_held_nested", fill(ENDS, FIRST="hold P (1) reserve (4) { hold P (1) reserve (3) { run d (2); } "
                                             "run d (1); }"),
     {"t": [(1, 2.0, 2.0)]}, {("P", None): {"admissions": 3, "wait": 0.5}}),
    # "Reservations end with the hold's … release": session 0 holds 1 reserving 6 and releases P at 1 (the
    # hold's scope goes on 5 s more). Session 1's 4 at 0.5: 1 + 5 + 4 = 10 > 8, waits; at 1, 0 + 0 + 4:
    # admitted, t = 1.
    ("reserve_held_release_ends_it", fill(ENDS, FIRST="hold P (1) reserve (6) { run d (1); release P; "
                                                       "run d (5); }"),
     {"t": [(1, 1.0, 1.0)]}, {("P", None): {"admissions": 2, "wait": 0.25}}),
    # "leases retain none": session 0's scope ends at 1 with lease P (inf): its 1 unit stays, its
    # reservation goes: session 1's 4 at 1: 1 + 0 + 4 ≤ 8, t = 1. P: used 1 over [0, 6] (released at 6), 4
    # for no time: 6.
    ("reserve_held_lease_retains_none", fill(ENDS, FIRST="hold P (1) reserve (6) { run d (1); } lease P (inf); "
                                                          "run d (5); release P;"),
     {"t": [(1, 1.0, 1.0)]}, {("P", None): {"used": 0.6, "admissions": 2, "wait": 0.25}}),
    # "Reservations end with … preemption": session 0 holds 2 reserving 4 (u = 2) for 2 s; 1 holds 2 (2 + 2 +
    # 2 ≤ 8) and grows 4 at 1: 4 + 2 + 4 = 10 > 8; the keys make 0 the least (0 against 1), the victim. 0
    # releases its 2 and its reservation: 2 + 0 + 4 = 6, 1 grows to 6, runs d [1, 2]: t1 = 2. 0 is back at the
    # head, its
    # r = 4: 6 + 4 > 8 until 2, then admitted, d [2, 4]: t0 = 4. P: used 4 over [0, 1], 6 over [1, 2], 2 over
    # [2, 4]: 14; admissions 3, waits 0, 0, 1.
    ("reserve_held_preemption_ends_it", """
pool P { cap 8; reserve held; preempt by (serial == 0 ? 0 : 1); }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (2) reserve (4) { run d (2); observe t = now; }
  } else {
    hold P (2) { run d (1); grow P (4); run d (1); observe t = now; }
  }
}
run { horizon 10; }
""", {"t": [(1, 2.0, 2.0), (0, 4.0, 4.0)]},
     {("P", None): {"used": 1.4, "admissions": 3, "wait": 1 / 3, "preemptions": 1}}),
    # "Cached prefixes are evicted when units are allocated, not when reserved": session 0 caches 4 at 0.
    # Session 1 at 1 holds 1 reserving 8: "cached prefixes never block", and allocating 1 leaves 1 + 4 ≤ 8,
    # so the entry stays; at 3 it grows 5 (1 + 0 + 5 ≤ 8 with its own reservation): 6 + 4 > 8, and the entry
    # goes whole (no block: eviction is per entry). P: cached 4 over [0, 3]: 12; used 1 over [1, 3], 6 over
    # [3, 4]: 8; one entry of 4 evicted.
    ("reserve_held_evicts_at_allocation", """
pool P { cap 8; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (4) { } cache (4);
  } else {
    run d (1);
    hold P (1) reserve (8) { run d (2); grow P (5); run d (1); observe t = now; }
  }
}
run { horizon 10; }
""", {"t": [(1, 4.0, 4.0)]},
     {("P", None): {"cached": 1.2, "used": 0.8, "evicted_entries": 1, "evicted_units": 4.0}}),
    # "If either units or reserve is independent of deployment state and exceeds capacity after block
    # rounding, the hold is rejected and its session ends": cap 10, block 4. Session 0's 9 rounds to 12:
    # rejected; 1's reserve 9 rounds to 12: rejected; 2's 8 (two blocks) fits: a = 0, and after its hold b = 2.
    # The rejected sessions end there (no b): rejections 2, admissions 1, ended 3.
    ("rejected_after_block_rounding", """
pool P { cap 10; block 4; }
workload { arrive batch(3); }
session {
  hold P (serial == 0 ? 9 : serial == 1 ? 1 : 8) reserve (serial == 1 ? 9 : 0) { observe a = now; }
  observe b = serial;
}
run { horizon 10; }
""", {"a": [(2, 0.0, 0.0)], "b": [(2, 0.0, 2.0)]},
     {("P", None): {"rejections": 2, "admissions": 1, "over_cap": 0}}),
    # "State-dependent demand waits for admission and is reported as over_cap if it still exceeds capacity
    # at the end of the run": session 0 asks for free(P) + 1, 11 of 10 whenever it is read; it waits at the
    # head to the end (blocking 1's 4 behind it: head-of-line): over_cap 1, no rejection, queue 2.
    ("state_dependent_over_cap", """
pool P { cap 10; }
workload { arrive batch(2); }
session {
  hold P (serial == 0 ? free(P) + 1 : 4) { observe a = now; }
}
run { horizon 10; }
""", {"a": []},
     {("P", None): {"rejections": 0, "admissions": 0, "over_cap": 1, "queue": 2.0}}),
    # "waited supplies seconds since the current hold entered the queue", on a stage-bound pool: reqs (cap 1)
    # is admitted by E at each iteration's start. Session 0 holds it from 0 and prefills 3 tokens at 1 a step:
    # [0, 3] (its second key, -9, the least at 0). Session 1 joins at 0, 2 at 1.5. The attempt at 3 reads
    # waited 3 for 1 (key 0) and 1.5 for 2 (key 1): 1 first, though -serial alone prefers 2; 1: [3, 6], then
    # 2: [6, 9]. Waits 0, 3, 4.5.
    ("waited_on_a_stage_bound_pool", """
pool reqs { cap 1; admit via E; queue by (waited >= 2 ? 0 : 1, serial == 0 ? -9 : -serial); }
stage E : step { budget 1; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 2 ? 1.5 : 0);
  hold reqs (1) { observe a = now; run E prefill (3); }
  observe t = now;
}
run { horizon 10; }
""", {"a": [(0, 0.0, 0.0), (1, 3.0, 3.0), (2, 6.0, 6.0)], "t": [(0, 3.0, 3.0), (1, 6.0, 6.0), (2, 9.0, 9.0)]},
     {("reqs", None): {"admissions": 3, "wait": 2.5}, ("E", None): {"iterations": 9}}),
    # reserve held's "r_i is the larger of units and reserve, evaluated at admission and rounded up to blocks"
    # (cap 12, block 4): session 0's hold P (1) reserve (6) allocates 4 (1 rounded up) and reserves 8 (6
    # rounded up): u = 4. Session 1's 4 at 0.5: 4 + 4 + 4 = 12 ≤ 12, admitted (unrounded, 6 - 1 = 5 would
    # refuse it: 13). Session 2's 1 (4 in blocks) at 0.7: 8 + 4 + 4 = 16, waits for 0's end at 2. P: used 4
    # over [0, 0.5], 8 to 2, 8 to 5.5 (1's end), 4 to 7: 2 + 12 + 28 + 6 = 48; admissions 3, waits 0, 0, 1.3.
    ("reserve_held_in_blocks", """
pool P { cap 12; block 4; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold P (1) reserve (6) { run d (2); }
  } else {
    run d (serial == 1 ? 0.5 : 0.7);
    hold P (serial == 1 ? 4 : 1) { observe t = now + 0 * serial; run d (5); }
  }
}
run { horizon 10; }
""", {"t": [(1, 0.5, 0.5), (2, 2.0, 2.0)]},
     {("P", None): {"used": 4.8, "queue": 0.13, "admissions": 3, "wait": 1.3 / 3}}),
    # requeue tail on a step engine's memory, the hold's first pool stage-bound: "It re-enters the hold's
    # first pool's queue". Two slots (reqs, admitted by E), kv of 3 units; each session holds a slot and 1
    # unit and decodes 3 tokens growing kv (a token at position p needs p + 1). [0, 1]: 0 and 1 admitted,
    # one token each (positions 1); 2 waits for a slot. [1, 2]: 0 grows to 2; 1's growth finds no room:
    # by (-admission) takes the last admitted, 1 itself, which goes to the tail of reqs' queue, behind 2; no
    # admission in that step. [2, 3]: 0 grows to 3 (done at 3); 2 heads the queue and does not fit kv (3 +
    # 1), blocking 1. At 3: 2, then 1, admitted; [4, 5]: 2 grows, 1 is its own victim again at position 1
    # (stuck: no further than its first preemption), to the tail; 2 done at 6; 1 alone [6, 9]. reqs: waits
    # 0, 0, 3 (2), 2 and 2 (1): 7 / 5, queue 7 over 20; kv: used 2, 2, 3, 2, 2, 3, 1, 2, 3 a step: 20; E: 9
    # iterations.
    ("requeue_tail_on_a_step_memory", """
pool reqs { cap 2; admit via E; }
pool kv { cap 3; preempt by (-admission) requeue tail; }
stage E : step { budget 8; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  hold reqs (1), kv (1) { run E decode (3) growing kv; }
  observe t = now + 0 * serial;
}
run { horizon 20; }
""", {"t": [(0, 3.0, 3.0), (2, 6.0, 6.0), (1, 9.0, 9.0)]},
     {("reqs", None): {"wait": 1.4, "queue": 0.35, "admissions": 5},
      ("kv", None): {"used": 1.0, "preemptions": 2, "stuck": 1}, ("E", None): {"iterations": 9}}),
    # … and preempt lifo (by (-admission) requeue head): 1 goes back ahead of 2 and is admitted first at 3;
    # at 4 2, the last admitted, is the victim (once: not stuck): 1 done at 6, 2 at 9. The same waits (2
    # waits 3 and 2, 1 waits 2).
    ("requeue_head_on_a_step_memory", """
pool reqs { cap 2; admit via E; }
pool kv { cap 3; preempt lifo; }
stage E : step { budget 8; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  hold reqs (1), kv (1) { run E decode (3) growing kv; }
  observe t = now + 0 * serial;
}
run { horizon 20; }
""", {"t": [(0, 3.0, 3.0), (1, 6.0, 6.0), (2, 9.0, 9.0)]},
     {("reqs", None): {"wait": 1.4, "queue": 0.35, "admissions": 5},
      ("kv", None): {"used": 1.0, "preemptions": 2, "stuck": 0}, ("E", None): {"iterations": 9}}),
    # evict by: "Keys are evaluated per cache entry at the Evict moment and may read … the entry's
    # session's attributes: current while the session lives, as they were at its last release after it has
    # ended. The smallest key goes first." Session 0 caches 4 with k = 1, then sets k = 100 and ends; 1
    # caches 4 with k = 50 and lives on; at 1 session 2's 4 (cap 8) evicts one entry. By (k): 0's (1, its k
    # at its release, not 100), so 1 still finds its 4 at 2; by (-k): 1's (-50 against -1): 0. Either way one
    # entry of 4 goes at 1 and the other stays: cached 4 + 4 over [0, 1], 4 after (2's cache (0) keeps
    # nothing): 44.
    ("evict_by_an_ended_sessions_keys_at_release", EVICT.replace("KEY", "k"), {"c1": [(1, 2.0, 4.0)]},
     {("P", None): {"cached": 4.4, "evicted_entries": 1, "evicted_units": 4.0}}),
    ("evict_by_a_live_sessions_keys_now", EVICT.replace("KEY", "-k"), {"c1": [(1, 2.0, 0.0)]},
     {("P", None): {"cached": 4.4, "evicted_entries": 1, "evicted_units": 4.0}}),
    # "Selection occurs at admission attempts; there is no implicit aging timer": cap 2; session 2's key
    # falls from 2 to 0 once it has waited 1 s, the others' is 1. At 0: 0 (key 1, serial 0) is admitted, then
    # 1 (1, 1) heads the queue and does not fit (2 more): it blocks 2 (2, 2). At 1 2's key becomes 0, but
    # nothing happens then; at 1.5 session 3's run ends, the settle tries the queue again and takes 2 (0, 2),
    # which fits: t = 1.5. 1 waits for both (0's 10 s, 2's to 11.5): t = 11.5. P: used 1, 2, 1, 2 over [0,
    # 1.5], [1.5, 10], [10, 11.5], [11.5, 20]: 37; queue 11.5 + 1.5 = 13; waits 0, 1.5, 11.5.
    ("no_aging_timer", """
pool P { cap 2; queue by (serial == 2 ? (waited >= 1 ? 0 : 2) : 1, serial); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 3) {
    run d (1.5);
  } else {
    hold P (serial == 1 ? 2 : 1) { observe t = now + 0 * serial; run d (10); }
  }
}
run { horizon 20; }
""", {"t": [(0, 0.0, 0.0), (2, 1.5, 1.5), (1, 11.5, 11.5)]},
     {("P", None): {"used": 1.85, "queue": 0.65, "wait": 13 / 3, "admissions": 3}}),
    # The grower its own victim on a step engine served newest first (serve by (-admission)), under three
    # spellings of lifo's victims: lifo, by (0) (every candidate ties; "ties go to the last admitted") and by
    # (0, -admission) (docs/language.md: such keys stop the serving as lifo does). kv cap 3; session 0 holds 1
    # at 0, session 1 at 1, each decoding 3 growing kv. [0, 1]: 0 (position 1). [1, 2]: 1 (1), 0 grows (2; 3
    # in use). [2, 3]: 1 is served first, its growth does not fit, the last admitted is 1 itself: preempted,
    # and 0 gets nothing (the step only preempted). At 3 1 is admitted again; [3, 4]: 1 is planned its token,
    # then 0's growth to 3 takes it as the victim (its token given back; position 0, no further than its
    # first preemption: stuck); 0 done at 4. 1 is admitted at 4 and decodes [4, 7]. kv used 1, 3, 2, 3, 1, 2,
    # 3: 15; queue 1 over [2, 4]; waits 0, 0, 1, 1; E: 7 iterations, tokens 1, 2, 0, 1, 1, 1, 1.
    ("self_victim_stops_the_serving_lifo", """pool kv { cap 3; preempt lifo; }
stage E : step { budget 8; cost 1; memory kv; serve by (-admission); }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold kv (1) { run E decode (3) growing kv; }
  observe t = now + 0 * serial;
}
run { horizon 20; }
""",
     {"t": [(0, 4.0, 4.0), (1, 7.0, 7.0)]},
     {("kv", None): {"used": 0.75, "queue": 0.1, "wait": 0.5, "preemptions": 2, "stuck": 1},
      ("E", None): {"iterations": 7, "tokens": 1.0}}),
    ("self_victim_stops_the_serving_by_constant", """pool kv { cap 3; preempt by (0); }
stage E : step { budget 8; cost 1; memory kv; serve by (-admission); }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold kv (1) { run E decode (3) growing kv; }
  observe t = now + 0 * serial;
}
run { horizon 20; }
""",
     {"t": [(0, 4.0, 4.0), (1, 7.0, 7.0)]},
     {("kv", None): {"used": 0.75, "queue": 0.1, "wait": 0.5, "preemptions": 2, "stuck": 1},
      ("E", None): {"iterations": 7, "tokens": 1.0}}),
    ("self_victim_stops_the_serving_by_constant_then_admission", """pool kv { cap 3; preempt by (0, -admission); }
stage E : step { budget 8; cost 1; memory kv; serve by (-admission); }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold kv (1) { run E decode (3) growing kv; }
  observe t = now + 0 * serial;
}
run { horizon 20; }
""",
     {"t": [(0, 4.0, 4.0), (1, 7.0, 7.0)]},
     {("kv", None): {"used": 0.75, "queue": 0.1, "wait": 0.5, "preemptions": 2, "stuck": 1},
      ("E", None): {"iterations": 7, "tokens": 1.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pool_reference_by_hand(monkeypatch, src, obs, figures):
    r, got = run(src, monkeypatch)
    for name, want in obs.items():
        assert got.get(name, []) == want, name
    js = report_json(r)
    for (name, index), want in figures.items():
        entry = next(e for e in js["stages"] + js["pools"] if e["name"] == name and e["index"] == index)
        assert {k: entry[k] for k in want} == pytest.approx(want, rel=1e-12), (name, index)


#: a pool with the option OPTION beside a step engine whose memory it is, a hidden attribute o
REFUSAL = """pool kv { cap 10; OPTION }
stage E : step { budget 4; cost 1; memory kv; }
workload { arrive batch(1); hidden o; }
session { set o = 2; hold kv (1) { run E decode (o) growing kv; } }
run { horizon 10; }
"""

REFUSALS = [
    # preempt: "A key may not draw, read budget_left(…), or read computed, which is the position at the
    # session's last preemption, not where the candidate is now"; hidden attributes are the scheduler's
    # (language.txt §3, hidden: "a link error in … a queue or eviction key"); `waited` is the queue's.
    ("preempt_reads_computed", "preempt by (computed);",
     "a preemption key may not read `computed` (the position at the session's last preemption); `position` "
     "is where the candidate is now"),
    ("preempt_draws", "preempt by (~exp(1));", "a preemption key may not draw (`~exp`)"),
    ("preempt_reads_budget_left", "preempt by (budget_left(E));", "a preemption key may not read `budget_left(…)`"),
    ("preempt_reads_hidden", "preempt by (o);", "`o` is hidden: a preemption key is the scheduler's, and may not "
                                                "read it"),
    ("preempt_reads_waited", "preempt by (waited);", "`waited` is not readable in a preemption key: it exists in a "
                                                     "pool's queue keys (reading it here would be a silent 0)"),
    # queue by: "Keys may read visible session attributes, now and pool/stage queries, and may not draw";
    # "Hidden attributes remain unreadable"; the Victim moment's decoding and position are not the queue's.
    ("queue_draws", "queue by (~exp(1));", "a pool's queue key may not draw (`~exp`)"),
    ("queue_reads_hidden", "queue by (o);", "`o` is hidden: a pool's queue key is the scheduler's, and may not "
                                            "read it"),
    ("queue_reads_position", "queue by (position);", "`position` is not readable in a pool's queue key: it exists "
                                                     "in preemption keys (reading it here would be a silent 0)"),
]


@pytest.mark.parametrize("option, words", [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
def test_what_a_key_may_not_read(option, words):
    assert refused(REFUSAL.replace("OPTION", option)) == words


@pytest.mark.parametrize("option", ["preempt by (decoding, position, admission, -serial);",
                                    "queue by (waited, computed, now, used(kv), serial);"])
def test_what_a_key_may_read(option):
    # "Keys are read at the Victim moment, for each candidate: its visible attributes, admission …, decoding
    # … and position …, constants, now and pool and stage queries"; "waited supplies seconds since the
    # current hold entered the queue … Keys may read visible session attributes, now and pool/stage queries".
    serq_frontend.compile(source=REFUSAL.replace("OPTION", option), sets={}, defs={})
