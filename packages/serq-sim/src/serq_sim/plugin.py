"""serq-sim as a part of ``serq``: the ``run`` command and the built-in stage kinds and policies.

The built-ins register through the same hooks a third-party plugin uses.
"""

from __future__ import annotations

from serq import hookimpl


@hookimpl
def serq_addhooks(pluginmanager):
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def serq_register_commands(register):
    from serq.cli import LazyCommand  # the commands' module is imported when one of them runs

    register(LazyCommand("run", "serq_sim.cli:run_command"))
    register(LazyCommand("fit", "serq_sim.cli:fit_command"))


@hookimpl
def serq_sim_register_stage_kinds(register):
    from .stages import DelayStage, FifoStage
    from .step import step_factory

    register("Fifo", FifoStage)
    register("Ps", ps_factory)
    register("Delay", DelayStage)
    register("Step", step_factory)


def ps_factory(sim, node, member, flat):
    """``ps``: a processor-sharing stage, or a flow stage when its family is shared by a run over several
    stages (every job on it is then a flow of the program's share policy)."""
    from .stages import FlowStage, PsStage

    family = sim.program.stages.index(node)
    if family in sim.shared_families:
        return FlowStage(sim, node, member, flat)
    return PsStage(sim, node, member, flat)


@hookimpl
def serq_sim_register_eviction_orders(register):
    from .policies.eviction import keyed_factory, lru_factory

    register("EvictLru", lru_factory)
    register("EvictBy", keyed_factory)


@hookimpl
def serq_sim_register_preemption_policies(register):
    from .policies.preemption import by_factory, none_factory

    register("PreemptNone", none_factory)
    register("PreemptBy", by_factory)


@hookimpl
def serq_sim_register_share_policies(register):
    from .policies.share import share_bottleneck, share_maxmin

    register("maxmin", share_maxmin)
    register("bottleneck", share_bottleneck)
