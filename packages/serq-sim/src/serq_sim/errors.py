"""Errors of the simulator.

A mistake in the program or its inputs that shows only while it runs (a branch guard of 0.5, NaN units,
a gap that is not positive, a malformed trace row) is a :class:`SimError`: its message is
``FILE:LINE:COL: error: at t=T, session N: MESSAGE``, then the source line and a caret, and the CLI prints
it without a traceback (exit status 1). Anything else that goes wrong is a bug of the simulator and keeps
its traceback.
"""

from __future__ import annotations

import math

from serq.errors import located, printable, source_excerpt  # noqa: F401 - (the last two named here as before)
from serq_ir.rules import guard_problem, setting_message, show_number


class SimError(Exception):
    """A run-time error of the program being simulated (printed as its message alone). ``code``: the short code
    of a kind of error that what reads the error tells apart from the rest (``trace-changed``,
    :func:`serq_sim.trace.changed`: a sweep's resume runs such a run again), given where it is made; None for
    the others."""

    serq_user_error = True
    code: str | None = None
    #: what :func:`session_error` made the message of, ``(span, t, serial, replay, message)``, for
    #: :func:`of_entry` to tell it again; None for an error made otherwise
    parts: tuple | None = None

    def __init__(self, *args, code: str | None = None):
        super().__init__(*args)
        if code is not None:
            self.code = code


class StopRun(BaseException):  # noqa: N818 - control flow, not an error
    """End the run now, with the partial report (``Report.partial`` is ``reason``).

    Raised from anywhere inside a run (the event loop, a stage, a session's statement); the run stops at
    once, as on Ctrl-C, and its report covers what was simulated up to then, marked partial with
    ``reason`` (a short word: ``max-events``, ``max-wall``, ...) and with ``message`` as its note. A
    ``BaseException`` so that nothing between the raise and the run catches it by mistake.

    ``owner``: the run (the :class:`~serq_sim.engine.Simulation`) it stops, when it is raised where
    another run may be on the stack (``--max-wall``'s alarm, which may find a plugin's code running a
    simulation of its own): a run it is not for lets it pass (:meth:`for_other`). ``None``: the innermost
    run, the one whose code raised it.
    """

    def __init__(self, reason: str, message: str, owner=None, held: Held | None = None):
        super().__init__(reason, message)
        self.reason = reason
        self.message = message
        self.owner = owner
        #: a stop for what the run holds (--max-samples, the memory guard, out of memory): the parts of its
        #: note, which the run completes with what holds most (engine.Simulation.stopped); None for the others
        self.held = held

    @classmethod
    def holding(cls, reason: str, held: Held) -> StopRun:
        """The stop of a run for what it holds: its message the note of ``held`` naming no holder (the note
        as it stands where a holder cannot be named for want of memory)."""
        return cls(reason, held.note(), held=held)

    def for_other(self, sim) -> bool:
        """Whether this stop is another run's than ``sim``'s (``sim`` lets it pass on to its caller)."""
        return self.owner is not None and self.owner is not sim


class Held:
    """What a run stopped for what it holds held, the parts of its note: ``kind`` (:data:`MAX_SAMPLES`,
    :data:`GUARD`, :data:`OUT_OF_MEMORY`), the samples it held, for ``--max-samples`` its bound, for the memory
    guard why it stopped (a sentence) and the sessions live. :meth:`note` formats the note once, naming what
    holds most where it is known (serq_sim.holders); made when the run stops, never in the event loop."""

    __slots__ = ("kind", "samples", "bound", "why", "live")

    def __init__(self, kind: str, samples: int, *, bound: int | None = None, why: str = "", live: int = 0):
        self.kind = kind
        self.samples = samples
        self.bound = bound
        self.why = why
        self.live = live

    def note(self, by: str = "", at: str = "") -> str:
        """The note: ``by`` the holder of most samples (``N of them by observe x at FILE:LINE:COL``), ``at`` the
        statement most waiting sessions wait at (`` (N of them queued at the hold at …)``, the memory guard's
        alone); either ``""`` where there is none or it is not known."""
        if self.kind == MAX_SAMPLES:
            by = f", {by}" if by else ""
            return f"stopped holding {self.samples} samples{by} (--max-samples {self.bound})"
        if self.kind == GUARD:
            return (f"{self.why}, with {self.live} sessions live{at} and {self.samples} samples held"
                    + (f" ({by})" if by else ""))
        from .memguard import hint

        return f"out of memory {hint(self.samples, by)}"


