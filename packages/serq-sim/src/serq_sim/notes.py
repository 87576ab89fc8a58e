"""The report's warnings about the figures themselves: a run that is not steady, observes left with too
few samples by the warm-up, holds rejected as never fitting, sessions stuck in preemption. Each names the
figures behind it; each is a ``warning:`` (``serq run --strict`` fails on it). Pure Python, as the rest of
the report.

Not steady: judged on the backlog, the number of live sessions (arrived, not ended), as the engine keeps
it over the run (:mod:`serq_sim.backlog`): its time-weighted mean over each of 20 equal bins of the run
after the warm-up (the bins after the last arrival left out, the drain of ``arrivals N``; at least
:data:`MIN_BINS`). The run is not steady when all four hold:

* the bins' means climb: the least-squares slope over the bins has a t statistic (from the residuals)
  above :data:`TREND_T`;
* the climb is material: the fitted growth over the bins (slope × their number) is more than
  :data:`TREND_RISE` of the mean backlog;
* arrivals exceed completions over those bins (the live count at their end less the one at the warm-up's
  end: arrivals - ended) by more than :data:`TREND_GROWTH` of the mean backlog, what a steady system holds;
* and the climb goes on: over the second half of the bins alone the slope's t is above
  :data:`HALF_T` and its fitted growth more than :data:`HALF_RISE` of the mean backlog (a backlog that
  fills to its level after a short warm-up, as a chat workload's live conversations do, levels off).

It is judged only when at least :data:`serq_sim.stats.MIN_SAMPLES` sessions arrived over those bins: the
backlog of fewer has no level to judge (four requests of ``arrivals 4`` that each live longer than the gap
between them climb from empty to four, a run that is all ramp-up, and were told "arrivals outpace the
service"); their figures are few, which the few-samples warning says of the observes and requests.

An overloaded queue grows by its excess of arrivals over service all through the run, and so does the
live count; a steady one scatters about a level. On an M/M/1 queue over 2 000 mean service times after a
warm-up of 200 the warning fired at rho = 0.9 for 2 of 1 000 seeds (711 and 911), at rho = 1.1 for 277
of 300 (tests/test_notes.py checks 200 and 50 of them); over 1 000 after 100, a short run for a queue
that relaxes over hundreds of service times, for 17 of 1 000 and 211 of 300.

A run whose load is known by hand (Poisson arrivals of a constant rate, each session one job of known mean
on one ``fifo(c)`` stage: :func:`offered_load`) is not steady at rho >= 1 whatever its backlog showed
(:func:`saturated`, said only where the backlog's test did not warn): such a queue has no steady state,
and at rho = 1 its backlog grows too slowly for the test to see in every run.
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

from serq.errors import number_of

from .stats import MIN_SAMPLES

#: The bins the backlog test needs.
MIN_BINS = 10
#: The slope's t statistic above which the backlog climbs.
TREND_T = 6.0
#: ... the fitted growth over the run, as a share of the mean backlog, above which it matters,
TREND_RISE = 0.5
#: ... the arrivals less completions over the run, as a share of the mean backlog, above which they outpace,
TREND_GROWTH = 0.5
#: ... and over the second half of the bins, the slope's t and its fitted growth (as a share of the mean).
HALF_T = 2.0
HALF_RISE = 0.25


class Note(str):
    """A note of the report as made, its text (what the report shows, a ``str`` equal to it) and, for a
    warning, ``code``: the short code of its kind (:data:`WARNING_CODES`), given where the warning is made, so
    that what reads the kinds of a report's warnings (a sweep's table, its resume) reads the code and not the
    words. ``serq_sim.report.Report.notes`` holds them; the report's ``result.notes`` holds their text alone
    (the JSON report's ``notes``, unchanged)."""

    code: str | None = None

    def __new__(cls, text: str, code: str | None = None) -> Note:
        self = super().__new__(cls, text)
        self.code = code
        return self

    def __reduce__(self):  # (a report pickled to another process keeps the codes)
        return (Note, (str(self), self.code))


def warning(code: str, text: str) -> Note:
    """The warning ``warning: TEXT`` of kind ``code`` (one of :data:`WARNING_CODES`)."""
    assert code in _KNOWN, code
    return Note(f"warning: {text}", code)


def fit(y: list[float]) -> tuple[float, float]:
    """``(slope, t)`` of the least-squares line through ``y`` against 0, 1, …: the slope per step and its t
    statistic from the residuals (``inf`` with a slope and no residual scatter, NaN with neither)."""
    k = len(y)
    kbar = (k - 1) / 2
    mean = math.fsum(y) / k
    sxx = math.fsum((i - kbar) ** 2 for i in range(k))
    slope = math.fsum((i - kbar) * (v - mean) for i, v in enumerate(y)) / sxx
    resid = math.fsum((v - mean - slope * (i - kbar)) ** 2 for i, v in enumerate(y))
    se = math.sqrt(resid / (k - 2) / sxx)
    if se == 0:
        return slope, (math.nan if slope == 0 else math.copysign(math.inf, slope))
    return slope, slope / se


def trend(means: list[float], live0: float, live_end: float) -> dict | None:
    """The backlog test's figures over the bins' means ``means`` (the live count ``live0`` at their start,
    ``live_end`` at their end): ``level`` (the mean), ``slope`` and ``t`` (per bin), ``rise`` (the fitted
    growth over the bins, a share of the level), ``growth`` (arrivals - ended, a share of the level),
    ``half_t`` and ``half_rise`` (the same over the second half); None when undefined (too few bins, a
    non-finite or zero level)."""
    n = len(means)
    if n < MIN_BINS or not all(map(math.isfinite, means)):
        return None
    level = math.fsum(means) / n
    if not level > 0:
        return None
    slope, t = fit(means)
    h = n // 2
    half_slope, half_t = fit(means[n - h:])
    return dict(level=level, slope=slope, t=t, rise=slope * n / level, growth=(live_end - live0) / level,
                half_t=half_t, half_rise=half_slope * n / level)


def climbs(r: dict | None) -> bool:
    """Whether the figures of :func:`trend` say the backlog climbs through the run."""
    return (r is not None and r["t"] > TREND_T and r["rise"] > TREND_RISE and r["growth"] > TREND_GROWTH
            and r["half_t"] > HALF_T and r["half_rise"] > HALF_RISE)


def backlog_bins(b, arrivals: int) -> tuple[list[float], float, float, float] | None:
    """The bins of :class:`serq_sim.backlog.Backlog` ``b`` the test reads, up to the one of the last of the
    run's ``arrivals``: ``(means, their end, the live count then, arrivals since the warm-up by then)``."""
    means = b.means()
    n = len(means)
    if n == 0:
        return None
    while n > 1 and b.arrivals[n - 2] >= arrivals:
        n -= 1  # the bin before had the last arrival already: this one is the drain
    return means[:n], b.times[n - 1], b.live[n - 1], b.arrivals[n - 1] - b.arrivals0


def steadiness(b, arrivals: int, limit: int | None = None, thinking: tuple | None = None) -> list[str]:
    """The not-steady warning of a run whose backlog (:class:`serq_sim.backlog.Backlog`) climbs; ``arrivals``
    the run's (since t = 0), ``limit`` its ``arrivals N`` (None without): such a run drains by its N-th
    arrival, so its means depend on N, not on its horizon, a deadline only (language.txt §2). ``thinking``,
    ``(live, waiting, [(delay stage, its mean present), …])`` over the run measured: when the delay stages
    hold at least half the live sessions and the pools' queues fewer than a tenth of them, the climb is the
    sessions' own length (thinks, tool calls), which no service shortens, and the warning says so instead of
    blaming the service (a replay of 40 multi-turn sessions on an engine of no cost climbed while nothing
    waited, and was said to have arrivals that outpace the service)."""
    got = backlog_bins(b, arrivals)
    if got is None:
        return []
    means, end, live_end, arrived = got
    if arrived < MIN_SAMPLES:  # a level of so few sessions cannot be judged (few_samples says their figures are few)
        return []
    r = trend(means, b.live0, live_end)
    if not climbs(r):
        return []
    from .errors import fmt_time

    n = len(means)
    width = (end - b.start) / n
    ended = arrived - (live_end - b.live0)
    cause = _thinking(thinking, limit)
    if cause is None:
        cause = ("Arrivals outpace the service (a queue that grows without bound) or the warm-up is too short: "
                 "the means depend on the horizon" if limit is None else
                 # a finite run: the backlog grows until its last arrival, then drains (an overloaded
                 # benchmark); its figures are of that climb, which is what N requests at that rate measure
                 "Arrivals outpace the service up to the last of them (the backlog drains after it), or the "
                 "warm-up is too short: the figures are of that climb, not of a steady state, and the means "
                 f"depend on how many arrive (`arrivals {limit:g}`)")
    return [warning("not-steady", f"the run is not steady: the live sessions (the backlog) climb through the run: "
            f"{b.live0:g} at the warm-up's end (t = {fmt_time(b.start)}) and {live_end:g} at t = {fmt_time(end)}, a "
            f"mean of {r['level']:.4g} over {n} bins of {fmt_time(width)}, the fitted growth {r['rise'] * r['level']:.4g} "
            f"({r['rise'] * 100:.3g} % of the mean; slope {r['slope'] / width:.4g} a time unit, t = {r['t']:.3g}; "
            f"over the second half t = {r['half_t']:.3g}); {arrived:g} {number_of(arrived, 'session')} arrived and "
            f"{ended:g} ended in that time. " + cause)]


#: the load at or above which :func:`saturated` warns: 1, less a relative slack for the rounding of a rate and a
#: mean written in decimals (``poisson(0.1)`` and a mean of 10 is 1.0000000000000002 or 0.9999999999999999)
SATURATED = 1 - 1e-9

#: the mean of each draw, by its arguments (docs/language.md: ~exp(mean), ~det(x), ~uniform(lo, hi),
#: ~erlang(k, mean), ~h2(mean, cv2))
_MEANS = {"exp": lambda a: a[0], "det": lambda a: a[0], "uniform": lambda a: (a[0] + a[1]) / 2,
          "erlang": lambda a: a[1], "h2": lambda a: a[0]}


def offered_load(program, limit: int | None = None) -> tuple[str, float, float, float, float] | None:
    """``(stage, rho, rate, mean, servers)`` of a program whose load is known by hand: Poisson arrivals of a
    constant rate, each session one job of a constant or drawn work of known mean on one fifo stage of c servers
    (the rest of its statements taking no time: sets, observes, records), no ``arrivals N`` (the program's, or
    ``limit``, the run's); ``rho`` is rate ×
    mean / c, the M/M/c (M/D/c, M/G/c) load. ``None`` for any other program."""
    from serq_ir import nodes as N

    w = program.workload
    a = w.arrive
    if (not isinstance(a, N.Poisson) or w.presets or w.trace is not None or limit is not None
            or program.run.arrivals is not None
            or not all(isinstance(st, N.Set | N.Observe) for st in (*w.init, *w.turn))):
        return None
    runs = [st for st in program.session if isinstance(st, N.Run)]
    if len(runs) != 1 or not all(isinstance(st, N.Run | N.Set | N.Observe | N.Record | N.End)
                                 for st in program.session):
        return None
    run = runs[0]
    if len(run.stages) != 1 or run.mode != "plain" or run.growing is not None or run.stages[0].index is not None:
        return None
    stage = program.stages[run.stages[0].stage]
    if stage.size != 1 or not isinstance(stage.kind, N.Fifo):
        return None
    work = run.work
    if isinstance(work, N.Num):
        mean = float(work.value)
    elif isinstance(work, N.Draw) and work.dist in _MEANS and all(isinstance(x, N.Num) for x in work.args):
        mean = float(_MEANS[work.dist]([float(x.value) for x in work.args]))
    else:
        return None
    rate, servers = float(a.rate), float(stage.kind.servers)
    if not all(math.isfinite(v) and v > 0 for v in (rate, mean, servers)):
        return None
    return stage.name, rate * mean / servers, rate, mean, servers


def saturated(program, limit: int | None = None, partial: str | None = None) -> list[str]:
    """The not-steady warning of a run whose offered load (:func:`offered_load`) is 1 or more: such a queue has
    no steady state, its backlog growing without bound (as the square root of time at rho = 1, in proportion
    to it past 1), whatever the run's backlog showed. Said where :func:`steadiness` did not warn: at rho = 1 the
    backlog's climb hides in its scatter over a short run (an M/M/1 of rho = 1 over 900 mean service times after
    a warm-up of 100 warned for 2 seeds of 10), and was told nothing. ``partial``: a run stopped short says
    nothing of it (its figures are of what was simulated)."""
    if partial is not None:
        return []
    load = offered_load(program, limit)
    if load is None or load[1] < SATURATED:
        return []
    name, rho, rate, mean, servers = load
    grows = "as the square root of time" if rho < 1 + 1e-9 else "in proportion to time"
    return [warning("not-steady", f"the run is not steady: stage `{name}` is offered a load of rho = {rate:g} x "
            f"{mean:g} / {servers:g} = {rho:.6g} (arrivals poisson({rate:g}), a job of mean {mean:g}, "
            f"{servers:g} {number_of(servers, 'server')}): a queue at rho >= 1 has no steady state, its backlog "
            f"growing without bound ({grows} at this load), which this run's backlog did not show through its "
            "bins: the means depend on the horizon; lower the rate or add servers for a steady state")]


def _thinking(thinking: tuple | None, limit: int | None) -> str | None:
    """The cause of :func:`steadiness`'s climb when the sessions spend it in delay stages, not in queues."""
    if thinking is None:
        return None
    live, waiting, delays = thinking
    held = math.fsum(m for _, m in delays if math.isfinite(m))
    if not (live > 0 and held >= live / 2 and waiting < live / 10):
        return None
    top = sorted(delays, key=lambda d: -d[1])[:3]
    where = ", ".join(f"`{name}` {m:.4g}" for name, m in top if m > 0)
    return (f"The live sessions are not waiting: {held:.4g} of their mean {live:.4g} are in delay stages ({where}), "
            f"which no service shortens, and {waiting:.3g} in the pools' queues: sessions that live long against the "
            "gaps between arrivals (turns, thinks, tool calls) climb until their number levels off (the arrival "
            "rate times a session's time), " + (
                "which this run's warm-up and horizon do not reach: lengthen both; the means depend on the horizon"
                if limit is None else
                f"which a run of {limit:g} arrivals does not reach: the figures are of that fill, not of a steady "
                f"state, and the means depend on how many arrive (`arrivals {limit:g}`)"))


def no_sessions(workload) -> list[str]:
    """The warning of a workload that starts no session: no arrivals (``arrive none``, or no ``arrive``),
    or a population of 0 (an IR's), and no preset session. A trace starts none itself: each session that
    arrives takes a trace session's turns. Such a run simulates nothing, and its report is all zeros and
    NaN, which looked like a measured idle system."""
    from serq_ir import nodes as N

    a = workload.arrive
    if workload.presets or isinstance(a, N.Poisson | N.Renewal) or (isinstance(a, N.Batch | N.Closed) and a.n > 0):
        return []
    if isinstance(a, N.NoArrivals):
        what = "no arrivals (`arrive none`, or no `arrive`)"
    else:
        what = f"a population of 0 (`arrive {type(a).__name__.lower()}(0)`)"
    trace = " (its trace starts none: a session that arrives takes a trace session's turns)" if workload.trace else ""
    return [warning("no-sessions", f"nothing starts a session: the workload has {what} and no preset session{trace}, "
                    "so the run simulates no session; give the workload `arrive poisson(rate);`, `renewal(gap)`, "
                    "`closed(n)` or `batch(n)`")]


def never_ends(program) -> list[str]:
    """The warning of a run that has no end but for a bound, said before it starts (``serq run``; ``serq
    sweep`` and ``serq compare`` once a program): a horizon of inf, no ``arrivals N``, and arrivals that never
    stop (:func:`endless_arrivals`). Such a run stops only at ``--max-events`` or ``--max-wall`` (or
    ``--max-samples``, a signal), with its partial report; without either of the first two it is refused
    (:func:`no_end_refused`)."""
    what = endless_arrivals(program)
    if what is None:
        return []
    ends = ("give --arrivals N (or `arrivals N;` in the run block) or a finite horizon" if counted(program)
            else f"give a finite horizon; {CLOSED_UNCOUNTED}")
    return [warning("no-end", f"the run has no end: horizon inf and {what}; it stops only at --max-events, "
                    f"--max-wall, --max-samples or a signal, with a partial report; {ends}")]


#: why a run of a closed workload is not told to give a count of arrivals, which its set-up refuses
#: (serq_ir.rules.arrivals_problem): what ends such a run instead
CLOSED_UNCOUNTED = ("a closed workload takes no count of arrivals: M sessions n at a time are `arrive batch(M);` "
                    "behind a pool of n slots, a run that ends")


def counted(program) -> bool:
    """Whether a count of arrivals (``--arrivals N``, ``arrivals N;``) can end a run of ``program``: an open
    workload (``poisson``, ``renewal``) takes one; a closed one is refused it (serq_ir.rules.arrivals_problem),
    so the advice of a run with no end does not offer it there."""
    from serq_ir import nodes as N

    return isinstance(program.workload.arrive, N.Poisson | N.Renewal)


def endless_arrivals(program) -> str | None:
    """What makes a run of ``program`` (its run settings applied) one with no end, ``None`` when it ends: a
    horizon of inf, no ``arrivals N``, and arrivals that never stop, an open workload (``poisson``,
    ``renewal``) or a closed one, which replaces every session that ends, a trace or not (each arrival replays
    a trace session, and there is always one). A batch, presets alone or no arrivals end when no event is
    left."""
    run = program.run
    if run.horizon is None or float(run.horizon) != math.inf or run.arrivals is not None:
        return None
    return endless_workload(program.workload.arrive)


def endless_workload(arrive) -> str | None:
    """What makes a workload that arrives by ``arrive`` (the IR's node) start sessions for ever, ``None`` when
    it does not: an open workload (``poisson``, ``renewal``) unless a count of arrivals ends it, or a closed
    population of at least one, which replaces every session that ends (a population of 0, an IR's, starts
    none). The rule :func:`endless_arrivals` and ``serq_sim.run``'s refusal (api._endless) share."""
    from serq_ir import nodes as N

    if isinstance(arrive, N.Poisson | N.Renewal):
        return f"arrivals that never stop (`arrive {type(arrive).__name__.lower()}`)"
    if isinstance(arrive, N.Closed) and arrive.n > 0:
        return "a closed workload, which replaces every session that ends"
    return None


def no_end_refused(program, limits: dict, given=None) -> str | None:
    """The refusal of a run that could never return (``serq run``, a sweep's plan): one with no end
    (:func:`endless_arrivals`) that neither ``max_events`` nor ``max_wall`` bounds (``limits``, the run's
    bounds by those names): it ran until the process was killed, after a warning that it would, as
    ``serq_sim.run`` refuses it (``--max-samples`` bounds the samples held, not the run: a program that
    observes nothing never reaches it). ``given`` names the options (serq.loading.given_or_option)."""
    from serq.loading import given_or_option, option_given

    what = endless_arrivals(program)
    if what is None or limits.get("max_events") is not None or limits.get("max_wall") is not None:
        return None
    given_as = given_or_option(given)

    def said(setting: str, text: str | None = None) -> str:  # (an argument of the API is max_events=)
        out = given_as(setting, text)
        return out if given_as is option_given else out.replace("max-", "max_")

    bounds = (f"{said('max-events', 'N')} or {said('max-wall', 'S')} (a partial report where it stops)")
    ends = (f"give {said('arrivals', 'N')} (or `arrivals N;` in the run block), a finite horizon, or {bounds}"
            if counted(program) else f"give a finite horizon, or {bounds}; {CLOSED_UNCOUNTED}")
    return (f"the run has no end: horizon inf and {what}, and no {said('max-events')} or {said('max-wall')} to "
            f"stop it; {ends}")


def coarse_tier(program, pool) -> str | None:
    """The warning of a ``spill`` whose tier keeps blocks larger than the blocks its pool evicts: a pool with
    ``block`` evicts a block at a time from an entry's tail, each a spill of its own (docs/language.md, "A
    spill's work is what it writes"), and the tier takes what reaches it in whole blocks of its own, rounded
    down, so a block of 16 written to a tier of blocks of 256 (LMCache's chunks) is none of them: the spill
    never wrote anything and the report said only 0 spills. ``None`` when the tier's blocks are no larger."""
    from serq_ir.rules import show_number

    tier = program.pools[pool.spill.tier.pool]
    b, bt = pool.block, tier.block
    if b is None or bt is None or not bt > b:
        return None
    return (f"pool {pool.name}'s `spill` writes nothing: {pool.name} evicts a block of {show_number(b)} units at "
            f"a time, each a spill of its own, and its tier {tier.name} keeps whole blocks of {show_number(bt)}, "
            f"which no such block fills; give {tier.name} a block of at most {show_number(b)} (one that divides "
            "it keeps every unit written)")


def lossy_tier(program, pool) -> str | None:
    """The warning of a ``spill`` whose tier keeps blocks that do not divide the blocks its pool evicts (and
    are no larger: :func:`coarse_tier`): each block evicted is a spill of its own, and the tier keeps what
    reaches it in whole blocks of its own, rounded down (pools.model.Pool.round_down), so a block of 16 written
    to a tier of blocks of 10 keeps 10 and loses 6, at every spill, silently. ``None`` when the tier's block
    divides the pool's (or either has none)."""
    import math

    from serq_ir.rules import show_number

    tier = program.pools[pool.spill.tier.pool]
    b, bt = pool.block, tier.block
    if b is None or bt is None or not bt <= b:
        return None
    kept = math.floor(b / bt + 1e-12) * bt  # as the tier rounds a spill's units down
    if kept >= b:
        return None
    return (f"pool {pool.name}'s `spill` loses units: {pool.name} evicts a block of {show_number(b)} units at a "
            f"time, each a spill of its own, and its tier {tier.name} keeps whole blocks of {show_number(bt)}, "
            f"so each spill keeps {show_number(kept)} of the {show_number(b)} written and loses "
            f"{show_number(b - kept)}; give {tier.name} a block that divides {show_number(b)}")


def idle_rules(program) -> list[str]:
    """Pools whose rules act on no one: a ``queue by`` that orders no session, an ``admit via S`` through
    which S admits no session, a ``spill`` that writes nothing. A hold waits in the queue of its first
    pool and is admitted from there when every pool it names fits (language.txt §3; a victim re-enters
    that queue too), so a pool that no hold names first never has a session in its queue:
    ``hold slots[t] (1), gpu (1)`` next to ``pool gpu { cap 1; queue by (prio); }`` admits in the order of
    the slots' queues (their heads tried in the order the pools are declared), never by ``prio``; ``hold
    reqs (1), kv (p)`` next to ``pool kv { admit via engine; }`` is admitted as soon as it fits, outside
    the engine's iterations and budget. A pool caches only what a hold with ``cache`` leaves (or another
    pool spills to it), so with no such hold its ``spill`` never has an eviction to write. For the same
    reason ``queued(P)`` of such a pool is 0 throughout: a router keyed on the requests waiting for an
    engine, ``choose j in N by (queued(kv[j]))`` beside lib/vllm.sq's ``hold reqs (1), kv (…)``, sent every
    request to engine 0. Each said nothing. The program is read, not the run: a hold in an arm no run takes
    counts."""
    from serq_ir import nodes as N

    from .compile import walk
    from .step.common import constant

    first: set[int] = set()
    later: dict[int, N.Hold] = {}
    caching: set[int] = {pool.spill.tier.pool for pool in program.pools if pool.spill is not None}
    queued: list[N.Observable] = []  # the reads of `queued(P)`, the session's first
    for x in walk(program.session):
        if isinstance(x, N.Hold) and x.pools:
            first.add(x.pools[0].pool.pool)
            for hp in x.pools[1:]:
                later.setdefault(hp.pool.pool, x)
            if x.cache is not None:
                caching.update(hp.pool.pool for hp in x.pools)
        elif isinstance(x, N.Observable) and x.name == "queued" and isinstance(x.target, N.PoolRef):
            queued.append(x)
    conds = []
    for x in walk(program, presets=False):  # (the session again: its reads are listed already)
        if isinstance(x, N.Observable) and x.name == "queued" and isinstance(x.target, N.PoolRef):
            queued.append(x)
        elif isinstance(x, N.Cond):
            conds.append(x)
    # the first `queued(P)` of each pool P no hold names first, the session's before the rest's, but for one
    # whose value is never read: in a conditional whose arms are one constant (a chunk `… ? inf : inf`,
    # step.common.constant); judged only where such a read is (lib/vllm.sq's reads queued(reqs), named first)
    read: dict[int, N.Observable] = {}
    if any(x.target.pool not in first for x in queued):
        unread = {id(y) for x in conds if constant(x) is not None for y in walk(x)}
        for x in queued:
            if x.target.pool not in first and id(x) not in unread:
                read.setdefault(x.target.pool, x)
    out = []
    for i, pool in enumerate(program.pools):
        if i in read and i not in first:
            at = where(read[i].span, program)
            hold = later.get(i)
            if hold is None:
                why = f"no hold names {pool.name}"
            else:
                at_hold = where(hold.span, program, " at")
                other = program.pools[hold.pools[0].pool.pool].name
                why = (f"no hold names {pool.name} first (the hold{at_hold} names {other} first and waits in its "
                       f"queue: `queued({other})` counts it)")
            out.append(warning("queued-zero", f"`queued({pool.name})`{at and f' ({at.lstrip()})'} is 0 throughout "
                               f"the run: a hold waits in the queue of its first pool, and {why}"))
        if pool.spill is not None and i not in caching:
            out.append(warning("spill-unused", f"pool {pool.name}'s `spill` writes nothing: no hold of {pool.name} "
                               "has `cache` (nor does any pool spill to it), so nothing is cached there for an "
                               f"eviction to spill; give the holds of {pool.name} whose prefix should be kept "
                               "`cache (…)`"))
        elif pool.spill is not None and (w := coarse_tier(program, pool)) is not None:
            out.append(warning("spill-unused", w))
        elif pool.spill is not None and (w := lossy_tier(program, pool)) is not None:
            out.append(warning("spill-lossy", w))
        if i in first:
            continue
        rules = []
        if isinstance(pool.queue, N.QueueBy):
            rules.append("`queue by` orders no one")
        if pool.admit_via is not None:
            rules.append(f"`admit via {program.stages[pool.admit_via].name}` admits no one")
        if not rules:
            continue
        hold = later.get(i)
        if hold is None:
            why = f"no hold names {pool.name}"
        else:
            at = where(hold.span, program, " at")
            why = (f"no hold names {pool.name} first (the hold{at} names "
                   f"{program.pools[hold.pools[0].pool.pool].name} first and waits in its queue)")
        out.append(warning("rule-unused", f"pool {pool.name}'s {' and its '.join(rules)}: a hold waits in the "
                           f"queue of its first pool, and {why}; name {pool.name} first in the holds it should admit"))
    return out


def where(span, program, word: str = " at") -> str:
    """``" at line L"`` for a span in the program's own file, ``" at FILE:L"`` for one in another (a library's
    definition expanded into the program: lib/vllm.sq's hold is at ``vllm.sq:L``), ``""`` for none."""
    if span is None:
        return ""
    file = getattr(span, "file", None)
    if file and os.path.abspath(file) != os.path.abspath(program.source or "<source>"):
        return f"{word} {os.path.basename(file)}:{span.line}"
    return f"{word} line {span.line}"


def livelocked(label: str, k: int, units: str, cap: str) -> str:
    """``on kv 1 session preempted itself again and again at the same position, its hold needing more than the
    pool's capacity (5 units for the first, capacity 4)``: the words of ``k`` sessions livelocked on pool
    ``label`` (Pool.livelocked, the first's ``units`` and the ``cap`` as the caller prints numbers), which the
    stuck warning (:func:`stuck`) and the error of a run that did not drain (engine.Simulation._livelocks) go
    on from, each in its own words."""
    return (f"on {label} {k} {number_of(k, 'session')} preempted {number_of(k, 'itself', 'themselves')} again and "
            f"again at the same position, {number_of(k, 'its', 'their')} hold needing more than the pool's "
            f"capacity ({units} units for the first, capacity {cap})")


class _Stuck(NamedTuple):
    """A pool the stuck warning (:func:`stuck`) counts: its label, the sessions counted, its preemptions,
    whether any preemption there found a position above 0, its stuck column (every session preempted again at
    no greater position), and, when some preempt themselves beyond the cap, how many (``livelocked``), the
    units the first needed and the pool's cap (``Pool.livelocked``)."""

    label: str
    counted: int
    preemptions: int
    positioned: bool
    column: int
    livelocked: int = 0
    units: float = 0.0
    cap: float = 0.0


def stuck(pools) -> list[str]:
    """The stuck warning: sessions preempted again at no greater position (``pools.growth``: stuck) where that
    is a sign of no progress. ``pools``: ``(label, stuck, preemptions, positioned[, own])``, the pool's stuck
    count, its preemptions, whether any preemption there found its hold at a position above 0, and, of its
    sessions preempted again at no greater position, those preempted so by their own growth
    (``Pool.self_stuck`` with ``Pool.livelocked``).

    On a pool with positions (a growing run or a load advances them) every stuck session lost computed work
    and came back to no further: all are counted. On a pool where every preemption found position 0 a
    session preempted twice by another's growth started over, as a preemptive priority or a failure model
    has it, however long it was served in between: the model, not a fault. There only the sessions
    preempted again by their own growth are counted (re-executed, such a hold grows into the same shortage),
    and the warning says the column counts more; a pool with none has no warning.

    A pool's entry may go on with ``livelocked, units, cap``: the sessions preempted, once stuck, by their
    own growth beyond the cap (``Pool.livelocked``, pools.growth.preempt_outgrown), the units the first of
    them needed and the pool's cap. Those preempt themselves again and again at the same position for as
    long as the run goes on (language.txt §3: "the report now names the livelock"), and the warning says so,
    after its counts, in words of their own."""
    found: list[_Stuck] = []
    for label, n, pre, pos, *rest in pools:
        own, more = (rest[0], rest[1:]) if rest else (0, [])  # (an entry without ``own``: none)
        counted = n if pos else own
        if counted:
            found.append(_Stuck(label, counted, pre, pos, n, *more))
    if not found:
        return []
    total = sum(f.counted for f in found)
    where = ", ".join(f"{f.label} ({f.counted} stuck, {f.preemptions} preemption(s))" for f in found)
    text = (f"{total} {number_of(total, 'session')} stuck in the run, preempted again without progress (at no "
            f"greater position than at their previous preemption): {where}")
    for f in found:
        if f.livelocked:
            text += (f"; {livelocked(f.label, f.livelocked, f'{f.units:g}', f'{f.cap:g}')}, so re-executed it grows "
                     "into the same preemption for as long as the run goes on (a livelock; a larger pool, a cut before "
                     "the growth or a reserve of what the hold will need, which rejects it, ends it)")
    if total > sum(f.livelocked for f in found if f.livelocked):
        text += ("; such a session can cycle between admission and preemption for as long as the pool is short, and "
                 "its latency grows with it")
    flat = [f for f in found if not f.positioned]
    if flat:
        text += (f"; on {', '.join(f.label for f in flat)} no growing run or load advances a hold's position, so "
                 "every preemption there found position 0, and only a session preempted again by its own growth is "
                 "counted (re-executed, its hold grows into the same shortage)")
        more = [f for f in flat if f.column > f.counted]
        if more:
            text += ("; the stuck column counts too the sessions another's growth preempted twice, which start over "
                     "as a restart after a failure or a preemptive priority does (the column: "
                     + ", ".join(f"{f.column} on {f.label}" for f in more) + ")")
    return [warning("stuck", text)]


def lapsed_reads(pools) -> list[str]:
    """Pools that ``transfer … from`` read after the lease that kept the KV there had ended by its time
    (``lease P (t)``: t seconds passed before the transfer's release of P), ``(label, count)`` after the
    warm-up (``Pool.lapsed_reads``, pools.release.transfer_release). The lease's end gave the KV to the cache
    (evictable since, or none without a cache clause), and the run counts the transfer's link and load as
    though the KV were all there: the latencies after it (a first token's) are optimistic. The spec says
    nothing of such a read; the run goes on as written and the warning counts them (docs/simulator.md, "A
    transfer after its lease"; docs/language.md, Sugar)."""
    found = [(label, n) for label, n in pools if n]
    if not found:
        return []
    total = sum(n for _label, n in found)
    where = ", ".join(f"{label} ({n})" for label, n in found)
    return [warning("lease-lapsed", f"{total} {number_of(total, 'transfer')} read KV after the lease that kept it had "
                    f"ended by its time: from {where}; that KV was only cached from the lease's end on (evictable, "
                    "or gone without a cache clause), and the transfer's link and load count as though all of it "
                    "were there, so the latencies after them (a first token's) are optimistic; a lease as long as "
                    "the wait for the read (inf, as a decoder's heartbeats renew it) keeps it")]


def nan_keys(first: dict) -> list[str]:
    """One warning for each ordering key that came out NaN in the run (``first``: the simulation's
    ``nan_keys``, by key ``(kind, where, i)`` its first NaN ``(t, serial)``, in the order they came,
    serq_sim.nankeys): where it is written, when and for which session it first was, and what a NaN there
    does (docs/language.md)."""
    from .errors import fmt_time
    from .nankeys import MEANING

    out = []
    for (kind, at, i), (t, serial) in first.items():
        key = f"the `{kind}` key at {at}" if at else f"key {i + 1} of a `{kind}`"
        if kind == "serve by" and serial is not None:
            when = f"first for the run of session {serial} that joined the stage at t={fmt_time(t)}"
        else:
            when = f"first at t={fmt_time(t)}" + (f", session {serial}" if serial is not None else "")
        out.append(warning("nan-key", f"{key} is NaN ({when}): {MEANING[kind]}; a key that can be NaN (`0 * inf`, "
                           "`inf - inf`, `x % 0`) orders by no number of its own"))
    return out


def negative_bounds(clamped: dict) -> list[str]:
    """One warning for each hold clause whose value came out negative and was taken as 0 (``clamped``: the
    simulation's, by ``(clause, span)`` its first ``[clause, span, t, serial, value, count]``, in the order
    they came, pools.cache.clamped): a ``reuse`` bound (the hold consumes at most that many units of its
    prefix: none) or a ``cache`` length (``min(ℓ, computed)`` units stay cached: none), language.txt §3.
    Said once a clause, with its first value, when and for which session, and how often."""
    from serq.errors import place

    from .errors import fmt_time, show

    words = {"reuse": ("reuse bound", "the hold consumed none of its prefix, as with `reuse (0)`"),
             "cache": ("cache length", "the hold cached nothing, as with `cache (0)`")}
    out = []
    for clause, span, t, serial, v, n in clamped.values():
        what, did = words[clause]
        at = f" at {place(span)}" if span is not None else ""
        more = "" if n == 1 else f" ({n} times in the run)"
        out.append(warning("negative-bound", f"the {what}{at} came out negative, {show(v)} (first at t={fmt_time(t)}, "
                           f"session {serial}){more}, and was taken as 0: {did}"))
    return out


def evicted_beyond(pools) -> list[str]:
    """Pools whose units evicted after the warm-up are beyond the largest double, so the report's
    ``evicted_units`` is ``inf`` (``null`` in JSON): the count itself, kept as :func:`.stats.add_units`
    keeps it, ``(label, units, huge)``. A note, not a warning: the figure is right, only too large for a
    double."""
    from .stats import INF, shown_units, units_total

    return [f"note: pool {label} evicted {shown_units(units, huge)} units after the warm-up, beyond the largest "
            "double: its evicted_units is inf (null in JSON)"
            for label, units, huge in pools if huge and units_total(units, huge) == INF]


def held_beyond(pools, span: float) -> list[str]:
    """Pools whose mean units in use or cached after the warm-up are beyond the largest double, so the
    report's ``used`` or ``cached`` is ``inf`` (``null`` in JSON): a pool of cap inf whose count is exact
    (pools/exact.py) holds 2e308 between two holds of 1e308, and its mean over the run may be past the
    doubles as its evicted units may (:func:`evicted_beyond`). ``pools``: ``(label, a_used, b_used,
    a_cached, b_cached)``, each level's integral kept as :func:`.stats.time_mean` reads it (the second in
    units of ``HUGE_SPAN``); the mean itself, to six digits. A note, not a warning: the figure is right,
    only too large for a double."""
    from .stats import INF, shown_units, time_mean

    if not span > 0:
        return []
    out = []
    for label, a_used, b_used, a_cached, b_cached in pools:
        for what, a, b in (("used", a_used, b_used), ("cached", a_cached, b_cached)):
            if time_mean(a, b, span) == INF and abs(a) < INF and abs(b) < INF:
                out.append(f"note: pool {label} {'held' if what == 'used' else 'cached'} "
                           f"{shown_units(a / span, b / span)} units on average after the warm-up, "
                           f"beyond the largest double: its {what} is inf (null in JSON)")
    return out


#: how far apart the clock's doubles may be, as a fraction of a stage's mean service, before the report warns of
#: a coarse clock (:func:`coarse_clock`): a duration of a million steps of the clock is told to six digits
COARSE_CLOCK = 1e-6


def coarse_clock(now: float, stages) -> list[str]:
    """A warning when the clock reached a time ``now`` (at the run's last event) where its doubles are far apart
    beside the durations the run measured: ``stages``, ``(label, mean service)`` of each stage member. A time
    there is a double: the end of a run of 0.6 s at t = 4e15, where the doubles are 0.5 apart, is 0.5 s after
    its start, and the report said, without a word, that every run of 0.6 s and every think time of 0.7 s took
    0.5 s (a clock so coarse that a run moves it not at all is the no-progress error instead). The stage of the
    shortest mean service is named, when its mean is below ``1 / COARSE_CLOCK`` steps of the clock."""
    from .errors import fmt_time

    if not 0 < now < math.inf:
        return []
    spacing = math.ulp(now)
    timed = [(service, label) for label, service in stages if 0 < service < math.inf]
    if not timed:
        return []
    service, label = min(timed)
    if spacing <= COARSE_CLOCK * service:
        return []
    steps = service / spacing
    return [warning("coarse-clock", f"the clock reached t={fmt_time(now)}, where its doubles are {fmt_time(spacing)} "
                    f"apart: every time measured there is rounded to a multiple of {fmt_time(spacing)} s, and stage "
                    f"{label}'s mean service is {fmt_time(service)} s, {fmt_time(steps)} {'step' if steps == 1 else 'steps'} of "
                    "the clock (its figures, and an observe of a difference of times there, are that coarse); start "
                    "the sessions' work nearer t=0, or count time in a larger unit")]


def unfinished_iterations(stages, warmup: float, end: float) -> list[str]:
    """Step stages busy after the warm-up with one iteration alone, still under way at the end of the run (its
    tokens are applied when it ends, language.txt §3). Planned before the warm-up's end, no figure counts it
    (an iteration is counted, and its composition tallied, when it is planned after it): the stage reads busy
    with 0 iterations and says nothing of why. Planned after it (no warm-up, or one that ends before it), it is
    counted, an iteration whose tokens never applied: the stage reads 1 iteration and its tokens, which no job
    was given. Either way the cost is what ran past the run: a block of 1e16 units makes ``kv_decode`` 1e16
    (the units the decoders hold, not tokens), and an iteration of the A100 profile then lasts 1.4e9 s.
    ``stages``: ``(label, planned, ends, memory)``, ``ends`` the time its end is due (None when not known),
    ``memory`` ``(pool's label, block)`` when the cost reads ``kv_decode`` or ``kv_prefill`` of a memory pool,
    else None."""
    from .errors import fmt_time as ft

    out = []
    for label, planned, ends, memory in stages:
        due = f"; its cost ends it at t={ft(ends)}" if ends is not None else ""
        why = ""
        if memory is not None:
            pool, block = memory
            why = (f"; the cost reads kv_decode or kv_prefill, the units the residents hold on {pool}"
                   + (f" (a block is {block:g} units)" if block is not None else "") + ", not tokens")
        if planned < warmup:
            text = (f"step stage {label} was busy after the warm-up with one iteration that no figure counts: "
                    f"planned at t={ft(planned)}, before the warm-up's end (t={ft(warmup)}), and still under way at the "
                    f"end of the run (t={ft(end)}){due}{why}; its iterations (0) and engine figures describe no "
                    "iteration of the run")
        else:
            text = (f"step stage {label} was busy after the warm-up with one iteration that never ended: planned "
                    f"at t={ft(planned)}, not before the warm-up's end (t={ft(warmup)}), and still under way at the end of "
                    f"the run (t={ft(end)}){due}{why}; its iterations (1) and engine figures count it, though its "
                    "tokens, applied when it ends, never were: they describe no iteration the run finished")
        out.append(warning("unfinished-iteration", text))
    return out


def few_samples(counts, warmup: float, requests: tuple[str, int] | None = None,
                arrivals: int | None = None, drained: tuple[float, object] | None = None,
                recorded: int = 0) -> list[str]:
    """Observes left with some but fewer than :data:`MIN_SAMPLES` samples (no CI and no quantiles), and the
    record table the request metrics are read from, ``requests`` = ``(name, rows)``, with as few rows (no
    CI; their quantiles are given all the same, as vLLM's are). The remedy is the one that helps: a run of
    exactly ``arrivals`` arrivals ends when they drain, so a longer horizon adds nothing and more arrivals
    do (--arrivals); a run that drained otherwise, ``drained`` = ``(time, the workload's arrive node)`` (a
    batch, a trace's sessions or presets all ended, nothing left to arrive, before or at its horizon),
    gains nothing from a longer horizon either, and more sessions is what adds samples; a warm-up of 0
    cannot be shortened. ``recorded``: the rows the table holds in all, those of requests sent before the
    warm-up's end included; a table that holds some and keeps none (every request sent before the
    warm-up's end: a batch sent at t = 0 under a warm-up) is said too, its metrics being of no request
    (``completed 0``) while the requests ran."""
    few = [(name, n) for name, n in counts if 0 < n < MIN_SAMPLES]
    rows = requests is not None and 0 < requests[1] < MIN_SAMPLES
    none_kept = requests is not None and requests[1] == 0 and recorded > 0
    if not few and not rows and not none_kept:
        return []
    parts = []
    if few:
        listed = ", ".join(f"{name} {n}" for name, n in few)
        parts.append(f"for a CI and quantiles (at least {MIN_SAMPLES}): {listed}")
    if rows:
        parts.append(f"for the CI of the request metrics (at least {MIN_SAMPLES} rows; their quantiles are "
                     f"given all the same): record {requests[0]} {requests[1]}")
    if none_kept:
        parts.append(f"for the request metrics: record {requests[0]} keeps none of its {recorded} "
                     f"{number_of(recorded, 'row')}, each of a request sent before the warm-up's end")
    from .errors import fmt_time

    if none_kept and not few and drained is not None:
        # (more sessions of the same workload are sent as early: the warm-up is what leaves them out)
        return [warning("few-samples", f"too few samples after the warm-up (t = {fmt_time(warmup)}) "
                        f"{'; '.join(parts)}; the run drained at t={fmt_time(drained[0])}: shorten the warm-up "
                        "(--warmup)")]
    if arrivals is not None:
        remedy = f"send more than {arrivals} arrivals (--arrivals)"
    elif drained is not None:
        from serq_ir import nodes as N

        at, arrive = drained
        more = (f"start more than the {arrive.n:g} {number_of(arrive.n, 'session')} of `arrive batch({arrive.n:g})`"
                if isinstance(arrive, N.Batch) else "start more sessions")
        remedy = (f"the run drained at t={fmt_time(at)} (every session ended, none left to arrive), so a longer "
                  f"horizon adds none: {more}")
    else:
        remedy = "lengthen the run (--horizon)"
    if warmup > 0:
        remedy += " or shorten the warm-up (--warmup)"
    return [warning("few-samples", f"too few samples after the warm-up (t = {fmt_time(warmup)}) {'; '.join(parts)}; "
                    + remedy)]


def batch_trace(workload, trace) -> list[str]:
    """The note of `arrive batch(N)` beside an ordered trace of other than N sessions (``trace`` the
    :class:`~serq_sim.trace.TraceCorpus` read, the program's or ``--trace``'s): session i replays the trace's
    session i mod its count, so a log of send times replayed by a batch (docs/language.md, Workload) with a
    larger N sends its requests again at the same times, and with a smaller one leaves its last sessions out,
    silently (a log given with --trace to a program whose N was another log's)."""
    from serq_ir import nodes as N

    a = workload.arrive
    if trace is None or not isinstance(a, N.Batch) or workload.trace is None or not workload.trace.ordered:
        return []
    m, n = len(trace.sessions), int(a.n)
    if m == 0 or n == m:
        return []
    name = os.path.basename(trace.path)
    if n > m:
        times = f"{n // m} or {n // m + 1} times" if n % m else f"{n // m} times"
        return [f"note: `arrive batch({n})` replays the ordered trace {name}, of {m} sessions, session by session "
                f"(serial mod {m}): each of its sessions is replayed {times}, the copies at the same times (the "
                f"trace once is `arrive batch({m})`)"]
    return [f"note: `arrive batch({n})` replays the first {n} of the ordered trace {name}'s {m} sessions: its "
            f"last {m - n} (in the file's order) are not replayed (the whole trace is `arrive batch({m})`)"]


def idle_tail(drained: tuple[float, object] | None, warmup: float, end: float, started: int) -> list[str]:
    """A note on a run that drained (``drained``: :func:`few_samples`'s, the time it drained first) at ``at``
    and then stood idle to its horizon ``end`` for more than half the measured span ``end - warmup``: its
    rates and time averages are over that span (language.txt: "Time averages and rates use end - warmup",
    and end is the horizon without an arrival limit), so a batch of 8 requests done in 1.2 s under a horizon
    of 100 reported 0.08 req/s, without a word; a horizon of inf ends such a run when it drains. None for a
    run that started no session (``started``, the sessions started: ``Simulation.arrivals``), which the
    warning that nothing starts a session tells, and of which "every session ended" says nothing true."""
    from .errors import fmt_time

    if drained is None or started < 1 or not warmup < end < math.inf:
        return []
    at = max(drained[0], warmup)
    idle = (end - at) / (end - warmup)
    if not idle > 0.5:
        return []
    when = (f"by t={fmt_time(drained[0])}" if drained[0] > warmup
            else f"before the warm-up's end (t={fmt_time(warmup)})")
    return [f"note: every session ended {when} and none was left to arrive, so the run stood "
            f"idle until its horizon {fmt_time(end)}: its rates and time averages are over the "
            f"{fmt_time(end - warmup)} s after the warm-up, {idle * 100:.1f} % of them idle (a horizon of inf, "
            "`--horizon inf`, ends a run when it drains)"]


def shared_turns(table) -> list[str]:
    """The warning of a table of requests (:class:`serq_sim.records.Records`, the one the report reads vLLM's
    metrics from: a row a request) two of whose kept rows have one session and one turn. A turn is what a
    ``turn;`` statement starts (language.txt: the workload's ``turn`` block runs at every ``turn;``, and
    ``turn_no``, a row's ``turn``, counts them), so two requests a session sends with no ``turn;`` between them
    (two ``vllm_request`` calls in a row) are recorded in one turn: their rows were written with turn 0 both,
    without a word, and a join by session and turn (a router's own table beside the requests', docs/vllm.md)
    pairs them wrongly. The rows are not renumbered (the column is the language's ``turn_no``, as every
    sample's turn is); the report says so."""
    t = table._table
    kept = table.kept_rows
    sessions, turns = t.sessions, t.turns
    pairs = zip(sessions, turns) if len(kept) == len(sessions) else ((sessions[i], turns[i]) for i in kept)
    seen: dict[tuple[int, int], int] = {}
    for pair in pairs:
        seen[pair] = seen.get(pair, 0) + 1
    if len(seen) == len(kept):
        return []
    (s, k), n = next((pair, n) for pair, n in seen.items() if n > 1)
    extra = len(kept) - len(seen)
    return [warning("shared-turn", f"table `{table.name}` has {extra} {number_of(extra, 'row')} that {number_of(extra, 'shares', 'share')} their "
                    f"session and turn with another row ({n} rows of session {s} at turn {k}, the first): a turn is "
                    "what a `turn;` statement starts (the column `turn` is `turn_no`, the `turn;` statements the "
                    "session has run), so the requests a session sends with no `turn;` between them are recorded "
                    "in one turn, and session and turn do not tell them apart (a join with another table by "
                    "session and turn pairs them wrongly); put `turn;` before each request, or record a column "
                    "of the program's own that numbers them")]


def cached_beyond_prompt(table) -> list[str]:
    """The warning of a table of requests (the one the report reads vLLM's metrics from) with the columns
    `prompt` and `cached` some of whose kept rows have more tokens cached than their prompt: a prefix is
    reused from what the request sends, so such a row is a program's own miscount (two tiers' hits counted
    twice, say), and the report's prefix-cache hit rate, the cached tokens over the prompt tokens, counts
    tokens no prompt had (it was given above 1 without a word)."""
    if "cached" not in table.columns or "prompt" not in table.columns:
        return []
    cached, prompt = table.column("cached"), table.column("prompt")
    over = [k for k, (c, p) in enumerate(zip(cached, prompt)) if c > p]
    if not over:
        return []
    t, kept, k = table._table, table.kept_rows, over[0]
    row = kept[k]
    n = len(over)
    return [warning("cached-beyond-prompt", f"table `{table.name}` has {n} {number_of(n, 'row')} whose `cached` is "
                    f"above {number_of(n, 'its', 'their')} `prompt` (the first: session {t.sessions[row]}, turn "
                    f"{t.turns[row]}, cached {cached[k]:g} of a prompt of {prompt[k]:g}): a prefix is reused from "
                    "the tokens a request sends, so the program counts cached tokens no prompt had (a hit counted "
                    "twice, at two tiers say), and the prefix-cache hit rate counts them too; check what the "
                    "program records as `cached`")]


def rejections(pools) -> list[str]:
    """Pools that rejected holds as never fitting: their share of the pool's rejections and admissions after
    the warm-up (the report's two columns). A hold still queued at the end is in neither, and a hold admitted
    again after a preemption counts once an admission: the words say what is counted, not "the holds that
    reached it", which the queued ones also did.

    ``refused`` of the ``rejected`` were rejected on re-admission after a preemption (``Pool.refused``):
    those holds had been admitted and had run, so what their sessions observed before the preemption (with
    lib/vllm.sq, a request's first token: hit, first_token, ttft) is in the figures, and what they would
    have observed or recorded after it is not (the request's row): the warning counts them apart, so a
    reader can tell the samples of such a request from its missing row.

    A pool's entry may go on with ``rounded`` and ``block``: the least units (or reserve) of a rejected hold
    that fitted the capacity and whose blocks did not, and what they rounded up to (``Pool.rounded_out``,
    None when none), and the pool's block. The warning then says the rounding, or "can never fit its
    capacity 5" would be said of a hold of 5."""
    out = []
    for label, rejected, admitted, cap, refused, *rounding in pools:
        if rejected:
            share = rejected / (rejected + admitted)
            rounded, block = rounding if rounding else (None, None)
            why = ""
            if rounded is not None:
                ask, need = rounded
                why = (f"{ask:g} units are {need:g} in blocks of {block:g}; " if rejected == 1 else
                       f"the least of them, {ask:g} units, are {need:g} in blocks of {block:g}; ")
            head = (f"pool {label} rejected {rejected} hold(s) that can never fit its capacity "
                    f"{cap:g} ({why}{share * 100:.3g} % of its {rejected + admitted} rejections and admissions "
                    f"after the warm-up: {rejected} rejected, {admitted} admitted; a hold still queued at "
                    "the end is in neither); their sessions ended there")
            if not refused:
                out.append(warning("rejected", head + ", so the latency figures cover only the admitted"))
                continue
            parts = []
            if rejected > refused:
                parts.append(f"{rejected - refused} when it joined the queue, so the latency figures cover only "
                             "the admitted")
            parts.append(f"{refused} on re-admission after a preemption (its units or reserve, evaluated again, "
                         "above the capacity): what the session observed before the preemption is in the figures "
                         "and what it would have observed or recorded after the hold is not (with lib/vllm.sq, a "
                         "request that had its first token: its hit, first_token and ttft are observed; it has no "
                         "done, response, preempted or row in the records)")
            out.append(warning("rejected", head + ": " + "; ".join(parts)))
    return out


#: the short code of each warning the simulator gives: what a sweep writes in its table's column ``warnings``
#: (docs/sweep.md), so that a row whose run warned says so in a word, and what the JSON report's ``codes``
#: holds. Each warning carries its code from where it is made (:func:`warning`, :class:`Note`), and the code is
#: all that is read: never the words (a plugin's note that begins "the run is not steady: " is no not-steady
#: run's). Beside each, the words its text (after ``warning: ``) begins with, for the reader. In the order the
#: report gives them (serq_sim.report.build_report).
WARNING_CODES = (
    ("no-sessions", "nothing starts a session: "),
    ("no-end", "the run has no end: "),
    ("queued-zero", "`queued("),
    ("spill-unused", "pool P's `spill` writes nothing"),
    ("spill-lossy", "pool P's `spill` loses units"),
    ("rule-unused", "pool P's `queue by` / `admit via` …"),
    ("not-steady", "the run is not steady: "),
    ("few-samples", "too few samples "),
    ("shared-turn", "table T has N row(s) that share their session and turn "),
    ("cached-beyond-prompt", "table T has N row(s) whose `cached` is above their `prompt` "),
    ("rejected", "pool P rejected N hold(s)"),
    ("stuck", "N session(s) stuck in the run"),
    ("lease-lapsed", "N transfer(s) read KV after the lease that kept it had ended by its time"),
    ("nan-key", "the `queue by` key at FILE:LINE:COL is NaN "),
    ("negative-bound", "the reuse bound at FILE:LINE:COL came out negative "),
    ("other-memory", "the run at FILE:LINE:COL on `E[i]` holds `kv[j]`, another member's memory "),
    ("other-admitter", "the run at FILE:LINE:COL on `E[i]` is inside a hold of `reqs[j]`, which `E[j]` admits "),
    ("unfinished-iteration", "step stage S was busy after the warm-up with one iteration "),
    ("coarse-clock", "the clock reached t=T, where its doubles are D apart "),
    ("waits-for-ever", "N session(s) wait for ever "),
)
#: the code of a warning that carries none: one the simulator did not make (a plugin's note given as text,
#: ``warning: …``; a plugin names its own kind with ``Note(text, code)``), or one of a JSON report written
#: before ``codes`` (report version 5 or older) read back
PLUGIN_CODE = "plugin"
_KNOWN = frozenset(code for code, _words in WARNING_CODES)


def warning_code(note: str) -> str | None:
    """The short code of the report's note ``note`` when it is a warning (``warning: …``), else None: the code
    it carries (:class:`Note`: the simulator's, :data:`WARNING_CODES`, or a plugin's own), else
    :data:`PLUGIN_CODE`. The words are never read."""
    if not note.startswith("warning: "):
        return None
    code = getattr(note, "code", None)
    return PLUGIN_CODE if code is None else code


def read_back(result) -> list[str]:
    """The notes of ``result`` (a :class:`serq_ir.report.Result`, as a JSON report decodes to), each warning a
    :class:`Note` with the code the report's ``codes`` gives it, where the run made it (a report without
    ``codes``, or one of another length, gives none: each of its warnings reads :data:`PLUGIN_CODE`)."""
    notes = list(result.notes)
    codes = list(getattr(result, "codes", None) or ())
    if len(codes) != len(notes):
        return notes
    return [Note(n, c) if c is not None and n.startswith("warning: ") else n for n, c in zip(notes, codes)]


def warning_codes(notes) -> str:
    """The short codes of the warnings among a report's ``notes``, each once, in the order they first come,
    joined by ``;`` (``not-steady;few-samples``); ``""`` when none warns."""
    codes: dict[str, None] = {}
    for note in notes:
        code = warning_code(note)
        if code is not None:
            codes.setdefault(code)
    return ";".join(codes)
