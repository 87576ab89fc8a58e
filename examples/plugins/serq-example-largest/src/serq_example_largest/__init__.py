"""``evict @largest;``: a pool evicts its largest cached prefix first (ties: the earliest released).

An eviction order is an :class:`serq_sim.policies.EvictionOrder` whose ``key(entry)`` ranks the pool's
cache entries, least first; the contract is the module docstring of :mod:`serq_sim.policies.eviction`.
"""

from __future__ import annotations

from serq import hookimpl
from serq_sim.policies import EvictionOrder


class LargestFirst(EvictionOrder):
    def key(self, entry):
        return (-entry.size,)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("largest", LargestFirst)
