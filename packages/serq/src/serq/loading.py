"""Loading a program from a file through the loaders the installed parts register."""

from __future__ import annotations

import _thread
import contextlib
import errno
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pluggy

from .errors import UsageError, UserError, clipped, located
from .files import path_name, path_str
from .numbers import real, whole_value
from .plugins import FIRST_PARTY_PACKAGES, Registry, collect

if TYPE_CHECKING:
    from pathlib import Path

#: Which distribution loads which file type, for the message when none installed does.
KNOWN_SUFFIXES = {".ir.json": "serq-ir", ".sq": "serq-frontend"}


#: guards the count of the calls under :func:`stdout_to_stderr` and the descriptor they put back
_FD_LOCK = _thread.allocate_lock()  # (threading is not imported at start-up)
_fd_count = 0
_fd_saved: int | None = None


def _flush(*streams: Any) -> None:
    for stream in streams:
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed or odd stream: nothing to flush
            pass


def _fd_to_stderr() -> None:
    """Point file descriptor 1 at what descriptor 2 is (the first of calls that overlap; the last puts it
    back: :func:`_fd_back`). Either descriptor closed: left as it is."""
    global _fd_count, _fd_saved
    with _FD_LOCK:
        _fd_count += 1
        if _fd_count > 1:
            return
        try:
            saved = os.dup(1)
        except OSError:
            return
        try:
            os.dup2(2, 1)
        except OSError:
            os.close(saved)
            return
        _fd_saved = saved


def _fd_back() -> None:
    global _fd_count, _fd_saved
    with _FD_LOCK:
        _fd_count -= 1
        if _fd_count == 0 and _fd_saved is not None:
            saved, _fd_saved = _fd_saved, None
            try:
                os.dup2(saved, 1)
            finally:
                os.close(saved)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """For the duration, what is written to standard output goes to standard error: Python's (``print``,
    ``sys.stdout``) and the process's file descriptor 1 (``os.write(1, …)``, a C library's ``printf`` once it
    flushes, a child process that inherits it). A loader's output is no output of the command's: a plugin's
    ``os.write(1, b"loading\n")`` went into ``serq run --json``'s report and ``serq ir``'s IR. The streams are
    flushed before the descriptor is pointed away (what the command wrote before goes where it was going) and
    after (what the loader left in a buffer goes to standard error), and descriptor 1 is put back however the
    call ends. Calls in threads that overlap share one pointing away: the last to end puts it back (another
    thread's own writes to descriptor 1 in the meantime go to standard error too)."""
    _flush(sys.stdout, sys.__stdout__)
    _fd_to_stderr()
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        try:
            _flush(sys.stdout, sys.__stdout__, sys.stderr, sys.__stderr__)
        finally:
            _fd_back()


@dataclass(frozen=True)
class LoadOptions:
    """What a command passes to a loader: ``--set NAME=value``, ``--def NAME=expr``, and ``pm``, the
    command's plugin manager (whose sugar layers, library folders and registered kinds a loader uses;
    ``None`` from a caller that has none: the loader then uses the installed plugins)."""

    sets: dict[str, float] = field(default_factory=dict)
    defs: dict[str, str] = field(default_factory=dict)
    pm: Any = None
    #: how a message names an override: :func:`option_given` (``--set NAME``, a command's; None is that) or
    #: :func:`argument_given` (``sets['NAME']``, the Python API's)
    given: Any = None


def loaders(pm: pluggy.PluginManager) -> Registry:
    return collect(pm, "serq_register_loaders", "loader for")


def _matches(reg: Registry, name: str) -> list[str]:
    """The suffixes of ``reg`` that the file name ``name`` ends in, the longest (the one whose loader loads
    it) first."""
    return sorted((s for s in reg.names() if name.endswith(s)), key=len, reverse=True)


