"""Random pool programs (holds, grows, releases, caches on random capacities) keep every pool's
bookkeeping: allocated + cached <= cap, used and cached equal to holders and entries, consistent queues
(checked after every event with check_invariants)."""

from __future__ import annotations

import serq_sim
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from irb import P, b, draw, neg, obs
from serq_ir import nodes as N

units = st.integers(min_value=0, max_value=40)


@st.composite
def pool_programs(draw_):
    p = P()
    npools = draw_(st.integers(1, 3))
    refs = []
    for k in range(npools):
        cap = float(draw_(st.integers(8, 80)))
        block = draw_(st.sampled_from([None, 1.0, 4.0, 16.0]))
        evict = draw_(st.sampled_from(["lru", "size", "-last"]))
        ev = {"lru": N.EvictLru(), "size": N.EvictBy(keys=[N.Ctx(name="size")]),
              "-last": N.EvictBy(keys=[neg(N.Ctx(name="last"))])}[evict]
        pre = draw_(st.sampled_from(["none", "lifo", "tail"]))
        pr = {"none": N.PreemptNone(),
              "lifo": N.PreemptBy(keys=[neg(N.Ctx(name="admission"))]),
              "tail": N.PreemptBy(keys=[N.Ctx(name="position")], requeue="tail")}[pre]
        refs.append(p.pool(f"p{k}", cap=cap, block=block, evict=ev, preempt=pr,
                           reserve_held=draw_(st.booleans())))
    d = p.stage("d", N.Delay())
    f = p.stage("f", N.Fifo(servers=2.0))
    body = []
    for _ in range(draw_(st.integers(1, 3))):
        pool = draw_(st.sampled_from(refs))
        inner = [p.run(draw_(st.sampled_from([d, f])), draw("exp", 1.0))]
        if draw_(st.booleans()):
            inner.append(p.grow(pool, draw_(units)))
            inner.append(p.run(d, draw("exp", 0.5)))
        if draw_(st.booleans()):
            inner.append(N.Release(pool=pool))
        other = draw_(st.sampled_from(refs))
        pools = [(pool, draw_(units), draw_(st.sampled_from([None, 10, 30])))]
        if other is not pool and draw_(st.booleans()):
            pools.append((other, draw_(units)))
        cache = draw_(st.sampled_from([None, 0, 8, 24, 100]))
        reuse = draw_(st.sampled_from([None, 0, 4])) if cache is not None else None
        body.append(p.hold(pools, inner, cache=cache, reuse=reuse))
        if draw_(st.booleans()):
            body.append(p.observe("c", obs("cachedin", pool)))
    rate = draw_(st.sampled_from([0.5, 1.0, 3.0]))
    return p.build(body, arrive=N.Poisson(rate=rate), horizon=30.0, seed=draw_(st.integers(0, 10**6)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool_programs())
def test_random_pool_programs_keep_the_invariants(prog):
    r = serq_sim.run(prog, check_invariants=True)
    for pl in r.result.pools:
        assert pl.used >= 0 and pl.cached >= 0


def test_the_invariant_check_can_fail():
    """A pool whose bookkeeping is broken on purpose is caught."""
    import pytest
    from serq_sim.api import registries
    from serq_sim.engine import Simulation
    from serq_sim.pools.check import check_invariants

    p = P()
    pool = p.pool("p", cap=10.0)
    d = p.stage("d", N.Delay())
    prog = p.build([p.hold([(pool, 4)], [p.run(d, 1)])], arrive=N.Batch(n=1), horizon=5.0)
    sim = Simulation(prog, registries(), check_invariants=True)
    sim._start()
    sim.pools[0].used += 7  # 11 > cap 10
    with pytest.raises(serq_sim.InvariantError):
        check_invariants(sim)
    _ = b
