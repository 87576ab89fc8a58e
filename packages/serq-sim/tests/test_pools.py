"""Pool rules, one hand-computed case each: exact event times and counters.

Every program here uses a delay stage ``d`` (a run of w takes exactly w) and preset sessions, so each
expectation can be worked out by hand; the computation is in the comment above the asserts.
"""

from __future__ import annotations

import serq_sim
from irb import P, at, b, neg, obs, roles, samples
from serq_ir import nodes as N


def start(p: P, name: str = "start"):
    return p.observe(name, "now")


def run(prog):
    return serq_sim.run(prog, check_invariants=True)


def test_admission_with_reserve():
    p = P()
    pool = p.pool("p", cap=10.0)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 4)], [start(p), p.run(d, 5)])],
        [p.hold([(pool, 2, 8)], [start(p), p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 1, 1)])
    r = run(prog)
    # A holds 4 on [0, 5]. B (t=1) takes 2 but needs room for its reserve 8: 4 + 8 > 10, so it waits
    # until A releases at 5 (used 0 + 8 <= 10) and runs [5, 6].
    assert samples(r, "start") == [(0.0, 0), (5.0, 1)]
    st = r.pool("p")
    assert st.admissions == 2
    assert st.wait == (0 + 4) / 2
    # used: 4 on [0,5], 2 on [5,6] -> (20 + 2) / 6
    assert abs(st.used - 22 / 6) < 1e-12
    assert r.result.end == 6.0


def test_head_of_line_blocking():
    p = P()
    pool = p.pool("p", cap=10.0)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 8)], [start(p), p.run(d, 5)])],
        [p.hold([(pool, 5)], [start(p), p.run(d, 1)])],
        [p.hold([(pool, 1)], [start(p), p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 1, 1), at(p, 2, 2)])
    r = run(prog)
    # B (t=1) needs 5 of the 2 free: waits. C (t=2) needs 1, which fits, but B is the head: C waits
    # behind it. At 5 A releases: B then C are admitted at once.
    assert samples(r, "start") == [(0.0, 0), (5.0, 1), (5.0, 2)]
    # queue: B on [1,5], C on [2,5] -> (4 + 3) / 6 over [0, 6]
    assert abs(r.pool("p").queue - 7 / 6) < 1e-12


def _cache_program(evict, need: float, probe_at: float):
    """A caches 32 at t=1 (released first), B caches 16 at t=3; C (t=4) takes ``need`` of the 64; A and B
    then read their own cached prefix at ``probe_at``."""
    p = P()
    pool = p.pool("p", cap=64.0, block=16.0, evict=evict)
    d = p.stage("d", N.Delay())
    probe = [p.run(d, b("-", probe_at, p.ex("now"))), p.observe("left", obs("cachedin", pool))]
    prog = p.build(roles(p, [
        [p.hold([(pool, 32)], [p.run(d, 1)], cache=32), *probe],
        [p.hold([(pool, 16)], [p.run(d, 1)], cache=16), *probe],
        [p.hold([(pool, need)], [p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 2, 1), at(p, 4, 2)])
    return run(prog)


def test_lru_eviction_per_block_from_the_tail():
    # At 4: used 0, cached 32 (A, released at 1) + 16 (B, at 3). C takes 32: 32 + 48 > 64, short 16:
    # one block from the tail of the least recently released entry, A: A keeps 16, B keeps 16.
    r = _cache_program(N.EvictLru(), 32, 10)
    assert samples(r, "left") == [(16.0, 0), (16.0, 1)]
    st = r.pool("p")
    assert (st.evicted_entries, st.evicted_units) == (0, 16.0)
    # C takes 48: short 32: A's two blocks go (the entry is gone), B untouched.
    r = _cache_program(N.EvictLru(), 48, 10)
    assert samples(r, "left") == [(0.0, 0), (16.0, 1)]
    assert (r.pool("p").evicted_entries, r.pool("p").evicted_units) == (1, 32.0)


def test_keyed_eviction_per_block():
    # evict by (size): the smaller entry first. C takes 48, short 32: B (16) goes whole, then A's
    # size 32 is the only key left: one block of A. A keeps 16, B nothing.
    r = _cache_program(N.EvictBy(keys=[N.Ctx(name="size")]), 48, 10)
    assert samples(r, "left") == [(16.0, 0), (0.0, 1)]
    assert (r.pool("p").evicted_entries, r.pool("p").evicted_units) == (1, 32.0)
    # evict by (-size): the larger first, block by block: A 32 -> 16; then A and B tie at -16 and the
    # release order decides: A (released at 1) goes. A nothing, B keeps 16.
    r = _cache_program(N.EvictBy(keys=[neg(N.Ctx(name="size"))]), 48, 10)
    assert samples(r, "left") == [(0.0, 0), (16.0, 1)]


def test_dead_entry_keeps_its_age():
    p = P()
    pool = p.pool("p", cap=64.0, block=16.0)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 48)], [p.run(d, 1)], cache=48),
         p.run(d, 1),
         # consumes at most 16 of its 48: the other 32 stay cached, dead, released at 1
         p.hold([(pool, 16)], [p.observe("got", "cached"), p.observe("own", obs("cachedin", pool)),
                               p.run(d, 1)], reuse=16, cache=0),
         p.observe("cached_after", obs("cachedin", pool))],
        [p.hold([(pool, 32)], [p.run(d, 1)], cache=32),
         p.run(d, 10), p.observe("b_left", obs("cachedin", pool))],
        [p.hold([(pool, 48)], [p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 1.5, 1), at(p, 4, 2)])
    r = run(prog)
    # A at 2: consumes 16 (cached = 16); its own entry is gone (cachedin 0), 32 dead with age t=1.
    assert samples(r, "got") == [(16.0, 0)]
    assert samples(r, "own") == [(0.0, 0)]
    # B releases 32 at 2.5. At 4, C takes 48: used 0 + cached 32 (dead, t=1) + 32 (B, t=2.5) + 48 > 64,
    # short 48: the dead entry goes first (older), then one block of B: B keeps 16.
    assert samples(r, "b_left") == [(16.0, 1)]
    st = r.pool("p")
    assert (st.evicted_entries, st.evicted_units) == (1, 48.0)


