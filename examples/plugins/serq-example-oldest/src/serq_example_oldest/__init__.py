"""``preempt @oldest;`` (or ``preempt @oldest(requeue = 1);``): when a grow does not fit, the candidate
admitted first is preempted (``lifo``'s opposite); it re-enters the pool's queue at its head, or at its
tail with ``requeue = 1``.

A preemption policy is a :class:`serq_sim.policies.PreemptionPolicy` (``victim(pool, grower)`` and
``requeue``); the contract is the module docstring of :mod:`serq_sim.policies.preemption`.
"""

from __future__ import annotations

from serq import hookimpl
from serq_sim.errors import SimError, format_error
from serq_sim.policies import PreemptionPolicy


class Oldest(PreemptionPolicy):
    def __init__(self, sim, pool, node):
        super().__init__(sim, pool, node)
        params = node.params or {}
        if not isinstance(params, dict) or set(params) - {"requeue"} or params.get("requeue", 0) not in (0, 1):
            raise SimError(format_error(pool.node.span, None, None, f"pool {pool.node.name}: @oldest takes "
                                        f"only requeue = 0 (head) or 1 (tail), not {params!r}", sim.source))
        self.requeue = "tail" if params.get("requeue", 0) == 1 else "head"

    def victim(self, pool, grower):
        candidates = self.sim.preempt_candidates(pool)  # in admission order
        return candidates[0][0] if candidates else None


@hookimpl
def serq_sim_register_preemption_policies(register):
    register("oldest", Oldest)
