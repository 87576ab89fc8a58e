"""Conformance of language.txt §3 on step stages whose memory is a pool with a cache, sentences no earlier
test held in these combinations:

* "One token to a decoding job, up to chunk to a prefilling one, until the budget is spent; a growing job
  first grows its hold to the position it will reach (block by block, preempting if needed); then the
  stage admits from the queues it serves": a resident's growth is booked before the iteration's admission,
  so a waiting request that fitted next to the resident's old allocation waits;
* "At the end of the body the units are released and min(ℓ, computed) units stay cached, rounded down to
  blocks (computed is the allocation, or the position a growing run or a load reached)": a growing run
  inside a hold larger than it needs caches the position, and the next hold consumes "at most ρ units of
  its own cached prefix" and grows from there.

Each program runs on the tier serQ picks and on the general engine (conform.run: the same report and
samples, byte for byte); every figure is computed by hand in the docstring.
"""

from __future__ import annotations

import pytest
from conform import at, pool, run, stage

GROWTH_BEFORE_ADMISSION = """
pool kv { cap 8; preempt lifo; }
pool reqs { cap 4; admit via E; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (0.5); }
  hold reqs (1), kv (serial == 0 ? 2 : NEED) {
    observe a = now;
    branch (serial == 0) { run E prefill (2) growing kv; run E decode (3) growing kv; }
    else { run E prefill (1); }
  }
  observe t = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("need, a, t, used, wait, iterations, tokens", [
    # s0 is admitted at 0 with 2 and prefills 2 over [0, 1] (position 2, no growth). s1 joins at 0.5 and
    # asks 6. The iteration at 1 first serves s0's token, growing its hold to 3, and only then admits:
    # 3 + 6 > 8, so s1 waits (it would have fitted beside the 2 s0 held before). s0 grows to 4 at 2 and to
    # 5 at 3 and is done at 4; s1 is admitted at 4 and prefills over [4, 5]. No preemption: s1 never held
    # kv beside s0's growth. used: 2 + 3 + 4 + 5 + 6 = 20 over 20; reqs waits 0 and 3.5; five iterations
    # of 2, 1, 1, 1 and 1 tokens.
    (6, [(0, 0.0), (1, 4.0)], [(0, 4.0), (1, 5.0)], 1.0, 1.75, 5, 6 / 5),
    # Asking 5, s1 fits beside s0's grown 3 at 1 (3 + 5 = 8): admitted in that iteration, it prefills its
    # 1 token beside s0's decode and is done at 2, before s0 grows to 4. used: s0 2 + 3 + 4 + 5, s1 5:
    # 19 over 20; iterations of 2, 2, 1, 1 tokens.
    (5, [(0, 0.0), (1, 1.0)], [(1, 2.0), (0, 4.0)], 0.95, 0.25, 4, 6 / 4),
])
def test_a_residents_growth_comes_before_the_iterations_admissions(monkeypatch, need, a, t, used, wait,
                                                                   iterations, tokens):
    """§3 Stages (step): "a growing job first grows its hold to the position it will reach …; then the
    stage admits from the queues it serves"; Pools: "admitted when every pool of its hold has room"; the
    head that does not fit blocks (`admit via`)."""
    r, o = run(GROWTH_BEFORE_ADMISSION.replace("NEED", str(need)), monkeypatch)
    assert [(s, x) for s, x, _v in o["a"]] == a
    assert [(s, x) for s, x, _v in o["t"]] == t
    kv, reqs = pool(r, "kv"), pool(r, "reqs")
    assert (kv.admissions, kv.preemptions, kv.used) == (2, 0, used)
    assert (reqs.admissions, reqs.wait) == (2, wait)
    e = stage(r, "E")
    assert (e.iterations, e.tokens, e.completions) == (iterations, tokens, 3)


GROWING_IN_A_LARGE_HOLD = """
pool kv { cap 20; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (8) { run E prefill (4) growing kv; observe u = used(kv); } cache (100);
  observe c = cachedin(kv);
  hold kv (2) { observe k = cached; run E prefill (3) growing kv; observe u = used(kv); } cache (100);
  observe c = cachedin(kv);
}
run { horizon 10; }
"""


def test_a_growing_run_in_a_larger_hold_caches_its_position(monkeypatch):
    """§3 Pools: "min(ℓ, computed) units stay cached … (computed is the allocation, or the position a
    growing run … reached)"; "consumes at most ρ units of its own cached prefix (cached := what it
    consumed); the rest of that entry stays in the cache as a dead entry"; a growing run grows its hold "to
    the position it will reach".

    The first hold allocates 8 and its growing prefill of 4 needs no growth (position 4 within 8): at 1 it
    caches min(100, 4) = 4, not its 8. The second hold, of 2, consumes 2 of those 4 (at most its
    allocation): `cached` 2, the other 2 dead; its prefill of 3 takes the position from 2 to 5 and the hold
    from 2 to 5. At 2 it caches 5, beside the dead 2.

    used: 8 on [0, 1], 5 on [1, 2]: 13 over 10. cached: 2 dead on [1, 2], 7 on [2, 10]: 58 over 10. Two
    iterations of 4 and 3 tokens."""
    r, o = run(GROWING_IN_A_LARGE_HOLD, monkeypatch)
    assert o["u"] == [(0, 1.0, 8.0), (0, 2.0, 5.0)]
    assert o["c"] == [(0, 1.0, 4.0), (0, 2.0, 5.0)]
    assert o["k"] == [(0, 1.0, 2.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.used, kv.cached, kv.evicted_units) == (2, 1.3, 5.8, 0.0)
    e = stage(r, "E")
    assert (e.iterations, e.tokens) == (2, 3.5)


IDLE_WITH_A_QUEUE = """
pool kv { cap 8; }
pool reqs { cap 4; admit via E; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (6) { run d (2.5); } }
  else { hold reqs (1), kv (4) { observe a = now; run E prefill (3); } }
  observe t = now;
}
run { horizon 10; }
"""


def test_an_idle_engine_with_a_waiting_queue_starts_when_a_release_elsewhere_makes_room(monkeypatch):
    """§3 Configuration: after every event the interpreter settles, "then it starts an iteration on every
    idle step stage that has residents or a waiting queue it serves"; Stages (step): "An iteration that
    schedules no token is not an iteration, unless it preempted"; Pools: a queue served by a step stage is
    admitted "at the start of an iteration".

    s0 holds 6 of kv outside the engine (a plain hold) over [0, 2.5]; s1 waits for reqs and 4 of kv
    (6 + 4 > 8). E has no resident and a waiting head that does not fit: it schedules nothing, so no
    iteration runs before 2.5 (one would be counted, and s1 would start on an iteration's boundary). At
    2.5 s0's release is the event; the settle then starts an iteration on the idle E, which admits s1
    and prefills its 3 tokens over [2.5, 3.5]. One iteration; reqs: s1 waited 2.5, queue 2.5 over 10;
    kv: 6 on [0, 2.5] and 4 on [2.5, 3.5]: 19 over 10."""
    r, o = run(IDLE_WITH_A_QUEUE, monkeypatch)
    assert at(o["a"]) == [(1, 2.5)]
    assert at(o["t"]) == [(0, 2.5), (1, 3.5)]
    e = stage(r, "E")
    assert (e.iterations, e.completions, e.tokens, e.utilisation) == (1, 1, 3.0, 0.1)
    kv, reqs = pool(r, "kv"), pool(r, "reqs")
    assert (kv.admissions, kv.used) == (2, 1.9)
    assert (reqs.admissions, reqs.wait, reqs.queue) == (1, 2.5, 0.25)
