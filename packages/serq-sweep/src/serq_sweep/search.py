"""Capacity search (``serq sweep ... --find 'FIGURE OP NUMBER' --over NAME LO:HI``): per point of the other
swept names, the largest (or the smallest) value of a monotone knob at which every condition holds.

A condition is checked on the mean of its figure across the seeds (all of them together: the condition is
their conjunction). The search evaluates both ends of the range, and they decide its direction: when the
condition holds at LO and fails at HI (it holds below some value and fails above it: an arrival rate) the
answer is the largest value that holds (outcome ``found``); when it fails at LO and holds at HI (it fails
below some value and holds above it: replicas, blocks, a budget) the smallest (``found_smallest``). Either
way the search bisects (each evaluation runs every seed, and the evaluations of every point run together on
the engine) until the bracket between the value that holds and the one that fails is at most the tolerance
wide (default (HI - LO) / 64; in the fewest halvings that make HI - LO so, :func:`halvings`), or, for a grid
LO:HI:STEP, until the two are neighbours on the grid, and answers with the end that holds. A figure with no
value (NaN) meets no condition. A condition that holds at both ends (``holds_everywhere``) or at neither
(``fails_everywhere``) is reported as such, with a note that the search knows of no crossing between the
ends: none, or an even number where the conditions are not monotone in the knob. A knob that is not
monotone, with ends that differ, gives one crossing of the several the curve may have: the one the
halvings meet. The outcomes (:data:`OUTCOMES`) are single words, one cell of
the printed table as of ``--out``'s: the table is read by whitespace too.
"""

from __future__ import annotations

import math
import operator
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from serq.errors import UsageError, UserError, clipped, knob_hint, printable_lines, shown_path
from serq.loading import def_texts, given_or_option
from serq.numbers import NotANumber, number, real, shown
from serq_ir.rules import show_number

from . import core
from .axes import (
    Axis,
    _number,
    def_axes,
    flag,
    named_values,
    output_path,
    parse_range,
    plain,
    points,
    program_files,
    seeds_given,
    set_axes,
    texts,
)
from .stats import mean

_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt, "==": operator.eq,
        "!=": operator.ne}
#: FIGURE OP NUMBER: the number is what follows the operator, read by serq.numbers (``[\d.]+`` took every
#: script's digits, and ``1.2.3`` matched, then failed float() with a traceback)
_COND = re.compile(r"^\s*([A-Za-z_][\w.\[\]]*)\s*(<=|>=|==|!=|<|>)\s*([^\s<>=!]\S*)\s*$")

#: the search's own columns, after the swept names and the knob (and before each condition's FIGURE:mean)
COLUMNS = ("outcome", "holds", "fails", "evaluations")

#: the outcomes of a search, the printed table's and ``--out``'s alike: no blank in any of them, so a table
#: split at whitespace has its header's columns ('found smallest' was two cells of one)
OUTCOMES = ("found", "found_smallest", "holds_everywhere", "fails_everywhere")
FOUND, FOUND_SMALLEST, HOLDS_EVERYWHERE, FAILS_EVERYWHERE = OUTCOMES

#: at most this many bisection steps (a float range halves to the tolerance long before)
MAX_STEPS = 60


#: FIGURE, then a run of comparison characters that is no OP, then something: the operator the user meant
_LOOSE = re.compile(r"^\s*[A-Za-z_][\w.\[\]]*\s*([<>=!≤≥≠]+)\s*(?:[^\s<>=!≤≥≠]|$)")
#: what a misspelt operator means: the order turned (=< =>), another language's (<> = ===), the symbols
_MEANT = {"=<": "<=", "=>": ">=", "<>": "!=", "=!": "!=", "=": "==", "===": "==", "!==": "!=", "≤": "<=",
          "≥": ">=", "≠": "!=", "<==": "<=", ">==": ">="}


def parse_condition(text: str, cli: bool = True) -> tuple[str, str, float]:
    """``FIGURE OP NUMBER`` as its three parts; a fault names the condition as it was given: ``--find 'T'``
    on the command line, ``conditions: 'T'`` to :func:`find` (``cli`` False), whose caller gave no --find and
    was told of one."""
    m = _COND.match(text)
    expected = "expected FIGURE OP NUMBER, OP one of <= < >= > == != (e.g. 'ttft.p99 <= 1')"
    said = f"{'--find' if cli else 'conditions:'} {clipped(text)!r}"
    if not m:
        loose = _LOOSE.match(text) if isinstance(text, str) else None
        if loose and loose.group(1) not in _OPS:
            op = loose.group(1)
            meant = f" (did you mean `{_MEANT[op]}`?)" if op in _MEANT else ""
            raise UsageError(f"{said}: `{clipped(op)}` is no operator{meant}; {expected}")
        raise UsageError(f"{said}: {expected}")
    try:
        return m.group(1), m.group(2), number(m.group(3))
    except NotANumber as e:
        raise UsageError(f"{said}: {e}; {expected}") from None