def definition_form(pm: pluggy.PluginManager, path: str | Path, body: str) -> str:
    """The canonical form of ``body``, a definition's body given to the program ``path`` from outside
    (``--def NAME=BODY``), in the language of the loader of its suffix: a loader may carry a function
    ``definition_form(body) -> str`` as its attribute (serq-frontend's ``.sq`` loader: the body as ``serq
    fmt`` spaces it, on one line, without comments). Two bodies of one form are one definition: a sweep
    tells its points apart by it (serq_sweep.core.definition_forms). Without such a loader, or where what
    it gives is no str, the body is its own form."""
    reg = loaders(pm)
    matches = _matches(reg, path_name(path))
    form = getattr(reg[matches[0]], "definition_form", None) if matches else None
    if form is None:
        return body
    from .plugins import plugin_exits

    with plugin_exits(pm, f"its loader's definition_form for {matches[0]} files"):
        given = form(body)
    return given if isinstance(given, str) else body


def load_program(pm: pluggy.PluginManager, path: str | Path, options: LoadOptions | None = None) -> Any:
    """Load ``path`` with the loader of the longest matching suffix."""
    options = options or LoadOptions()
    if options.pm is None:
        import dataclasses

        options = dataclasses.replace(options, pm=pm)
    p = path_str(path)  # (as pathlib spells it: the messages' name of the file)
    reg = loaders(pm)
    name = path_name(p)
    matches = _matches(reg, name)
    if not matches:
        from .errors import shown_path

        shown = shown_path(p)  # (a name of 5 000 characters was printed whole in each message below)
        for suffix, dist in sorted(KNOWN_SUFFIXES.items(), key=lambda kv: -len(kv[0])):
            if name.endswith(suffix):
                from .parts import how_to_have

                raise UserError(f"{shown}: no installed part loads {suffix} files; "
                                f"{how_to_have(pm, dist, f'{dist}, or serq[all]')}")
        if not os.path.lexists(p):  # a file that is not there is told so, whatever its name (`serq sweep find`
            # read `find` as a FILE, and said its type was unknown), as a file of a loader's suffix is
            from .errors import missing_file_note

            raise UserError(f"{shown}: cannot read: {os.strerror(errno.ENOENT)}{missing_file_note(p)}")
        known = ", ".join(sorted(reg.names())) or "none"
        raise UserError(f"{shown}: unknown file type (the installed parts load: {known})")
    if (options.sets or options.defs) and matches[0] == ".ir.json":
        given = given_or_option(options.given)
        raise UserError(f"{p}: {given('set')} and {given('def')} apply to source programs, not to IR files")
    from .plugins import plugin_exits

    loader = reg[matches[0]]
    mod = getattr(loader, "__module__", None)
    if isinstance(mod, str) and mod.partition(".")[0] in FIRST_PARTY_PACKAGES:
        given: Any = p  # serQ's own loaders take the path as a str: a run of a .sq program imports no pathlib
    else:
        from pathlib import Path

        given = Path(p)  # a plugin's loader is handed a pathlib.Path (docs/hooks.md)
    # what a loader prints (a plugin's, or a sugar layer's in the .sq loader's compile) is no output of the
    # command's: it goes to standard error, where it went to standard output before the IR or the report
    # (`serq ir q.jobs > q.ir.json` wrote "loading q.jobs" into the JSON)
    with plugin_exits(pm, f"its loader for {matches[0]} files"), stdout_to_stderr():
        program = loader(given, options)
    try:
        from serq_ir.nodes import Program
    except ImportError:  # pragma: no cover - no IR installed: nothing to hold a loader's program to
        return program
    if not isinstance(program, Program):  # a plugin's loader that gives no program: named, not a traceback later
        from .errors import PluginError

        shown = "None" if program is None else f"an object of type {type(program).__name__}"
        raise PluginError(reg.plugin_message(matches[0], f"failed in its loader for {matches[0]} files",
                                             f"it returned {shown} for {p}, not a serq_ir.Program"))
    if matches[0] not in KNOWN_SUFFIXES:
        # a plugin's program is held to what an IR file is (its schema, its references): msgspec does not
        # check a Struct's fields when it is made, so `serq check` said OK of a program whose session was
        # None or whose version was 999, and `serq run` failed inside the simulator
        from serq_ir import IRError
        from serq_ir.codec import checked

        try:
            checked(program, name=str(p))
        except IRError as e:
            from .errors import PluginError

            raise PluginError(reg.plugin_message(matches[0], f"failed in its loader for {matches[0]} files",
                                                 f"it returned a program for {p} that is not the IR's: "
                                                 f"{str(e).removeprefix(f'error: {p}: ')}")) from None
    return program


