"""The Python API: :func:`run`, and the registries of stage kinds and policies it resolves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from serq.shared import COLLECTOR, WORK_GC_THRESHOLD, collector_raised

#: the cyclic collector's first threshold while a run is set up and runs (serq.shared.WORK_GC_THRESHOLD,
#: which a compile raises it to as well: why, there)
RUN_GC_THRESHOLD = WORK_GC_THRESHOLD

#: the collector's thresholds, raised while any run or compile is under way (serq.shared.COLLECTOR)
_THRESHOLDS = COLLECTOR


def collector_for_runs() -> Any:
    """Raise the collector's first threshold to :data:`RUN_GC_THRESHOLD` for the duration (never lower it,
    nor turn on what a threshold of 0 turned off), and put the thresholds back after the last of the runs
    and compiles under way (:func:`serq.shared.collector_raised`)."""
    return collector_raised(RUN_GC_THRESHOLD)


@dataclass(frozen=True)
class Registries:
    """What the hooks registered: ``name -> factory`` per kind of thing (see :mod:`serq.plugins`)."""

    stage_kinds: Any
    evict: Any
    preempt: Any
    share: Any
    #: the plugin manager they come from (what an unknown kind's message asks why serq-sim's own are absent)
    pm: Any = None


def registries(pm=None) -> Registries:
    """The registries the plugins of ``pm`` fill through serq-sim's hooks (default: the installed
    plugins). serq-sim's own kinds and policies are there when its plugin (``sim``) is registered, as
    any plugin's: a manager without it has none of them."""
    from serq.plugins import api_plugin_manager, collect

    pm = api_plugin_manager(pm)
    return Registries(
        stage_kinds=collect(pm, "serq_sim_register_stage_kinds", "stage kind"),
        evict=collect(pm, "serq_sim_register_eviction_orders", "eviction order"),
        preempt=collect(pm, "serq_sim_register_preemption_policies", "preemption policy"),
        share=collect(pm, "serq_sim_register_share_policies", "share policy"),
        pm=pm,
    )


def _shown(v) -> str:
    """``repr(v)``, but for an int of a thousand digits (serq.numbers.shown), and clipped as a message quotes a
    text (serq.errors.clipped): ``horizon="x" * 10**6`` was a message of a million characters."""
    from serq.errors import clipped
    from serq.numbers import shown

    return clipped(shown(v))


def _refused(name: str, v: Any, rule: str, *, of_type: bool) -> Exception:
    """The one rule of ``run``'s arguments: ``NAME must be RULE, not V``, a ValueError when ``v`` is of the
    type the argument takes (a number out of range, NaN, a negative count), else a TypeError (a str, a bool,
    a float where a count is an integer)."""
    said = f"{name} must be {rule}, not {_shown(v)}"
    return ValueError(said) if of_type else TypeError(said)


def _is_real(v: Any) -> bool:
    from serq.numbers import is_real

    return is_real(v)


def _whole(v: Any) -> int | None:
    """``v`` as an int where a whole number is wanted (serq.numbers.whole_value: an int, numpy's integers, a
    Fraction or a Decimal whose value is whole), else None."""
    from serq.numbers import whole_value

    return whole_value(v)


def _is_exact(v: Any) -> bool:
    """Whether ``v`` is of a type a whole number is given as (serq.numbers.exact): a non-whole one is a
    ValueError, a float or a str a TypeError."""
    from serq.numbers import exact

    return exact(v)


