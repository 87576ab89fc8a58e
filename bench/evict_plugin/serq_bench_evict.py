"""The eviction order of bench/evict.py, written as a plugin would be (docs/hooks.md, "Eviction
orders"): least release time first, ties in release order, which is ``evict lru``'s order. Its key reads
only the entry's release time, which does not change while the entry is cached, and it says so."""

from serq import hookimpl
from serq_sim.policies import EvictionOrder


class ReleasedFirst(EvictionOrder):
    fixed_key = True
    needs_snapshot = False

    def key(self, entry):
        return (entry.last,)


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("released_first", ReleasedFirst)