def split_assignment(item: str, flag: str) -> tuple[str, str]:
    """NAME and VALUE of one ``NAME=VALUE`` of ``--set`` or ``--def`` (``serq run``'s, a sweep's): the one
    rule for blanks, none around NAME, as none is around a number (:mod:`serq.numbers`), so a ``--set``
    has none on either side of its ``=``; a ``--def``'s body is an expression, whose blanks are the
    language's. ``--set ' lambda=1'`` was read as ``lambda`` (the name's blanks were trimmed) and
    ``--set 'lambda= 1'`` refused."""
    name, eq, value = item.partition("=")
    if not eq or not name.strip():
        raise UsageError(f"{flag} {clipped(item)!r}: expected NAME=VALUE")
    if name != name.strip():
        raise UsageError(f"{flag} {clipped(item)!r}: a blank around the name; NAME=VALUE is written without "
                         f"one ({flag} {clipped(name.strip())}=…)")
    return name, value


def parse_assignments(items: tuple[str, ...], flag: str) -> dict[str, str]:
    """``NAME=value`` pairs of a repeated flag (:func:`split_assignment`)."""
    out: dict[str, str] = {}
    for item in items:
        name, value = split_assignment(item, flag)
        if name in out and out[name] != value:  # the later one silently won
            raise UsageError(f"{flag} {clipped(name)}: given twice, {clipped(out[name])!r} and {clipped(value)!r} "
                             "(give it once)")
        out[name] = value
    return out


def parse_sets(items: tuple[str, ...]) -> dict[str, float]:
    """``--set NAME=VALUE`` pairs, each VALUE a number in serQ's syntax (:mod:`serq.numbers`: ``float()``
    read ``1_000`` as 1000 and ``١٢`` as 12) or inf, never NaN."""
    from .numbers import NotANumber, number

    out: dict[str, float] = {}
    for name, value in parse_assignments(items, "--set").items():
        try:
            out[name] = number(value, nan=True)
        except NotANumber as e:
            raise UsageError(f"--set {clipped(name)}={clipped(value)}: {e}{_swept_hint(name, value)}") from None
        if out[name] != out[name]:  # a constant is a number or inf (language.txt §2), as a sweep's --set says
            raise UsageError(f"--set {clipped(name)}={clipped(value)}: NaN is not the value of a constant (a number or inf)")
    return out


def _swept_hint(name: str, value: str) -> str:
    """What a ``--set`` of one value adds when it was given values a sweep takes (``rate=2:8:2``,
    ``rate=2,4``, ``rate=2..8``): that ``serq sweep`` runs them (said only that it is no number)."""
    if not any(mark in value for mark in (",", ":", "..")):
        return ""
    return (f"; this command takes one value: a list or a range of values is serq sweep's (serq sweep FILE "
            f"--set {clipped(name)}={clipped(value)}, docs/sweep.md)")


def _shown(v: Any) -> str:
    """A run setting as a message quotes it: a number as ``%g`` writes it, anything else by its repr."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64:
        return f"(an integer of {v.bit_length()} bits)"
    return f"{v:g}" if real(v) is not None else repr(v)


def _option_text(v: Any) -> str:
    """A run setting's value as its option takes it: ``5``, ``100`` (of 100.0), ``0.5``, ``inf``."""
    if isinstance(v, float):
        from serq_ir.rules import show_number  # (the one rule of a number in a message)

        return show_number(v, exact=True)
    return str(v)