def _check_run_args(program, seed, horizon, warmup, arrivals, trace) -> tuple[Any, Any, Any, Any]:
    """Refuse, before anything is built, what ``run``'s arguments cannot be (as the command line refuses its
    flags), by one rule (:func:`_refused`): a TypeError for an argument of the wrong type, a ValueError for
    one of the right type whose value is not allowed. A wrong type was an AttributeError or a float() error
    deep in the set-up, a negative warmup or a fractional arrivals count ran silently, and a bad seed was a
    SimError, the class of a run's errors, raised by the set-up.

    Returns ``seed``, ``horizon``, ``warmup`` and ``arrivals`` made plain numbers (an ``int``, a ``float``;
    None stays None), as :func:`run_limits` makes the bounds: what the set-up is given is what the command
    line gives it, whatever Real or Integral the caller had (a ``Fraction`` horizon, taken as a real here, was
    a TypeError of ``format`` deep in the set-up, where a setting's origin is shown)."""
    import math
    import os

    from serq.numbers import real as real_number
    from serq_ir.nodes import Program
    from serq_ir.rules import MAX_SEED, arrivals_count_problem

    if not isinstance(program, Program):
        raise TypeError("program must be a serq_ir.Program (serq_frontend.compile(path) or serq_ir.load(path)), "
                        f"not {type(program).__name__}")

    def real(v) -> float:  # v as a float; NaN for what is no real number (a bool, a str), or an int beyond
        x = real_number(v)  # the doubles (serq.numbers.real)
        return math.nan if x is None else x

    if seed is not None:
        whole = _whole(seed)
        if whole is None or not 0 <= whole <= MAX_SEED:
            raise _refused("seed", seed, f"an integer from 0 to 2**64 - 1 ({MAX_SEED})", of_type=_is_exact(seed))
        seed = whole
    if horizon is not None and not real(horizon) > 0:
        raise _refused("horizon", horizon, "a positive number (inf: until no event is left)",
                       of_type=_is_real(horizon))
    if warmup is not None and not 0 <= real(warmup) < math.inf:
        raise _refused("warmup", warmup, "a finite number at least 0", of_type=_is_real(warmup))
    if arrivals is not None:
        whole = _whole(arrivals)
        if whole is None or whole < 1:
            raise _refused("arrivals", arrivals, "a positive integer", of_type=_is_exact(arrivals))
        arrivals = whole
    if arrivals is not None and arrivals_count_problem(int(arrivals)):  # (the one rule: below 2**53)
        raise ValueError(f"arrivals must be {arrivals_count_problem(int(arrivals)).removeprefix('arrivals is ')}")
    if trace is not None and not isinstance(trace, (str, os.PathLike)):
        raise TypeError(f"trace must be a path (str or os.PathLike), not {type(trace).__name__}")
    if trace is not None and not os.fspath(trace):
        raise ValueError("trace must name a file, not the empty path (None: the workload's own trace)")
    return (None if seed is None else int(seed), None if horizon is None else real(horizon),
            None if warmup is None else real(warmup), None if arrivals is None else int(arrivals))


def _endless(program, arrivals) -> bool:
    """Whether ``program``'s workload starts sessions for ever (so that a run without a horizon, a bound on
    its events or on its wall time never returns): an open workload (``arrive poisson``/``renewal``) without
    a count of arrivals (``arrivals``, else the run block's), or a closed population (``arrive closed(n)``
    starts a session again as each one ends). A trace does not end them: each session that arrives replays a
    trace session (the last one passed, again from the first, or drawn), so ``arrive poisson`` beside a trace
    of two sessions ran until the process was killed (it was taken for a workload that ends with its trace).
    A count given to a closed population is no bound here: the run's set-up refuses it (serq_ir.rules.
    arrivals_problem), saying what works instead, which this refusal, of a run with no bound, did not."""
    from .notes import endless_workload

    arrive = program.workload.arrive
    if endless_workload(arrive) is None:
        return False
    # (a count of arrivals ends an open workload; a closed one takes none: the set-up refuses it)
    return arrivals is None and program.run.arrivals is None


