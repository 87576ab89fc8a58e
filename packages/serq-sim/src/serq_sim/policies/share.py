"""Share policies: the rates of runs over several stages (flows).

A policy is registered through ``serq_sim_register_share_policies`` as ``register(name, policy)``,
``name`` as the program's ``share`` names it (``"maxmin"``, ``"bottleneck"``). ``policy(flows, caps)``:
``flows[i]`` lists the stage numbers flow ``i`` holds, ``caps[k]`` is stage ``k``'s constant capacity φ;
it returns one rate per flow. The numbers are the call's own, not the program's: the stages the call's
flows hold, from 0 in the order the flows name them (:meth:`serq_sim.stages.FlowNetwork.settle`), so
a stage may have another number in the next call. The flow network (:class:`serq_sim.stages.FlowNetwork`) calls it whenever a
flow starts or ends, with the flows in the order they started.
"""

from __future__ import annotations

import math


def share_maxmin(flows: list[list[int]], caps: list[float]) -> list[float]:
    """Max-min fair rates (progressive filling): every unfrozen flow's rate rises together until a stage
    fills; the flows through it freeze there, the others go on."""
    rates = [0.0] * len(flows)
    left = list(caps)
    active = set(range(len(flows)))
    while active:
        count: dict[int, int] = {}
        for f in active:
            for s in flows[f]:
                count[s] = count.get(s, 0) + 1
        inc = min(left[s] / c for s, c in count.items())
        if inc == math.inf:
            # every stage the flows left hold has an infinite capacity (ps(inf)): no stage ever fills, so
            # their rates rise without bound (left at inf - inf, NaN, the filling went round for ever)
            for f in active:
                rates[f] = math.inf
            break
        for f in active:
            rates[f] += inc
        full = set()
        for s, c in count.items():
            left[s] -= inc * c
            if left[s] <= 1e-12 * max(caps[s], 1.0) and caps[s] != math.inf:  # ps(inf) never fills
                full.add(s)
        active = {f for f in active if not any(s in full for s in flows[f])}
    return rates


def share_bottleneck(flows: list[list[int]], caps: list[float]) -> list[float]:
    """Each flow's equal share at the tightest of its stages, ``min_s φ_s / n_s``."""
    count: dict[int, int] = {}
    for f in flows:
        for s in f:
            count[s] = count.get(s, 0) + 1
    return [min(caps[s] / count[s] for s in f) for f in flows]
