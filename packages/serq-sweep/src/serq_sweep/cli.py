"""``serq sweep``, ``serq compare`` and ``serq plot``."""

from __future__ import annotations

import math
import sys
from typing import Any

import click
from serq import signals
from serq.errors import UsageError, printable, printable_lines
from serq.options import ARRIVALS, EVENTS, HORIZON, SAMPLES, SECONDS, WARMUP, Integer, Number
from serq.options import Path as SerqPath

from .engines import MAX_WORKERS

#: ``--workers``
WORKERS = Integer(f"a number of worker processes from 0 to {MAX_WORKERS}", low=0, high=MAX_WORKERS)


def _dask(ctx, param, value):
    """``--dask ""`` names no scheduler: a usage error (status 2) before anything is compiled; it was tried
    as an address ("cannot reach the scheduler: missing port number in address ''", status 1)."""
    if value is not None and not value.strip():
        from .engines import EMPTY_DASK

        raise click.BadParameter(f"{value!r} {EMPTY_DASK}", ctx=ctx, param=param)
    return value


def _slo(ctx, param, value):
    """``--slo ttft=1,tpot=0.05`` as ``serq run --slo`` reads it (serq_sim.metrics.parse_slo); a fault is a
    usage error naming the option."""
    if value is None:
        return None
    from serq_sim.metrics import parse_slo

    try:
        return parse_slo(value)
    except ValueError as e:
        raise click.BadParameter(str(e), ctx=ctx, param=param) from None


# What a run cut short by a bound becomes, in serq sweep and in serq compare (core.cut_short warns of it in both)
_CUT_ROW = "its row is then partial: status partial, figures of the time simulated before the bound"
_CUT_ARM = "a run cut short is compared on the figures of the time it simulated, with a warning"


def _common(seeds: str, cut: str, zips: bool = True):
    """The options every command that runs a program over seeds shares; ``seeds`` the default of ``--seeds``,
    the one the command uses and its ``--help`` shows (serq compare's help said 1 while it ran 1..10);
    ``cut`` what the command does with a run a bound (``--max-wall``, ``--max-events``, ``--max-samples``) cuts
    short, said in each bound's help (serq compare's said "its row is then partial", of a command with no
    rows); ``zips`` whether ``--help`` shows ``--zip`` (serq compare refuses it, and its help offered it)."""
    return lambda f: _options(f, seeds, cut, zips)


def _options(f, seeds: str, cut: str, zips: bool = True):
    for opt in reversed([
        click.option("--set", "sets", multiple=True, metavar="NAME=VALUES",
                     help="Sweep a let constant: a number, a list 1,2,4 or a range START:STOP[:STEP] "
                          "(repeatable; a name given again adds values)."),
        click.option("--def", "defs", multiple=True, metavar="NAME=EXPR",
                     help="Sweep a definition's body (repeatable; a name given again adds a value)."),
        click.option("--zip", "zips", multiple=True, metavar="NAME,NAME,...", hidden=not zips,
                     help="These swept names move together (equal numbers of values) instead of forming a "
                          "grid (repeatable)."),
        click.option("--seeds", default=seeds, show_default=True, metavar="SEEDS",
                     help="Seeds of each point: A..B, a list 1,5,9, or a mix (never the run block's seed)."),
        click.option("--horizon", type=HORIZON, default=None, metavar="T",
                     help="End of each run (default: the run block's horizon)."),
        click.option("--warmup", type=WARMUP, default=None, metavar="T",
                     help="Discard samples before T (default: the run block's warmup, else 0)."),
        click.option("--arrivals", type=ARRIVALS, default=None, metavar="N",
                     help="Exactly N arrivals, then drain (default: the run block's arrivals, else none)."),
        click.option("--max-wall", "max_wall", type=SECONDS, default=None,
                     metavar="SECONDS", help=f"Bound each run's wall-clock time ({cut})."),
        click.option("--max-events", "max_events", type=EVENTS, default=None, metavar="N",
                     help=f"Bound each run's events ({cut})."),
        click.option("--max-samples", "max_samples", type=SAMPLES, default=None, metavar="N",
                     help=f"Bound the samples each run holds ({cut}; default serq run's, "
                          "100000000)."),
        click.option("--slo", "slo", default=None, metavar="NAME=SECONDS,…", callback=_slo,
                     help="Service-level objectives for the goodput of the request metrics, as serq run's: "
                          "ttft, tpot, e2el (e.g. ttft=1,tpot=0.05); the figures requests.goodput and requests.attainment."),
        click.option("--workers", type=WORKERS, default=None, metavar="N",
                     help="Local worker processes (default: every core; 0: in this process); with "
                          "--dask local, the LocalCluster's workers."),
        click.option("--dask", "dask", default=None, metavar="ADDRESS", callback=_dask,
                     help="Run on a Dask distributed scheduler (tcp://HOST:PORT, a scheduler file), or "
                          "'local' for a LocalCluster here (pip install 'serq-sweep[dask]')."),
        click.option("--no-progress", is_flag=True, help="No progress bar on stderr."),
    ]):
        f = opt(f)
    return f


