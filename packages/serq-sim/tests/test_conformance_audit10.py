"""A tenth conformance audit: rules of language.txt §3 and pool-reference.txt that the earlier rounds
(test_conformance_hand.py … _audit9.py) ran only apart, here where their orders meet, each the smallest
program whose outcome follows from the spec's words by hand, run on the tier serQ picks and on the
general engine (byte-identical reports):

(a) a spilled prefix is usable when its write completes, and the events of one instant go in the order
    they were scheduled: an admission at the write's instant sees it or not by that order;
(b) decoders that grow block by block (vLLM's shape) evict the least recently released prefix first, and
    the last admitted resident preempts itself under `preempt lifo`;
(c) an engine family of one serves a pool family in member (declaration) order;
(d) a preempted hold's `cache` clause is read at the preemption;
(e) `holders` counts a lease and each of nested holds, over the window after the warm-up;
(f) a hold's header under `admit via` reads `now` at the iteration that admits it;
(g) `queue by (K, waited)` is last-come-first within K across instants and join order within one, and a
    victim re-queued at the tail is a newcomer there (waited 0), at the head ahead of every key;
(h) `choose` at one instant sees the holds that joined before it, not yet admitted;
(i) `reserve held`: an inner hold's growth does not draw on its session's outer reservation;
(j) a lease's time is read when its scope ends, its hold's `cache` when the lease ends;
(k) `growing` is a step stage's: on a fifo, ps or delay stage (whose work is time) it is refused, in the
    source and in an IR file, as a mode there is (it was run as plain work and grew nothing);
(l) a closed population whose sessions end inside a hold: each hold caches per its clause, the prefix
    is found again at the next turn, the ended sessions' prefixes stay until the newcomers evict them;
(m) two engines' queues whose heads wait for room in one pool are served in the pools' declaration order
    when both engines start at one instant, whatever the order the engines are declared in;
(n) jobs of a ps stage, flows over several included, that finish at one instant finish in the order they
    started.
"""

from __future__ import annotations

import pytest
from conform import at, close, pool, refused, run, stage

