"""Click options shared by the commands that load a program."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from .numbers import NotANumber, digits_reason, number, too_many_digits, whole

if TYPE_CHECKING:
    from .loading import LoadOptions


def folder_ending(name: str) -> str | None:
    """The end of ``name`` that makes it name a folder, as the system reads it (``/``, or a last part ``.``:
    ``p.sq/``, ``p.sq/.``, ``p.sq/./``), or None: such a name never names a file, though pathlib spells it
    as the name before that end (``Path("p.sq/.")`` is ``p.sq``). A last part ``..`` is left to the system,
    which reads it as it is written (pathlib keeps it)."""
    seps = tuple({"/", os.sep, os.altsep} - {None})
    if name.endswith(seps):
        return name[-1]
    last = max(name.rfind(s) for s in seps)
    if name[last + 1:] == "." and last >= 0:
        return name[last] + "."
    return None


class Path(click.Path):
    """``click.Path`` that refuses an empty name (``-o ''``: no file; click takes it as a path, which then
    meant stdout, no dump or a traceback further on) and ``-`` (standard input or output to other tools:
    ``serq run p.sq -o -`` wrote the report to a new file named ``-``, status 0; ``./-`` names such a file):
    the type of every file or folder a serq command is given. A file's name that ends in ``/`` or ``/.``
    names a folder, as the system reads it (``cat p.sq/``, ``cat p.sq/.``: "Not a directory"), and is refused
    too (:func:`folder_ending`): pathlib, and so a loader, read ``p.sq/`` and ``p.sq/.`` as ``p.sq``, while
    ``os.stat`` refused them, so ``serq sweep p.sq p.sq/`` ran one program as two (the check that refuses
    ``p.sq ./p.sq`` could not stat it) and ``serq check p.sq/.`` said OK of a name ``serq run`` could not read."""

    def __init__(self, *args, records: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        #: a name that may be given as ``--records`` was: one that does not exist is told the files of the
        #: record tables written in its place, when they are there (:func:`record_tables`)
        self.records = records

    def convert(self, value, param, ctx):
        if isinstance(value, str | bytes) and not value:
            self.fail("an empty name names no file", param, ctx)
        if not self.dir_okay and isinstance(value, str) and (end := folder_ending(value)):
            self.fail(f"{value!r}: a name ending in {end} names a folder; a file is given here", param, ctx)
        if value in ("-", b"-") and not self.allow_dash:
            self.fail("'-' names no file: serq reads and writes files by name, never standard input or output "
                      "by '-' (./- names a file called -)", param, ctx)
        if self.exists and isinstance(value, str):
            unfound = _unfound(value, self.records)
            if unfound is not None:
                raise Unreadable(unfound)
        return super().convert(value, param, ctx)


class Unreadable(click.ClickException):
    """A file a command reads that cannot be read (:func:`_unfound`), found while the command line is parsed:
    ``error: MESSAGE``, status 1, as the error of an input every other command reads later (a click exception,
    not a usage error: what parses a command line without its files there, as a test of the docs' command
    lines does, passes over it as over click's own checks of a value)."""

    exit_code = 1


def _unfound(name: str, records: bool = False) -> str | None:
    """Why ``name``, which a command reads, cannot be read, in the words every command says of an input it
    cannot read (``serq run``'s program, a trace): ``NAME: cannot read: REASON``, the name as every message
    shows a file's (serq.errors.shown_path), a missing name that is not ASCII told the look-alike beside it
    (serq.errors.missing_file_note), and a missing records file (``records``) the tables written in its place
    (:func:`tables_written`); None when it is there. Raised as :class:`Unreadable`, status 1, as the rest:
    click's own check (``exists=True``) said ``Path 'x' does not exist``, a usage error of status 2, of a file
    ``serq run`` says it cannot read with status 1 (and ``does not exist`` of a loop of symbolic links, which
    does exist, and of a name too long for the system)."""
    try:
        os.stat(name)
        return None
    except (OSError, ValueError) as e:
        err = getattr(e, "errno", None)
        why = os.strerror(err) if err else str(e)  # (ValueError: a NUL in the name, which nothing names)
    from .errors import missing_file_note, shown_path

    note = ""
    if records and (told := tables_written(name)):
        note = f"; {told}"
    elif err is not None:
        import errno

        note = missing_file_note(name) if err == errno.ENOENT else ""
    return f"{shown_path(name)}: cannot read: {why}{note}"


def tables_written(name: str) -> str | None:
    """What a records file ``name`` that does not exist is told when the files of the record tables written in
    its place are there (:func:`record_tables`): ``records of several tables are written one file a table,
    named after it (r.cls.csv, r.request.csv); give one``; None when ``name`` exists or none is there. The
    one sentence of a missing SOURCE of ``serq plot`` and of ``serq_sweep.plot``'s records."""
    if os.path.lexists(name):
        return None
    tables = record_tables(name)
    if not tables:
        return None
    return f"records of several tables are written one file a table, named after it ({', '.join(tables)}); give one"


def record_tables(name: str) -> list[str]:
    """The files ``--records NAME`` writes when a program records several tables (``r.csv``: ``r.request.csv``,
    ``r.routed.csv``, …), as they are beside ``name``, sorted; ``[]`` when ``name`` ends in neither ``.csv`` nor
    ``.parquet`` or none is there."""
    from pathlib import Path as _Path

    p = _Path(name)
    if p.suffix not in (".csv", ".parquet") or not p.stem:
        return []
    import glob

    try:
        found = [f for f in p.parent.glob(f"{glob.escape(p.stem)}.*{p.suffix}")
                 if f.name[len(p.stem) + 1:-len(p.suffix)].isidentifier()]
    except OSError:
        return []
    return sorted(str(p.parent / f.name) if str(p.parent) != "." else f.name for f in found)


class Number(click.ParamType):
    """A number option (a float), written in serQ's number syntax (:mod:`serq.numbers`: ``float()`` read
    ``1_000`` as 1000 and ``١٢`` as 12): never NaN (``float('nan')`` parses, and then every comparison
    with it is false, so it slipped past later checks and came out as "warmup 0 is not below the horizon
    nan"), ``inf`` only when ``inf``, at least ``low`` (above it when ``above``). ``what`` says what the
    option takes, for the usage error that names the option: ``Invalid value for '--horizon': nan is not a
    positive number of seconds, or inf``. The type of every number option of the serq commands."""

    name = "number"

    def __init__(self, what: str, *, low: float | None = None, above: bool = False, inf: bool = False):
        self.what, self.low, self.above, self.inf = what, low, above, inf

    def convert(self, value, param, ctx):
        try:
            return self.parse(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)

    def parse(self, value) -> float:
        """``value`` (text, or a number as it is) as this option's float, else a ValueError whose message is
        the option's usage error after its name (``X is not WHAT``, ``'x' is not a number``): the check a
        Python API holds the same argument to (serq_sweep.metrics's ``duration``, ``serq metrics --duration``)."""
        if isinstance(value, float) and value == value and self._ok(value):
            return value
        if not isinstance(value, str):  # a default, or a caller's value: a number as it is
            try:
                x = float(value)
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"{value!r} is not a number") from None
        else:
            x = number(value, nan=True)  # (a NotANumber, a ValueError; NaN refused below, in the option's words)
        if not self._ok(x):
            shown = value if isinstance(value, str) and len(value) <= 40 else f"{x:g}"
            raise ValueError(f"{shown} is not {self.what}")
        return x

    def _ok(self, x: float) -> bool:
        if x != x or (x in (float("inf"), float("-inf")) and not (self.inf and x > 0)):
            return False
        return self.low is None or (x > self.low if self.above else x >= self.low)


