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
``self_stop``
    Whether a grower on a step stage that is its own victim ends the iteration's serving, so that the
    residents after it in the serving order get nothing in that iteration (``True``, the default), or
    the serving goes on to them (``False``). vLLM's scheduler does the first under its FCFS policy (the
    victim is ``running[-1]``, the grower itself when it is last: ``break``) and the second under its
    priority policy (the victim is the lowest priority, and the requests after it "have higher priority
    and may still fit": ``continue``). ``preempt lifo`` stops, and so do keys that order the candidates as
    it does (:func:`lifo_order`); ``preempt by`` any other order goes on.
"""

from __future__ import annotations

import math

from serq_ir import nodes as N

from ..errors import SimError, fmt_time
from ..orders import keys_order, nan_last
from ..stages import Ctx


def _chosen(e):
    """``e`` with every conditional whose test is a number replaced by the branch it chooses (``vict ==
    1 ? -cls : 0`` with the let at 0 is ``0``): the linker folds a conditional only when its three parts
    are numbers, so a let that switches a key between policies leaves one in the IR, and it orders the
    candidates as its chosen branch does (the other is never evaluated). A number's test is true when
    it is not 0, as the simulator tests it (the IR's "inf" and "-inf" are not 0)."""
    while isinstance(e, N.Cond) and isinstance(e.test, N.Num):
        e = e.then if e.test.value != 0 else e.orelse
    return e


def _admission_sign(e) -> int:
    """1 when ``e`` strictly increases with ``admission`` (a candidate's rank) and reads nothing else,
    -1 when it strictly decreases, 0 otherwise (or not known): ``admission``, and that with a finite
    number added, subtracted, or as the factor or divisor of a non-zero finite one (of a magnitude no
    rank can take out of the floats' range or below their spacing), negated or not; a conditional of a
    number's test is its chosen branch (:func:`_chosen`)."""
    e = _chosen(e)
    if isinstance(e, N.Ctx):
        return 1 if e.name == "admission" else 0
    if isinstance(e, N.Unary) and e.op == "-":
        return -_admission_sign(e.arg)
    if not isinstance(e, N.Binary) or e.op not in ("+", "-", "*", "/"):
        return 0
    lhs, rhs = _chosen(e.lhs), _chosen(e.rhs)
    if isinstance(rhs, N.Num):
        c, sign = rhs.value, _admission_sign(lhs)
    elif isinstance(lhs, N.Num) and e.op != "/":
        c, sign = lhs.value, _admission_sign(rhs)
        if e.op == "-":
            sign = -sign
    else:
        return 0
    if isinstance(c, str) or not math.isfinite(c):  # the IR's "inf" and "-inf"
        return 0
    if e.op in ("+", "-"):
        return sign if abs(c) <= 1e15 else 0
    if not 1e-100 <= abs(c) <= 1e100:
        return 0
    return sign if c > 0 else -sign


def _per_candidate(e) -> bool:
    """Whether key ``e`` can differ between two candidates at one Victim moment: it reads an attribute or
    ``admission``, ``decoding`` or ``position`` (in the branch a number's test chooses). A number, ``now``
    and the pools' and stages' queries are the same for every candidate: such a key orders nothing (a NaN
    there is inf for all of them, :func:`serq_sim.orders.nan_last`)."""
    from ..compile import reads

    return reads(e, lambda x: isinstance(x, N.Attr) or (isinstance(x, N.Ctx) and x.name in
                                                        ("admission", "decoding", "position")), taken=True)


def lifo_order(keys) -> bool:
    """Whether ``preempt by`` keys order the candidates as ``lifo`` does, the last admitted first: the
    first key that can differ between candidates (:func:`_per_candidate`; a number, ``now`` or a pool's
    query is the same for all of them: it orders nothing) strictly decreases with ``admission``
    (``-admission``, ``0 - admission``, ``-1 * admission``), and since no two candidates have one
    admission the keys after it order nothing either; or no key can differ (``by (0)``, ``by (now)``):
    every candidate ties, and ties go to the last admitted. Such keys pick lifo's victim, and a grower
    that is its own victim ends the serving as under ``preempt lifo``: the rule follows the order, not
    its spelling: a conditional of a number's test is the branch it chooses (:func:`_chosen`), so a let
    that switches the policy (``vict == 1 ? -cls : 0``) is lifo at 0."""
    for k in keys:
        if _per_candidate(k):
            return _admission_sign(k) == -1
    return True


class PreemptionPolicy:
    """Base of preemption policies."""

    requeue = "head"
    self_stop = True

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
        self.keys = (sim.compiler.keys_fn(node.keys, span=pool.node.span, kind="preempt by") if node.keys
                     else None)
        self.ctx = Ctx()
        #: the keys are ``(-admission)`` (``lifo``): the least is the last candidate's, found without the
        #: candidates' list (serq_sim.pools.growth.last_candidate; imported here, once the pools are)
        lifo = lifo_order(node.keys or [])
        read = [k for k in node.keys or [] if not isinstance(_chosen(k), N.Num)]
        if lifo and len(read) == 1 and _admission_sign(read[0]) == -1:  # (other keys are evaluated)
            from ..pools import growth

            self.last = growth.last_candidate
        else:
            self.last = None
        #: a self-victim ends the iteration's serving under lifo only (vLLM's FCFS `break`; its priority
        #: policy serves the running requests after the self-victim: scheduler.py, "preempted itself")
        self.self_stop = lifo
        # the context the keys read (judged once): what they do not read is not computed per candidate (a
        # candidate's computed position walks its job; a pool under pressure asks at every block it grows)
        from ..compile import reads_context

        keys = node.keys or []
        self.r_adm = reads_context(keys, ("admission",))
        self.r_dec = reads_context(keys, ("decoding",))
        self.r_pos = reads_context(keys, ("position",))
        from ..pools import growth

        #: the engine's candidates walked in the pool's order (_engine_victim), when they are the built-in
        #: ones (a plugin's preempt_candidates is asked for its list)
        self.walk = growth.resident_slots if type(sim).preempt_candidates is growth.preempt_candidates else None
        #: the keys read nothing that changes while a job is resident (attributes, numbers, ``decoding``) but
        #: ``admission`` through terms strictly monotone in it alone, and no ``position``: on a step stage's
        #: memory pool the victim is the first candidate of the residents kept in the keys' order
        #: (serq_sim.orders.keys_order, the keys evaluated once a job, ``admission`` as the session's
        #: admission number, which orders the candidates as their rank does); the per-job reference
        #: (SERQ_SIM_TIER=general) evaluates them at every victim
        from ..compile import _not_pure, reads_any
        from ..tier_env import forced_general

        def moving(e):
            return _not_pure(e) and not (isinstance(e, N.Ctx) and e.name in ("admission", "decoding"))

        self.kept = (bool(keys) and self.last is None and not self.r_pos and self.walk is not None
                     and not forced_general() and not reads_any(keys, moving)
                     and all(_admission_sign(k) != 0 for k in keys if reads_context([k], ("admission",))))
        self.kctx = Ctx()
        #: the keys as the kept order reads them (serq_sim.orders.keys_order: at a job's join, not checked for
        #: NaN), and the keys' places of a NaN that order met, not noted yet, each with the jobs it was NaN
        #: for: while one of those is resident, the next victim asked for walks the candidates as the per-job
        #: reference does, which notes it at the time and for the session the reference's walk would
        #: (serq_sim.nankeys); once none is, the reference can no longer meet it there, and no walk is made
        self.kept_keys = sim.compiler.keys_fn(keys, span=pool.node.span) if self.kept else None
        self.kept_nan: dict = {}
        self._kept_places = None  # (the keys' places, made at the first NaN the kept order meets)
        self._cand = growth._CANDIDATE
        self._holds_on = growth.holds_on

    def victim(self, pool, grower):
        # (a key's run-time error names the candidate it was evaluated for; the grower's growth notes it,
        # serq_sim.pools.growth.grow_slot and chosen_for)
        if self.last is not None:
            found = self.last(self.sim, pool)
            if found is not False:
                return found
        sim = self.sim
        # its candidates are units of the event's work (Simulation.pulse_out): a grower may preempt many
        sim.pulse -= len(pool.holders) + 1
        if sim.pulse < 0:
            from ..report import member_label

            sim.pulse_out(f"choosing whom pool {member_label(pool)} preempts", None, None, None, pool.node.span)
        if self.kept:
            engines = pool.memory_of
            if len(engines) == 1 and getattr(engines[0], "orders", None) is not None:
                found = self._kept_victim(pool, engines[0])
                if found is not None:
                    if self.kept_nan:
                        self._note_kept_nan(pool)
                    return found
        return self._walked(pool)

    def kept_nan_met(self, job, keys: tuple, residents: int) -> None:
        """The kept order (serq_sim.orders.keys_order) read ``keys``, with a NaN among them, for ``job`` at its
        join: the job is listed under each NaN key's place (:attr:`kept_nan`); a list grown past twice the
        ``residents`` (and 8) is cut back to the jobs still resident (the others left before a victim came)."""
        places = self._kept_places
        if places is None:
            from ..nankeys import key_places

            places = self._kept_places = key_places("preempt by", self.node.keys, self.pool.node.span)
        for p, x in zip(places, keys):
            if x != x:
                jobs = self.kept_nan.setdefault(p, [])
                jobs.append(job)
                if len(jobs) > 2 * residents + 8:
                    jobs[:] = [j for j in jobs if _resident(j)]

    def _note_kept_nan(self, pool) -> None:
        """The kept order met a NaN key not noted yet: the candidates walked as the reference walks them, for
        the keys they note (their victim is the kept order's), while a job it was NaN for is still resident
        (one that has left is met by no walk: a walk at every victim for it undid the kept order)."""
        first = self.sim.nan_keys
        live = {}
        for p, jobs in self.kept_nan.items():
            if p not in first:
                jobs = [j for j in jobs if _resident(j)]
                if jobs:
                    live[p] = jobs
        self.kept_nan = live
        if live:
            self._walked(pool)
            self.kept_nan = {p: jobs for p, jobs in live.items() if p not in first}

    def _walked(self, pool):
        """:meth:`victim` by the walk of the candidates, their keys evaluated now."""
        keys = self.keys
        r_adm, r_dec, r_pos = self.r_adm, self.r_dec, self.r_pos
        if keys is not None and not (r_adm or r_pos) and pool.memory_of and self.walk is not None:
            return self._engine_victim(pool, keys, r_dec)
        cands = self.sim.preempt_candidates(pool)
        if not cands:
            return None
        if keys is None:
            return cands[-1][0]
        ctx = self.ctx
        position = self.sim.computed_position
        best = None
        bk = None
        rank = 0.0
        for s, slot in cands:
            if r_adm:
                ctx.admission = rank
            if r_dec:
                job = s.job
                ctx.decoding = 1.0 if (job is not None and job.mode == "decode") else 0.0
            if r_pos:
                ctx.position = position(s, slot)
            k = nan_last(keys(s, s.attrs, ctx))  # a NaN key compares as inf
            # the least keys; ties go to the last admitted (the later of two equal keys: <=)
            if best is None or k <= bk:
                best, bk = s, k
            rank += 1.0
        return best

    def _kept_victim(self, pool, engine):
        """:meth:`victim` for ``kept`` keys on the memory pool of one step stage: the first candidate of its
        residents in the keys' order (the least keys, ties to the last admitted), or ``None`` when the order
        cannot tell (its keys raised, or no candidate is there: the walk decides)."""
        order = keys_order(engine, self)
        if order is None:
            return None
        cand = self._cand
        for job in order.jobs:
            s = job.owner
            if s is not None and s.job is job and s.status in cand and self._holds_on(s, pool):
                return s
        return None

    def _engine_victim(self, pool, keys, r_dec):
        """:meth:`victim` on a step stage's memory pool for keys that read neither ``admission`` nor
        ``position``, the candidates being the built-in ones: walked as the pool holds them, without their
        list in admission order (sorted at every victim asked for: a pool under pressure asks at every
        block it grows); a tie of keys goes to the greater ``adm_seq``, the later in that order (two
        candidates never share an admission: each admission draws a new one)."""
        ctx = self.ctx
        best = None
        bk = None
        bseq = None
        for s, _slot, job in self.walk(pool):
            if r_dec:
                ctx.decoding = 1.0 if job.mode == "decode" else 0.0
            k = nan_last(keys(s, s.attrs, ctx))  # a NaN key compares as inf
            if best is None or k < bk or (k == bk and s.adm_seq > bseq):
                best, bk, bseq = s, k, s.adm_seq
        return best


def chosen_for(e: SimError, sim, pool, grower, sid: int | None = None) -> SimError:
    """Run-time error ``e``, raised while choosing whom ``pool`` preempts for ``grower``'s growth (a ``preempt
    by`` key of a candidate that fails: a family's index out of range; a policy's own error), with a note
    naming the growth as a run-time error names its place: the grower's statement ``sid`` (the hold's
    ``grow``, or the run growing it: serq_sim.pools.growth.grow_slot), the session and the time. The error
    names the key's place, the time and the candidate the key was evaluated for; the session whose growth
    asked was named nowhere, and then its statement neither. ``e``'s class and ``code`` are kept."""
    from serq.errors import place

    from ..report import member_label

    span = sim.spans[sid] if sid is not None else None
    by = f" by the statement at {place(span)}" if span is not None else ""
    note = (f"\nnote: while choosing whom pool {member_label(pool)} preempts for the growth of session "
            f"{grower.serial} at t={fmt_time(sim.now)}{by} (its keys are evaluated for each candidate)")
    out = type(e)(f"{e}{note}")
    if e.code is not None:
        out.code = e.code
    return out


def none_factory(sim, pool, node):
    return NoPreemption(sim, pool, node)


def by_factory(sim, pool, node):
    return PreemptByKeys(sim, pool, node)


def _resident(job) -> bool:
    """Whether ``job`` is still its session's job (it has not left: ended, preempted or its session gone)."""
    return job.owner is not None and job.owner.job is job