def _plan_args(sets, defs, zips, seeds, horizon, warmup, arrivals, max_wall, max_events, max_samples, slo) -> dict:
    from .axes import group_cli

    return dict(sets=group_cli(sets, "--set"), defs=group_cli(defs, "--def"),
                zip=[_zip_group(z) for z in zips], seeds=seeds,
                horizon=horizon, warmup=warmup, arrivals=arrivals, max_wall=max_wall, max_events=max_events,
                max_samples=max_samples, slo=slo)


def _zip_group(text: str) -> list[str]:
    """The names of one ``--zip NAME,NAME,...``: an empty one (``a,,b``, a trailing comma) is refused, as a
    list's empty item is, not dropped."""
    from .axes import split_list

    names = split_list(text)
    for k, n in enumerate(names, 1):
        if not n:
            raise UsageError(f"--zip {printable(text)!r}: name {k} of {len(names)} is empty (a group is a,b: no "
                            "empty name)")
    return names


def _exit_for(complete: bool, errors: list[str] | None = None) -> None:
    if not complete:
        sys.exit(signals.interrupted())
    if errors:
        # (a run's message names its point: a swept --def body may hold any character in a comment, which is
        # written as an escape, as every message of serq's is, serq.errors.printable_lines)
        click.echo(printable_lines(f"error: {len(errors)} run(s) failed; the first:\n{errors[0]}"), err=True)
        sys.exit(1)


@click.command("sweep")
@click.argument("files", nargs=-1, required=True, type=SerqPath(dir_okay=False))
@_common(seeds="1", cut=_CUT_ROW)
@click.option("-o", "--out", "out", type=SerqPath(dir_okay=False), default=None, metavar="FILE",
              help="Write the table (.parquet or .csv; one row per point and seed) and its per-point "
                   "aggregates (FILE's name with .points); a rerun resumes: only unfinished runs run.")
@click.option("--records", "records_file", type=SerqPath(dir_okay=False), default=None, metavar="FILE",
              help="Also write every run's records (as serq run --records) into one table (.parquet or .csv): "
                   "point, the swept names, seed, key, then the record's columns; only with --out, and resumed with "
                   "it.")
@click.option("--trace", "traces", multiple=True, type=SerqPath(dir_okay=False), metavar="FILE",
              help="Replay this CSV trace instead of the workload's, as serq run --trace (repeatable: each FILE a "
                   "value of the axis 'trace', a column of the table).")
@click.option("--fresh", is_flag=True, help="Run everything again instead of resuming from --out.")
@click.option("--show", "show", multiple=True, metavar="FIGURE",
              help="Print these figures' means and 95 % CIs across seeds, per point (repeatable).")
@click.option("--find", "find", multiple=True, metavar="'FIGURE OP NUMBER'",
              help="Capacity search: the largest value of the --over knob at which every condition holds "
                   "(on the mean across seeds; repeatable, all of them holding), per point of the other axes; "
                   "the smallest when the conditions fail at LO and hold at HI (outcome found_smallest).")
@click.option("--over", "over", nargs=2, default=None, metavar="NAME RANGE",
              help="The knob --find searches and its range LO:HI (or LO:HI:STEP to search a grid).")
