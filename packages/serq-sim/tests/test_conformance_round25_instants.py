"""Conformance of language.txt §3, Configuration and Ties, at one instant where several events fall:

"After every event the interpreter settles: it runs every ready session, then retries growers and
admissions at every pool not served by a stage, until nothing changes; then it starts an iteration on every
idle step stage that has residents or a waiting queue it serves, provided no other event is pending at the
same instant (a scheduler step sees every arrival up to it)." Ties: "Events at one instant: the order they
were scheduled; sessions run in the order they became ready." Pools: a lease keeps its allocation "until
… t seconds" (docs/language.md: an event scheduled at the scope's end). A step stage's residents are
served in admission order.

The step stage's iteration ends at an instant where two more events are due, scheduled after it: the
iteration that follows must wait for both and serve the sessions they bring, in the order of the
admissions their events led to. Run on the tier serQ picks and on the general engine (conform.run).
"""

from __future__ import annotations

from conform import pool, run, stage

PROGRAM = """
pool r { cap 10; }
pool p { cap 1; }
stage E : step { budget 8; chunk 4; cost 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold r (1) { run E prefill (12); } }
  branch (serial == 1) { hold p (1) { run d (0.5); } cache (0) lease p (0.5); run d (5); }
  branch (serial == 2) { hold p (1) { observe a = now; run E prefill (4); } }
  branch (serial == 3) { run d (0.5); run d (0.5); hold r (1) { observe a = now; run E prefill (4); } }
  observe t = now;
}
run { horizon 10; }
"""


def test_an_iteration_waits_for_the_events_due_at_its_instant_and_serves_what_they_admit(monkeypatch):
    """At 0 the sessions run in serial order and only then are the pools tried: s0's hold of r and s1's of p
    are admitted after s3 has started its first run of d, so s3's event at 0.5 is due before s1's. s2 waits
    for p. The iteration [0, 1] serves s0 alone (chunk 4).

    At 0.5 s3's event comes first (its next run of d is due at 1), then s1's: its scope ends and the lease
    on p runs out 0.5 later, at 1, scheduled after s3's run. s1 lives on (run d (5)), so its session's end
    does not end the lease first.

    At 1 three events are due, in the order scheduled: the iteration's end (scheduled at 0), s3's run, the
    lease. After the first, E is idle but two events are pending at 1: no iteration starts. s3's event:
    s3 joins r's queue and is admitted (a = 1). The lease's: p is free, s2 is admitted (a = 1). Then the
    iteration [1, 2] serves in admission order s0 (4 tokens), s3 (4), and the budget of 8 is spent: s2
    gets none. s3 is done at 2; [2, 3] serves s0's last 4 and s2's 4: both done at 3. (An iteration started
    at the iteration's end would have served s0 alone over [1, 2], s3 done at 3 and s2 at 4.)

    E: three iterations of 4, 8 and 8 tokens serving 1, 2 and 2 jobs; busy on [0, 3]: 0.3. p: s1 holds it on [0, 1] (the lease
    included), s2 on [1, 3]: used 3 / 10; s2 waited 1: mean wait 0.5, queue 1 / 10. r: s0 on [0, 3],
    s3 on [1, 2]: used 4 / 10."""
    r, o = run(PROGRAM, monkeypatch)
    assert o["a"] == [(2, 1.0, 1.0), (3, 1.0, 1.0)]
    assert o["t"] == [(3, 2.0, 2.0), (0, 3.0, 3.0), (2, 3.0, 3.0), (1, 5.5, 5.5)]
    e = stage(r, "E")
    assert (e.completions, e.iterations, e.utilisation, e.tokens, e.batch) == (3, 3, 0.3, 20 / 3, 5 / 3)
    p, q = pool(r, "p"), pool(r, "r")
    assert (p.admissions, p.used, p.wait, p.queue) == (2, 0.3, 0.5, 0.1)
    assert (q.admissions, q.used) == (2, 0.4)


def test_an_event_due_after_the_instant_is_not_waited_for(monkeypatch):
    """The control: s3's second run of d lasts 0.6, so it is due at 1.1, after the instant. At 1 the
    iteration's end and the lease are due: the iteration waits for the lease, s2 is admitted (a = 1) and
    [1, 2] serves s0 and s2 (4 each): s2 is done at 2. s3 is admitted at 1.1, while E is busy, and [2, 3]
    serves s0's last 4 and s3's 4: both done at 3."""
    src = PROGRAM.replace("run d (0.5); run d (0.5); hold r", "run d (0.5); run d (0.6); hold r")
    r, o = run(src, monkeypatch)
    assert o["a"] == [(2, 1.0, 1.0), (3, 1.1, 1.1)]
    assert o["t"] == [(2, 2.0, 2.0), (0, 3.0, 3.0), (3, 3.0, 3.0), (1, 5.5, 5.5)]