def test_lease_expiry():
    p = P()
    pool = p.pool("p", cap=12.0)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 10)], [p.run(d, 1)], cache=10, lease=(pool, 5)), p.run(d, 20)],
        [p.hold([(pool, 5)], [start(p), p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 2, 1)])
    r = run(prog)
    # A's scope ends at 1 but the lease keeps its 10 units until 1 + 5 = 6; B (t=2) needs 5 of the
    # 2 free and is admitted at 6, when the lease ends and 10 are cached (and evicted for B's 5).
    assert samples(r, "start") == [(6.0, 1)]
    st = r.pool("p")
    # used 0 + cached 10 + 5 > 12: without blocks eviction is per entry, A's whole 10 go
    assert (st.evicted_entries, st.evicted_units) == (1, 10.0)


def test_lease_with_a_nan_cache_length_is_an_error_at_its_end():
    # the cache length is evaluated again when the lease ends (t = 1 + 5): x is NaN by then, which is the
    # error a hold's scope gives at its end, naming the hold, the time and the session
    p = P()
    pool = p.pool("p", cap=12.0)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.set_("x", 10.0), p.hold([(pool, 10)], [p.run(d, 1)], cache="x", lease=(pool, 5)),
         p.set_("x", b("/", 0.0, 0.0)), p.run(d, 20)],
    ]), presets=[at(p, 0, 0)])
    try:
        run(prog)
    except serq_sim.SimError as e:
        msg = str(e)
    else:
        raise AssertionError("no error")
    assert "the cache length is NaN" in msg and "t=6" in msg and "session 0" in msg


def _preempt_program(policy, queue=None):
    p = P()
    kw = {"queue": queue} if queue is not None else {}
    pool = p.pool("p", cap=10.0, preempt=policy, **kw)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 4)], [start(p), p.run(d, 2), p.grow(pool, 4), p.run(d, 2)])],
        [p.hold([(pool, 4)], [start(p), p.observe("comp", "computed"), p.run(d, 10)])],
        [p.hold([(pool, 4)], [start(p), p.run(d, 1)])],
    ]), presets=[at(p, 0, 0, prio=5), at(p, 0.5, 1, prio=1), at(p, 1, 2, prio=9)])
    return run(prog)