@click.option("--tol", "tol", type=Number("a positive, finite number", low=0.0, above=True), default=None,
              metavar="X",
              help="--find stops when the bracket is at most X wide (default: the range / 64).")
@click.pass_obj
def sweep_command(pm, files, sets, defs, zips, seeds, horizon, warmup, arrivals, max_wall, max_events, max_samples, slo,
                  workers, dask, no_progress, out, records_file, traces, fresh, show, find, over, tol) -> None:
    """Run FILE over every point of the --set/--def values times every seed, into one table.

    Several FILEs are an axis 'program'; each --trace FILE is a value of an axis 'trace'. Every point is compiled once and run once per seed, on a local
    process pool over every core (or --dask). Without --out the table is written to stdout as CSV. The
    guide: docs/sweep.md, "serq sweep FILE" (and "Capacity search" for --find).

    Exit status: 0; 1 for an error in the program or its inputs, or when a run failed (its row says why);
    2 for a usage error; 130 on Ctrl-C, 143 on SIGTERM and 129 on SIGHUP (what finished is written all the
    same).

    \b
    Examples:
      serq sweep examples/multi-turn/vllm.sq --set Lambda=0.1:1:0.1 --set blocks=2000,8010 -o r.parquet
      serq sweep examples/single-turn/mg1.sq --def service="~exp(1)" --def service="~det(1)" --seeds 1..3
      serq sweep examples/multi-turn/vllm_single_turn.sq --find 'requests.ttft.p99 <= 1' --over Lambda 2:12
    """
    from . import core
    from . import pairing as C
    from .api import Records, run_plan

    args = _plan_args(sets, defs, zips, seeds, horizon, warmup, arrivals, max_wall, max_events, max_samples, slo)
    args["trace"] = list(traces) or None
    from .engines import check_engine

    check_engine(workers, dask, pm)  # before anything is compiled (a sweep's, a search's)
    progress = False if no_progress else None
    if tol is not None and not find:  # (it was ignored)
        raise click.UsageError("--tol goes with --find and --over (the search's bracket)")
    if find or over:
        if not (find and over):
            raise click.UsageError("--find and --over go together")
        if records_file is not None:
            raise click.UsageError("--records is not for --find (the search's runs are its own)")
        if show:  # (they were ignored)
            raise click.UsageError("--show is not for --find (the search prints its own table)")
        if fresh:
            raise click.UsageError("--fresh is not for --find (a search does not resume: it runs everything)")
        from .api import table_held
        from .search import find_cli

        if out is not None:  # (its name checked before the lock is taken beside it)
            core.check_out_name(out)
        with table_held(out):  # one command a table at a time, as a sweep's journal makes it
            find_cli(pm, list(files), args, find, over, tol, workers=workers, dask=dask, progress=progress,
                     out=out)
        return
    if records_file is not None and out is None:
        raise click.UsageError("--records goes with --out (the records resume with the sweep's table)")
    core.check_records_apart(out, records_file)  # (before anything is compiled)
    core.check_fresh(out, fresh, error=click.UsageError)  # (--fresh without --out, as fresh=True without out=)
    shown = lambda _name, value: f"--show {value}"  # noqa: E731 - how the refusals name the option
    C.figures_once(show, shown)  # (a column shown once, silently), refused as serq compare's --figure twice is
    if out is not None:  # (by its name, before anything is compiled: it was said after every point was)
        core.check_out_name(out)
        core.check_resumable(out, records_file, fresh)  # (a FIFO there, said after every point was compiled)
    plan = core.plan(list(files), pm=pm, **args)
    C.figures_once(show, shown, core.check_figures(plan, show, "--show"))  # (mean, response.mean: one column)
    for warning in plan.warnings:
        click.echo(printable_lines(f"serq: {warning}"), err=True)
    recs = None if records_file is None else Records(records_file)
    columns, table, complete, resumed = run_plan(plan, workers=workers, dask=dask, out=out, fresh=fresh,
                                                 progress=progress, records=recs)
    with signals.deferred():
        if out is None and not show:
            sys.stdout.write(core.encode_table(columns, table, "csv").decode("utf-8"))
        elif out is not None:
            files = f"{out}; per point: {core.points_path(out)}" + (
                f"; records: {', '.join(recs.files.values())}" if recs is not None else "")
            # an interrupted sweep says how many of its runs it holds: "2 run(s) of 2 point(s) x 3 seed(s)" read as
            # the sweep's size, where it has 6
            done = f"{len(table)}" if complete else f"{len(table)} of {len(plan.points) * len(plan.seeds)}"
            click.echo(f"{done} run(s) of {len(plan.points)} point(s) x {len(plan.seeds)} seed(s) "
                       f"({len(table) - resumed} run now, {resumed} resumed"
                       f"{'' if complete else ', then stopped'}): {printable(files)}", err=True)
        from .alike import seeds_alike

        note = seeds_alike(table, columns, "the CIs across them are 0")
        if note is not None:
            click.echo(printable_lines(note), err=True)
        if show:
            warning = core.cut_short(table, "the means and CIs of --show were taken")
            if warning is not None:
                click.echo(printable_lines(warning), err=True)
            text = show_table(plan, columns, table, show)  # (first: a sweep of no finished run is refused there)
            unfinite = infinite_means(plan, columns, table, show)
            if unfinite is not None:
                click.echo(printable_lines(unfinite), err=True)
            sys.stdout.write(text)
        sys.stdout.flush()
    _exit_for(complete, core.failures(plan, table))


