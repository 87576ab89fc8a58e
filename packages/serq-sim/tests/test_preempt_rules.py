"""Preemption as pool-reference.txt states it, one hand-computed case each: whom ``preempt lifo`` takes on
a pool that is no engine's memory, what the key ``position`` reads during an iteration, and what a
preempted hold leaves cached."""

from __future__ import annotations

import serq_frontend
import serq_sim


def run(source: str):
    return serq_sim.run(serq_frontend.compile(source=source), check_invariants=True)


def samples(r, name):
    o = r.observe(name)
    return list(zip(o.times.tolist(), o.sessions.tolist(), o.values.tolist()))


def test_lifo_on_a_plain_pool_takes_the_pools_latest_holder():
    # Session 0 holds p (4) from 0; session 1 holds p (4) from 1 (used 8). At 2 session 0 enters a hold
    # of q, its latest admission anywhere, then grows p by 4: 12 > 10. The pool's most recently admitted
    # holder is session 1, so it is the victim (released, back at the head of p's queue); session 0 grows
    # to 8 and ends at 3, when session 1 is admitted again and runs [3, 13].
    r = run("""
pool p { cap 10; preempt lifo; }
pool q { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold p (4) {
      run d (2);
      hold q (1) { grow p (4); run d (1); }
      observe done0 = now;
    }
  } else {
    run d (1);
    hold p (4) { observe start1 = now; run d (10); }
  }
}
""")
    assert samples(r, "done0") == [(3.0, 0, 3.0)]
    assert samples(r, "start1") == [(1.0, 1, 1.0), (3.0, 1, 3.0)]
    p = r.pool("p")
    assert (p.preemptions, p.stuck) == (1, 0)
    assert r.result.end == 13.0


def test_lifo_on_a_plain_pool_orders_by_that_pools_admissions():
    # Session 1 is admitted to p at 1, session 0 at 2; at 3 session 1 enters a hold of q (its latest
    # admission anywhere) and session 0 grows p: the pool's latest holder is session 0, the grower, which
    # preempts itself (the pool's order, not the sessions' latest admissions, decides).
    r = run("""
pool p { cap 10; preempt lifo; }
pool q { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    run d (2);
    hold p (4) { observe start0 = now; run d (1); grow p (4); run d (1); }
  } else {
    run d (1);
    hold p (4) { run d (2); hold q (1) { run d (20); } }
  }
}
""")
    # 0 at 2 (used 8). At 3 session 1 enters q first (its run was scheduled first), then 0 grows: 12 > 10;
    # the sessions' latest admissions would name 1 (q at 3), the pool's names 0, the grower: it preempts
    # itself, goes back to the head, fits again at once (4 + 4) and is admitted at 3, runs to 4, fails
    # again at the same position (counted stuck once), and so on every second until session 1 releases p
    # at 23 (before 0's run, scheduled later, ends there): 0's last admission is at 22, it grows at 23 and
    # ends at 24.
    assert [t for t, _s, _v in samples(r, "start0")] == [float(t) for t in range(2, 23)]
    p = r.pool("p")
    assert (p.preemptions, p.stuck) == (20, 1)
    assert r.result.end == 24.0


def test_position_is_what_the_hold_has_computed():
    # Step clock, cost 1. Session 0 holds kv (5), session 1 kv (2), both decode 6 tokens growing kv, in
    # admission order, cap 8. Iterations 1-2: both advance. Iteration 3: 0 to 3, 1 grows to 3 (used 8) and
    # reaches 3. Iteration 4 (from 3): 0 is planned its 4th token, then 1 must grow and cannot. Both have
    # computed 3 (the 4th token of 0 is still being computed), so `preempt by (-position)` ties and the
    # last admitted, 1 itself, is the victim; it is admitted again at 4 with computed 3.
    r = run("""
pool kv { cap 8; preempt by (-position); }
stage E : step { budget 100; cost 1; memory kv; };
workload { arrive batch(2); }
session {
  hold kv (serial == 0 ? 5 : 2) {
    observe comp = computed;
    run E decode (6) growing kv;
  }
}
""")
    assert samples(r, "comp") == [(0.0, 0, 0.0), (0.0, 1, 0.0), (4.0, 1, 3.0)]
    # 0 ends at 6; 1 decodes its 6 again from 4: ends at 10
    assert r.result.end == 10.0
    assert r.pool("kv").preemptions == 1


def test_position_key_sees_a_strictly_greater_computed_position():
    # The same with session 0 one token ahead (it has decoded 3 before session 1 is admitted at 1): at
    # the failing growth 0 has computed 4 and 1 has 3, so 0 is the victim (-4 < -3), as it was when the
    # key read 5 for it.
    r = run("""
pool kv { cap 8; preempt by (-position); }
stage E : step { budget 100; cost 1; memory kv; };
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (1); }
  hold kv (serial == 0 ? 5 : 2) {
    observe comp = computed;
    run E decode (6) growing kv;
  }
}
""")
    # 0 decodes at [0,1], [1,2], ...; 1 is admitted at 1 (used 7). Iteration at 3: 0 has 3 -> 4, 1 has 2
    # -> 3, growing to 3 (used 8). Iteration at 4: 0 is planned 5 (computed 4); 1 needs a 4th unit: the
    # candidates' computed positions are 4 and 3, so 0 is preempted. Its 5 do not fit next to 1's 4
    # until 1 ends: 1 decodes its 4th to 6th tokens over [4, 7], and 0 is admitted again at 7.
    assert samples(r, "comp") == [(0.0, 0, 0.0), (1.0, 1, 0.0), (7.0, 0, 4.0)]
    assert r.pool("kv").preemptions == 1


def test_a_preempted_hold_caches_its_computed_prefix():
    # Session 1 holds p (10) with cache (10) from 1 and computes nothing on p (it runs a delay). At 2
    # session 0 grows its 5 by 6: 21 > 20, so p's latest holder, 1, is preempted. It had computed 0
    # (computed reads 0), so it caches 0, not its allocation of 10; re-admitted at 3 it finds nothing.
    r = run("""
pool p { cap 20; block 1; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold p (5) { run d (2); grow p (6); run d (1); }
  } else {
    run d (1);
    hold p (10) { observe c = cached; observe k = computed; run d (5); } cache (10);
  }
}
""")
    assert samples(r, "c") == [(1.0, 1, 0.0), (3.0, 1, 0.0)]
    assert samples(r, "k") == [(1.0, 1, 0.0), (3.0, 1, 0.0)]
    assert r.result.end == 8.0


def test_a_preempted_hold_caches_the_prefix_it_computed_by_a_load():
    # As above, but session 1 loads 4 units into its hold first: it had computed 4, which it caches and
    # finds again (cached 4, computed 4) when admitted again at 3.
    r = run("""
pool p { cap 20; block 1; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold p (5) { run d (2); grow p (6); run d (1); }
  } else {
    run d (1);
    hold p (10) { observe c = cached; observe k = computed; load p (4); run d (5); } cache (10);
  }
}
""")
    assert samples(r, "c") == [(1.0, 1, 0.0), (3.0, 1, 4.0)]
    assert samples(r, "k") == [(1.0, 1, 0.0), (3.0, 1, 4.0)]