#: the kinds of :class:`Held`: a run stopped at --max-samples, by the memory guard, by a MemoryError
MAX_SAMPLES, GUARD, OUT_OF_MEMORY = "max-samples", "guard", "out of memory"


class InvariantError(AssertionError):
    """``check_invariants``: a pool's bookkeeping broke (a simulator bug, never a user's mistake). The
    command line reports it as one message asking for a bug report (``serq_internal_error``), with exit
    status 70; the Python API raises it."""

    serq_internal_error = True


class Preempted(Exception):  # noqa: N818 - control flow, not an error
    """Thrown into a session's continuation: its hold at stack ``depth`` was preempted."""

    __slots__ = ("depth",)

    def __init__(self, depth: int):
        super().__init__(depth)
        self.depth = depth


class SessionGone(Exception):  # noqa: N818 - control flow, not an error
    """Raised out of a continuation whose session has ended (a rejected hold)."""


def fmt_time(t: float) -> str:
    """A time as a message shows it: as any number (serq_ir.rules.show_number)."""
    return show_number(t)


def format_error(span, t: float | None, serial: int | None, message: str, base: str | None = None) -> str:
    """``FILE:LINE:COL: error: at t=T, session N: MESSAGE`` plus the source line and a caret."""
    where = []
    if t is not None:
        where.append(f"at t={fmt_time(t)}")
    if serial is not None:
        where.append(f"session {serial}")
    ctx = ", ".join(where)
    return located(span, f"{ctx}: {message}" if ctx else message, base)



def span_folders(file: str, program) -> tuple[str, ...] | None:
    """The folders a run of ``program``, read from ``file``, quotes its spans' relative files from
    (serq.errors.spans_read_from). A ``.sq`` program is compiled where it runs, its spans naming files from the
    current folder: None, nothing changes. An IR file's spans and its ``source`` name files relative to the
    folder it was compiled in, which it does not record (an IR is the same bytes wherever it is made): that
    folder is taken to be the IR file's own when every relative file its spans and ``source`` name is there,
    else the current folder when every one is there, and the spans are read from that one folder only (a file
    of the same name elsewhere, another program's, is not quoted under the message; docs/simulator.md). When
    neither has them all, no relative span is quoted."""
    import os

    from serq.files import path_name

    if path_name(file).endswith(".sq"):
        return None
    from serq_ir.analysis import span_files

    # (only a .sq file is quoted: a span of another name, `--def f`'s, is no file to look for)
    names = [f for f in span_files(program) if f.endswith(".sq") and not os.path.isabs(f)]
    for folder in dict.fromkeys((os.path.dirname(file) or ".", ".")):
        if all(os.path.isfile(os.path.join(folder, f)) for f in names):
            return (folder,)
    return ()


def spans_of(file: str, program):
    """The block a program read from ``file`` runs in: its run-time errors quote its spans' files from where
    :func:`span_folders` says."""
    from serq.errors import spans_read_from

    return spans_read_from(span_folders(file, program))


def session_error(sim, span, t: float | None, serial: int | None, replay, message: str) -> SimError:
    """The run-time error ``message`` at ``span`` and time ``t`` of session ``serial`` (None: of none), as
    :func:`format_error` says it, with the note naming the trace row the session replays (``replay``: its
    ``[turns, next turn, trace session]``; None for a session that replays none, trace.replay_note): the one
    way a run-time error of a session is made, on both tiers (``Simulation.error``, the fast tier's, the
    closed workload's replacement guard, the no-progress guards, a plugin's error placed at its job), so
    that every one of a trace session names its row (those built outside ``Simulation.error`` did not)."""
    e = SimError(format_error(span, t, serial, message, sim.source) + replay_text(sim, serial, replay))
    e.parts = (span, t, serial, replay, message)
    return e


def of_entry(sim, e: SimError, entry) -> SimError:
    """``e``, the run-time error of an expression read at the Evict moment for the cached ``entry`` (an ``evict
    by`` key, a spill's clause), naming the entry's session, whose attributes the expression reads, when it
    names none: the one rule of them (policies.eviction.KeyedOrder, pools.cache.spill). A session that has
    ended still owns its entries, but the expression is given no session then (its attributes are those it
    released the entry with, policies.evict_context), and a spill's own errors (its work, a member its index
    names) were made with none: such an error named no session, where the same key of a live session's entry
    named it."""
    parts = e.parts
    owner = entry.owner
    if parts is None or parts[2] is not None or owner is None:
        return e
    span, t, _serial, _replay, message = parts
    return session_error(sim, span, t, owner.serial, owner.trace, message)


