"""What the parts of the step stage share: constants and small helpers."""

from __future__ import annotations

import math
from bisect import bisect_left
from operator import attrgetter

from serq.switches import switch
from serq_ir import nodes as N

from ..compile import num, reads
from ..stages import Ctx, Job

EPS = 1e-9
#: ``SERQ_TRACE_ITER=1``: print every iteration's composition on stderr (debugging; unset, blank, ``0``,
#: ``off``, ``no``, ``false``: off; serq.switches)
_TRACE = switch("SERQ_TRACE_ITER", False)
_INF = math.inf
#: below this a float holds every whole number exactly (and subtracting one is exact)
_EXACT = 9007199254740992.0


def repeat_add(s: float, x: float, k: int) -> float:
    """``s`` with ``x`` added ``k`` times, each addition rounded as a float addition rounds: what ``k``
    iterations tallied one by one (the per-job planning) leave in a run-long sum, for the ``k`` rounds a lazy
    planning tallies at once. ``s + x * k`` is that sum while every partial sum is a whole number below 2**53
    (exact); beyond (a budget of 10**14 passes 2**53 in some 90 iterations) or with a fraction, ``s + x * k``
    may differ from it in its last bits, so the additions are made here: the rounding of ``s + x`` is the same
    step for every ``s`` of one binade once its last bit is even (round half to even), so each binade is
    crossed in one jump after two single additions (about 2 100 binades at most, whatever ``k``)."""
    if k <= 0:
        return s
    if 0.0 <= s < _EXACT and 0.0 <= x and s % 1.0 == 0.0 and x % 1.0 == 0.0:  # (NaN fails the comparisons)
        t = s + x * k
        if t < _EXACT:
            return t  # (every partial sum a whole number below 2**53: exact, in any grouping)
    if not (s >= 0.0 and x >= 0.0) or not s + x < _INF:
        for _ in range(min(k, 4)):  # (inf and NaN stay what they became; a negative x is no tally's)
            s = s + x
        if k <= 4 or not (s == s and abs(s) == _INF):
            for _ in range(k - min(k, 4)):
                s = s + x
        return s
    while k > 0:
        s = s + x  # one addition as it is made
        k -= 1
        if not k:
            break
        t = s + x
        u = math.ulp(s)
        if t == s or math.ulp(t) != u:
            if t == s:
                return s  # x is at most half an ulp of s, and the last bit even: every addition leaves it
            continue  # t in the next binade: one addition at a time there
        s = t  # a second one in the binade: after it, in a tie, the last bit of ``s`` is even
        k -= 1
        if not k:
            break
        t = s + x
        d = t - s  # (exact: 0 <= s <= t in one binade)
        if d == 0.0:
            return s
        if math.ulp(t) != u or d < u:
            continue
        # s = m u, each addition adds d while s + d stays below the binade's top, 2**(e+1) = the next power of
        # two above s (a tie rounds s + x to the even neighbour: with m even, always the same one)
        top = 2.0 ** math.frexp(s)[1]
        j = int((top - u - s) // d)  # (whole multiples of u, fewer than 2**53 of them: exact)
        if j <= 0:
            continue
        if j > k:
            j = k
        s = s + d * j  # (a multiple of u below top: exact)
        k -= j
    return s


def tally_rounds(stage, tokens: float, budget: float, k: int) -> None:
    """Add ``k`` iterations' ``tokens`` and ``budget`` to a step stage's run-long sums, as the iterations would
    one by one (:func:`repeat_add`; one, the common case, added at once): the one rule of Planner._tally and
    LazyDecoding._launch. The iteration's tokens are kept as the stage's ``iter_tokens`` (StepStage._dust)."""
    stage.iter_tokens = tokens
    if k == 1:
        stage.sum_tokens += tokens
        stage.sum_budget += budget
    else:
        stage.sum_tokens = repeat_add(stage.sum_tokens, tokens, k)
        stage.sum_budget = repeat_add(stage.sum_budget, budget, k)


def tally_class(stage, dec, jobs, k: int) -> None:
    """Count ``k`` iterations (``-1``: take one back) that served ``jobs`` jobs, ``dec`` of them decoders,
    by their composition: decode-only, prefill-only or mixed; one that served none (it only preempted) is
    none of them. The one rule of the engine statistics' classes (Planner._tally, LazyDecoding._launch,
    StepStage._untally)."""
    if jobs:
        if dec == jobs:
            stage.it_decode += k
        elif dec == 0:
            stage.it_prefill += k
        else:
            stage.it_mixed += k


def _not_steady(names: tuple[str, ...]):
    """A predicate for :func:`reads`: a node whose value may differ between two quiet rounds."""
    def pred(e) -> bool:
        return isinstance(e, (N.Draw, N.Observable, N.Attr)) or (isinstance(e, N.Ctx) and e.name not in names)
    return pred


#: the observables that only read a count off a pool (they cannot fail, nor change anything)
_PLAIN_OBSERVABLES = ("holders", "queued", "used", "free")


def _not_quiet(names: tuple[str, ...], counts: tuple[str, ...] = _PLAIN_OBSERVABLES):
    """A predicate for :func:`reads`: a node whose value may differ between two quiet rounds, where the
    quiet rounds change no pool's holders or queue (nothing is admitted, released or joins: that takes an
    event) and, when ``counts`` holds ``used`` and ``free``, no allocation either: as
    :func:`_not_steady`, except that a plain count ``counts`` of a pool named without an index is
    steady."""
    def pred(e) -> bool:
        if isinstance(e, N.Observable):
            return not (e.name in counts and isinstance(e.target, N.PoolRef) and e.target.index is None
                        and not e.args)
        return isinstance(e, (N.Draw, N.Attr)) or (isinstance(e, N.Ctx) and e.name not in names)
    return pred


def admission_order(keys) -> bool:
    """Whether ``serve by`` keys order the residents exactly as admission order does: each key is a number
    (the same for every resident: it orders nothing) or ``admission`` (a resident's admission sequence,
    unique per admission), and one is ``admission``. The residents are kept in admission order, so such
    keys need no sort (a stable sort of that list by them leaves it as it is)."""
    seen = False
    for k in keys:
        if isinstance(k, N.Ctx) and k.name == "admission":
            seen = True
        elif not (isinstance(k, N.Num) and num(k.value) == num(k.value)):
            return False
    return seen


def _may_act(e) -> bool:
    """A predicate for :func:`reads`: a node whose evaluation might fail or act (a draw, a call, a division
    or remainder through their helpers, an observable other than a plain count of a pool named without an
    index)."""
    if isinstance(e, (N.Draw, N.Call)):
        return True
    if isinstance(e, N.Observable):
        return not (e.name in _PLAIN_OBSERVABLES and isinstance(e.target, N.PoolRef) and e.target.index is None
                    and not e.args)
    return isinstance(e, N.Binary) and e.op in ("/", "%")


def constant(e) -> float | None:
    """The value of ``e`` when it is the same whatever the state, else ``None``: a number, or ``t ? a : b``
    with ``a`` and ``b`` the same constant and a test that can neither fail nor act (``long_prefill(reqs,
    inf)`` of lib/vllm.sq is ``inf`` either way)."""
    if isinstance(e, N.Num):
        return num(e.value)
    if isinstance(e, N.Cond):
        a = constant(e.then)
        if a is not None:
            b = constant(e.orelse)
            if b is not None and repr(a) == repr(b) and not reads(e.test, _may_act):
                return a
    return None


def _unplan(assign: list[Job]) -> bool:
    for j in assign:
        j.assigned = 0.0
    return False


#: a step stage's resident's place in the serving order (StepStage.attach): its admission, or, on a stage
#: whose serve keys are taken once, its keys then its admission
_rank = attrgetter("rank")


def position(jobs: list, job) -> int:
    """``jobs.index(job)`` on a list in serving order (by ``rank``, as StepStage._join keeps the residents
    and eager): the job is looked for among those of its rank, found by bisection, so a burst of
    preemptions at one instant (lifo takes the last admitted) does not walk the list for each victim. A
    rank that does not compare (NaN) falls back to the walk."""
    rank = job.rank
    i = bisect_left(jobs, rank, key=_rank)
    n = len(jobs)
    while i < n:
        x = jobs[i]
        if x is job:
            return i
        if x.rank != rank:
            break
        i += 1
    return jobs.index(job)


def serve_keys_of(keys: tuple) -> tuple:
    """``serve by`` keys as they order: a NaN counts as ``inf`` (as a ``preempt by`` key does), so that the
    order is a total one (docs/language.md)."""
    for k in keys:
        if k != k:
            return tuple(_INF if x != x else x for x in keys)
    return keys


#: the context variables set at the budget moment, and for the cost
_PRE_NAMES = ("residents", "decoders", "kv_decode", "kv_prefill")
_COST_NAMES = ("tokens", "decoders", "prefilled", "residents", "kv_decode", "kv_prefill", "attention")


def iteration_sums(assign: list[Job], held, kv: bool, tokens: float, dec: float, kvd: float):
    """The sums an iteration's cost reads over the planned jobs ``assign``, added to what is given (a lazy
    planning's counted decoders and their KV): ``(tokens, decoders, prefilled, kv_decode, kv_prefill)``;
    with ``kv`` False the KV sums are not taken (the cost reads neither). ``held(job)`` is the KV a job
    holds (its slots' allocations, inlined here when the job lists them)."""
    pre_t = kvp = 0.0
    for j in assign:
        t = j.assigned
        tokens += t
        if kv:
            slots = j.mslots
            if slots is None:
                m = held(j)
            else:  # held(j), inlined
                m = 0.0
                for sl in slots:
                    m += sl.alloc
            if j.mode == "decode":
                dec += 1.0
                kvd += m
            else:
                pre_t += t
                kvp += m
        elif j.mode == "decode":
            dec += 1.0
        else:
            pre_t += t
    return tokens, dec, pre_t, kvd, kvp


def cost_context(tokens: float, dec: float, pre_t: float, residents: float, kvd: float, kvp: float,
                 attn: float) -> Ctx:
    """What an iteration's cost expression reads: ``tokens``, ``decoders``, ``prefilled``, ``residents``,
    ``kv_decode``, ``kv_prefill`` and ``attention``."""
    ctx = Ctx()
    ctx.tokens = tokens
    ctx.decoders = dec
    ctx.prefilled = pre_t
    ctx.residents = residents
    ctx.kv_decode = kvd
    ctx.kv_prefill = kvp
    ctx.attention = attn
    return ctx