def option_given(setting: str, text: str | None = None) -> str:
    """A run setting given on the command line as a message names it: its option, with the value as given
    (``--horizon 10``), or alone (``--arrivals``)."""
    return f"--{setting}" if text is None else f"--{setting} {text}"


def given_or_option(given: Any = None) -> Any:
    """How a message names a setting: ``given`` (:func:`argument_given` for the Python API's caller, or a
    command's own rule), else the command line's option (:func:`option_given`). The one default of every
    ``given`` a caller may leave out (None)."""
    return option_given if given is None else given


def set_note(name: str, value: float, given: Any = None) -> str:
    """What an error of a program given ``--set NAME=VALUE`` notes of it, whatever the error: ```NAME` is
    VALUE, given by --set NAME`` (``given``, :func:`given_or_option`: ``sets['NAME']`` for the Python API).
    A value the source does not show is told where it came from: the compile's errors note it at the
    ``let`` it replaces (serq_frontend's Context.sets_noted), ``serq run``'s run-time errors after the
    message."""
    from serq_ir.rules import show_number

    shown = clipped(name)
    return f"`{shown}` is {show_number(value, exact=True)}, given by {given_or_option(given)('set', shown)}"


def set_notes(sets: Mapping[str, float], given: Any = None) -> list[str]:
    """The lines an error of a program given ``--set`` (``sets``, NAME to VALUE) ends with, one a name:
    ``note: `NAME` is VALUE, given by --set NAME`` (:func:`set_note`). The one text of them: ``serq run``'s
    (:func:`sets_noted`) and a sweep's, a comparison's or a capacity search's failed run's
    (serq_sweep.core.failures), which named the point and not that its value came from ``--set``."""
    return [f"note: {set_note(n, v, given)}" for n, v in sets.items()]


def defs_quoted(defs: Mapping[str, str], given: Any = None) -> Any:
    """The block a program compiled with ``defs`` (``--def NAME=BODY``) runs in: a run-time error at a span in a
    body quotes its line with a caret as one in a file does (serq.errors.texts_given), where it had only
    ``--def m:1:1``. Each body is named as the compile names it (``given``, :func:`given_or_option`: ``--def
    m``, ``defs['m']``, the name cut as a message cuts one); two names cut alike quote neither."""
    from .errors import texts_given

    return texts_given(def_texts(defs, given))


def def_texts(defs: Mapping[str, str], given: Any = None) -> dict[str, str | None]:
    """The bodies of ``defs`` (``--def NAME=BODY``) by the name a compile's spans give each (``given``,
    :func:`given_or_option`: ``--def m``, ``defs['m']``, the name cut as a message cuts one); two names cut
    alike map to None, quoted from neither (:func:`defs_quoted`, serq.errors.texts_quoted)."""
    given = given_or_option(given)
    texts: dict[str, str | None] = {}
    for name, body in defs.items():
        shown = given("def", clipped(name))
        texts[shown] = None if shown in texts else body
    return texts


@contextlib.contextmanager
def sets_noted(sets: Mapping[str, float], given: Any = None) -> Iterator[None]:
    """A user's error raised within, of a program given ``--set`` (``sets``, NAME to VALUE), with a line
    ``note: `NAME` is VALUE, given by --set NAME`` (:func:`set_note`) after its message for each: the one way
    every command that takes ``--set`` says what an error after the program was loaded ran with (``serq run``'s
    run-time errors, ``serq vllm target``'s refusal of a budget of inf, a ``--warmup`` not below a horizon
    ``--set`` gave; ``serq vllm target --set B=inf`` named no ``--set``). The compile's errors note a value at
    the ``let`` it replaces already (serq_frontend's Context.sets_noted): wrap only what follows the load.
    The error keeps its class (its status, a run error's ``code``)."""
    try:
        yield
    except Exception as e:
        if not sets or not getattr(type(e), "serq_user_error", False):
            raise
        text = "\n".join([str(e), *set_notes(sets, given)])
        if e.args != (str(e),):  # (a message made otherwise than from its one argument)
            raise UserError(text) from None
        e.args = (text,)
        raise