def test_preempt_lifo_requeues_at_the_head():
    r = _preempt_program(N.PreemptBy(keys=[neg(N.Ctx(name="admission"))], requeue="head"))
    # A [0, ...) holds 4, B (0.5) 4; C (1) needs 4 of the 2 free: waits. At 2 A grows 4: 8 + 4 > 10,
    # the victim is the last admitted, B: released and back at the head, ahead of C. A grows (8),
    # releases at 4: B (head) then C are admitted at 4 (4 + 4 <= 10).
    assert samples(r, "start") == [(0.0, 0), (0.5, 1), (4.0, 1), (4.0, 2)]
    assert r.pool("p").preemptions == 1
    assert samples(r, "comp") == [(0.0, 1), (0.0, 1)]  # B had computed nothing of its hold


def test_preempt_by_requeues_at_the_tail():
    r = _preempt_program(N.PreemptBy(keys=[N.Attr(slot=_slot_of(_preempt_program, "prio"))],
                                     requeue="tail"))
    # At 2 the candidates are A (prio 5) and B (prio 1): B, the least key, is preempted and re-enters
    # at the tail, behind C: at 4 C is admitted first, then B.
    assert samples(r, "start") == [(0.0, 0), (0.5, 1), (4.0, 2), (4.0, 1)]
    assert r.pool("p").preemptions == 1


def _slot_of(_fn, name: str) -> int:
    # the attribute slots of _preempt_program: builtins (4), role, prio
    return {"role": 4, "prio": 5}[name]


def test_reserve_held():
    def prog(held: bool):
        p = P()
        pool = p.pool("p", cap=10.0, reserve_held=held)
        d = p.stage("d", N.Delay())
        return p.build(roles(p, [
            [p.hold([(pool, 2, 8)], [start(p), p.run(d, 5)])],
            [p.hold([(pool, 2)], [start(p), p.run(d, 10)])],
            [p.hold([(pool, 1)], [start(p), p.run(d, 1)])],
        ]), presets=[at(p, 0, 0), at(p, 1, 1), at(p, 1.5, 2)])

    # reserve held: A's unallocated reservation 8 - 2 = 6 counts. B (t=1): 2 + 6 + 2 <= 10, in.
    # C (1.5): 4 + 6 + 1 > 10: waits until A ends at 5 (then 2 + 0 + 1 <= 10; B holds until 11).
    assert samples(run(prog(True)), "start") == [(0.0, 0), (1.0, 1), (5.0, 2)]
    # without it C is admitted at once
    assert samples(run(prog(False)), "start") == [(0.0, 0), (1.0, 1), (1.5, 2)]


def test_spill_writes_evicted_blocks_to_the_tier():
    p = P()
    tier_ref = N.PoolRef(pool=1)
    link = N.StageRef(stage=1)
    pool = p.pool("p", cap=32.0, block=16.0,
                  spill=N.Spill(tier=tier_ref, link=link, work=N.Ctx(name="size"), when=N.Num(value=1.0)))
    p.pool("tier", cap=100.0)
    d = p.stage("d", N.Delay())
    p.stage("link", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 32)], [p.run(d, 1)], cache=32)],
        [p.hold([(pool, 32)], [p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 2, 1)])
    r = run(prog)
    # At 2 B takes 32: A's 32 cached units go block by block, each written to the tier: two spills,
    # two link jobs of work 16 (the block's size), both done at 18.
    assert r.pool("p").spills == 2
    link_st = r.stage("link")
    assert (link_st.completions, link_st.service) == (2, 16.0)
    # the tier caches A's 32 from 2 to the end (18): 32 * 16 / 18
    assert abs(r.pool("tier").cached - 32 * 16 / 18) < 1e-9


def test_rejection_and_over_cap():
    p = P()
    pool = p.pool("p", cap=10.0)
    d = p.stage("d", N.Delay())
    prog = p.build(roles(p, [
        [p.hold([(pool, 12)], [start(p), p.run(d, 1)]), start(p, "after")],
        # state-dependent demand: waits, and is over the cap at the end
        [p.hold([(pool, b("+", obs("used", pool), 20))], [start(p)])],
        [p.run(d, 3)],
    ]), presets=[at(p, 0, 0), at(p, 1, 1), at(p, 2, 2)], horizon=5.0)
    r = run(prog)
    # A's 12 can never fit the 10: rejected when it joins the queue, its session ends (no samples).
    assert samples(r, "start") == []
    assert samples(r, "after") == []
    st = r.pool("p")
    assert (st.rejections, st.over_cap) == (1, 1)
    assert r.result.ended == 2  # A (rejected) and C
