"""A step stage's residents kept in an order of their own, for the choice of a preemption victim among
them without a walk over every holder for each victim (a burst of preemptions at one instant asks for
one victim per block it grows).

An order is made when a victim is first asked for on the stage's memory pool, from the residents then,
and is kept as jobs join the residents and leave them (step.stage.StepStage: ``orders``). Its key is
fixed while a job is resident: what it reads does not change until the job leaves (a session's code runs
only between its jobs; its admission is new only at a new admission, a new job).

* :func:`admission_order`: the residents in the order of their sessions' latest admission (their rank's
  last item), for ``preempt lifo`` on a stage ranked by kept serve keys (pools.growth.last_candidate).
* :func:`keys_order`: ``(keys, -admission)`` of ``preempt by`` keys that read only attributes, numbers,
  ``decoding`` and ``admission`` through a strictly monotone term (policies.preemption: ``kept``), the
  least first, ties to the last admitted, as the policy chooses.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

from .stages import rank_seq


class ResidentOrder:
    """The residents of one step stage sorted by ``key(job)`` (ties in the order they joined), kept as they
    join and leave (a key that raises drops the order: its user asks the walk, :func:`order_of`)."""

    __slots__ = ("key", "keys", "jobs", "of")

    def __init__(self, key, residents):
        self.key = key
        self.of: dict = {}
        pairs = []
        for job in residents:
            k = key(job)
            self.of[job] = k
            pairs.append((k, len(pairs), job))
        pairs.sort(key=_first_two)
        self.keys = [p[0] for p in pairs]
        self.jobs = [p[2] for p in pairs]

    def add(self, job) -> None:
        k = self.key(job)
        self.of[job] = k
        keys = self.keys
        if not keys or keys[-1] <= k:
            keys.append(k)
            self.jobs.append(job)
        else:
            i = bisect_right(keys, k)
            keys.insert(i, k)
            self.jobs.insert(i, job)

    def remove(self, job) -> None:
        k = self.of.pop(job, None)
        if k is None:
            return
        keys = self.keys
        jobs = self.jobs
        i = bisect_left(keys, k)
        n = len(jobs)
        while i < n:
            if jobs[i] is job:
                del keys[i]
                del jobs[i]
                return
            i += 1
        i = jobs.index(job)
        del keys[i]
        del jobs[i]

    def drop(self, ended: set) -> None:
        """Remove every job of ``ended`` at once (thousands may end one iteration)."""
        keep = [i for i, j in enumerate(self.jobs) if j not in ended]
        self.keys = [self.keys[i] for i in keep]
        self.jobs = [self.jobs[i] for i in keep]
        of = self.of
        for j in ended:
            of.pop(j, None)


def nan_last(k: tuple) -> tuple:
    """Keys ``k`` with a NaN read as inf (a NaN key compares as inf: preempt by's rule)."""
    for x in k:
        if x != x:
            return tuple(math.inf if y != y else y for y in k)
    return k


def _first_two(p):
    return p[0], p[1]


def order_of(engine, tag, key):
    """The order ``tag`` of ``engine``'s residents (made from them at the first call, then kept), or
    ``None`` when its key has raised (the walk decides from then on)."""
    o = engine.orders.get(tag)
    if o is None:
        try:
            o = ResidentOrder(key, engine.residents)
        except Exception:  # noqa: BLE001 - the walk evaluates the keys, and raises, when and as it would
            engine.orders[tag] = False
            return None
        engine.orders[tag] = o
        return o
    return o or None


def admission_order(engine) -> ResidentOrder | None:
    return order_of(engine, "admission", rank_seq)


def keys_order(engine, policy) -> ResidentOrder | None:
    keys = policy.kept_keys
    ctx = policy.kctx
    r_dec = policy.r_dec
    inf = math.inf

    def key(job):
        s = job.owner
        if s is None:
            return ((inf,), inf)
        ctx.admission = float(s.adm_seq)
        if r_dec:
            ctx.decoding = 1.0 if job.mode == "decode" else 0.0
        k = keys(s, s.attrs, ctx)
        kk = nan_last(k)
        if kk is not k:  # a NaN: noted where the reference's walk would note it (PreemptByKeys.kept_nan_met)
            policy.kept_nan_met(job, k, len(engine.residents))
        return (kk, -s.adm_seq)

    return order_of(engine, policy, key)
