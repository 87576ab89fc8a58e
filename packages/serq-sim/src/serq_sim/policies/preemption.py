"""Preemption policies: the contract and the built-ins ``preempt none`` and ``preempt by (k, …)``
(``lifo`` is ``by (-admission) requeue head``).

A policy is registered through ``serq_sim_register_preemption_policies`` as ``register(name,
factory)``, ``name`` the IR tag (``"PreemptNone"``, ``"PreemptBy"``) or an ``Extension`` preempt node's
``name``; ``factory(sim, pool, node)`` is called once per pool member when a simulation is built and
returns a :class:`PreemptionPolicy`. The engine talks to it through two members:

``victim(pool, grower)``
    The session to preempt when a grow of ``grower`` on ``pool`` does not fit, or ``None`` to make the
    grower wait. It is asked again after every preemption until the grow fits, the grower waits or the
    grower is the victim. ``sim.preempt_candidates(pool)`` gives the candidates of pool-reference.txt
    (the holders resident in the step stage whose memory the pool is, else the holders with an active
    hold scope; never a lease), in admission order, each as ``(session, slot)``;
    ``sim.computed_position(session, slot)`` is the position its hold has computed (``slot.pos`` less
    the tokens of the iteration in flight). A policy asks for them only when it needs them.
``requeue``
    ``"head"`` or ``"tail"``: where a victim re-enters its pool's queue.
"""

from __future__ import annotations

import math

from serq_ir import nodes as N

from ..stages import Ctx


class PreemptionPolicy:
    """Base of preemption policies."""

    requeue = "head"

    def __init__(self, sim, pool, node):
        self.sim = sim
        self.pool = pool
        self.node = node

    def victim(self, pool, grower):
        raise NotImplementedError


class NoPreemption(PreemptionPolicy):
    """``preempt none``: the grower waits for room."""

    def victim(self, pool, grower):
        return None


class PreemptByKeys(PreemptionPolicy):
    """``preempt by (k…) requeue head|tail`` (``lifo`` is ``by (-admission) requeue head``): the candidate
    with the least keys, compared in order; ties go to the last admitted. Keys read the candidate's
    attributes, ``admission`` (its place in the candidates' admission order), ``decoding`` and
    ``position``."""

    def __init__(self, sim, pool, node):
        super().__init__(sim, pool, node)
        self.requeue = node.requeue
        self.keys = sim.compiler.keys_fn(node.keys, span=pool.node.span) if node.keys else None
        self.ctx = Ctx()
        #: the keys are ``(-admission)`` (``lifo``): the least is the last candidate's, found without the
        #: candidates' list (serq_sim.pools.growth.last_candidate; imported here, once the pools are)
        lifo = (len(node.keys) == 1 and isinstance(k := node.keys[0], N.Unary) and k.op == "-"
                and isinstance(k.arg, N.Ctx) and k.arg.name == "admission")
        if lifo:
            from ..pools import growth

            self.last = growth.last_candidate
        else:
            self.last = None

    def victim(self, pool, grower):
        if self.last is not None:
            found = self.last(self.sim, pool)
            if found is not False:
                return found
        cands = self.sim.preempt_candidates(pool)
        if not cands:
            return None
        if self.keys is None:
            return cands[-1][0]
        ctx = self.ctx
        best = None
        bk = None
        for rank, (s, slot) in enumerate(cands):
            ctx.admission = float(rank)
            job = s.job
            ctx.decoding = 1.0 if (job is not None and job.mode == "decode") else 0.0
            ctx.position = self.sim.computed_position(s, slot)
            k = (*self.keys(s, s.attrs, ctx), -rank)
            if any(x != x for x in k):
                k = tuple(math.inf if x != x else x for x in k)
            if best is None or k < bk:
                best, bk = s, k
        return best


def none_factory(sim, pool, node):
    return NoPreemption(sim, pool, node)


def by_factory(sim, pool, node):
    return PreemptByKeys(sim, pool, node)