def show_table(plan, columns, table, figures) -> str:
    """The per-point means and CIs of ``figures`` as aligned text."""
    from .core import aggregate_rows, figure_columns, none_finished, written_value
    from .figures import resolve

    none_finished(plan, table)
    # a figure named twice (--show x --show x, or by two tails) is one column, under its first name
    shown: dict[str, str] = {}  # column -> the name it was first asked by
    for f in figures:
        shown.setdefault(resolve(f, figure_columns(columns)), f)
    names = list(shown)
    acols, arows = aggregate_rows(plan, columns, table)
    head = [*plan.names, "runs", *shown.values()]
    lines = [head]
    for r in arows:
        # each point its own values, as the points file writes them (a float column's 2.0: it printed 2)
        cells = [written_value(r[n]) for n in plan.names] + [str(r["runs"])]
        for n in names:
            m, ci = r.get(f"{n}:mean", math.nan), r.get(f"{n}:ci", math.nan)
            # one cell without a blank, MEAN±CI, as every cell of a printed table (`1.4 ± 0.2 (n=2)` was
            # four cells of one to a reader splitting the table at whitespace)
            cell = f"{_fmt(m)}±{_fmt(ci)}" if not math.isnan(ci) else _fmt(m)
            k = r.get(f"{n}:n", r["runs"])
            # a mean over fewer of the point's runs than `runs` (some without a finite value of the figure:
            # an observe of no samples, as a run cut short may have) says how many it is over
            cells.append(f"{cell}(n={k})" if 0 < k < r["runs"] else cell)
        lines.append(cells)
    from serq.layout import align  # by the columns a cell takes on the screen (a figure named in Chinese)

    return "".join(line + "\n" for line in align(lines, left=0))


def infinite_means(plan, columns, table, figures) -> str | None:
    """The warning of ``--show``'s means that are nan because every run of their point had no finite value and
    some had an infinite one (``K / 0``): a mean leaves out inf and -inf as it does a run without a value, and
    the table printed ``nan`` without a word (an observe of no samples is a figure without a value, as the
    points table's blank cell says). None when there is no such mean."""
    from .core import figure_columns, written_value
    from .figures import resolve

    shown: dict[str, str] = {}
    for f in figures:
        shown.setdefault(resolve(f, figure_columns(columns)), f)
    by_point: dict[int, list[dict]] = {}
    for r in table:
        if r["status"] != "error":
            by_point.setdefault(r["point"], []).append(r)
    said = []
    for column, name in shown.items():
        entries = []
        for p in plan.points:
            values = [r.get(column) for r in by_point.get(p.index, [])]
            values = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if not values or any(math.isfinite(v) for v in values):
                continue
            infinite = sum(1 for v in values if math.isinf(v))
            if not infinite:
                continue
            runs = len(by_point[p.index])
            at = ", ".join(f"{k}={written_value(v)}" for k, v in plan.shown(p).items()) or "the point"
            how = ("infinite in its one run" if runs == 1 else f"infinite in all {runs} runs" if infinite == runs
                   else f"infinite in {infinite} of {runs} runs, no value in the others")
            entries.append(f"{at}: {how}")
        if entries:
            more = f"; and {len(entries) - 3} more" if len(entries) > 3 else ""
            said.append(f"warning: --show {name}: nan where no run had a finite value of it, an infinite value "
                        f"(inf, -inf) being left out of a mean as a run without one is: {'; '.join(entries[:3])}"
                        f"{more}")
    return "\n".join(said) or None


