"""Conformance of language.txt §3's Configuration and pool-reference.txt's `queue` by hand, round 44: the
instants at which a pool's admissions are attempted.

§3: "After every event the interpreter settles: it runs every ready session, then retries growers and
admissions at every pool not served by a stage, until nothing changes"; pool-reference.txt, `queue`:
"Selection occurs at admission attempts; there is no implicit aging timer"; language.txt §3, Waiting
selection: "Selection creates no timer events; it runs when the scheduler attempts admission".

A completion that a ps stage rescheduled when a job came, the completion of a job a preemption took off its
stage, and the timer of a lease that ended before its time are left in the simulator's heap and do nothing
when they come (docs/simulator.md): they are no events of the program, and an admission was attempted at
them all the same, so a queue key that reads `waited` admitted a session at the instant such a completion
fell, an instant the program does not have. So was the warm-up's end, where only the measurement starts:
a program's run depended on its warm-up.

In each program s2 holds 1 of g (cap 3) throughout; s1, which wants 3, heads g's queue (keys (1, -1));
s0 joins at 0.5 wanting 1, and its key becomes (0, 0) once it has waited 1 (at 1.5), which puts it at the
head, where it fits. Nothing happens between 1.5 and s3's completion at 3: s0 is admitted at 3, the first
attempt after 1.5. (It was admitted at 2, where the left-behind completion or timer fell.) s1 waits until s2
leaves at 100.

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes). Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import check_by_hand

BASE = """
pool g { cap 3; queue by (waited >= 1 && serial == 0 ? 0 : 1, -serial); }
POOLS
stage d : delay;
STAGES
workload { arrive batch(N); }
session {
  branch (serial == 0) { run d (0.5); hold g (1) { observe a0 = now; } }
  else { branch (serial == 1) { hold g (3) { observe a1 = now; } }
  else { branch (serial == 2) { hold g (1) { run d (100); } }
  else { branch (serial == 3) { run d (3); }
  else { OTHER } } } }
}
run { horizon 200; }
"""


def program(n: int, other: str, pools: str = "", stages: str = "") -> str:
    return (BASE.replace("POOLS", pools).replace("STAGES", stages).replace("N", str(n))
            .replace("OTHER", other))


CASES = [
    # s4 runs ps (2) alone from 0 (rate 1: its completion due at 2) and s5 joins at 1 (after d (1)): both at
    # 1/2, the completion is rescheduled to 3 (s4's 1 left at 1/2), and the one due at 2 does nothing (s5,
    # 9 left at 3, ends at 12). g: s0 waits 2.5, s1 100: queue (2.5 + 100)/200, wait (0 + 100 + 2.5)/3.
    ("a_completion_a_ps_stage_rescheduled",
     program(6, "branch (serial == 4) { run s (2); observe t4 = now; } else { run d (1); run s (10); }",
             stages="stage s : ps(1);"),
     {"a0": [(0, 3.0, 3.0)], "a1": [(1, 100.0, 100.0)], "t4": [(4, 3.0, 3.0)]},
     {("g", None): {"queue": 102.5 / 200, "wait": 102.5 / 3, "admissions": 3}}),
    # s4 leases 1 of q for 2 s from 0 and ends the lease with release q at 0.2: its timer at 2 does nothing.
    ("the_timer_of_a_lease_that_ended_before_its_time",
     program(5, "hold q (1) { } lease q (2); run d (0.2); release q;", pools="pool q { cap 5; }"),
     {"a0": [(0, 3.0, 3.0)], "a1": [(1, 100.0, 100.0)]},
     {("g", None): {"queue": 102.5 / 200, "wait": 102.5 / 3}, ("q", None): {"used": 0.2 / 200}}),
    # s4 holds r (1) from 0, s5 from 0.1 (r full) with a run due to end at 2; at 0.2 s4 grows 1 and lifo
    # takes the last admitted, s5, off its run: that completion at 2 does nothing. s5 waits at the head of r
    # until s4 leaves at 10.2.
    ("the_completion_of_a_job_a_preemption_took_off_its_stage",
     program(6, "branch (serial == 4) { hold r (1) { run d (0.2); grow r (1); run d (10); } }\n"
                "  else { run d (0.1); hold r (1) { observe a5 = now; run d (1.9); } }",
             pools="pool r { cap 2; preempt lifo; }"),
     {"a0": [(0, 3.0, 3.0)], "a1": [(1, 100.0, 100.0)], "a5": [(5, 0.1, 0.1), (5, 10.2, 10.2)]},
     {("g", None): {"queue": 102.5 / 200, "wait": 102.5 / 3}, ("r", None): {"preemptions": 1}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_no_admission_at_an_instant_where_nothing_happened(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


@pytest.mark.parametrize("warmup", [0, 2, 2.5])
def test_the_warm_ups_end_is_no_admission_attempt(monkeypatch, warmup):
    """program-reference.txt, run: "warmup … Samples before this time are discarded": the warm-up's end is
    where the measurement starts, not an event of the program, so it is no admission attempt either. The
    same program as above with nothing left behind: s0 is admitted at 3 under every warm-up (it was
    admitted at the warm-up's end, 2 or 2.5, when that fell after s0's wait passed 1)."""
    src = program(4, "run d (3);").replace("run { horizon 200; }", f"run {{ horizon 200; warmup {warmup}; }}")
    check_by_hand(monkeypatch, src, {"a0": [(0, 3.0, 3.0)], "a1": [(1, 100.0, 100.0)]}, {})