class Integer(click.ParamType):
    """A whole-number option from ``low`` to ``high`` (``what`` as :class:`Number`'s), digits 0-9 after an
    optional ``-`` (:func:`serq.numbers.whole`; ``int()`` took ``1_000``, ``+5``, ``١٢`` and spaces)."""

    name = "integer"

    def __init__(self, what: str, *, low: int, high: int | None = None):
        self.what, self.low, self.high = what, low, high

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            x = value
        else:
            text = str(value)
            try:
                x = whole(text)
            except NotANumber as e:
                self.fail(str(e), param, ctx)
            except ValueError:
                # more digits than int() reads (sys.get_int_max_str_digits): said so, cut short (the whole
                # value was quoted as "'999…' is not a whole number", thousands of characters of it)
                self.fail(f"{text[:20]}… ({len(text)} characters) is not {self.what}: {digits_reason()}", param,
                          ctx)
        why = self.problem(x)
        if why is not None:
            self.fail(why, param, ctx)
        return x

    def problem(self, x: int) -> str | None:
        """Why the int ``x`` is not this option's value (``X is not WHAT``; one too long to write,
        :func:`serq.numbers.too_many_digits`, shown as ``an integer of N bits``), or None: the check of the
        command line's value, which the Python API of a sweep holds its counts to too
        (serq_sweep.core.run_limits: ``max_events``, ``max_samples``)."""
        from .numbers import shown

        long = too_many_digits(x)
        if long is not None:
            return f"{shown(x)} is not {self.what}: {long}"
        if x < self.low or (self.high is not None and x > self.high):
            return f"{x} is not {self.what}"
        return None