#: the Python API's argument of each option whose text is a name, a key of the argument's mapping (``--set lam``
#: is ``sets['lam']``, ``--def f`` is ``defs['f']``): the one table :func:`argument_given` reads beside its rule
KEYED_ARGUMENTS = {"set": "sets", "def": "defs"}

#: the Python API's argument of each option whose argument has another name (``serq sweep --find`` is
#: ``serq_sweep.find(conditions=…)``, ``serq compare --figure`` is ``serq_sweep.compare(figures=…)``): the one
#: table :func:`argument_given` reads beside its rule
RENAMED_ARGUMENTS = {"find": "conditions", "figure": "figures"}


def argument_given(setting: str, text: str | None = None) -> str:
    """A run setting given to the Python API (``serq_sweep.sweep(horizon=10)``) as a message names it: its
    argument, with the value as given (``horizon=10``, ``seeds=1..0``, ``workers=64``), or alone
    (``arrivals``); an option whose text is a name (:data:`KEYED_ARGUMENTS`), that name's key of the argument
    (``sets['lam']``), or the argument alone (``sets``). The API's caller gave no ``--horizon``, and was told of
    one."""
    keyed = KEYED_ARGUMENTS.get(setting)
    if keyed is not None:
        return keyed if text is None else f"{keyed}[{text!r}]"
    setting = RENAMED_ARGUMENTS.get(setting, setting)
    return setting if text is None else f"{setting}={text}"


def no_horizon(program: Any, name: Any, given: Any = option_given) -> UserError:
    """The error of a run without a horizon (program-reference.txt: a run's horizon is required, as a run
    without one need never end), for ``serq run`` and a sweep alike: pointed at the program's run block when
    it has one (its first setting, the line quoted: ``run { arrivals 5; }`` was told as ``p.sq: error: the run
    has no horizon``, at no line), else headed by the program's file ``name``. ``given`` names the option
    (:func:`given_or_option`)."""
    from .errors import located

    spans = program.run.span
    found = [] if spans is None else [getattr(spans, k) for k in spans.__struct_fields__]
    found = [o for o in found if o is not None and not isinstance(o, str)]
    if found:
        at = min(found, key=lambda o: (o.line, o.col))
        return UserError(located(at, f"the run block gives no horizon: write `horizon T;` in it, or give "
                                     f"{given('horizon', 'T')} (`inf`: until no event is left)"))
    return UserError(located(None, f"the run has no horizon: give the program `run {{ horizon T; }}` or "
                                   f"{given('horizon', 'T')} (`inf`: until no event is left)", str(name)))