def whole_unit_pools(program: Any) -> set[int]:
    """The pools of ``program`` (by index) whose every hold takes a whole number of units, a constant, and
    which nothing else fills (no grow, load, growing run, block or spill into it): request slots, ``pool reqs
    { cap N; }`` held ``(1)``. A fractional cap of one admits what the whole cap below it does (``used + 1 <=
    2.5`` holds at used 0 and 1 only), so a capacity search bisecting through fractions of such a cap finds a
    fraction that says no more than the whole number under it. A hold's ``cache`` clause (vLLM's
    ``max_num_seqs`` slots held in the request's hold with its KV, lib/vllm.sq's ``hold reqs (1), kv (…) … }
    cache (…)``) keeps that: a cached prefix never blocks an admission (language.txt §3, "cached prefixes never
    block"), the allocations stay whole, and what it caches on such a pool is at most the hold's whole units,
    so whole entries fit under a cap of 2.5 as under 2. Only a ``cache`` or ``reuse`` written as a constant
    fraction (an entry, or the part of one a session consumes, of a fraction of a unit) takes the pool out; a
    computed length is taken as whole, as a count of tokens is. It took out every pool of a hold with a
    ``cache`` clause, so ``--over M`` of such a ``max_num_seqs`` had no hint where a pool of slots alone did."""
    from serq_ir import nodes as N
    from serq_sim.compile import walk

    def whole(e: Any) -> bool:
        return e is None or isinstance(e, N.Num) and isinstance(e.value, (int, float)) and float(e.value).is_integer()

    def whole_length(e: Any) -> bool:  # (a computed length is taken as whole: above)
        return not isinstance(e, N.Num) or whole(e)

    held: set[int] = set()
    other: set[int] = {i for i, pool in enumerate(program.pools) if pool.block is not None}
    for x in walk(program, presets=False):
        if isinstance(x, N.Hold):
            lengths = whole_length(x.cache) and whole_length(x.reuse)
            for hp in x.pools:
                (held if lengths and whole(hp.units) and whole(hp.reserve) else other).add(hp.pool.pool)
        elif isinstance(x, (N.Grow, N.Load)):
            other.add(x.pool.pool)
        elif isinstance(x, N.Run) and x.growing is not None:
            other.add(x.growing.pool)
        elif isinstance(x, N.Spill):
            other.add(x.tier.pool)
    return held - other


def halvings(lo: float, hi: float, tol: float | None) -> int:
    """How many times a bisection of ``[lo, hi]`` halves it to bring it to at most ``tol``: 6 by default
    (``tol`` None: (HI - LO) / 64), else the fewest ``n`` with ``(HI - LO) / 2**n <= tol``, the three read
    as written (their shortest decimal text), at most :data:`MAX_STEPS`. The width a bisection computes in
    floats wanders from the exact one by an ulp: compared with the tolerance at every step it took a seventh
    halving, another evaluation of every seed, for 0.1:0.7 (and for about four in ten ranges of decimals)
    whose default tolerance the sixth had reached."""
    if tol is None:
        return 6
    if not math.isfinite(tol):
        return 0
    from fractions import Fraction

    width, t = Fraction(repr(float(hi))) - Fraction(repr(float(lo))), Fraction(repr(float(tol)))
    n = 0
    while n < MAX_STEPS and width > t * 2**n:
        n += 1
    return n