def _no_bound(horizon, run_horizon) -> str | None:
    """What says that the run's horizon bounds nothing (the start of the refusal of a run that never returns),
    ``None`` when it is finite: none given (here or in the run block), or one of inf, which runs until no
    event is left, as no horizon does: an endless workload ran until the process was killed under either."""
    import math

    if horizon is not None:
        return None if horizon < math.inf else "run() was given horizon=inf, which is no bound"
    if run_horizon is None:
        return "the program's run block gives no horizon and run() was given none"
    return None if float(run_horizon) < math.inf else "the program's run block gives horizon inf, which is no bound"


def _moved_from(program) -> str | None:
    """The folder ``program`` was compiled in (:func:`serq_frontend.compile` notes it: serq_ir.folders) when the
    current folder is another, else None. Its relative names (its source, its spans, its trace clause) are
    relative to that folder: a run after an ``os.chdir`` read the trace of that name in the new folder, a report
    of other data without a word, and quoted another file's lines under its errors."""
    import os

    from serq_ir.folders import compiled_in

    folder = compiled_in(program)
    if folder is None:
        return None
    try:
        here = os.getcwd()
    except OSError:  # (the current folder was removed: the noted one is still where the names are)
        return folder
    return None if os.path.realpath(here) == os.path.realpath(folder) else folder


def _spans_from(folder: str | None) -> Any:
    """Within, a run-time error quotes a relative span's file from ``folder`` alone (None: as before, from the
    current folder and beside the program's source)."""
    from contextlib import nullcontext

    from serq.errors import spans_read_from

    return nullcontext() if folder is None else spans_read_from((folder,))


def _fast_kinds(program) -> bool:
    """Whether every stage of ``program`` is of a kind the fast tier runs (fifo, ps, delay), the first of its
    conditions (:func:`serq_sim.fast.exclusion`, the one rule, judges the rest): a program with a step stage
    or an extension kind, every serving program, is never run there, and its runs do not import the fast
    tier's module (its code is the largest module of a run's start-up)."""
    from serq_ir import nodes as N

    return all(isinstance(st.kind, (N.Fifo, N.Ps, N.Delay)) for st in program.stages)


def run_limits(*, max_events: Any = None, max_wall: Any = None, max_samples: Any = None) -> dict[str, Any]:
    """The bounds of a run that are given (not None), checked and made plain numbers: ``max_events`` and
    ``max_samples`` an ``int`` from any positive whole number (numpy's ``int64``, a whole ``Fraction`` or
    ``Decimal`` too, as ``arrivals`` and ``seed`` take), ``max_wall`` a ``float`` from a positive, finite real. What is none of these is
    refused naming it, by ``run``'s rule (:func:`_refused`): a TypeError for the wrong type (a str, a bool,
    a float count), a ValueError for a value out of range. :func:`run` and a sweep's plan (serq_sweep)
    check them here: a numpy integer was refused by ``run`` and, in a sweep, was a TypeError of the JSON
    that keys its runs."""
    import math

    from serq.numbers import real

    out: dict[str, Any] = {}
    for name, v in (("max_events", max_events), ("max_samples", max_samples)):
        if v is None:
            continue
        whole = _whole(v)
        if whole is None or whole < 1:
            raise _refused(name, v, "a positive integer", of_type=_is_exact(v))
        out[name] = whole
    if max_wall is not None:
        wall = real(max_wall)  # None for what is no real number, or an int beyond the doubles
        if wall is None or not 0 < wall < math.inf:
            raise _refused("max_wall", max_wall, "a positive, finite number of seconds", of_type=_is_real(max_wall))
        out["max_wall"] = wall
    return {k: out[k] for k in ("max_wall", "max_events", "max_samples") if k in out}


