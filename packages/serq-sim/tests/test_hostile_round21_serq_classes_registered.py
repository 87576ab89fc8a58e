"""A plugin that registers one of serQ's own stage kinds or policies under a name of its own (an alias:
``register("myps", PsStage)``) for a program to write ``stage d : @myps;`` (docs/hooks.md, "When a plugin
misbehaves").

Such a kind is built from the program's ``Extension`` node, whose ``params`` are not the fields the built-in
node has (``capacity``, ``servers``, ``keys``, ``requeue``): before serq_sim.guards.build_with, the run
ended in serQ's own ``AttributeError: 'Extension' object has no attribute 'capacity'``, a traceback from
``serq run``, since no frame of the plugin's is on it for serq.plugins.plugin_failure to name. An alias
that needs no field (``delay``, ``evict lru``) runs as the built-in one does."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.policies import KeyedOrder, LruOrder, PreemptByKeys
from serq_sim.stages import DelayStage, FifoStage, PsStage

pytestmark = pytest.mark.timeout(60)


class Aliases:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("myps", PsStage)
        register("myfifo", FifoStage)
        register("mydelay", DelayStage)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("mylru", LruOrder)
        register("mykeys", KeyedOrder)

    @hookimpl
    def serq_sim_register_preemption_policies(self, register):
        register("myby", PreemptByKeys)


def program(stage: str = "delay", pool: str = "") -> str:
    return (f"pool p {{ cap 10; {pool} }}\nstage d : {stage};\nworkload {{ arrive batch(2); }}\n"
            "session { set t0 = now; hold p (6) { run d (1); } cache (6); observe t = now - t0; }\n"
            "run { horizon 10; }\n")


def run(source: str):
    pm = get_plugin_manager(plugins=[Aliases()])
    return serq_sim.run(serq_frontend.compile(source=source, pm=pm), pm=pm)


HEAD = f"error: plugin '{Aliases.__module__}.Aliases' builds "


@pytest.mark.parametrize(("stage", "pool", "what"), [
    ("@myps", "", "stage d wrongly: it registered serQ's serq_sim.stages.PsStage for 'myps', which cannot build it: "
                  "AttributeError: 'Extension' object has no attribute 'capacity' at "),
    ("@myfifo", "", "stage d wrongly: it registered serQ's serq_sim.stages.FifoStage for 'myfifo', which cannot build "
                    "it: AttributeError: 'Extension' object has no attribute 'servers' at "),
    ("delay", "evict @mykeys;", "the eviction order of pool p wrongly: it registered serQ's "
                                "serq_sim.policies.eviction.KeyedOrder for 'mykeys', which cannot build it: "
                                "AttributeError: 'Extension' object has no attribute 'keys' at "),
    ("delay", "preempt @myby;", "the preemption policy of pool p wrongly: it registered serQ's "
                                "serq_sim.policies.preemption.PreemptByKeys for 'myby', which cannot build it: "
                                "AttributeError: 'Extension' object has no attribute 'requeue' at "),
])
def test_an_alias_that_cannot_take_the_plugins_node_is_the_plugins_failure(stage, pool, what):
    with pytest.raises(PluginError) as e:
        run(program(stage, pool))
    head, _, hint = str(e.value).partition("\n")
    assert head.startswith(HEAD + what), head
    assert "/serq_sim/" in head.rsplit(" at ", 1)[1]  # serQ's line: the plugin has none on the traceback
    assert hint.startswith(
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)")
    assert isinstance(e.value.__cause__, AttributeError)


def test_an_alias_that_needs_no_field_runs_as_the_built_in_one():
    # the two sessions each hold 6 of 10: the second waits for the first's release at 1 (evicting its cache of
    # 6 whole), and ends at 2: t = 1 and 2, under both spellings
    builtin = run(program())
    alias = run(program("@mydelay", "evict @mylru;"))
    assert builtin.observe("t").values.tolist() == alias.observe("t").values.tolist() == [1.0, 2.0]
    assert builtin.pool("p") == alias.pool("p")
    assert builtin.stage("d") == alias.stage("d")