def _fmt(v) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.6g}"
    return str(v)




@click.command("compare")
@click.argument("files", nargs=-1, required=True, type=SerqPath(dir_okay=False))
@_common(seeds="1..10", cut=_CUT_ARM, zips=False)
@click.option("--figure", "figures", multiple=True, metavar="FIGURE",
              help="Compare only these figures (repeatable; default every figure).")
@click.option("--trace", "trace", type=SerqPath(dir_okay=False), default=None, metavar="FILE",
              help="Every arm replays this CSV trace instead of its workload's, as serq run --trace.")
@click.option("-o", "--out", "out", type=SerqPath(dir_okay=False), default=None, metavar="FILE",
              help="Also write the comparison as a table (.csv or .parquet).")
@click.pass_obj
def compare_command(pm, files, sets, defs, zips, seeds, horizon, warmup, arrivals, max_wall, max_events, max_samples, slo,
                    workers, dask, no_progress, figures, trace, out) -> None:
    """Paired differences of every figure between arms run under the same seeds.

    The arms are two or more FILEs, or one FILE and the values of one --set or --def name (--set B=8192,512).
    Each arm after the first is compared with the first, seed by seed: the mean difference with its paired
    95 % CI, the CI the same runs would give unpaired, and the variance reduction pairing brings. The
    guide: docs/sweep.md, "serq compare A.sq B.sq".

    Exit status: 0; 1 for an error in a program or its inputs, or when a run failed (the first failure is
    said); 2 for a usage error; 130 on Ctrl-C, 143 on SIGTERM and 129 on SIGHUP.

    \b
    Examples:
      serq compare examples/multi-turn/vllm.sq --set B=8192,512 --seeds 1..10
      serq compare examples/multi-turn/vllm.sq examples/multi-turn/vllm_chat.sq --figure requests.ttft.mean
    """
    from . import core
    from . import pairing as C

    args = _plan_args(sets, defs, zips, seeds, horizon, warmup, arrivals, max_wall, max_events, max_samples, slo)
    if args.pop("zip"):  # (it was ignored: arms are the values of one name, or the FILEs)
        raise click.UsageError("--zip is not for serq compare (its arms are the values of one --set or --def "
                               "name, or two or more FILEs)")
    C.figures_once(figures)  # (it was compared once, silently), refused as a --set name given twice is
    from .engines import check_engine

    check_engine(workers, dask, pm)  # before any arm is compiled
    if out is not None:  # (by its name, before any arm is compiled: it was said after every arm was)
        core.check_out_name(out)
    plan = C.arms_plan(list(files), pm=pm, trace=trace, **args)
    if out is not None:  # before any run: a table its write would refuse was refused after every run
        core.check_table(out, sorted({i for p in plan.points for i in p.inputs}))
    C.figures_once(figures, None, core.check_figures(plan, figures, "--figure"))  # (mean, response.mean: one)
    from .api import table_held

    with table_held(out):  # one command a table at a time, as a sweep's journal makes it, until it is written
        _compare_runs(plan, figures=figures, out=out, workers=workers, dask=dask, no_progress=no_progress)


