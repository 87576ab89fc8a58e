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
        See :mod:`serq_sim.stages` for the factory's contract.
    """


@hookspec
def serq_sim_register_eviction_orders(register: Callable[[str, Any], None]) -> None:
    """Called when a simulation is built, to add eviction orders (``EvictLru``, ``EvictBy``, or an
    ``Extension`` name). See :mod:`serq_sim.policies` for the contract."""


@hookspec
def serq_sim_register_preemption_policies(register: Callable[[str, Any], None]) -> None:
    """Called when a simulation is built, to add preemption policies (``PreemptNone``, ``PreemptBy``, or
    an ``Extension`` name). See :mod:`serq_sim.policies` for the contract."""


@hookspec
def serq_sim_register_share_policies(register: Callable[[str, Any], None]) -> None:
    """Called when a simulation is built, to add share policies for runs over several stages
    (``maxmin``, ``bottleneck``, or a plugin's name, as the program's ``share`` names it)."""
