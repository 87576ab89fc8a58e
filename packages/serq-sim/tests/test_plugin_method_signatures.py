"""A third party's stage kind, eviction order or preemption policy whose method of the contract cannot be
called as the engine calls it (``attach(job)``, ``key(entry)``, ``victim(pool, grower)``, …: a parameter
missing or one too many) is refused when the simulation is built, naming the plugin, the method and how
it is called (docs/hooks.md, "``register`` is called wrongly" / "It returns what its contract does not
allow"). Before, the engine's own call raised the TypeError mid-run: a traceback from serq_sim.engine or
serq_sim.guards blaming serQ (an attach or a victim), or the plugin named as failing in a method of serQ's
(``KeyNoEntry.scan (inherited from EvictionOrder.scan)`` at serQ's line)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.policies import EvictionOrder, PreemptionPolicy
from serq_sim.stages import StageKind


class AttachWithoutJob(StageKind):
    def attach(self):
        pass

    def detach(self, job):
        pass


class BusyLevelWithArgument(StageKind):
    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.sim.at(self.sim.now + 1, self.finish, job)

    def finish(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)

    def detach(self, job):
        pass

    def busy_level(self, now):
        return 0.0


class KeyWithoutEntry(EvictionOrder):
    def key(self):
        return (1,)


class VictimWithoutGrower(PreemptionPolicy):
    def victim(self, pool):
        return None


class Plugin:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("nojob", AttachWithoutJob)
        register("level", BusyLevelWithArgument)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("noentry", KeyWithoutEntry)

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        register("nogrower", VictimWithoutGrower)


STAGE = "stage s : @{};\nworkload {{ arrive batch(2); }}\nsession {{ run s (1); }}\nrun {{ horizon 10; }}\n"
POOL = ("pool p {{ cap 6; {}; }}\nstage d : delay;\nworkload {{ arrive batch(3); }}\n"
        "session {{ hold p (2) {{ run d (1); grow p (4); run d (1); }} cache (2); }}\nrun {{ horizon 10; }}\n")

CASES = [
    (STAGE.format("nojob"), "builds stage s wrongly: AttachWithoutJob.attach cannot be called as attach(job)"),
    (STAGE.format("level"), "builds stage s wrongly: BusyLevelWithArgument.busy_level cannot be called as "
                            "busy_level()"),
    (POOL.format("evict @noentry"), "builds the eviction order of pool p wrongly: KeyWithoutEntry.key cannot "
                                    "be called as key(entry)"),
    (POOL.format("preempt @nogrower"), "builds the preemption policy of pool p wrongly: VictimWithoutGrower.victim "
                                       "cannot be called as victim(pool, grower)"),
]


@pytest.mark.parametrize(("source", "expected"), CASES, ids=["attach", "busy_level", "key", "victim"])
def test_a_method_the_engine_cannot_call_is_refused_when_the_run_is_built(source, expected):
    pm = get_plugin_manager(plugins=[Plugin()])
    program = serq_frontend.compile(source=source, pm=pm)
    with pytest.raises(PluginError) as e:
        serq_sim.run(program, pm=pm)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"error: plugin '{__name__}.Plugin' {expected}: "), first


def test_methods_as_the_contract_has_them_run():
    class Fine(PreemptionPolicy):
        def victim(self, pool, grower, *more):  # takes what the engine gives, and more
            return None

    class Good:
        @hookimpl
        def serq_sim_register_preemption_policies(self, register):
            register("fine", Fine)

    pm = get_plugin_manager(plugins=[Good()])
    report = serq_sim.run(serq_frontend.compile(source=POOL.format("preempt @fine"), pm=pm), pm=pm)
    assert report.result.pools[0].preemptions == 0