class _Search:
    def __init__(self, index: int, params: dict[str, Any], lo: float, hi: float, grid: list[float] | None,
                 steps: int):
        self.index, self.params = index, params
        self.grid, self.steps = grid, steps
        self.lo, self.hi = (0, len(grid) - 1) if grid else (lo, hi)
        self.holds: Any = None  # the largest value (or grid index) seen to hold (up: the smallest)
        self.fails: Any = None  # the smallest seen to fail (up: the largest)
        self.up = False  # fails at LO and holds at HI: the smallest value that holds is sought
        self.evaluations = 0
        self.bisections = 0
        self.state = "start"
        self.means: dict[Any, dict[str, float]] = {}

    def value(self, x: Any) -> float:
        return self.grid[x] if self.grid else x

    def next(self) -> list[Any]:
        """The knob values (grid indices) to evaluate next; [] when done."""
        if self.state == "start":
            return [self.lo, self.hi]
        if self.state != "bisect":
            return []
        a, b = (self.fails, self.holds) if self.up else (self.holds, self.fails)  # the bracket, low end first
        if self.grid:
            if b - a <= 1:
                self.state = "done"
                return []
            return [(a + b) // 2]
        # (halves, not the sum: the midpoint of 1e308 and 1.5e308 is no inf; a bracket of neighbouring floats
        # has no midpoint: it was evaluated again, skipped as seen, and the search ended with the outcome
        # 'bisect')
        mid = a / 2 + b / 2
        if self.bisections >= self.steps or not a < mid < b:
            self.state = "done"
            return []
        self.bisections += 1
        return [mid]

    def record(self, x: Any, ok: bool) -> None:
        self.evaluations += 1
        if ok and (self.holds is None or (x < self.holds if self.up else x > self.holds)):
            self.holds = x
        if not ok and (self.fails is None or (x > self.fails if self.up else x < self.fails)):
            self.fails = x

    def settle(self) -> None:
        if self.state == "start":
            if self.fails is None:
                self.state = HOLDS_EVERYWHERE
            elif self.holds is None:
                self.state = FAILS_EVERYWHERE
            else:  # (the ends only are seen: fails at LO and holds at HI is the search upwards)
                self.up = self.holds > self.fails
                self.state = "bisect"


def everywhere_note(searches: list[_Search], name: str) -> str:
    """What a search whose conditions hold at both ends, or fail at both, reports (``searches``: those of
    one of the two outcomes, ``holds_everywhere`` or ``fails_everywhere``), said so that it is not read as a
    boundary. Having evaluated the two ends alone, the search knows of no crossing in the range: there is
    none, or an even number of them, where the conditions are not monotone in the knob (a tail latency
    against a spacing; two conditions that pull both ways). Of ``holds_everywhere`` it says too that its value
    is HI, the largest value of the range (docs/sweep.md), and the smallest value that holds is LO or below,
    which is the answer to a question of the fewest (engines, blocks); the search cannot tell which question
    was meant."""
    first = searches[0]
    lo, hi = (core.show_value(first.value(x)) for x in (first.lo, first.hi))
    labelled = [core.quoted_label(s.params) for s in searches if s.params]
    at = ""
    if labelled:
        more = f", and {len(labelled) - 3} more" if len(labelled) > 3 else ""
        at = f" at {'; '.join(labelled[:3])}{more}"
    between = (f"no crossing in the range, or an even number of them, where the conditions are not monotone in "
               f"{name}: the search evaluated the ends alone")
    if first.state == FAILS_EVERYWHERE:
        return (f"note: fails_everywhere{at}: the conditions fail at both ends, {name}={lo} and {name}={hi}: "
                f"{between}, so they may hold between them (a sweep of the range with --set shows it)")
    return (f"note: holds_everywhere{at}: the conditions hold at both ends, {name}={lo} and {name}={hi}: the value "
            f"reported is the top, {name}={hi}, the largest that holds; the smallest that holds is {name}={lo} or "
            f"below (for the fewest, give a LO at which the conditions fail); {between}, so they may fail "
            "between them")


def _is_real(v: Any) -> bool:
    from serq.numbers import is_real

    return is_real(v)


def _over(over: Any) -> tuple[str, str]:
    """``over`` of :func:`find`: the knob's name and its range, ``("Lambda", "2:12")``; anything else is a
    TypeError naming it (a str, ``over="Lambda"``, or a triple was "too many values to unpack", a range
    given as numbers ``("B", (1, 8))`` a usage error that showed the tuple)."""
    if (isinstance(over, (str, bytes, bytearray, Mapping)) or not isinstance(over, Sequence) or len(over) != 2
            or not all(isinstance(x, str) for x in over)):
        shown = type(over).__name__ if not isinstance(over, Sequence) else f"{over!r:.80}"
        raise TypeError(f'over must be the pair (NAME, RANGE) of two strs, over=("Lambda", "2:12") (RANGE LO:HI '
                        f"or LO:HI:STEP), not {shown}")
    return plain(over[0]), plain(over[1])  # (numpy's str_ as the str it holds)



def _beside(params: Mapping[str, Any], knob: str) -> str:
    """The other axes' values of a search (``, trace=week.csv, B=2``) after its knob's where a program's
    error is said: one search per point of them, and an error at N=1 named neither the trace replayed nor
    the value of a --set that made it fail."""
    return "".join(f", {k}={core.show_value(v)}" for k, v in params.items() if k != knob)


def find(program: str | Sequence[str], conditions: str | Sequence[str], over: tuple[str, str], *,
         sets: Mapping[str, Any] | None = None, defs: Mapping[str, Any] | None = None,
         zip: Sequence[Sequence[str]] = (), seeds: Any = (1,), tol: float | None = None,  # noqa: A002
         horizon: float | None = None,
         warmup: float | None = None, arrivals: int | None = None, max_wall: float | None = None,
         max_events: int | None = None, max_samples: int | None = None, workers: int | None = None,
         dask: Any = None, progress: bool | None = None, pm: Any = None,
         out: str | os.PathLike[str] | None = None, slo: Any = None,
         trace: Any = None) -> tuple[list[str], list[dict[str, Any]]]:
    """Run the search (see the module) and return its table's columns and rows: one per point of the
    other swept names, with the knob's value found, the bracket, the outcome, the number of evaluations,
    and each condition's figure mean at the value found.

    ``out``: also write the table there (``.csv`` or ``.parquet``, atomically), as ``serq sweep --find
    -o`` does: an output the write would refuse (a folder, a missing folder) is refused before the search,
    and one that is a file a point's run reads (its program, a library, its trace), by any path, before
    that point runs (:func:`serq.files.check_not_input`).

    ``trace``: a trace file, or a list of them, the runs replay instead of their workload's (``serq sweep
    --find … --trace FILE``): an axis ``trace``, one search per trace as per value of any other swept name.

    Its messages name what was given by its argument (``over=('B', '1:8')``, ``tol=0``, ``horizon=5``), as
    :func:`serq_sweep.sweep`'s and :func:`serq_sweep.compare`'s do; ``serq sweep --find`` names its options.

    ``out`` is this search's alone while it runs, as a sweep's table is (:func:`serq_sweep.api.table_held`):
    a sweep, a comparison or another search writing it now is refused before anything runs."""
    from serq.loading import argument_given

    from .api import table_held

    out = output_path(out, "out")
    if out is not None:  # (checked before the lock is taken beside it, as _find checks it, as serq sweep --find -o does)
        core.check_table(os.fspath(out), given=argument_given)
    with table_held(out, argument_given):
        return _find(program, conditions, over, sets=sets, defs=defs, zip=zip, seeds=seeds, tol=tol,
                     horizon=horizon, warmup=warmup, arrivals=arrivals, max_wall=max_wall, max_events=max_events,
                     max_samples=max_samples, workers=workers, dask=dask, progress=progress, pm=pm, out=out, slo=slo,
                     given=argument_given, trace=trace)


def _find(program: Any, conditions: Any, over: Any, *, sets: Any, defs: Any, zip: Any, seeds: Any,  # noqa: A002
          tol: Any, horizon: Any, warmup: Any, arrivals: Any, max_wall: Any, max_events: Any, workers: Any,
          dask: Any, progress: Any, pm: Any, out: Any, slo: Any, given: Any,
          trace: Any = None, max_samples: Any = None) -> tuple[list[str], list[dict[str, Any]]]:
    """:func:`find`, ``given`` naming a setting in its messages: the command line's option
    (:func:`serq.loading.option_given`, ``--over B 1:8``, ``--tol 0``, ``--horizon 5``) or the API's argument
    (:func:`serq.loading.argument_given`, ``over=('B', '1:8')``, ``tol=0``, ``horizon=5``)."""
    import serq_ir
    from serq.loading import option_given
    from serq_sim.tier_env import check_environment

    from .engines import check_engine
    from .engines import engine as make_engine
    from .figures import resolve

    cli = given is option_given
    files = program_files(program)  # (before the plugins are loaded: a wrong type is said at once)
    check_environment()  # (a value every run would refuse: said once, before any run)
    if not files:  # (find([], …) was an IndexError of files[0])
        raise UserError("no program to search")
    check_engine(workers, dask, pm, given)  # (before anything is compiled)
    sets, defs = named_values(sets, "sets"), named_values(defs, "defs")
    out, progress = output_path(out, "out"), flag(progress, "progress", none=True)
    pm = core._plugin_manager(pm)
    conds = [parse_condition(c, cli) for c in texts(conditions, "conditions", "condition")]
    if not conds:
        raise UsageError(f"{'--find' if cli else 'conditions'}: no condition")
    name, spec = _over(over)

    def over_said(rng: str | None = spec, bare: bool = False) -> str:
        """The knob and its range as given: ``--over B 1:8`` (``--over B`` bare), ``over=('B', '1:8')``."""
        if cli:
            return f"--over {clipped(name)}" + ("" if bare else f" {clipped(rng or '')}")
        return f"over=({clipped(name)!r}, {clipped(rng or '')!r})"

    if not name.strip():  # (it was said as "--over : the program has no `let `")
        raise UsageError(f"{'--over ' if cli else 'over=('}{name!r}{'' if cli else ', …)'}: "
                         f"{'a blank' if name else 'an empty'} name names no let; the knob is a let constant of "
                         "the program")
    if (sets and name in sets) or (defs and name in defs):
        raise UsageError(f"{over_said(bare=True)}: {clipped(name)} is also given with "
                         f"{'--set/--def' if cli else 'sets/defs'}")
    if name in COLUMNS:
        raise UsageError(f"{over_said(bare=True)}: the name of a column of the search's table ({', '.join(COLUMNS)})")
    if trace is not None and name == "trace":  # (the knob's column and the axis --trace makes: two of one name)
        raise UsageError(f"{over_said(bare=True)}: the name of the axis {given('trace')} makes, a column of the "
                         "search's table; give the knob another name")
    if ":" not in spec:
        raise UsageError(f"{over_said()}: a range LO:HI or LO:HI:STEP")
    parts = spec.split(":")
    if len(parts) == 3:
        grid = parse_range(spec, over_said(bare=True))
        lo, hi = grid[0], grid[-1]
        if len(grid) < 2:  # (the default tolerance of such a 'range' was 0: "--tol 0: must be positive")
            raise UsageError(f"{over_said()}: the grid has one value, {show_number(grid[0])}; a "
                             "search needs two (a step below HI - LO)")
        if tol is not None:  # the grid's neighbours end the search; a tolerance was ignored
            raise UsageError(f"{over_said()}: {given('tol')} goes with a range LO:HI (a grid's search ends at "
                            "neighbours on the grid)")
    elif len(parts) == 2:  # a bisection between LO and HI: no grid, however many units apart they are (it
        grid = None  # was read as a grid of step 1, and LO:HI more than a million apart refused as too many values)
        lo, hi = _number(parts[0], over_said(bare=True)), _number(parts[1], over_said(bare=True))
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise UsageError(f"{over_said()}: LO must be below HI, both finite")
    else:
        raise UsageError(f"{over_said()}: a range LO:HI or LO:HI:STEP")
    if tol is not None:
        if not _is_real(tol):  # ('>' not supported between 'str' and 'int'; True was a tolerance of 1)
            raise TypeError(f"tol must be a positive number, not {type(tol).__name__}")
        # a float; an int beyond the doubles (a float() of it, or a message of its digits, was an OverflowError or
        # a ValueError) is wider than any range, or below 0 (serq.numbers.real, shown)
        t = real(tol)
        if t is None:
            t = math.inf if tol > 0 else -math.inf
        if not t > 0:
            raise UsageError(f"{given('tol', shown(tol) if real(tol) is None else format(t, 'g'))}: must be positive")
        tol = t
    steps = MAX_STEPS if grid else halvings(lo, hi, tol)
    seed_list = seeds_given(seeds, given)
    if out is not None:
        from serq.files import check_not_input

        out = os.fspath(out)
        core.check_table(out, given=given)  # (the files the runs read: before each point runs, below)
    read: set[str] = set()  # what the runs read: never written (serq sweep's and serq compare's -o refuse it)
    axes: list[Axis] = []
    if len(files) > 1:
        core.program_names(files)
        axes.append(Axis("program", "program", tuple(files)))
    traces_given = core.trace_files(trace, given)
    swept = set_axes(sets, given) + def_axes(defs, given)
    # an axis as in a sweep: one search per trace
    axes += core.trace_axis(traces_given, swept, given, "the search's table") + swept
    # (as a sweep's: a name that is a column of the table wrote over it, or made two columns)
    core.swept_once(axes, COLUMNS, "the search's table", given_or_option(given))
    # (a --zip group moves together here as in a sweep: it was dropped, a grid.) Each evaluation runs every
    # seed of every point at once, so more than a sweep's most runs is refused before the grid is made (a
    # million points times two seeds was searched: tasks held by the million, 700 MB before the first ran)
    others = points(axes, zip, seeds=len(seed_list), forms=core.definition_forms(pm, files, axes), given=given)
    overrides = {"horizon": horizon, "warmup": warmup, "arrivals": arrivals}
    limits = core.run_limits(max_wall=max_wall, max_events=max_events, max_samples=max_samples, slo=slo)
    core.load_traces(traces_given)  # (once, before any point compiles: a malformed trace is said once)
    searches = [_Search(i, p, lo, hi, grid, steps) for i, p in enumerate(others)]
    figures: list[str] | None = None
    # a knob that must be a whole number (a count: fifo(c), a family's size) meets a bisection's midpoints:
    # a program's error at a fraction between whole ends says the grid to give
    whole = (f"; a knob of whole numbers is searched on a grid, "
             f"{over_said(f'{core.show_value(lo)}:{core.show_value(hi)}:1')}"
             if grid is None and float(lo).is_integer() and float(hi).is_integer() else "")
    probes: list[core.Point] = []
    # per program, the pools' caps at LO and the pools of whole units: a fraction of the knob that makes one
    # of those caps a fraction is said once, after the search (fractional_cap), as a fifo count's error is
    caps_lo: dict[str, tuple[list[Any], set[int]]] = {}
    fractional_cap: str | None = None
    traces: dict[str, Any] = {}  # the digests of the traces the runs replay (core.run_hash), each read once
    compiled: set[str] = set()  # what the compiles wrote on stderr (a warning of the program): each text once
    clauses: set[str] = set()  # the traces the programs' own clauses name, each read once (core.load_program_trace)
    # the knob is a let of every program, said before the search: its values reach the programs as --set,
    # whose error ("--set B: the program has no `let B`") named a flag the command line did not give
    for file in files:
        first = next((p for p in others if p.get("program", files[0]) == file), others[0])
        replayed = first["trace"] if traces_given else None
        program_, _ = core.compile_point(pm, file, {a.name: first[a.name] for a in axes if a.kind == "set"},
                                         {a.name: first[a.name] for a in axes if a.kind == "def"}, overrides, given,
                                         replayed, said=compiled)
        core.check_replaceable(program_, replayed, given)
        core.load_program_trace(program_, replayed, clauses)  # (once a trace, before the search)
        core.check_slo_program(program_, file, limits, given)
        if name not in {c.name for c in program_.constants}:
            defined = _a_definition(pm, file, first, axes, name, overrides, given, replayed, compiled, cli)
            raise UserError(f"{shown_path(file)}: {over_said(bare=True)}: the program has no `let {clipped(name)}`"
                            + (defined or f"{_knob_hint(pm, file, name, [c.name for c in program_.constants], given)} "
                               f"(the knob {'--find' if cli else 'find'} searches is a let)"))
        # the programs the search runs first, the knob at its two ends (LO, and HI or the grid's last value),
        # for the figures their runs have: a figure the knob brings (a family's member, stages.svc[7] of `stage
        # svc[c]` searched over c 3:12:1) is one of the runs' at HI though the program at LO has none (it was
        # refused as no figure); check_figures runs the one at HI only for a name LO's does not resolve
        for end, value in enumerate((searches[0].value(searches[0].lo), searches[0].value(searches[0].hi))):
            try:
                program_, _ = core.compile_point(pm, file,
                                                 {**{a.name: first[a.name] for a in axes if a.kind == "set"},
                                                  name: value},
                                                 {a.name: first[a.name] for a in axes if a.kind == "def"},
                                                 overrides, given, replayed, said=compiled)
            except Exception as e:  # (a program's error at an end, said where the search would say it)
                if not getattr(e, "serq_user_error", False) or isinstance(e, UsageError):
                    raise
                raise UserError(f"{e}\n(at {name}={core.show_value(value)} of the capacity search"
                                f"{_beside(first, name)})") from None
            core.refuse_no_end(program_, file, limits, given)
            probes.append(core.Point(len(probes), dict(first), file, serq_ir.encode(program_),
                                     core.run_hash(program_, traces, pm, replayed), trace=replayed,
                                     trace_digest=core.replayed_digest(program_, traces, replayed),
                                     texts=def_texts({a.name: first[a.name] for a in axes if a.kind == "def"},
                                                     given)))
            if grid is None and end == 0:  # (the caps the knob sets are those that differ from these at a value)
                caps_lo[file] = ([p.cap if p.caps is None else p.caps for p in program_.pools],
                                 whole_unit_pools(program_))
    # a condition's figure no run has (a typo) is refused before the search, as sweep --show's
    core.check_figures(core.Plan([], probes, seed_list, limits, pm), [f for f, _, _ in conds], given("find"))
    judged: list[dict[str, Any]] = []  # every run a condition was judged on (cut_short: the partial ones)
    thin: list[str] = []  # the means of a condition's figure over fewer runs than were judged (some had no value)
    valued: set[str] = set()  # the conditions' figures some run of the search gave a value
    # the values evaluated at which no run gave a condition's figure a value (by figure): failed for want of one
    bare: list[tuple[str, str]] = []
    evaluated: list[dict[str, Any]] = []  # every run of every point evaluated, as a table's rows (serq_sweep.alike)
    with make_engine(workers, dask, pm, given) as eng:
        while True:
            pending = [(s, x) for s in searches for x in s.next() if x not in s.means]
            if not pending:
                break
            plan_points, owners = [], []
            for s, x in pending:
                params = dict(s.params)
                file = params.pop("program", files[0])
                sv = {a.name: params[a.name] for a in axes if a.kind == "set"}
                sv[name] = s.value(x)
                dv = {a.name: params[a.name] for a in axes if a.kind == "def"}
                replayed = params.get("trace") if traces_given else None
                try:
                    program_, inputs = core.compile_point(pm, file, sv, dv, overrides, given, replayed,
                                                          said=compiled)
                except Exception as e:  # (a program's error at a value of the search: it said no value)
                    if not getattr(e, "serq_user_error", False) or isinstance(e, UsageError):
                        raise
                    hint = whole if not float(s.value(x)).is_integer() else ""
                    raise UserError(f"{e}\n(at {name}={core.show_value(s.value(x))} of the capacity search"
                                    f"{_beside(s.params, name)}{hint})") from None
                core.refuse_no_end(program_, file, limits, given)
                if fractional_cap is None and file in caps_lo:
                    fractional_cap = _fractional_cap(program_, *caps_lo[file], name, s.value(x), whole,
                                                     over_said(bare=True))
                read.update(inputs)
                plan_points.append(core.Point(len(plan_points), {**s.params, name: s.value(x)}, file,
                                              serq_ir.encode(program_), core.run_hash(program_, traces, pm, replayed),
                                              inputs, trace=replayed,
                                              trace_digest=core.replayed_digest(program_, traces, replayed),
                                              texts=def_texts(dv, given)))
                owners.append((s, x))
            if out is not None:
                check_not_input(out, sorted(read))
            plan = core.Plan([], plan_points, seed_list, limits, pm)
            done, complete = core.execute(plan, eng, progress=progress, desc="find")
            if not complete:
                raise KeyboardInterrupt
            if figures is None:
                # the figures of every run of the first evaluations (both ends of every search): a figure the
                # knob brings at HI alone (a family's member) is theirs (the run at LO's were, and such a
                # condition was refused as no figure after its first evaluations)
                cols = dict.fromkeys(f for r in done.values() if r["status"] != "error" for f in r["figures"])
                figures = [resolve(f, list(cols)) for f, _, _ in conds] if cols else None
            for p, (s, x) in zip_(plan_points, owners):
                results = [done[plan.key(p, seed)] for seed in seed_list]
                bad = [r for r in results if r["status"] == "error"]
                if bad:
                    seed = seed_list[results.index(bad[0])]
                    notes = "".join(f"{n}\n" for n in core.point_notes(axes, s.params, given))
                    raise UserError(f"{bad[0]['message']}\n{notes}(at {name}={show_number(s.value(x))} of the "
                                    f"capacity search{_beside(s.params, name)}, seed {seed})")
                judged += results
                place = len(evaluated) // len(seed_list)  # (each point evaluated once, under every seed)
                evaluated += [{**r["figures"], "point": place, "status": r["status"]} for r in results]
                means = {}
                for f in figures:
                    vals = [r["figures"].get(f) for r in results]
                    vals = [float(v) for v in vals if isinstance(v, (int, float)) and math.isfinite(v)]
                    means[f] = mean(vals)
                    if 0 < len(vals) < len(results):
                        thin.append(f"{f} at {p.label} over {len(vals)} of {len(results)} runs")
                    elif not vals and results:
                        bare.append((f, f"{f} at {p.label} ({len(results)} {'run' if len(results) == 1 else 'runs'})"))
                    if vals:
                        valued.add(f)
                s.means[x] = means
                # a figure no run gave a value (an observe with no samples) meets no condition: `!=` held on
                # NaN, so a search whose runs had no samples at all ended in 'holds_everywhere'
                ok = all(not math.isnan(means[f]) and _OPS[op](means[f], bound)
                         for f, (_, op, bound) in zip_(figures, conds))
                s.record(x, ok)
            for s in searches:
                s.settle()
    if fractional_cap is not None:
        core.say(printable_lines(fractional_cap))
    if thin:  # (said, as --show says `(n=2)` after such a mean: a run without a value is no run of the mean)
        more = f", and {len(thin) - 3} more" if len(thin) > 3 else ""
        core.say(printable_lines(f"warning: {given('find')}: a condition's figure had no value in some runs (no sample "
                             "of it: an observe that took none, a request metric of a run that completed no request "
                             f"after the warm-up), and its mean was taken over the others': {'; '.join(thin[:3])}"
                             f"{more}"))
    bare_valued = [said for f, said in bare if f in valued]  # (a figure no run gave is said below)
    if bare_valued:  # (a mean of no value meets no condition: the value failed for want of one, not on one)
        more = f", and {len(bare_valued) - 3} more" if len(bare_valued) > 3 else ""
        core.say(printable_lines(f"warning: {given('find')}: a condition's figure had no value in any run at some "
                             "values evaluated (no sample of it: an observe that took none, a request metric "
                             "of a run that completed no request after the warm-up), so its conditions failed "
                             f"there for want of one, not on one: {'; '.join(bare_valued[:3])}{more}"))
    empty = [f for f in dict.fromkeys(figures or []) if f not in valued]
    if empty and judged:  # (its conditions failed for want of a value, not on one: fails_everywhere of a figure a
        # fifo stage never gives, a step stage's iterations, said only that the ends failed)
        core.say(printable_lines(f"warning: {given('find')}: no run of the search gave a value of "
                             f"{' or '.join(empty)} (no sample of it, or a figure the program gives no number, as "
                             "a step stage's figures of a fifo stage), so every condition on it failed for want "
                             "of one at every value evaluated"))
    warning = core.cut_short(judged, "the conditions of --find were judged")
    if warning is not None:  # (said, not refused: a bound is what the user gave; the figures are what ran)
        core.say(printable_lines(warning))
    from .alike import seeds_alike

    # every seed of every point evaluated ran the same run: the conditions were judged on means of no spread
    columns = ["point", "status", "key", *dict.fromkeys(f for r in evaluated for f in r if f not in ("point", "status"))]
    alike = seeds_alike(evaluated, columns, "the conditions of --find were judged on means whose CIs across them "
                        "are 0" if cli else "the conditions were judged on means whose CIs across them are 0")
    if alike is not None:
        core.say(printable_lines(alike))
    # (last: read beside the table it explains)
    for outcome in (HOLDS_EVERYWHERE, FAILS_EVERYWHERE):
        everywhere = [s for s in searches if s.state == outcome]
        if everywhere:
            core.say(printable_lines(everywhere_note(everywhere, name)))
    out_cols = [a.name for a in axes] + [name, *COLUMNS]
    figures = list(dict.fromkeys(figures or []))  # two conditions on one figure: one column (two of one name
    out_cols += [f"{f}:mean" for f in figures]  # were a Parquet writer's traceback after the whole search)
    shape = core.Plan(axes, [], seed_list, limits, pm)
    # the knob's columns (the knob, holds, fails) by the rule of a --set name's: integer columns when every
    # value the search can take is a whole number (a grid LO:HI:STEP of whole numbers); NaN (no value)
    # stays NaN. They were floats, written 2.0 where the printed table showed 2
    knob_ints = grid is not None and all(float(v).is_integer() and abs(v) < 2.0 ** 53 for v in grid)

    def knob(v: Any) -> Any:
        return math.nan if v is None else int(v) if knob_ints else v

    rows = []
    for s in searches:
        found = knob(s.value(s.holds) if s.holds is not None else None)
        # the swept names as every table gives them (a whole-numbered --set an integer column, as the sweep's)
        row = {**shape.shown(s), name: found,  # type: ignore[arg-type]
               "outcome": (FOUND_SMALLEST if s.up else FOUND) if s.state == "done" else s.state,
               "holds": found, "fails": knob(s.value(s.fails) if s.fails is not None else None),
               "evaluations": s.evaluations}
        at = s.means.get(s.holds, {})
        for f in figures:
            row[f"{f}:mean"] = at.get(f, math.nan)
        rows.append(row)
    if out is not None:
        from serq import signals
        from serq.files import write_atomic

        with signals.deferred():  # a second signal cannot lose what the search found
            write_atomic(out, core.encode_table(out_cols, rows, core.table_format(out),
                                                ints=[name, "holds", "fails"] if knob_ints else ()),
                         inputs=sorted(read))
    return out_cols, rows


zip_ = zip


def _fraction(pool: Any, i: int, cap: float, held: set[int]) -> bool:
    """Whether ``cap``, pool ``i``'s (or one member's), is a fraction of what the pool allocates: of its
    blocks, or of the whole units its holds take (:func:`_fractional_cap`)."""
    block = pool.block
    if isinstance(block, (int, float)) and math.isfinite(block) and block > 0:
        blocks = cap / block
        return blocks - math.floor(blocks + 1e-9) > 1e-9
    return i in held and not float(cap).is_integer()


def _fractional_cap(program: Any, lo_caps: list[Any], held: set[int], name: str, value: float,
                    whole: str, said: str) -> str | None:
    """The warning that the knob ``name`` at ``value`` made the cap of a pool a fraction of what the pool
    allocates, or None; ``said`` the knob as given (``--over B``, ``over=('B', '1:8')``). A pool of whole units
    (:func:`whole_unit_pools`) admits at a cap of 2.5 what it does at 2; a pool of ``block b`` allocates,
    reserves and caches whole blocks only (an amount rounded up to blocks, a cached prefix down), so every
    amount its cap is compared with is a whole number of blocks and a cap of 782.8125 blocks admits what 782
    do. A value the search finds there says no more than the whole one below it."""
    grid = whole or "; a knob of whole numbers is searched on a grid"
    for i, pool in enumerate(program.pools):
        # (a family whose members' caps differ, `caps`: each member's, labelled as the report labels it)
        members = [(None, pool.cap, lo_caps[i])] if pool.caps is None else [
            (j, c, lo_caps[i][j] if isinstance(lo_caps[i], list) and j < len(lo_caps[i]) else lo_caps[i])
            for j, c in enumerate(pool.caps)]
        found = next((m for m in members if isinstance(m[1], (int, float)) and math.isfinite(m[1]) and m[1] != m[2]
                      and _fraction(pool, i, m[1], held)), None)
        if found is None:
            continue
        j, cap, _ = found
        label = pool.name if not pool.array else f"{pool.name}[{'…' if j is None else j}]"
        block = pool.block
        if isinstance(block, (int, float)) and math.isfinite(block) and block > 0:
            blocks = cap / block
            below = math.floor(blocks + 1e-9)  # (the pool's own tolerance forgives a quotient's rounding error)
            if blocks - below > 1e-9:
                return (f"warning: {said}: at {name}={core.show_value(value)} the cap of pool {label} is "
                        f"{core.show_value(cap)}, {core.show_value(blocks)} blocks of {core.show_value(block)}, "
                        f"and it allocates whole blocks, so it admits what a cap of {below} blocks "
                        f"({core.show_value(below * block)}) does: a value found between two caps of whole blocks "
                        f"says no more than the whole blocks below it{grid}")
        elif i in held and not float(cap).is_integer():
            return (f"warning: {said}: at {name}={core.show_value(value)} the cap of pool {label} is "
                    f"{core.show_value(cap)}, and its holds take whole units, so it admits what a cap of "
                    f"{core.show_value(math.floor(cap))} does: a value found between two whole caps says no more "
                    f"than the whole one below it{grid}")
    return None


def _knob_hint(pm: Any, file: str, name: str, lets: list[str], given: Any = None) -> str:
    """The did-you-mean of a knob ``name`` that is no `let` of ``file`` (whose lets are ``lets``): the closest of
    its lets and, for a source program, its expression definitions, a definition said to be one
    (serq.errors.knob_hint: ``--over rte`` of a program of `let lam` and `def rate()` is `rate`, given with
    ``--def rate``; ``given`` names the flag as a message does)."""
    definitions: list[str] = []
    if str(file).endswith(".sq"):
        try:
            from serq_frontend import knob_names

            definitions = knob_names(file, pm=pm)[1]
        except ImportError:  # (no frontend: an IR file's program has no definitions)
            pass
        except Exception as e:
            if not getattr(e, "serq_user_error", False):
                raise
    return knob_hint(name, lets, definitions, "let", given)


def _a_definition(pm: Any, file: str, first: Mapping[str, Any], axes: Sequence[Axis], name: str, overrides: Any,
                  given: Any, replayed: Any, said: set[str], cli: bool) -> str:
    """For a knob ``name`` that is no `let` of ``file``: when it is an expression definition of the program
    (the program takes a body for it, as ``--def`` gives one: `def rate() = …` of
    examples/single-turn/vllm_bursts.sq), what the search takes instead, in the words of ``--set`` of a
    definition (``; `rate` is an expression definition: …``); else ``""``. The search's values reach the program
    as ``--set``, a number for a `let`; a definition's body is no number to bisect."""
    try:
        core.compile_point(pm, file, {a.name: first[a.name] for a in axes if a.kind == "set"},
                           {**{a.name: first[a.name] for a in axes if a.kind == "def"}, name: "1"}, overrides,
                           given, replayed, said=set(said))
    except Exception as e:
        if getattr(e, "serq_user_error", False):
            return ""  # (no definition of that name, or none that takes this body: the plain message)
        raise
    shown_ = clipped(name)
    set_word, def_word = (f"--set {shown_}", f"--def {shown_}") if cli else (f"sets[{shown_!r}]", f"defs[{shown_!r}]")
    over_word = "--over" if cli else "over"
    return (f"; `{shown_}` is an expression definition: {over_word} searches a `let`, its values given to the "
            f"program as {set_word} gives one; {def_word} gives a definition's body, one or several (an axis of "
            f"the search), but no range of bodies is searched: to search it, make its body read a `let` "
            f"(`let r = 1;` and `r` in the body) and search {'--over r' if cli else 'over=(' + repr('r') + ', …)'}")


def find_cli(pm, files, args, find_, over, tol, *, workers, dask, progress, out) -> None:
    import sys

    from serq import signals

    seeds = args.pop("seeds")
    if args.get("max_events") is None:
        args.pop("max_events", None)
    try:
        from serq.loading import option_given

        kw = {"zip": (), "horizon": None, "warmup": None, "arrivals": None, "max_wall": None, "max_events": None,
              "max_samples": None, "slo": None, "sets": None, "defs": None, "trace": None, **args}
        columns, rows = _find(files, list(find_), tuple(over), seeds=seeds, tol=tol, workers=workers, dask=dask,
                              progress=progress, pm=pm, out=out, given=option_given, **kw)
    except KeyboardInterrupt:
        sys.exit(signals.interrupted())
    from serq.layout import align

    from .cli import _fmt
    from .core import written_value

    with signals.deferred():
        search = columns[: columns.index("evaluations") + 1]
        # the swept names' columns, then the knob's, then the outcome, the bracket and the evaluations: the
        # values of the names and of the knob (found, holds, fails) as --out writes them, exactly (six
        # digits showed a bracket narrower than that as [1.41421, 1.41421], and a float knob's 2.0 was 2)
        exact = set(search[: len(search) - 5]) | {search[-5], "holds", "fails"}
        # then each condition's figure mean at the value found (FIGURE:mean), as --out has them, six digits as
        # --show prints a mean: the table said where the conditions held, and not how close they came there
        shown = columns
        lines = [shown]
        for r in rows:
            lines.append([written_value(r[c]) if c in exact else _fmt(r[c]) for c in shown])
        # as wide on the screen as the widest cell (a name of wide or combining characters included)
        sys.stdout.write("".join(line + "\n" for line in align(lines, left=0)))
        sys.stdout.flush()