def apply_run_overrides(program: Any, *, seed: int | None = None, horizon: float | None = None,
                        warmup: float | None = None, arrivals: int | None = None, name: Any = None,
                        given: Any = option_given) -> Any:
    """The program with the run settings the command line overrides. A ``warmup`` or ``horizon`` that leaves
    no window (the warmup not below the horizon, the program's own or the one given) is refused here, for
    every command: ``serq ir --warmup 1000`` of a program of horizon 100 wrote an IR that ``serq check``
    took and ``serq run`` refused. So is an ``arrivals`` of a workload that is not open. Each is the error
    the simulator's set-up gives of it (:func:`serq_ir.rules.setting_message`, the one rule): headed by the
    setting it concerns as given (``--warmup 1000: …``; one of the run block pointed at, its line quoted),
    the other options after it; ``name``, the program's file, heads one that points at no line. ``given``
    names a setting given here, in these messages and as the origin a run-time error names: the command
    line's option (:func:`option_given`, ``--warmup 1000``) or the API's argument (:func:`argument_given`,
    ``warmup=1000``)."""
    import msgspec

    changes: dict[str, Any] = {}
    if seed is not None:
        from serq_ir.rules import seed_problem

        seed = seed if whole_value(seed) is None else whole_value(seed)  # (Decimal("7"): the seed 7)
        why = seed_problem(seed)
        if why:
            raise UsageError(f"{given('seed', str(seed))}: {why}")
        changes["seed"] = seed
    # the command line's types refuse these first (serq.options: HORIZON, WARMUP); a sweep's or another
    # caller's values are checked here, where they reach the program (a NaN horizon was written to the IR
    # as null, no horizon at all, and a NaN warmup slipped past "warmup < horizon")
    # (a value of another type, "10" or 2.5 arrivals, was a TypeError of the comparison or msgspec's
    # ValidationError of the IR; an int beyond the doubles an OverflowError)
    if horizon is not None:
        h = real(horizon)
        if h is None or not h > 0:
            raise UsageError(f"{given('horizon', _shown(horizon))}: is not a positive number of seconds, or inf")
        changes["horizon"] = "inf" if h == float("inf") else h
    if warmup is not None:
        w = real(warmup)
        if w is None or not 0 <= w < float("inf"):
            raise UsageError(f"{given('warmup', _shown(warmup))}: is not a finite number of seconds, at least 0")
        changes["warmup"] = w
    if arrivals is not None:
        count = whole_value(arrivals)  # (an int, numpy's, a whole Fraction or Decimal: Decimal("1000") was refused)
        if count is None or count < 1:
            raise UsageError(f"{given('arrivals', _shown(arrivals))}: must be a positive integer")
        arrivals = count
        from serq_ir.rules import arrivals_count_problem

        why = arrivals_count_problem(int(arrivals))  # (the one rule of a count of arrivals: below 2**53)
        if why:
            raise UsageError(f"{given('arrivals')}: {why}")
        changes["arrivals"] = int(arrivals)
    if not changes:
        return program
    # each setting given here came from its option: a run-time error it causes names the option (``--arrivals
    # 5: …``), not the run block's line the program has for it (serq_ir's RunSpans, serq_sim.errors.setting_error)
    from serq_ir.nodes import RunSpans

    spans = program.run.span
    origins = {} if spans is None else {k: getattr(spans, k) for k in spans.__struct_fields__}
    origins.update((k, given(k, _option_text(v))) for k, v in changes.items())
    from serq_ir.nodes import RunSettings

    # a setting given as its default is the default's own value, which the IR leaves out (msgspec compares a
    # default by identity): `--warmup 0` simulates the IR, and has the IR hash, of a program that gives none
    # (serq_frontend.link.written_defaults_left_out, the run block's `warmup 0;`)
    blank = RunSettings()
    changes = {k: getattr(blank, k) if type(v) is type(getattr(blank, k)) and v == getattr(blank, k) else v
               for k, v in changes.items()}
    run = msgspec.structs.replace(program.run, **changes, span=RunSpans(**origins))
    # a count or a window these leave that does not fit the program is the error the simulator's set-up
    # gives of it, by the one rule of the errors of run settings (serq_ir.rules.setting_message): headed by
    # the setting it concerns as given (an option, or pointed at in the run block), the other options after
    from serq_ir.rules import NEEDS_OPEN, arrivals_problem, open_advice, setting_message, window_problem

    values = {k: getattr(run, k) for k in ("horizon", "warmup", "seed", "arrivals")}
    if "arrivals" in changes and arrivals_problem(program.workload.arrive, run.arrivals):
        raise UserError(located(*setting_message(origins, values, ("arrivals",),
                                                NEEDS_OPEN + open_advice(program.workload.arrive)), base=name))
    why = window_problem(run.horizon, run.warmup) if "horizon" in changes or "warmup" in changes else None
    if why:
        raise UserError(located(*setting_message(origins, values, ("warmup", "horizon"), why), base=name))
    return msgspec.structs.replace(program, run=run)