def replay_text(sim, serial: int | None, replay) -> str:
    """The note naming the trace row session ``serial`` replays (``replay``: its ``[turns, next turn, trace
    session]``, None for a session that replays none; trace.replay_note), on its own lines after a message,
    or nothing: the one text of every run-time error of a session, serQ's (:func:`session_error`) and a
    plugin's that breaks its contract at run time (serq_sim.guards.failure, and a plugin's exception at a
    session's job, guards.session_of)."""
    if serial is None or replay is None or getattr(sim, "trace", None) is None:
        return ""
    return sim.trace.replay_note(replay, serial)


#: a number as a message shows it: ``NaN``, a whole number without a point, else ``%g``
show = show_number

#: the settings of the run block
SETTINGS = ("horizon", "warmup", "seed", "arrivals")


def setting_origins(run, given: dict) -> dict:
    """Where each run setting of a simulation came from, by name: ``NAME=VALUE`` for one ``serq_sim.run``
    was given as an argument (``given``: its value, None where not given); else what the IR says of it
    (``run.span``, serq_ir's RunSpans: the span of the setting in the run block, or the command-line option
    that gave it, ``--arrivals 5``); else None (a setting not given, or an IR written without the spans)."""
    spans = run.span
    out = {}
    for name in SETTINGS:
        v = given.get(name)
        if v is not None:
            out[name] = f"{name}={show(v) if name in ('horizon', 'warmup') else v}"
        else:
            out[name] = None if spans is None else getattr(spans, name)
    return out


def setting_error(origins: dict, values: dict, names: tuple[str, ...], t: float | None, message: str,
                  base: str | None = None) -> SimError:
    """The one rule of the run-time errors a run setting causes (``arrivals N`` not reached by the horizon,
    say), on both tiers and at the set-up. ``names``: the settings the error is about, the one it concerns
    first (``("arrivals", "horizon")``); ``origins`` as :func:`setting_origins` gives them; ``values`` the
    settings' values.

    The message is headed by that first setting as its origin names it: an option or an argument as given
    (``--arrivals 5``, ``arrivals=5``), else as the run block writes it (``run { arrivals 5; }``). Each other
    setting that came from an option or an argument is named after the message (``(--horizon 4)``). When
    the first setting was given in the run block, the error points there (``FILE:LINE:COL``, the source line
    and a caret): where its user changes it. (:func:`serq_ir.rules.setting_message` is the rule; the command
    line's overrides of the run settings, serq.loading.apply_run_overrides, follow it too.)"""
    span, text = setting_message(origins, values, names, message)
    return SimError(format_error(span, t, None, text, base))


def not_an_amount(x: float) -> str:
    """What is wrong with an amount (at least 0) that came out ``x``: ``NaN`` or ``negative (x)``, as the
    run-time errors of amounts say it (a hold's units, a run's work, a budget, a cost, a capacity)."""
    return "NaN" if x != x else f"negative ({show(x)})"


def not_bookable(x: float) -> str:
    """What is wrong with an amount a pool would book (a hold's units, its reserve under ``reserve held``, a
    ``grow``'s amount) that came out ``x`` and is refused (:func:`serq_sim.pools.model.refused_amount`):
    :func:`not_an_amount`'s NaN or negative, or infinite (refused on a pool without a cap only)."""
    return "infinite on a pool without a cap" if x == math.inf else not_an_amount(x)


def guard_message(g: float) -> str:
    """The run-time error of a ``branch`` guard that came out other than 0 or 1 (both tiers: language.txt §3
    Branching, a guard is a test), in the words the linker gives a constant NaN guard
    (serq_ir.rules.guard_problem)."""
    return guard_problem(g)


def amount_message(what: str, label: str, x: float) -> str:
    """The run-time error of a hold's ``units`` or ``reserve`` (``what``) that pool ``label`` refuses
    (:func:`serq_sim.pools.model.refused_amount`), on every admission path of both tiers."""
    verb = "are" if what == "units" else "is"
    return f"the {what} of {label} {verb} {not_bookable(x)}"


def work_message(w: float) -> str:
    """The run-time error of a run whose work came out NaN or negative (both tiers; a run's work is an
    amount, at least 0, as a hold's units are)."""
    return f"the run's work is {not_an_amount(w)}"
