"""Hook specifications of serq-sim (added to the host through ``serq_addhooks``).

Every kind of behaviour the simulator dispatches on is registered through these hooks, the built-ins
included, and resolved once when a simulation is built, never per event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("serq")


@hookspec
def serq_sim_register_stage_kinds(register: Callable[[str, Any], None]) -> None:
    """Called when a simulation is built, to add stage kinds.

    :param register: ``register(name, factory)``. ``name`` is the IR tag (``"Fifo"``, ``"Ps"``,
        ``"Delay"``, ``"Step"``) or, for a plugin's kind, the ``name`` of an ``Extension`` stage node.
        ``factory(sim, node, member, flat)`` is called once per member of every stage family of that kind
        and returns a :class:`serq_sim.stages.StageKind` (``attach``, ``detach``, ``settle``,
        ``busy_level``; completions through ``sim.job_done``). The module docstring of
        :mod:`serq_sim.stages` is the full contract. A name two plugins register is an error naming both.
    """


@hookspec
def serq_sim_register_eviction_orders(register: Callable[[str, Any], None]) -> None:
    """Called when a simulation is built, to add eviction orders.

    :param register: ``register(name, factory)``; ``name`` is ``"EvictLru"``, ``"EvictBy"`` or an
        ``Extension`` evict node's ``name``. ``factory(sim, pool, node)`` is called once per pool member
        and returns a :class:`serq_sim.policies.EvictionOrder`: override ``key(entry)`` (least first, ties
        in release order) and declare ``fixed_key = True`` when the key does not change while the entry is
        cached (the pool's entries are then kept sorted), or override ``pick(pool)``, the next entry to
        evict. See :mod:`serq_sim.policies.eviction`.
    """


@hookspec
def serq_sim_register_preemption_policies(register: Callable[[str, Any], None]) -> None:
    """Called when a simulation is built, to add preemption policies.

    :param register: ``register(name, factory)``; ``name`` is ``"PreemptNone"``, ``"PreemptBy"`` or an
        ``Extension`` preempt node's ``name``. ``factory(sim, pool, node)`` returns a
        :class:`serq_sim.policies.PreemptionPolicy`: ``victim(pool, grower)`` the session to preempt when
        a grow does not fit (``None``: the grower waits), ``requeue`` (``"head"`` or ``"tail"``) and
        ``self_stop`` (``True`` or ``False``).
        ``sim.preempt_candidates(pool)`` lists the candidates of pool-reference.txt. See
        :mod:`serq_sim.policies.preemption`.
    """


@hookspec
def serq_sim_register_share_policies(register: Callable[[str, Any], None]) -> None:
    """Called when a simulation is built, to add share policies for runs over several stages.

    :param register: ``register(name, policy)``; ``name`` as the program's ``share`` names it
        (``"maxmin"``, ``"bottleneck"``). ``policy(flows, caps) -> rates``: ``flows[i]`` lists the stage
        numbers flow ``i`` holds, ``caps[k]`` is stage ``k``'s constant capacity φ (the numbers are the
        call's own: the stages its flows hold, from 0 in the order the flows name them); it returns one rate
        per flow, recomputed whenever a flow starts or ends. See :mod:`serq_sim.policies.share`.
    """