def _compare_runs(plan: Any, *, figures: Any, out: Any, workers: Any, dask: Any, no_progress: bool) -> None:
    """serq compare's runs, its table written to ``out`` and printed (compare_command, which holds ``out``)."""
    from . import core
    from . import pairing as C
    from .api import run_plan

    for warning in plan.warnings:
        click.echo(printable_lines(f"serq: {warning}"), err=True)
    columns, table, complete, _ = run_plan(plan, workers=workers, dask=dask,
                                           progress=False if no_progress else None, desc="compare")
    if not complete:
        _exit_for(False)
    left: list[str] = []  # (the figures no run of either arm has a value of: the note under the table)
    rows, same = C.comparisons(plan, columns, table, figures, left=left)  # (the command line's options: given None)
    with signals.deferred():
        warning = core.cut_short(table, "the comparison was made")
        if warning is not None:
            click.echo(printable_lines(warning), err=True)
        from .alike import seeds_alike

        note = seeds_alike(table, columns, "the paired and unpaired CIs are 0 (the variance reduction NaN)")
        if note is not None:
            click.echo(printable_lines(note), err=True)
        text = C.render(rows, same, len(plan.seeds), left)
        if out is not None:  # before standard output, as a sweep's table is: a pipe closed early loses no file
            from serq.files import write_atomic

            write_atomic(out, core.encode_table(C.COLUMNS, rows, core.table_format(out)),
                         inputs=sorted({i for p in plan.points for i in p.inputs}))
        sys.stdout.write(text)
        sys.stdout.flush()
    _exit_for(True, core.failures(plan, table))


@click.command("plot")
@click.argument("source", type=SerqPath(exists=True, records=True))
@click.option("-o", "--out", "out", required=True, type=SerqPath(dir_okay=False), metavar="FILE",
              help="The picture: .svg, .png or .pdf (written atomically).")
@click.option("--x", "x", default=None, metavar="NAME", help="The swept name along the x axis, or a figure (--y against it, a point per point of the sweep); without it, the table's one swept name, when it sweeps one.")
@click.option("--y", "y", default=None, metavar="FIGURE", help="The figure drawn (ttft.p99, ...).")
@click.option("--hue", "hue", default=None, metavar="NAME", help="A line (and band) per value of this name.")
@click.option("--cdf", "cdf", multiple=True, metavar="NAME",
              help="From a dump folder: the CDF of this observe's samples; from a records file: of this "
                   "per-request metric (ttft, tpot, itl, e2el; queue, prefill, decode, infer) or column "
                   "(repeatable).")
@click.option("--gauge", "gauge", multiple=True, metavar="GAUGE",
              help="From a dump folder: this gauge against time (repeatable).")
@click.option("--where", "where", multiple=True, metavar="NAME=VALUE",
              help="Draw only the rows of the table or records whose column NAME holds VALUE (repeatable: "
                   "the rows that match every one).")
@click.option("--log", "log", type=click.Choice(["x", "y", "xy"]), default=None, metavar="x|y|xy",
              help="Draw these axes on a log scale (a value at or below 0 on one is refused).")
@click.pass_obj
def plot_command(pm, source, out, x, y, hue, cdf, gauge, where, log) -> None:
    """Draw a sweep's table (SOURCE a .parquet or .csv from serq sweep: --y against --x, with 95 % CI bands
    across seeds, a line per --hue), from a dump folder (serq run --dump DIR) the CDFs of observes'
    samples (--cdf) or gauges' time series (--gauge), or from records (serq run --records, serq sweep
    --records) the CDFs of per-request TTFT, TPOT, ITL (the per-request mean gap), E2E latency (--cdf),
    a line per --hue; --where NAME=VALUE draws only the rows of one value of a name; --log x|y|xy draws
    those axes on a log scale. The guide: docs/sweep.md, "serq plot".

    Exit status: 0; 1 for an error in what SOURCE holds (a name or figure it has not, a cell that is no
    number, nothing to draw) or a SOURCE that cannot be read (one that does not exist); 2 for a usage error
    (a flag, -o of no picture's suffix); 130 on Ctrl-C, 143 on SIGTERM and 129 on SIGHUP. Nothing is written
    but on success.

    \b
    Examples:
      serq plot r.parquet --x Lambda --y requests.ttft.p99 --hue blocks -o ttft.svg
      serq plot out/ --cdf ttft -o ttft_cdf.png
      serq plot req.csv --cdf ttft --cdf tpot -o cdf.svg
    """
    from .plots import plot
    from .rows import where_option

    plot(source, out, x=x, y=y, hue=hue, cdf_of=cdf, gauge=gauge, where=where_option(where), log=log)
