"""``share priority;``: runs over several stages are served in the order they started. The first takes
all it can (the least capacity left on its stages), the next what is left, and so on.

A share policy is ``policy(flows, caps) -> rates``; the contract is the module docstring of
:mod:`serq_sim.policies.share`.
"""

from __future__ import annotations

from serq import hookimpl


def share_priority(flows, caps):
    left = list(caps)
    rates = []
    for stages in flows:  # in the order the flows started
        rate = min(left[s] for s in stages)
        for s in stages:
            left[s] -= rate
        rates.append(rate)
    return rates


@hookimpl
def serq_sim_register_share_policies(register):
    register("priority", share_priority)
