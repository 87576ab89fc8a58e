"""Conformance of pool-reference.txt's preemption candidates and program-reference.txt's finite run, in
cases no earlier test held:

* "If no stage names it as memory, candidates are holders with an active hold scope": a holder of the pool
  that waits, inside its hold, in another pool's queue is one; preempted, it "leaves its stage, releases its
  hold" and leaves the queue it waited in, and "re-enters the hold's first pool's queue to execute the hold
  again", so the inner hold joins its queue anew, behind a hold that joined while it was out;
* `run { arrivals N }`: "The report gives the time the run ended as end, and its rates and time averages
  are over end − warmup", a gauge's time average included ("whose time average over [warmup, end] the
  report gives, … and the least and greatest value held").

Each program runs on the tier serQ picks and on the general engine (conform.run: the same report and
samples, byte for byte); every figure is computed by hand in the docstring.
"""

from __future__ import annotations

from conform import pool, run, stage

WAITING_VICTIM = """
pool kv { cap 4; preempt lifo; }
pool g { cap 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); observe qg = queued(g); run d (1); } }
  branch (serial == 1) { hold kv (2) { observe a = now; hold g (1) { observe b = now; run d (1); } } }
  branch (serial == 2) { hold g (1) { run d (10); } }
  branch (serial == 3) { run d (1.5); hold g (1) { observe b = now; run d (1); } }
  observe done = now;
}
run { horizon 30; }
"""


def test_a_holder_waiting_in_another_pools_queue_is_a_candidate_and_leaves_that_queue(monkeypatch):
    """pool-reference `preempt`: "Candidates are holders resident in the stage whose memory is this pool. If
    no stage names it as memory, candidates are holders with an active hold scope"; "The victim leaves its
    stage, releases its hold and caches its computed prefix. It re-enters the hold's first pool's queue";
    `lifo`: "preempt the last admitted"; `queue fifo`: "FIFO keeps enqueue order".

    At 0: s0 and s1 hold kv 2 each (kv full); s2 holds g over [0, 10]; s1 joins g's queue inside its kv
    hold. At 1 s0 grows kv by 2: 4 + 2 > 4, and the last admitted holder is s1, whose hold scope is active
    while it waits for g: it is preempted, leaves g's queue (queued(g) reads 0 after the growth) and
    re-enters kv's queue; s0 grows to 4. s3 joins g's queue at 1.5. s0 ends at 2: s1 is admitted to kv again
    and joins g's queue behind s3. At 10 s3 takes g, over [10, 11]; s1 over [11, 12].

    kv: admissions 3, waits 0, 0, 1: 1/3; used s0 2 on [0, 1] and 4 on [1, 2], s1 2 on [0, 1] and
    [2, 12]: 2 + 4 + 2 + 20 = 28 over 30. g: admissions s2 at 0, s3 at 10 (waited 8.5), s1 at 11 (waited 9,
    from its joining at 2): 17.5 / 3; used 10 + 1 + 1 over 30."""
    r, o = run(WAITING_VICTIM, monkeypatch)
    assert o["qg"] == [(0, 1.0, 0.0)]
    assert o["a"] == [(1, 0.0, 0.0), (1, 2.0, 2.0)]
    assert o["b"] == [(3, 10.0, 10.0), (1, 11.0, 11.0)]
    assert o["done"] == [(0, 2.0, 2.0), (2, 10.0, 10.0), (3, 11.0, 11.0), (1, 12.0, 12.0)]
    kv, g = pool(r, "kv"), pool(r, "g")
    assert (kv.admissions, kv.preemptions, kv.wait, kv.used) == (3, 1, 1 / 3, 28 / 30)
    assert (g.admissions, g.preemptions, g.wait, g.used) == (3, 0, 17.5 / 3, 12 / 30)


DRAINED = """
pool p { cap 4; }
stage d : delay;
workload { arrive renewal(~det(1)); }
session { hold p (1) { run d (2); } }
gauge u = used(p);
run { horizon 100; arrivals 2; warmup 1.5; }
"""