#: ``--horizon``: a run's end, positive (``inf``: until no event is left)
HORIZON = Number("a positive number of seconds, or inf", low=0.0, above=True, inf=True)
#: ``--warmup``: the start of the measured window
WARMUP = Number("a finite number of seconds, at least 0", low=0.0)
#: ``--max-wall`` and other bounds in seconds
SECONDS = Number("a positive, finite number of seconds", low=0.0, above=True)
#: ``--arrivals``: below 2**53, where a double tells whole numbers apart (serq_ir.rules.MAX_ARRIVALS)
ARRIVALS = Integer("a positive whole number of arrivals below 2**53", low=1, high=2**53 - 1)
#: ``--seed``: the streams are seeded from 64 bits (serq_ir.rules.seed_problem)
SEED = Integer("a seed, a whole number from 0 to 2**64 - 1", low=0, high=2**64 - 1)
#: ``--max-events`` (click's ``IntRange`` said "'1e400' is not a valid integer range" of a value that is no
#: whole number, as if a range were asked for)
EVENTS = Integer("a positive whole number of events", low=1)
#: ``--max-samples``
SAMPLES = Integer("a positive whole number of samples", low=1)


def set_def_options(f: Callable) -> Callable:
    """``--set NAME=value`` and ``--def NAME=expr``, with one help text wherever a command takes them."""
    f = click.option("--def", "defs", multiple=True, metavar="NAME=EXPR",
                     help="Give an expression definition's body (repeatable).")(f)
    return click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
                        help="Override a let constant (repeatable).")(f)


def load_options(f: Callable) -> Callable:
    """``FILE``, ``--set NAME=value`` and ``--def NAME=expr``."""
    return click.argument("file", type=Path(dir_okay=False))(set_def_options(f))


def run_options(f: Callable) -> Callable:
    """``--seed``, ``--horizon``, ``--warmup``, ``--arrivals``: override the program's run block."""
    f = click.option("--arrivals", type=ARRIVALS, default=None, metavar="N",
                     help="Exactly N arrivals, then drain (default: the run block's arrivals, else none: the "
                          "horizon ends the run; with N, a horizon that comes first is an error: "
                          "--horizon inf).")(f)
    f = click.option("--warmup", type=WARMUP, default=None, metavar="T",
                     help="Discard samples before T (default: the run block's warmup, else 0).")(f)
    f = click.option("--horizon", type=HORIZON, default=None, metavar="T",
                     help="End of the simulation (inf: when no event is left; default: the run block's "
                          "horizon).")(f)
    return click.option("--seed", type=SEED, default=None, metavar="N",
                        help="Seed of the random streams, 0 to 2**64 - 1 (default: the run block's seed, "
                             "else 1).")(f)


def to_load_options(sets: tuple[str, ...], defs: tuple[str, ...]) -> LoadOptions:
    from .loading import LoadOptions, parse_assignments, parse_sets  # (a command that loads no program
    # imports options for its path type only)

    return LoadOptions(sets=parse_sets(sets), defs=parse_assignments(defs, "--def"))
