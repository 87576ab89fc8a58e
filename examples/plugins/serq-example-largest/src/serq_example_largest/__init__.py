"""``evict @largest;``: a pool evicts its largest cached prefix first (ties: the earliest released).

An eviction order is an :class:`serq_sim.policies.EvictionOrder` whose ``key(entry)`` ranks the pool's
cache entries, least first; the contract is the module docstring of :mod:`serq_sim.policies.eviction`.
"""

from __future__ import annotations

from serq import hookimpl
from serq_sim.policies import EvictionOrder


class LargestFirst(EvictionOrder):
    # The key reads nothing that changes while the entry is cached but its size (which eviction itself
    # changes): the pool keeps its entries sorted by it, ranking an entry again as it shrinks, instead of
    # evaluating every entry's key for every block evicted.
    fixed_key = True
    reads_size = True
    needs_snapshot = False  # the key reads no attributes

    def key(self, entry):
        return (-entry.size,)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("largest", LargestFirst)