def run(program, *, seed: int | None = None, horizon: float | None = None, warmup: float | None = None,
        arrivals: int | None = None, check_invariants: bool = False, progress: bool = False,
        trace: str | None = None, pm=None, max_events: int | None = None, max_wall: float | None = None,
        max_samples: int | None = None, trace_digest: str | None = None):
    """Simulate ``program`` (a :class:`serq_ir.Program`) and return its :class:`~serq_sim.Report`.

    ``seed``, ``horizon``, ``warmup`` and ``arrivals`` override the program's run block;
    ``check_invariants`` asserts every pool's bookkeeping after every event; ``progress`` shows a
    progress bar on stderr when it is a terminal; ``trace`` replaces the workload's trace file; ``pm`` a
    plugin manager whose stage kinds and policies to use (default: the installed ones). ``trace_digest``: the
    SHA-256 (64 hexadecimal digits, in either case) of the bytes the trace the run reads had when a sweep planned
    the run; a trace read otherwise (edited since) is a :class:`SimError` naming the file, before the run
    (``serq_sweep``'s check). A ``trace_digest`` that is no SHA-256 stands for bytes the sweep could not read
    (``serq_sweep.core.trace_digest``: ``unreadable FILE: …``): whatever the run reads is then "changed".

    ``max_events`` (a positive integer) and ``max_wall`` (seconds of wall-clock time, positive) bound the
    run: when the event count reaches ``max_events`` (checked after every event, a step stage's stretch
    of quiet rounds ending at it), or ``max_wall`` seconds have passed since the run was set up (checked every
    1 000 events, every 2 048 units of work inside an event: a long one stops within it, and every 2 048 rounds of a step
    stage's stretch of quiet rounds; a plugin's code that does not return is stopped at the bound, by an alarm in
    the main thread and by a thread watching the run in any other, a Dask worker's: docs/simulator.md), the run
    stops and the report is partial: ``report.partial`` is ``"max-events"`` or
    ``"max-wall"``, ``report.interrupted`` is true, and a note says so. Ctrl-C (KeyboardInterrupt) stops
    a run the same way (``"interrupted"``).

    ``max_samples`` (a positive integer; default :data:`serq_sim.engine.DEFAULT_MAX_SAMPLES`, 100 000 000)
    bounds the samples the run holds (every observe's samples, every gauge's change points, a sample a column
    of every ``record`` row and a step engine's runs of equal output-token gaps): once it holds that many, the
    run stops with the partial report ``"max-samples"`` (on the general engine at the statement that makes it
    hold them, counted down where they are added, the output-token gaps every 20 000 events; in the fast tier
    whenever an observe's buffers grow, so a run there may hold somewhat more: docs/simulator.md). A run that runs
    out of memory (``MemoryError``) stops likewise, ``"memory"``, if its report can still be made.

    A bad argument is refused before anything is built: a TypeError when it is of the wrong type (a
    ``horizon`` that is a str or a bool, an ``arrivals``, ``seed`` or ``max_events`` that is a float), a
    ValueError when its value is not allowed (a negative or NaN horizon, a seed outside 0 to 2**64 - 1, a
    count below 1). Without a horizon (here or in the program's run block) a run goes on until no event is
    left, as it does under a horizon of inf; one that cannot end that way, whose workload starts sessions for
    ever (an open one without a count of arrivals, a closed population), is a ValueError unless ``max_events``
    or ``max_wall`` bounds it. A
    run-time error of the program is a :class:`SimError`.
    """
    bounds = run_limits(max_events=max_events, max_wall=max_wall, max_samples=max_samples)
    max_events, max_wall, max_samples = (bounds.get(k) for k in ("max_events", "max_wall", "max_samples"))
    seed, horizon, warmup, arrivals = _check_run_args(program, seed, horizon, warmup, arrivals, trace)
    if trace_digest is not None and not isinstance(trace_digest, str):
        raise TypeError(f"trace_digest must be a str (a SHA-256 in hexadecimal), not {type(trace_digest).__name__}")
    if trace_digest is not None and len(trace_digest) == 64 and all(c in "0123456789abcdefABCDEF" for c in trace_digest):
        trace_digest = trace_digest.lower()  # (the trace's own digest in capitals was "the trace changed")
    from serq.numbers import switch

    for name, v in (("check_invariants", check_invariants), ("progress", progress)):
        if not switch(v):  # (taken by its truth: check_invariants="no" checked every event, slowly)
            raise _refused(name, v, "True or False", of_type=False)
    from serq.plugins import api_plugin_manager
    from serq_ir.codec import checked

    from .compile import kept_walks
    from .engine import Simulation

    pm = api_plugin_manager(pm)
    folder = _moved_from(program)  # (of the caller's object: checked() returns a copy)
    from serq.errors import texts_given
    from serq_ir.folders import compiled_texts

    texts = compiled_texts(program)  # the bodies of defs= its compile was given: an error there quotes its line
    # a Program built in Python has not been through decode's checks: its schema (msgspec does not check a
    # Struct's fields when it is made: a str number, a None list, an unknown version), then its references
    program = checked(program, name=program.source if isinstance(program.source, str) and program.source
                      else "<program>")
    if max_events is None and max_wall is None and _endless(program, arrivals):
        endless = _no_bound(horizon, program.run.horizon)
        if endless is not None:
            raise ValueError(f"{endless}, and its workload never stops starting sessions: give horizon=T (math.inf "
                             "with max_events or max_wall: until one of them stops it)")
    if trace is not None:  # (a replacement with nothing to replace, named as the caller gave it: trace=…)
        from serq.loading import argument_given

        from .trace import check_replaceable

        check_replaceable(program, trace, argument_given)
    reg = registries(pm)
    sim = None
    try:
        with collector_for_runs(), _spans_from(folder), texts_given(texts):
            with kept_walks():  # the set-up walks the program several times
                sim = Simulation(program, reg, seed=seed, horizon=horizon, warmup=warmup, arrivals=arrivals,
                                 check_invariants=check_invariants, progress=progress, trace_path=trace,
                                 max_events=max_events, max_wall=max_wall, max_samples=max_samples,
                                 trace_digest=trace_digest, folder=folder)
                sim.plugin_manager = pm
                if not check_invariants:
                    from .tier_env import forced_general

                    # (read whatever the program: a value SERQ_SIM_TIER does not take is an error)
                    if not forced_general() and _fast_kinds(program) and sim.setup_stop is None:
                        from . import fast

                        report = fast.run(sim)  # None when the program is outside the fast tier's class
                        if report is not None:
                            return report
            return sim.run()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM (the run keeps a partial report of its own when it can)
        raise
    except MemoryError as e:  # one no report could be made of: where it ran out (before the run: no sample)
        from .memguard import escaped

        raise escaped(e, None if sim is None else sim.samples_held()) from None
    except BaseException as e:
        # an exception raised in a plugin's code (its stage kind, its policy: built, or called in the run)
        # is a PluginError naming the plugin and its line, the exception its cause; any other is serQ's. A
        # plugin's sys.exit() (SystemExit) or its own BaseException too: not the command's exit status,
        # with no report and no message (status 0 for sys.exit(0))
        from .errors import StopRun

        if isinstance(e, StopRun):  # the stop of a run whose plugin's code called this one: its to take
            raise
        # (the places these messages note are quoted as the run's own errors' are: from the texts its compile
        # was given and its folder; a plugin's failure noted its stage's line without the line, when the
        # program was compiled from source=)
        with _spans_from(folder), texts_given(texts):
            if getattr(type(e), "serq_user_error", False):
                if sim is not None:  # (a factory's refusal, when the run is built, is placed by guards.build_with)
                    from .guards import placed

                    at = placed(e, sim)
                    if at is not None:
                        raise at from e
                raise
            from serq.errors import PluginError
            from serq.plugins import plugin_failure

            failure = plugin_failure(pm, e, "the run")
            if failure is None:
                if sim is not None:  # a session a plugin kept and broke, met by serQ's own code
                    from .guards import kept_session_failure

                    kept = kept_session_failure(sim, e)
                    if kept is not None:
                        raise kept from e
                raise
            from .guards import run_failure

            raise PluginError(run_failure(failure, e, sim)) from e