SPILL_LANDING = """
pool kv { cap 4; spill tier via link (size / 4) when (1); }
pool tier { cap 10; }
stage link : delay;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { } cache (4);
    run d (X1); run d (X2);
    hold tier (4) { observe c = cached; } cache (4);
  } else {
    run d (1); hold kv (4) { run d (1); }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("x1, x2, c", [
    # s0's last run was scheduled at 0.5, before the write (at 1): it ends first at 2, s0's hold of the
    # tier is admitted at that event's settle, before the write's event lands the prefix: nothing cached.
    (0.5, 1.5, 0.0),
    # scheduled at 1.5, after the write: the prefix lands first, s0 consumes its 4.
    (1.5, 0.5, 4.0),
    # scheduled at 1, but after the write: s0's hold of kv joined kv's queue at 0 and was admitted at the
    # settle, after s1's first run was scheduled, so s1's run ends first at 1 (its admission evicts and
    # the write starts), then s0's, which schedules its second run behind the write.
    (1.0, 1.0, 4.0),
])
def test_a_spilled_prefix_is_seen_at_its_writes_instant_by_the_order_of_the_events(monkeypatch, x1, x2, c):
    """pool-reference `spill` and docs/language.md ("A spilled prefix is usable when its write completes":
    the written units reach the tier when the write on the link ends); §3 Ties: "Events at one instant: the
    order they were scheduled", and "After every event the interpreter settles".

    s0 caches 4 in kv at 0 (its hold joins kv's queue and is admitted at the settle). s1's hold of kv at 1
    needs the 4: s0's entry is evicted and spilled, the write (work 4 / 4 = 1 on a delay link) scheduled
    at 1, landing at 2. s0 reaches its hold of the tier at 2."""
    r, o = run(SPILL_LANDING.replace("X1", str(x1)).replace("X2", str(x2)), monkeypatch)
    assert o["c"] == [(0, 2.0, c)]
    kv, tier = pool(r, "kv"), pool(r, "tier")
    assert (kv.evicted_entries, kv.evicted_units, kv.spills) == (1, 4.0, 1)
    assert tier.admissions == 1


def test_growing_decoders_evict_the_oldest_prefix_first_and_the_last_admitted_preempts_itself(monkeypatch):
    """§3 Pools: "Other entries are evicted in the pool's order until allocations and cache fit", per block
    from the tail, `evict lru` "orders by release time and then release order"; Stages: "a growing job
    first grows its hold to the position it will reach (block by block, preempting if needed)"; `preempt
    lifo`: the resident "admitted last" is the victim, "The grower itself can be the victim"; an
    iteration that preempted admits nothing. (The decoders' tokens are planned in bulk between block
    boundaries, docs/simulator.md "Lazy growers": this is that path.)

    kv cap 10, block 2. s0 caches 2 at 0, s1 2 at 0.5 (both then wait at d). s2, s3 join q at 1 and the
    idle engine admits both (2 each: 4 used + 4 cached <= 10) and gives each a token an iteration of 1.
    Iteration at 3: both reach position 3 and grow to 4: s2 fits (6 + 4), s3 needs 2 more: the oldest
    entry, s0's, goes (c0 = 0, c1 = 2 at 4.5). Iteration at 5: s2 grows to 6, evicting s1's entry (10 +
    2 > 10); s3 cannot grow (12 > 10) and is the last admitted: it preempts itself (no cache clause:
    nothing cached), gets no token and waits at q's head; s2 gets its fifth. At 6 s3 is admitted again
    (6 + 2 <= 10) and decodes 6 anew: tokens at 6 … 11, done 12; s2's sixth token at 6, done 7.

    kv used: 4 on [1, 3), 8 on [3, 5), 6 on [5, 6), 8 on [6, 7), then s3 alone: 2, 4 from 8, 6 from 10:
    8 + 16 + 6 + 8 + 2 + 8 + 12 = 60 over 30. cached: 2 on [0, 0.5), 4 to 3, 2 to 5: 15 / 30. E: 11
    iterations, 16 tokens (s3's 4 before its preemption)."""
    r, o = run("""
pool kv { cap 10; block 2; preempt lifo; }
pool q { cap 10; admit via E; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (2) { } cache (2); run d (4.5); observe c0 = cachedin(kv); }
  else { branch (serial == 1) { run d (0.5); hold kv (2) { } cache (2); run d (4); observe c1 = cachedin(kv); }
  else { run d (1); hold q (1), kv (2) { run E decode (6) growing kv; } observe done = now; } }
}
run { horizon 30; }
""", monkeypatch)
    assert (o["c0"], o["c1"]) == ([(0, 4.5, 0.0)], [(1, 4.5, 2.0)])
    assert at(o["done"]) == [(2, 7.0), (3, 12.0)]
    kv, q = pool(r, "kv"), pool(r, "q")
    assert (kv.evicted_entries, kv.evicted_units, kv.preemptions, kv.stuck) == (2, 4.0, 1, 0)
    assert close(kv.used, 60 / 30) and close(kv.cached, 15 / 30)
    assert q.admissions == 3 and close(q.queue, 1 / 30) and close(q.wait, 1 / 3)
    e = stage(r, "E")
    assert e.iterations == 11 and close(e.utilisation, 11 / 30) and close(e.tokens, 16 / 11)


def test_an_engine_family_of_one_serves_a_pool_family_in_member_order(monkeypatch):
    """§3: "pool q[N] { admit via S; } next to stage S[N] serves q[i] by S[i] … next to a family of one,
    every member gets that one"; "A stage that serves several queues tries them in the order their pools
    are declared", admitting "while the iteration has budget left".

    S[0] (budget 1, cost 1) serves q[0] and q[1]. s0 joins q[1], s1 q[0], both at 0 (s0 first). The
    iteration at 0 tries q[0] first: s1 is admitted and takes the budget; s0 waits. s1 decodes at 0 and 1
    (done 2, no budget left at 1); s0 is admitted at 2 and decodes at 2 and 3: done 4. (Join order would
    have admitted s0 first.)"""
    r, o = run("""
pool q[2] { cap 10; admit via S; }
stage S[1] : step { budget 1; cost 1; }
workload { arrive batch(2); }
session {
  hold q[serial == 0 ? 1 : 0] (1) { run S[0] decode (2); }
  observe done = now;
}
run { horizon 30; }
""", monkeypatch)
    assert at(o["done"]) == [(1, 2.0), (0, 4.0)]
    q0, q1 = (next(p for p in r.result.pools if p.index == i) for i in (0, 1))
    assert (q0.wait, q1.wait) == (0.0, 2.0)
    s = stage(r, "S", 0)
    assert s.iterations == 4 and s.service == 2.0


def test_a_preempted_holds_cache_clause_is_read_at_the_preemption(monkeypatch):
    """pool-reference `preempt`: "The victim leaves its stage, releases its hold and caches its computed
    prefix"; §3: "cache is read when the session releases" and the release caches min(ℓ, computed)
    (docs/language.md: a preemption caches min(cache, its computed position)); the re-executed hold finds
    computed "set to the position the hold had computed".

    m cap 5, lifo. s0 holds 2, s1 2 (admitted after) and loads 2 (position 2). At 1 s0 grows by 2: 6 > 5,
    s1 is the last admitted holder: released, caching min(now = 1, 2) = 1; s0 grows (4 + 1 cached <= 5).
    s1 waits at the head (4 + 2 > 5) until s0 ends at 2, then consumes its 1 (cached 1, computed 2), loads
    1, runs 5 and at 7 caches min(7, 2) = 2. cached: 1 on [1, 2), 2 from 7: 24 / 30."""
    r, o = run("""
pool m { cap 5; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (2); run d (1); } }
  else { hold m (2) { observe c = cached; observe k = computed; load m (2 - cached); run d (5); } cache (now);
         observe e = cachedin(m); }
}
run { horizon 30; }
""", monkeypatch)
    assert o["c"] == [(1, 0.0, 0.0), (1, 2.0, 1.0)]
    assert o["k"] == [(1, 0.0, 0.0), (1, 2.0, 2.0)]
    assert o["e"] == [(1, 7.0, 2.0)]
    m = pool(r, "m")
    assert (m.preemptions, m.evicted_entries, m.admissions) == (1, 0, 3)
    assert close(m.cached, 47 / 30)


def test_holders_counts_a_lease_and_each_nested_hold_after_the_warm_up(monkeypatch):
    """§3: a configuration has "for each pool … the allocations of its holders"; a lease "keeps its
    allocation on m past the scope's end … until the session's release m, t seconds, or the session's end,
    and cache applies then" (docs/language.md: `holders` counts the allocations, a lease's and each of
    nested holds'); Gauges: the time average over [warmup, end] and the least and greatest value held.

    s0: outer hold 1, inner 2 on [0, 2), leased 3 s from 2 (to 5), the outer to 3. holders: 2 on [0, 3),
    1 on [3, 5), 0 after; used 3, 3, 2, then 0, and the lease's cache (2) from 5. Over [1, 10]: holders
    (2·2 + 2·1) / 9, used (3·2 + 2·2) / 9, cached 2·5 / 9."""
    r, _ = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (1) { hold m (2) { run d (2); } cache (2) lease m (3); run d (1); }
  run d (10);
}
gauge h = holders(m);
gauge u = used(m);
run { horizon 10; warmup 1; }
""", monkeypatch)
    h, u = r.result.gauges["h"], r.result.gauges["u"]
    assert close(h.mean, 6 / 9) and (h.min, h.max) == (0.0, 2.0)
    assert close(u.mean, 10 / 9) and (u.min, u.max) == (0.0, 3.0)
    m = pool(r, "m")
    assert close(m.holders, 6 / 9) and close(m.used, 10 / 9) and close(m.cached, 10 / 9)
    assert m.admissions == 0  # both at 0, before the warm-up


@pytest.mark.parametrize("budget, t, done", [
    # budget 1: s0's decode takes the whole budget of the iterations at 1 and 2; s1 is admitted at 3,
    # when the engine (idle, with a queue) starts an iteration: m's units read now = 3.
    (1, 3.0, [(0, 3.0), (1, 4.0)]),
    # budget 2: the iteration at 1 has 1 left after s0's token: s1 is admitted there, at now = 1.
    (2, 1.0, [(1, 2.0), (0, 3.0)]),
])
def test_a_header_under_admit_via_reads_now_at_the_iteration_that_admits_it(monkeypatch, budget, t, done):
    """§3: "The unit expressions are evaluated when the session is admitted"; a pool marked admit via S is
    admitted "at the start of an iteration, after the residents have taken their tokens, while the
    iteration has budget left". s1 joins q at 0.5, while the iteration [0, 1) runs; its hold of m asks
    now · 10 units."""
    _, o = run(f"""
pool q {{ cap 10; admit via E; }}
pool m {{ cap 100; }}
stage E : step {{ budget {budget}; cost 1; }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  branch (serial == 0) {{ hold q (1) {{ run E decode (3); }} }}
  else {{ run d (0.5); hold q (1), m (now * 10) {{ observe u = used(m); observe t = now; run E decode (1); }} }}
  observe done = now;
}}
run {{ horizon 30; }}
""", monkeypatch)
    assert o["t"] == [(1, t, t)] and o["u"] == [(1, t, 10 * t)]
    assert at(o["done"]) == done


QUEUE_WAITED = """
pool m { cap 1; queue by (serial % 2, KEY); }
stage d : delay;
workload { arrive batch(10); }
session {
  run d (serial == 0 ? 0 : serial <= 3 ? 1 : serial <= 7 ? 2 : 3);
  hold m (1) { observe a = now; run d (serial == 0 ? 10 : 1); }
}
run { horizon 30; }
"""


@pytest.mark.parametrize("key, order", [
    # by (K, waited): the even serials first (K = 0), the least waited first: s8 (joined at 3); s4 and s6
    # joined at 2, equal waited, in join order; s2; then the odd: s9; s5, s7; s1, s3.
    ("waited", [8, 4, 6, 2, 9, 5, 7, 1, 3]),
    # by (K, -waited): the most waited first, which is join order within K.
    ("-waited", [2, 4, 6, 8, 1, 3, 5, 7, 9]),
])
def test_queue_by_waited_is_last_come_first_across_instants_and_join_order_within_one(monkeypatch, key, order):
    """pool-reference `queue`: "by reevaluates keys for every waiting hold before each admission attempt,
    compares them lexicographically, and breaks ties by enqueue order … waited supplies seconds since the
    current hold entered the queue"; §3 Ties: "the order the sessions joined the queue".

    m cap 1: s0 holds it on [0, 10). s1 … s3 join at 1, s4 … s7 at 2, s8 and s9 at 3 (each instant in serial
    order: their runs were scheduled so); from 10 each admitted session holds m for 1. Sessions that
    joined at one instant have equal `waited`, so they go in join order under either sign (a queue last
    in first out by join order would give s7 before s5)."""
    _, o = run(QUEUE_WAITED.replace("KEY", key), monkeypatch)
    assert at(o["a"]) == [(0, 0.0)] + [(s, 10.0 + i) for i, s in enumerate(order)]


REQUEUE_WAITED = """
pool m { cap 2; preempt by (-admission) requeue REQUEUE; queue by (0, KEY); }
stage d : delay;
workload { arrive batch(7); }
session {
  branch (serial == 0) { hold m (1) { run d (5); grow m (1); run d (1); } }
  else { run d (serial <= 1 ? 0 : serial <= 5 ? serial - 1 : 4.5);
         hold m (1) { observe a = now; run d (serial == 1 && now < 5 ? 20 : 1); } }
}
run { horizon 40; }
"""


@pytest.mark.parametrize("key, requeue, order", [
    # waited 0 makes s1 the least waited at the tail; at the head it goes first anyway: s1 and then s6
    # (joined at 4.5) at 6, s5 and s4 at 7, s3 and s2 at 8.
    ("waited", "head", [(1, 6.0), (6, 6.0), (4, 7.0), (5, 7.0), (2, 8.0), (3, 8.0)]),
    ("waited", "tail", [(1, 6.0), (6, 6.0), (4, 7.0), (5, 7.0), (2, 8.0), (3, 8.0)]),
    # the most waited first: at the head s1 goes before s2; at the tail it is the last, with s6 at 8.
    ("-waited", "head", [(1, 6.0), (2, 6.0), (3, 7.0), (4, 7.0), (5, 8.0), (6, 8.0)]),
    ("-waited", "tail", [(2, 6.0), (3, 6.0), (4, 7.0), (5, 7.0), (1, 8.0), (6, 8.0)]),
])
def test_a_victim_requeued_under_queue_by_waited(monkeypatch, key, requeue, order):
    """pool-reference `preempt`: "requeue head (the default) places it first, ahead of policy keys.
    requeue tail treats it as a newcomer: … queue by places it by its keys, with waited reset to 0";
    `by (k, …)`: the least keys lose. m cap 2: s0 and s1 hold 1 each from 0; s2 … s5 join at 1 … 4, s6 at
    4.5 (six waiting). At 5 s0 grows by 1: the victim is the least -admission, s1 (admitted last), which
    re-enters at 5; s0 holds 2 until 6. From 6 each admitted session holds m for 1 (s1 too: now >= 5)."""
    _, o = run(REQUEUE_WAITED.replace("KEY", key).replace("REQUEUE", requeue), monkeypatch)
    assert at(o["a"]) == [(1, 0.0)] + order


@pytest.mark.parametrize("key, j, a", [
    # queued counts the holds that joined at this instant: s0 -> 0, s1 -> 1, s2 -> 0 (1 against 1, the
    # least index), s3 -> 1; admitted two at 0 and two at 1.
    ("holders(m[j]) + queued(m[j])", [0, 1, 0, 1], [0.0, 0.0, 1.0, 1.0]),
    # holders alone: nobody holds before the settle admits, every key ties at 0: all four choose m[0].
    ("holders(m[j])", [0, 0, 0, 0], [0.0, 1.0, 2.0, 3.0]),
])
def test_choose_at_one_instant_sees_the_holds_that_joined_before_the_settle(monkeypatch, key, j, a):
    """§3 Configuration: "Commands take no time; they run whenever a session is ready, in the order sessions
    became ready … After every event the interpreter settles: it runs every ready session, then retries
    … admissions"; Ties: choose "the keys, in order, then the smallest index". m[2], cap 1 each; four
    sessions at 0, each choosing a member and holding it for 1."""
    _, o = run(f"""
pool m[2] {{ cap 1; }}
stage d : delay;
workload {{ arrive batch(4); }}
session {{
  choose j in 2 by ({key});
  hold m[j] (1) {{ observe a = now; run d (1); }}
  observe jj = j;
}}
run {{ horizon 10; }}
""", monkeypatch)
    assert sorted((s, v) for s, _, v in o["jj"]) == list(enumerate(map(float, j)))
    assert at(o["a"]) == list(enumerate(a))


def test_reserve_held_an_inner_holds_growth_does_not_use_the_outer_holds_reservation(monkeypatch):
    """pool-reference `reserve held`: "Growth by d requires used + Σ_{i≠grower} u_i + d <= cap: the growing
    hold can use its own reservation. Each hold counts separately, including nested holds"; §3: "grow m (d)
    enlarges the innermost hold on m".

    m cap 11. s0's outer hold takes 1 reserving 8 (u = 7); s1 holds 1 until 3 (1 + 7 + 1 <= 11); s0's inner
    hold takes 1 (2 + 7 + 1 <= 11) and grows by 2: 3 + 7 + 2 > 11, it waits (preempt none) although the
    outer hold is its own session's; at 3 s1's release makes it 2 + 7 + 2 = 11: it grows then, and free(m)
    is 11 - 4 - 7 = 0."""
    _, o = run("""
pool m { cap 11; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) reserve (8) { hold m (1) { grow m (2); observe g = now; observe f = free(m); run d (1); } } }
  else { hold m (1) { run d (3); } }
}
run { horizon 30; }
""", monkeypatch)
    assert (o["g"], o["f"]) == ([(0, 3.0, 3.0)], [(0, 3.0, 0.0)])


def test_a_leases_time_is_read_at_its_scopes_end_and_its_cache_when_it_ends(monkeypatch):
    """§3: "A hold's lease m (t) keeps its allocation on m past the scope's end … until the session's release
    m, t seconds, or the session's end, and cache applies then"; docs/language.md, Moments: a hold's `cache`
    and `lease` time are read at the Session moment (where the session stands).

    The scope ends at 2 with x = 3: the lease lasts now = 2 s, to 4; by then x = 2, so 2 units are cached.
    used 4 on [0, 4), cached 2 on [4, 20), one holder on [0, 4)."""
    r, o = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  set x = 1;
  hold m (4) { run d (2); set x = 3; } cache (x) lease m (now);
  set x = 2;
  run d (10);
  observe c = cachedin(m);
}
run { horizon 20; }
""", monkeypatch)
    assert o["c"] == [(0, 12.0, 2.0)]
    m = pool(r, "m")
    assert close(m.used, 16 / 20) and close(m.cached, 32 / 20) and close(m.holders, 4 / 20)


GROWING_ELSEWHERE = """
pool kv { cap 10; }
DECL
stage E : step { budget 4; cost 1; }
workload { arrive batch(1); }
session {
  hold kv (1) { STMT observe u = used(kv); }
}
run { horizon 30; }
"""


@pytest.mark.parametrize("decl, stmt, msg", [
    ("stage d : delay;", "run d (5) growing kv;", "`growing kv`: `d` is a delay stage"),
    ("stage d : fifo;", "run d (5) growing kv;", "`growing kv`: `d` is a fifo stage"),
    ("stage d : ps(2);", "run d (5) growing kv;", "`growing kv`: `d` is a ps stage"),
    # the serving form finds the stage named after its role, a fifo here: its kernel run is refused
    ("stage prefill : fifo;", "prefill 5 growing kv;", "`growing kv`: `prefill` is a fifo stage"),
    ("stage d : ps(2);\nstage e : ps(2);\nshare maxmin;", "run d, e (5) growing kv;",
     "`growing kv`: a run over several stages"),
])
def test_growing_on_a_stage_that_is_no_step_engine_is_refused(decl, stmt, msg):
    """language.txt §3 Stages: "a growing job first grows its hold to the position it will reach (block by
    block, preempting if needed)" is a step stage's planning, whose work is tokens; "A plain run's work is
    time at rate 1", and "the mode is required on a step stage and forbidden elsewhere" (§2, Which stage).
    `hold kv (1) { run d (5) growing kv; }` on a delay stage ran 5 s and left used(kv) at 1, and outside a
    hold of kv it ran without the error the same run on a step engine is ("outside a hold of kv"): a
    program that says its KV grows and grew none. It is the user's mistake, said when the program links,
    as a mode on such a stage is."""
    why = refused(GROWING_ELSEWHERE.replace("DECL", decl).replace("STMT", stmt))
    assert why.startswith(msg), why
    assert "step stage" in why


def test_an_ir_files_growing_run_is_held_to_the_same_rule():
    """docs/language.md: an IR file is held to the source's rules (serq_ir.validate): a run growing a pool
    names a step stage, as its mode does."""
    import msgspec
    import serq_frontend
    import serq_ir

    src = GROWING_ELSEWHERE.replace("DECL", "stage d : delay;").replace("STMT", "run E decode (5) growing kv;")
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    names = [s.name for s in prog.stages]
    hold = prog.session[0]
    run_ = hold.body[0]
    bad = msgspec.structs.replace(
        run_, mode="plain", stages=[msgspec.structs.replace(run_.stages[0], stage=names.index("d"))])
    body = [bad] + list(hold.body[1:])
    bad_prog = msgspec.structs.replace(prog, session=[msgspec.structs.replace(hold, body=body)])
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(msgspec.json.encode(bad_prog), name="p.ir.json")
    assert "a run grows a pool on a step stage only, and stage 'd' is a delay stage" in str(e.value)
    assert "$.session[0].body[0].growing" in str(e.value)

    # a run over several stages, given the growth of the hold's pool
    src = GROWING_ELSEWHERE.replace("DECL", "stage d : ps(2);\nstage e : ps(2);\nshare maxmin;")
    prog = serq_frontend.compile(source=src.replace("STMT", "run d, e (5);"), sets={}, defs={})
    hold = prog.session[0]
    bad = msgspec.structs.replace(hold.body[0], growing=hold.pools[0].pool)
    bad_prog = msgspec.structs.replace(prog, session=[msgspec.structs.replace(hold, body=[bad] + list(hold.body[1:]))])
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(msgspec.json.encode(bad_prog), name="p.ir.json")
    assert "a run over several stages grows no pool" in str(e.value)


def test_a_closed_population_ending_inside_holds_keeps_and_loses_its_prefixes_in_lru_order(monkeypatch):
    """§3: "end releases every hold but keeps the session's cached prefixes" (each hold caching min(ℓ,
    computed) as at its scope's end); a hold with cache "consumes … its own cached prefix (cached := what
    it consumed)"; "Other entries are evicted in the pool's order until allocations and cache fit" (lru:
    release time, then release order); a closed population replaces a session when it ends.

    kv cap 6, two sessions at a time. Turn 1: hold 2 on [0, 1) (nothing cached yet), caching 2; think 0.5;
    turn 2 at 1.5: hold 3, consuming the 2 (cached 2; 3 + 2 cached + 3 <= 6 for the first, the second
    takes the last room), and `end` inside it at 2.5 caches 3. The newcomers s2, s3 at 2.5 each evict a
    whole entry of 3 (s0's first: released first), find nothing of their own (cached 0), and repeat the
    pattern: turn 2 at 4, their end at 5, s4 and s5 evicting their entries at 5 until the horizon 5.5.

    used: 4 on [0, 1), 6 on [1.5, 2.5), 4 to 3.5, 6 on [4, 5), 4 to 5.5: 22 / 5.5. cached: 4 on [1, 1.5)
    and [3.5, 4): 4 / 5.5. holders: 9 / 5.5. d: three runs of each of s0 … s3."""
    r, o = run("""
pool kv { cap 6; }
stage d : delay;
workload { arrive closed(2); }
session {
  hold kv (2) { observe c1 = cached; run d (1); } cache (2);
  run d (0.5);
  turn;
  hold kv (3) { observe c2 = cached; run d (1); end; } cache (3);
}
run { horizon 5.5; }
""", monkeypatch)
    assert o["c1"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 2.5, 0.0), (3, 2.5, 0.0), (4, 5.0, 0.0), (5, 5.0, 0.0)]
    assert o["c2"] == [(0, 1.5, 2.0), (1, 1.5, 2.0), (2, 4.0, 2.0), (3, 4.0, 2.0)]
    kv = pool(r, "kv")
    assert (kv.admissions, kv.evicted_entries, kv.evicted_units) == (10, 4, 12.0)
    assert close(kv.used, 22 / 5.5) and close(kv.cached, 4 / 5.5) and close(kv.holders, 9 / 5.5)
    assert (r.result.arrivals, r.result.ended, r.result.turns) == (6, 4, 4)
    d = stage(r, "d")
    assert d.completions == 12 and d.utilisation == 1.0


TWO_ENGINES = """
pool kv { cap 2; }
pool qa { cap 5; admit via A; }
pool qb { cap 5; admit via B; }
STAGES
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold qa (1), kv (2) { observe a = now; run A decode (2); } }
  else { hold qb (1), kv (2) { observe b = now; run B decode (2); } }
}
run { horizon 30; }
"""


@pytest.mark.parametrize("stages", [
    "stage A : step { budget 4; cost 1; }\nstage B : step { budget 4; cost 1; }",
    "stage B : step { budget 4; cost 1; }\nstage A : step { budget 4; cost 1; }",
])
def test_two_engines_heads_waiting_for_one_pool_go_in_the_pools_declaration_order(monkeypatch, stages):
    """§3 Ties: "Each pool has one queue, and a hold on several pools waits in its first pool's; where the
    heads of two queues both wait for room in one pool, or one stage serves several queues, the pool
    declared first is served first"; the settle "starts an iteration on every idle step stage that has …
    a waiting queue it serves". At 0 s0 waits in qa (A's), s1 in qb (B's), each needing kv's 2 units: both
    engines are idle and start at 0, and qa, declared first, is served first: s0 at 0 (decodes 2, ends at
    2), s1 at 2. (With B declared before A, B started first and admitted s1.)"""
    _, o = run(TWO_ENGINES.replace("STAGES", stages), monkeypatch)
    assert (o["a"], o["b"]) == ([(0, 0.0, 0.0)], [(1, 2.0, 2.0)])


FINISH_TOGETHER = """
pool m { cap 1; }
stage a : ps(1);
stage b : ps(1);
stage d : delay;
SHARE
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (0.5); RUN0 }
  else { RUN1 }
  hold m (1) { observe h = now; run d (1); }
}
run { horizon 30; }
"""


@pytest.mark.parametrize("share, run0, run1", [
    ("", "run a (1);", "run a (1.5);"),
    ("share maxmin;", "run a, b (1);", "run a, b (1.5);"),
    ("share bottleneck;", "run a, b (1);", "run a, b (1.5);"),
])
def test_jobs_of_a_ps_stage_finishing_together_finish_in_the_order_they_started(monkeypatch, share, run0, run1):
    """§3 Ties: "jobs of a ps stage with equal finish tags finish in the order they started", and sessions
    "run in the order they became ready"; Stages: a run over several stages is "one job that holds a and b
    from its start to its end", a flow of the program's share. s1's job (1.5) runs alone on [0, 0.5) and
    has 1 left; s0's (1) starts at 0.5 and both go at 1/2 (ps(1) shared by two; either share gives each
    flow 1/2 of a and b): both end at 2.5. s1 started first, so it finishes first and takes m (cap 1) at
    2.5; s0 at 3.5 (serial order would have put s0 first)."""
    _, o = run(FINISH_TOGETHER.replace("SHARE", share).replace("RUN0", run0).replace("RUN1", run1), monkeypatch)
    assert at(o["h"]) == [(1, 2.5), (0, 3.5)]