def test_a_finite_runs_averages_and_gauges_are_over_end_less_warmup(monkeypatch):
    """program-reference `run`: "arrivals … Stop after exactly this many arrivals and run until their
    sessions have all ended"; "The report gives the time the run ended as end, and its rates and time
    averages are over end − warmup"; `gauge`: "whose time average over [warmup, end] the report gives, …
    and the least and greatest value held".

    Arrivals at 1 and 2 (a renewal's first comes after a gap), each holding p 1 for 2 s: the run ends at 4
    (not at the horizon 100). Over [1.5, 4]: used 1 on [1.5, 2], 2 on [2, 3], 1 on [3, 4]: 3.5 / 2.5 = 1.4,
    the pool's and the gauge's, whose least and greatest are 1 and 2 (the 0 before 1 is before the warm-up);
    d has 1.4 present and completes 2 jobs (at 3 and 4) over 2.5: 0.8 a second; one admission (at 2) is
    after the warm-up, and both sessions end after it (ended 2)."""
    r, _o = run(DRAINED, monkeypatch)
    assert (r.result.end, r.result.arrivals, r.result.ended) == (4.0, 2, 2)
    p = pool(r, "p")
    assert (p.used, p.holders, p.admissions) == (1.4, 1.4, 1)
    g = r.result.gauges["u"]
    assert (g.mean, g.min, g.max) == (1.4, 1.0, 2.0)
    d = stage(r, "d")
    assert (d.present, d.completions, d.throughput) == (1.4, 2, 0.8)


QUEUED_VICTIM = """
pool kv { cap 4; preempt lifo; }
stage f : fifo(1);
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); run d (1); } }
  branch (serial == 1) { run f (3); }
  branch (serial == 2) { hold kv (2) { observe a = now; run f (5); } }
  observe done = now;
}
run { horizon 10; }
"""


def test_a_victim_waiting_in_a_fifo_stages_queue_leaves_it(monkeypatch):
    """pool-reference `preempt`: "The victim leaves its stage, releases its hold … It re-enters the hold's
    first pool's queue to execute the hold again"; `lifo`: "preempt the last admitted".

    At 0 s0 holds kv 2 and runs d; s1 takes f's one server over [0, 3]; s2 holds kv 2 and waits in f's
    queue. At 1 s0's growth (4 + 2 > 4) preempts s2, the last admitted: its job leaves f's queue unserved,
    and s0 grows to 4, ending at 2. s2 is admitted again at 2, joins f's queue and is served over [3, 8].

    f: 2 completions, waits 0 and 1 (the abandoned wait counts nowhere): 0.5; service (3 + 5) / 2 = 4;
    present: s1 on [0, 3], s2 on [0, 1] and [2, 8]: 10 over 10; busy 8 of 10. kv: used s0 2 + 4, s2 2 + 12:
    20 over 10; waits 0, 0, 1: 1/3."""
    r, o = run(QUEUED_VICTIM, monkeypatch)
    assert o["a"] == [(2, 0.0, 0.0), (2, 2.0, 2.0)]
    assert o["done"] == [(0, 2.0, 2.0), (1, 3.0, 3.0), (2, 8.0, 8.0)]
    f = stage(r, "f")
    assert (f.completions, f.wait, f.service, f.present, f.utilisation) == (2, 0.5, 4.0, 1.0, 0.8)
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.wait, kv.used) == (3, 1, 1 / 3, 2.0)


CURRENT_KEYS = """
pool kv { cap 6; preempt by (pr); }
stage d : delay;
workload { arrive batch(3); }
session {
  set pr = serial == 0 ? 0 : serial == 1 ? 5 : 100;
  branch (serial == 2) { run d (1); hold kv (2) { grow kv (2); observe g = now; run d (1); } }
  else { hold kv (2) { observe a = now; set pr = serial == 0 ? 9 : pr; run d (3); } }
  observe done = now;
}
run { horizon 20; }
"""


def test_a_preemption_key_reads_the_candidates_attributes_at_the_victim_moment(monkeypatch):
    """pool-reference `preempt`: "Keys are read at the Victim moment, for each candidate: its visible
    attributes"; "Preempt the candidate with the least keys"; "requeue head (the default) places it first".

    s0 (pr 0) and s1 (pr 5) hold kv 2 from 0; s0 sets pr = 9 in its body. At 1 s2 (pr 100) holds 2 and
    grows by 2: 6 + 2 > 6. The keys read now are 9, 5, 100: s1 is the victim (read at s0's admission, s0's
    0 would have been the least); s2 grows to 4, ends at 2, and s1 runs again over [2, 5].

    kv: admissions 4, waits 0, 0, 0, 1: 0.25; used s0 2 × 3, s1 2 × 1 + 2 × 3, s2 4 × 1: 18 over 20."""
    r, o = run(CURRENT_KEYS, monkeypatch)
    assert (o["g"], o["a"]) == ([(2, 1.0, 1.0)], [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.0, 2.0)])
    assert o["done"] == [(2, 2.0, 2.0), (0, 3.0, 3.0), (1, 5.0, 5.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.wait, kv.used) == (4, 1, 0.25, 0.9)
