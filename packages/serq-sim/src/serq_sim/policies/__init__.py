"""The policies a pool or a run over several stages follows: eviction orders
(:mod:`~serq_sim.policies.eviction`), preemption policies (:mod:`~serq_sim.policies.preemption`) and
share policies (:mod:`~serq_sim.policies.share`). Each module states its contract; the built-ins
register through the same hooks a plugin uses (:mod:`serq_sim.plugin`) and are resolved once per pool
or per run when a simulation is built.
"""

from __future__ import annotations

from .eviction import EvictionOrder, KeyedOrder, LruOrder, evict_context, keyed_factory, lru_factory
from .preemption import NoPreemption, PreemptByKeys, PreemptionPolicy, by_factory, none_factory
from .share import share_bottleneck, share_maxmin

__all__ = [
    "EvictionOrder", "KeyedOrder", "LruOrder", "NoPreemption", "PreemptByKeys", "PreemptionPolicy",
    "by_factory", "evict_context", "keyed_factory", "lru_factory", "none_factory", "share_bottleneck",
    "share_maxmin",
]
