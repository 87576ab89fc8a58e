"""Hooks: a plugin adds a stage kind (a FIFO server with vacations, an Extension stage node) and an
eviction order (most recently released first), and a program uses both."""

from __future__ import annotations

import pytest
import serq_sim
from irb import P, at, obs, roles, samples
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_ir import nodes as N
from serq_sim.policies import EvictionOrder
from serq_sim.stages import FifoStage


class VacationFifo(FifoStage):
    """One server; after every completion it is away for ``vacation`` before it serves again."""

    def __init__(self, sim, node, member, flat):
        node_kind = node.kind
        super().__init__(sim, node.__class__(name=node.name, kind=N.Fifo(), size=node.size), member, flat)
        self.node = node
        self.vacation = float(node_kind.params["vacation"])
        self.away = False

    def _done(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.away = True
        self.sim.at(self.sim.now + self.vacation, self._back, None)
        self.sim.job_done(self, job)

    def _back(self, _):
        self.acc()
        self.away = False
        if self.q:
            nxt = self.q.popleft()
            nxt.started = self.sim.now
            self.sim.at(self.sim.now + nxt.work, self._done, nxt)
        else:
            self.active -= 1

    def attach(self, job):
        if self.away:
            self.acc()
            self.present += 1
            job.stage = self
            self.q.append(job)
            return
        super().attach(job)


class Mru(EvictionOrder):
    def key(self, entry):
        return (-entry.last,)


class Plugin:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("vacation_fifo", VacationFifo)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("mru", lambda sim, pool, node: Mru(sim, pool, node))


@pytest.fixture
def pm():
    return get_plugin_manager(plugins=[Plugin()])


def test_plugin_stage_kind(pm):
    p = P()
    s = p.stage("srv", N.Extension(name="vacation_fifo", params={"vacation": 2.0}))
    prog = p.build([p.run(s, 1), p.observe("t", "now")], presets=[at(p, 0, 0), at(p, 0, 0), at(p, 0, 0)])
    r = serq_sim.run(prog, pm=pm)
    # served [0,1], away [1,3], served [3,4], away [4,6], served [6,7]
    assert [v for v, _ in samples(r, "t")] == [1.0, 4.0, 7.0]
    # without the plugin the kind is unknown
    with pytest.raises(serq_sim.SimError, match="unknown stage kind `@vacation_fifo`"):  # as a program writes it
        serq_sim.run(prog, pm=get_plugin_manager())


def test_plugin_eviction_order(pm):
    p = P()
    pool = p.pool("p", cap=32.0, block=16.0, evict=N.Extension(name="mru"))
    d = p.stage("d", N.Delay())
    probe = [p.run(d, 5), p.observe("left", obs("cachedin", pool))]
    prog = p.build(roles(p, [
        [p.hold([(pool, 16)], [p.run(d, 1)], cache=16), *probe],
        [p.hold([(pool, 16)], [p.run(d, 1)], cache=16), *probe],
        [p.hold([(pool, 16)], [p.run(d, 1)])],
    ]), presets=[at(p, 0, 0), at(p, 1, 1), at(p, 3, 2)])
    r = serq_sim.run(prog, pm=pm, check_invariants=True)
    # A released at 1, B at 2; C needs 16 at 3: mru evicts B (released last); lru would evict A
    assert samples(r, "left") == [(16.0, 0), (0.0, 1)]


def test_builtins_register_through_the_hooks():
    reg = serq_sim.registries(get_plugin_manager())
    assert {"Fifo", "Ps", "Delay", "Step"} <= set(reg.stage_kinds.names())
    assert {"EvictLru", "EvictBy"} <= set(reg.evict.names())
    assert {"PreemptNone", "PreemptBy"} <= set(reg.preempt.names())
    assert {"maxmin", "bottleneck"} <= set(reg.share.names())
    assert "serq-sim" in reg.stage_kinds.provider("Fifo")


def test_an_unknown_eviction_order_or_preemption_policy_lists_the_registered_ones(pm):
    p = P()
    pool = p.pool("p", cap=32.0, evict=N.Extension(name="nope"))
    d = p.stage("d", N.Delay())
    prog = p.build([p.hold([(pool, 1)], [p.run(d, 1)])], presets=[at(p, 0, 0)])
    # every name as a program writes it (serq.extensions.source_word), not by the IR's tags EvictLru, EvictBy
    with pytest.raises(serq_sim.SimError, match=r"unknown eviction order `@nope` \(registered: lru, by \(…\), "
                       r"@mru\)"):
        serq_sim.run(prog, pm=pm)
    p = P()
    pool = p.pool("p", cap=32.0, preempt=N.Extension(name="nope"))
    d = p.stage("d", N.Delay())
    prog = p.build([p.hold([(pool, 1)], [p.run(d, 1)])], presets=[at(p, 0, 0)])
    with pytest.raises(serq_sim.SimError, match=r"unknown preemption policy `@nope` \(registered: none, "
                       r"by \(…\)\)"):
        serq_sim.run(prog, pm=pm)


VACATION_SRC = """stage srv : @vacation_fifo(vacation = 2);
workload { arrive batch(3); }
session { run srv (1); observe t = now; }
run { horizon 100; }
"""


def test_a_plugin_stage_kind_named_from_source(pm):
    import serq_frontend

    prog = serq_frontend.compile(source=VACATION_SRC, pm=pm)
    r = serq_sim.run(prog, pm=pm)
    # served [0,1], away [1,3], served [3,4], away [4,6], served [6,7]
    assert [v for v, _ in samples(r, "t")] == [1.0, 4.0, 7.0]
