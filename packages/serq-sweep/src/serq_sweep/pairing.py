"""Paired comparisons: two or more arms (programs, or the values of one swept name) run under the same
seeds, and for every figure the difference of each arm from the first, seed by seed.

Per figure: the arms' means over the seeds, the mean difference ``B - A``, its paired 95 % half-width
(Student t over the per-seed differences), the half-width the same runs would give unpaired (Welch, as if
the arms had independent seeds), and the variance reduction pairing brings, ``1 - var(B - A) / (var(A) +
var(B))``: near 1 when the arms see the same workload under one seed (common random numbers), near 0 when
their noise is independent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from serq.errors import UsageError, printable

from . import core
from .core import show_value
from .stats import paired

#: ``n`` the seeds where both arms have a finite value (the pairs ``diff`` and the CIs are over), ``n_a`` and
#: ``n_b`` those where each arm has one (what its mean ``a``, ``b`` is over)
COLUMNS = ("arm", "base", "figure", "n", "a", "b", "diff", "ci_paired", "ci_unpaired", "variance_reduction",
           "n_a", "n_b")


def arms_plan(files: Sequence[str], *, sets: Mapping[str, Any] | None = None, defs: Mapping[str, Any] | None = None,
              seeds: Any = "1..10", pm: Any = None, **kw: Any) -> core.Plan:
    """The plan of a comparison: two or more files, or one file and one swept name of two or more values;
    nothing else swept (a name given one value, ``--set N=4``, is a setting of every arm, not an axis)."""
    from serq.loading import given_or_option, option_given

    given = given_or_option(kw.get("given"))

    def arms(shape: core.PlanShape) -> None:
        # before any point is compiled (core.plan's shape): a grid of 100 x 100 values compiled its 10 000
        # points, 20 s, to be told it was no comparison; one seed, likewise
        if len(_arms(shape)) != 1 or len(shape.points) < 2:
            raise UsageError(_not_arms(shape, given is option_given))
        if len(shape.seeds) < 2:
            cli = given is option_given
            who = "serq compare" if cli else "compare()"  # (the API's caller ran no serq compare)
            if _draws_nothing(files, shape, pm, given):
                raise UsageError(_one_exact_run(files, shape, who, cli))
            raise UsageError(f"{who} needs two or more seeds ({given('seeds', '1..10')}) for its CIs")

    return core.plan(files, sets=sets, defs=defs, seeds=seeds, pm=pm, repeat=True, shape=arms, **kw)  # A/A: x=0,0


#: the most arms compiled to tell whether any draws a random number, for the refusal of one seed (a comparison of
#: more is refused without looking: its compiles cost more than the words they choose)
MAX_ARMS_PROBED = 16


def _draws_nothing(files: Sequence[str], shape: core.PlanShape, pm: Any, given: Any) -> bool:
    """Whether no arm of ``shape`` draws a random number, so that every seed runs the same run: no draw
    (``~exp(…)``) anywhere in its IR, no Poisson arrivals, no trace sampled (a trace clause not ``ordered``).
    Each arm is compiled, its warnings unsaid; False at the first that draws, or that does not compile (its
    error is said when the seeds are given), and for more than :data:`MAX_ARMS_PROBED` arms."""
    import contextlib
    import io

    import serq_ir
    from serq.loading import LoadOptions, load_program

    if len(shape.points) > MAX_ARMS_PROBED:
        return False
    from .axes import program_files

    paths = program_files(files)
    pm = core._plugin_manager(pm)
    by_label = dict(zip(shape.axes[0].values, paths)) if len(paths) > 1 else {}
    for params in shape.points:
        file = by_label[params["program"]] if by_label else paths[0]
        s = {a.name: params[a.name] for a in shape.axes if a.kind == "set"}
        d = {a.name: params[a.name] for a in shape.axes if a.kind == "def"}
        try:
            with contextlib.redirect_stderr(io.StringIO()), core._unstored(bool(s or d)):
                program = load_program(pm, file, LoadOptions(sets=s, defs=d, given=given))
        except Exception:  # noqa: BLE001 - an arm that does not compile: the seeds' refusal, not its error
            return False
        workload = program.workload
        if isinstance(workload.arrive, serq_ir.nodes.Poisson) or (
                workload.trace is not None and not workload.trace.ordered) or _holds_draw(program):
            return False
    return True


def _holds_draw(node: Any) -> bool:
    """Whether the IR ``node`` holds a draw anywhere (a walk with a stack: an IR may nest deeply)."""
    import msgspec
    import serq_ir

    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, serq_ir.nodes.Draw):
            return True
        if isinstance(x, msgspec.Struct):
            stack.extend(getattr(x, f) for f in x.__struct_fields__)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    return False


def _one_exact_run(files: Sequence[str], shape: core.PlanShape, who: str, cli: bool) -> str:
    """The refusal of one seed for arms none of which draws a random number, with what works instead: a sweep
    of the same arms under the one seed."""
    import shlex

    from .axes import program_files

    axis = _arms(shape)[0]
    if cli:
        shown = ",".join(show_value(v) for v in axis.values)
        how = "serq sweep " + " ".join(shlex.quote(f) for f in program_files(files))
        if axis.kind != "program":
            how += f" --{axis.kind} " + shlex.quote(f"{axis.name}={shown}")
        how = f"`{how} --seeds 1`"
    else:
        how = "sweep() of the same arms with seeds=[1]"
    return (f"{who} needs two or more seeds for its CIs, and no arm here draws a random number (no draw, no Poisson "
            f"arrivals, no trace sampled): every seed runs the same run, so one seed's figures are exact and there "
            f"are no CIs to give; {how} compares the arms' figures")


def _not_arms(plan: core.Plan | core.PlanShape, cli: bool = True) -> str:
    """Why ``plan`` is no comparison, in what was given: one value of a name is a setting, not arms
    (``--set x=0.5`` said "swept here: nothing"); several names of several values make a grid. ``cli``: in the
    command's options (``--set x=0.5``), else in :func:`compare`'s arguments (``sets={'x': 0.5}``), the
    arguments its caller gave."""
    if cli:
        head = ("serq compare compares two or more programs, or one program under two or more values of one --set "
                "or --def name")
        files = "FILEs"
    else:
        head = "compare() compares two or more programs, or one program under two or more values of one name of sets or defs"
        files = "programs"

    def named(a: Any, value: str | None = None) -> str:
        """Axis ``a`` (a name, with one of its values) as given: ``--set x=0.5``, ``sets={'x': 0.5}``."""
        if cli:
            return f"--{a.kind} {a.name}" + ("" if value is None else f"={value}")
        return f"{a.kind}s[{a.name!r}]" if value is None else f"{a.kind}s={{{a.name!r}: {value}}}"

    arms = _arms(plan)
    if len(arms) > 1:
        names = ", ".join("the programs" if a.kind == "program" else named(a) for a in arms)
        return (f"{head}: here {len(arms)} things each have two or more values ({names}), a grid of arms; "
                "compare one at a time (give the others one value each)")
    single = [a for a in plan.axes if a.kind != "program"]
    if single:
        def value(a: Any) -> str:
            return show_value(a.values[0]) if cli or a.kind == "set" else repr(a.values[0])

        given = ", ".join(named(a, value(a)) for a in single)
        a = next((a for a in single if a.kind == "set"), single[0])
        if cli:
            example = (f"--set {a.name}={show_value(a.values[0])},VALUE" if a.kind == "set" else
                       f"--def {a.name} given again: --def {a.name}=EXPR")
        else:
            example = named(a, f"[{value(a)}, VALUE]" if a.kind == "set" else f"[{value(a)}, EXPR]")
        one = ("gives one value, a setting of the one arm there is" if len(single) == 1 else
               "each give one value, settings of the one arm there is")
        return (f"{head}: {given} {one}, so there is nothing to compare it with; give a name two or more values "
                f"to compare them ({example}), or give two or more {files}")
    if cli:
        return (f"{head}: one program and no --set or --def is one arm, with nothing to compare it with; give two "
                "or more FILEs, or a name two or more values (--set B=8192,512)")
    return (f"{head}: one program and no sets or defs is one arm, with nothing to compare it with; give two or more "
            "programs, or a name two or more values (sets={'B': [8192, 512]})")


def _arms(plan: core.Plan | core.PlanShape) -> list:
    """The axes of ``plan`` the arms differ in: those of two or more values."""
    return [a for a in plan.axes if len(a.values) > 1]


def comparisons(plan: core.Plan, columns: Sequence[str], table: Sequence[dict[str, Any]],
                figures: Sequence[str] = (), given: Any = None,
                left: list[str] | None = None) -> tuple[list[dict[str, Any]], int]:
    """One row per arm after the first and figure (see the module). Figures equal in every run of the two
    arms are left out (returns the rows and how many were), but for ``interrupted`` where runs were cut short
    (its row says so, in the table ``--out`` writes too), and so are those with no value in any run of
    either (NaN, a blank cell: appended to ``left`` for :func:`render`'s note), but for one that some run has
    as an infinity, whose row has ``n`` 0 and NaN and :data:`UNVALUED` (unless both arms have the same
    infinities at every seed: equal in every run); a figure in ``figures`` is never left
    out: with no finite value (an observe of no samples) its row has ``n`` 0 and NaN (serq compare --figure printed nothing at all for it); two of
    ``figures`` that name one figure are refused (:func:`figures_once`, ``given`` naming the option)."""
    from .figures import resolve

    core.none_finished(plan, table)
    axis = _arms(plan)[0]
    figs = core.figure_columns(columns)
    if figures:  # (two names of one figure, mean and response.mean, are refused: said before the runs mostly)
        figures_once(figures, given, figs)
        figs = [resolve(f, figs) for f in figures]
    by = {(r["point"], r["seed"]): r for r in table if r["status"] != "error"}
    base = plan.points[0]
    out: list[dict[str, Any]] = []
    same = 0
    for arm in plan.points[1:]:
        for f in figs:
            a = [_num(by.get((base.index, s), {}).get(f)) for s in plan.seeds]
            b = [_num(by.get((arm.index, s), {}).get(f)) for s in plan.seeds]
            unvalued = None
            if all(x is None for x in a + b):
                # no finite value in any run of either arm. NaN is a run's "no value" (a blank cell: an observe
                # of too few samples for a percentile, a figure of a stage kind the program's stage is not):
                # such a figure is left out, counted in ``left`` for the note that says so. One that some run
                # has as an infinity has its row, n 0 and nan, and what the runs held (`inf in 5 of 6 runs`),
                # as a figure one arm lacks has its row, unless the arms hold the same at every seed (a
                # horizon of inf): equal. All were left out without a word. A figure asked for has its row.
                held = [_infinity(by.get((p, s), {}).get(f)) for p in (base.index, arm.index) for s in plan.seeds]
                unvalued = _unvalued(held)
                if unvalued is None and not figures:
                    if left is not None and core._figure_kind(f) != "a text":  # (not partial's reason)
                        left.append(f)
                    continue
                if unvalued is not None and held[:len(a)] == held[len(a):] and not figures:
                    same += 1  # (the same infinities at every seed, a horizon of inf: equal in every run)
                    continue
            # (runs cut short by a bound, --max-events, --max-wall, --max-samples: the flag interrupted 1 in
            # every run of both arms was left out as equal, and the table --out wrote gave no sign of it, the
            # warning on stderr alone)
            if a == b and unvalued is None and not figures and not (f == "interrupted" and any(a)):
                same += 1
                continue
            row = {"arm": arm_label(plan, arm, axis), "base": arm_label(plan, base, axis), "figure": f,
                   **paired([_nan(x) for x in a], [_nan(x) for x in b])}
            missing = {_why_none(by.get((p, s)), f) for p in (base.index, arm.index) for s in plan.seeds}
            missing.discard(None)
            if missing:  # (why a run has no value of it, for the note of a block paired over fewer seeds: render)
                row[MISSING] = missing
            if all(x is None for x in a + b):
                row[UNVALUED] = unvalued or f"no value in its {2 * len(plan.seeds)} runs"
            out.append(row)
    return out, same


#: the key of a comparison's row of the causes of the runs that have no value of its figure (:func:`_why_none`), which
#: the printed block's note says (a run that failed, an infinite value, no value); not a column of --out's table
MISSING = "missing"


def _why_none(row: dict[str, Any] | None, figure: str) -> str | None:
    """Why the run ``row`` (None: it failed, its row an error's) has no value of ``figure`` for the pairing
    (:func:`_num`): ``"failed"``, ``"infinite"`` (inf, -inf) or ``"no value"`` (NaN, a blank cell, a word); None
    when it has one."""
    if row is None:
        return "failed"
    v = row.get(figure)
    if _num(v) is not None:
        return None
    return "infinite" if _infinity(v) is not None else "no value"


#: how the note of a block paired over fewer seeds says each cause of a run without a value (:data:`MISSING`)
_WHY_NONE = {"failed": "that failed", "infinite": "whose value is infinite (inf, -inf)",
             "no value": "of no value (NaN, a blank cell)"}


#: the key of a comparison's row of a figure with no finite value in any run of either arm: what the runs held
#: (``inf in all 6 runs``), which the printed block says under the arm's rows (not a column of --out's table,
#: where such a row is the one whose ``n_a`` and ``n_b`` are 0)
UNVALUED = "unvalued"


def _infinity(v: Any) -> str | None:
    """``"inf"`` or ``"-inf"`` for a run's value of a figure that is that infinity, else None."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _unvalued(held: Sequence[str | None]) -> str | None:
    """What the runs of a figure that none has a finite value of held (:func:`_infinity` of each), when some
    held an infinity: ``inf in all 6 runs``, ``inf in 4 of 6 runs, no value in 2`` (NaN, a blank cell, a run
    that failed: no value); None when none did."""
    n = len(held)
    kinds = {"inf": held.count("inf"), "-inf": held.count("-inf")}
    if not any(kinds.values()):
        return None
    kinds["no value"] = n - sum(kinds.values())
    said = [(k, c) for k, c in sorted(kinds.items(), key=lambda kc: -kc[1]) if c]
    return ", ".join(f"{k} in {'all' if c == n else f'{c} of'} {n} runs" if i == 0 else f"{k} in {c}"
                     for i, (k, c) in enumerate(said))


def arm_label(plan: core.Plan, point: core.Point, axis: Any) -> str:
    """An arm as the comparison's heading, ``arm`` and ``base`` name it: the swept name and its value as it
    reads back (``blocks=3000``, ``service=~exp(0.8)``, :func:`serq_sweep.core.show_value`), or a program's
    file as given (the axis ``program`` is no name of the program's). The value alone, ``3000 - 8010``, said
    nothing of what was compared, once written to a file or read beside another comparison."""
    value = show_value(plan.shown(point)[axis.name])
    return value if axis.kind == "program" else f"{axis.name}={value}"


def _num(v: Any) -> float | None:
    """A run's value of a figure as a number, or None where it has none (a word, a missing value, NaN or an
    infinity): a flag (``interrupted``) as 0 and 1, as the points table, ``--show`` and ``--find`` take it
    (serq compare printed ``nan`` for it, the mean of no value, though every run of either arm had one)."""
    if isinstance(v, bool):
        return float(v)
    if not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _nan(v: float | None) -> float:
    return math.nan if v is None else v


def render(rows: Sequence[dict[str, Any]], same: int, seeds: int, left: Sequence[str] = ()) -> str:
    """The comparison as text: per arm, a line per figure; ``left``, the figures :func:`comparisons` left out
    for having no value in any run of either arm (once per arm after the first)."""
    from itertools import groupby

    from serq.layout import align

    from .cli import _fmt

    out = []
    # an arm's rows are together (comparisons makes them arm by arm): a block each, two arms of one value too
    for (arm, base), block in groupby(rows, key=lambda r: (r["arm"], r["base"])):
        rs = list(block)
        # a figure some run of either arm has no value of (a run that failed on a seed, an observe of no
        # samples) is paired over fewer seeds than the comparison's: its B - A and CIs are over those, its A
        # and B each over its arm's own values, so B - A is not the difference of the A and B shown. Such a
        # block says so and gives each row's pairs and the values A and B are over (it said "paired over 3
        # seeds" of a difference over 2, and not over how many runs A and B were); a row where neither arm
        # has a value is NaN throughout, which misleads no one
        short = any(r.get("n", seeds) < seeds and (r.get("n_a", 0) or r.get("n_b", 0)) for r in rs)
        # (an arm's label is a swept value as given: a --def body's comment may hold a line break or an escape
        # sequence, written as escapes here, as every cell of the table below is by serq.layout.align)
        out.append(printable(f"{_apart(arm)} - {_apart(base)}, paired over {seeds} seeds (95 % CIs):"))
        # the columns named as --out names them (COLUMNS), each cell without a blank: a reader splitting the
        # table at whitespace gets the header's columns ('B - A', 'paired ±', 'var. reduction' and '45.5 %'
        # were two or three cells of one)
        head = ["figure", "a", "b", "diff", "ci_paired", "ci_unpaired", "variance_reduction"]
        head += ["n", "n_a", "n_b"] if short else []
        lines = [head]
        for r in rs:
            vr = r["variance_reduction"]
            lines.append([r["figure"], _fmt(r["a"]), _fmt(r["b"]), _fmt(r["diff"]), _fmt(r["ci_paired"]),
                          _fmt(r["ci_unpaired"]), reduction_percent(vr)]
                         + ([str(r.get(k, seeds)) for k in ("n", "n_a", "n_b")] if short else []))
        out += align(lines, left=1, indent="  ")  # by the columns a cell takes on the screen
        if short:
            # each cause of a run without a value, as the rows paired over fewer seeds had them: an infinite
            # value, or NaN, was said to be a run that failed
            why = set().union(*(r.get(MISSING, ()) for r in rs
                                if r.get("n", seeds) < seeds and (r.get("n_a", 0) or r.get("n_b", 0))))
            causes = " or ".join(_WHY_NONE[k] for k in _WHY_NONE if k in why) or _WHY_NONE["failed"]
            out.append(f"  (n: the seeds of the {seeds} where both arms have a "
                       f"{'finite ' if 'infinite' in why else ''}value, a run {causes} having none; diff = b - a "
                       "and its CIs are over those, a and b each over its arm's own values, n_a and n_b of them)")
        unvalued = [r for r in rs if r.get(UNVALUED)]
        if unvalued:  # (a figure no run of either arm has a finite value of: nan throughout, and why)
            out.append("  (no finite value in any run of either arm, so nan: "
                       + "; ".join(f"{r['figure']}, {r[UNVALUED]}" for r in unvalued) + ")")
    if same:
        out.append(f"({same} figure(s) equal in every run of both arms left out)")
    left = list(dict.fromkeys(left))  # (a figure left out of each arm's block: said once)
    if left:  # (they went without a word: said as the equal ones are, with their names)
        out.append(f"({len(left)} figure(s) with no value in any run of either arm left out: {_some(left)})")
    return "\n".join(out) + "\n"


def _some(names: Sequence[str], shown: int = 6) -> str:
    """The first ``shown`` of ``names``, then how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _apart(label: str) -> str:
    """An arm's label as the heading's ``ARM - BASE`` writes it: in parentheses when it holds the heading's
    `` - `` itself (a definition's body, ``--def 'qkey=prio - waited'``), which read as
    ``qkey=prio - qkey=prio - waited, …``, the arms' border nowhere to be seen."""
    return f"({label})" if " - " in label else label


def reduction_percent(vr: float) -> str:
    """A variance reduction as the comparison's table prints it: a percentage to one decimal, and to as many
    more as it takes (up to six) for a reduction below 1 to print below 100 % (0.9996 printed ``100.0%``,
    which reads as no variance left; it is ``99.96%``)."""
    if math.isnan(vr):
        return "nan"
    pct = 100 * vr
    for digits in range(1, 7):
        text = f"{pct:.{digits}f}"
        if vr >= 1 or float(text) < 100:
            return text + "%"
    return ">99.99999%"  # (below 1 by less than 10^-8: a difference of no variance, near enough)


def plan_options() -> set[str]:
    """The keywords :func:`compare` passes on to the plan of its arms (:func:`serq_sweep.core.plan`): the run
    options (``zip``, ``horizon``, ``max_events``, …), not those it gives itself nor the plan's own."""
    import inspect

    own = {"files", "sets", "defs", "seeds", "pm", "program_labels", "repeat", "given", "shape"}
    return set(inspect.signature(core.plan).parameters) - own


def figures_once(figures: Sequence[str], given: Any = None, columns: Sequence[str] = ()) -> None:
    """Refuse a figure ``figures`` names twice (``serq compare --figure F --figure F``, ``compare(figures=[F,
    F])``: it was compared once, silently), as a ``--set`` name given twice is: a usage error (status 2) naming
    it as ``given`` names the option or argument (:func:`serq.loading.given_or_option`). With the runs'
    figures (``columns``: :func:`serq_sweep.core.check_figures`'s, before the runs, or the table's), two names
    that resolve to one figure are the same repeat, refused naming both spellings (``--figure mean`` and
    ``--figure response.mean``, both ``observes.response.mean``); a name that resolves to none is left to
    :func:`serq_sweep.figures.resolve`'s refusal."""
    from serq.errors import UsageError, clipped
    from serq.loading import given_or_option

    from .figures import AmbiguousFigure, UnknownFigure, resolve

    given = given_or_option(given)
    twice = next((f for i, f in enumerate(figures) if f in figures[:i]), None)
    if twice is not None:
        raise UsageError(f"{given('figure', clipped(twice))}: given twice (give it once)")
    if not columns:
        return
    seen: dict[str, str] = {}
    for f in figures:
        try:
            column = resolve(f, columns)
        except (UnknownFigure, AmbiguousFigure):  # (said where the figures are taken)
            continue
        if column in seen:
            raise UsageError(f"{given('figure', clipped(seen[column]))} and {given('figure', clipped(f))}: both "
                             f"name the figure {clipped(column)} (give it once)")
        seen[column] = f


def compare(files: str | Sequence[str], *, sets: Mapping[str, Any] | None = None,
            defs: Mapping[str, Any] | None = None, seeds: Any = "1..10", figures: Sequence[str] = (),
            workers: int | None = None, dask: Any = None, progress: bool | None = None, pm: Any = None,
            **kw: Any) -> Any:
    """Compare arms (see :func:`arms_plan`) under common seeds; a DataFrame with the columns
    :data:`COLUMNS`, a row per arm after the first and figure."""
    from .api import run_plan
    from .axes import flag, texts
    from .engines import check_engine

    unknown = sorted(set(kw) - plan_options())
    if unknown:  # (it was plan()'s TypeError, a function the caller did not call; repeat=, one plan() took twice)
        raise TypeError(f"compare() got an unexpected keyword argument {unknown[0]!r} (it takes the run options "
                        f"{', '.join(sorted(plan_options()))} besides its own)")
    if kw.get("zip"):  # (as serq compare's --zip: it was taken, and the arms it grouped called a grid of arms)
        from serq.errors import UsageError

        raise UsageError("zip is not for compare() (its arms are the values of one name of sets or defs, or two "
                         "or more programs)")
    figures = texts(figures, "figures", "figure")  # (a str was iterated: figures="ttft.p99" asked for "t", ...)
    from serq.loading import argument_given

    figures_once(figures, argument_given)
    progress = flag(progress, "progress", none=True)
    check_engine(workers, dask, pm, argument_given)  # before anything is compiled
    # (its messages name the arguments, horizon=…, not serq compare's options)
    plan = arms_plan(files, sets=sets, defs=defs, seeds=seeds, pm=pm, given=argument_given, **kw)
    # before the runs, as serq compare --figure: each name a figure of the runs, and no two of them one figure
    figures_once(figures, argument_given, core.check_figures(plan, figures, argument_given("figure")))
    columns, table, complete, _ = run_plan(plan, workers=workers, dask=dask, progress=progress, desc="compare",
                                           given=argument_given)
    if not complete:
        raise KeyboardInterrupt
    rows, _ = comparisons(plan, columns, table, figures, argument_given)
    return core.to_frame(COLUMNS, rows)
