"""``serq run FILE``: simulate a program (``.sq`` or ``.ir.json``) and write its report."""

from __future__ import annotations

import contextlib
import os
import sys

import click
from serq import signals
from serq.errors import UsageError, UserError, clipped, located, shown_path
from serq.files import (
    MAX_JSON,
    check_distinct,
    check_folder,
    check_not_input,
    check_output,
    read_input,
    write_atomic,
)
from serq.loading import apply_run_overrides, defs_quoted, load_program, sets_noted
from serq.options import EVENTS, SAMPLES, SECONDS, load_options, run_options, to_load_options
from serq.options import Path as SerqPath
from serq.plugins import collect

#: ``serq run --strict``: the exit status of a report with a warning
STRICT_EXIT = 4


def run_inputs(program, file: str, trace: str | None) -> list[str]:
    """The files a run reads, which its outputs never overwrite: the program's file, every file its
    spans name (its source and its libraries; a relative name also as seen from the source's folder),
    the trace it names and the ``--trace`` file."""
    from pathlib import Path

    from serq_ir.analysis import span_files

    found = [file, *([trace] if trace else [])]
    base = Path(program.source).parent if program.source else None
    for f in span_files(program):
        found.append(f)
        if base is not None and not Path(f).is_absolute():
            found.append(str(base / f))
    if program.workload.trace is not None:
        from .trace import resolve_trace

        found.append(resolve_trace(program.workload.trace.path, program.source))
    return found


def check_trace_beside(program, file: str, trace: str | None = None) -> None:
    """Refuse, at its trace clause, a program read from ``file`` whose trace lies outside the folder of
    ``file``, the current folder and ``SERQ_PATH`` (:func:`serq_sim.trace.trace_beside`: an IR file's
    ``source`` chose the folder its trace was read from), unless ``trace`` (``--trace``) replaces it."""
    if program.workload.trace is None:  # no trace to read (nor the trace module to import: a run without one)
        return
    from .trace import trace_beside

    why = trace_beside(program, file, trace)
    if why is not None:
        from .errors import SimError, format_error

        raise SimError(format_error(program.workload.trace.span, None, None, why, program.source))


def _read_bytes(file: str) -> bytes:
    try:
        return read_input(file, limit=MAX_JSON)
    except OSError as e:  # it was read a moment ago to load it
        raise UserError(f"{file}: cannot read: {e.strerror or e}") from None


@click.command("run")
@load_options
@run_options
@click.option("--trace", "trace", type=SerqPath(dir_okay=False), default=None,
              help="Replay this CSV trace instead of the workload's (columns session,turn,new,out,think,forced: "
                   "docs/language.md, \"A trace file\").")
@click.option("--json", "as_json", is_flag=True, help="Write the report as JSON (--format json).")
@click.option("--format", "fmt", default=None, metavar="NAME",
              help="Report format (text, json, csv: the figures as rows section,name,statistic,value; or a "
                   "plugin's). Without --format or --json: the format -o FILE's suffix names (r.json: json, "
                   "r.csv: csv), else text.")
@click.option("--dump", "dump", type=SerqPath(file_okay=False), default=None, metavar="DIR",
              help="Write each observe's samples and each gauge's change points as CSV into DIR.")
@click.option("--records", "records_file", type=SerqPath(dir_okay=False), default=None, metavar="FILE",
              help="Write the program's records, one row per record, to FILE (.csv or .parquet).")
@click.option("--slo", "slo", default=None, metavar="NAME=SECONDS,…",
              help="Service-level objectives for the goodput of the request metrics: ttft, tpot, e2el "
                   "(e.g. ttft=1,tpot=0.05).")
@click.option("-o", "--output", "output", type=SerqPath(dir_okay=False), default=None,
              help="Write the report to this file (atomically) instead of stdout, in the format its suffix "
                   "names when no --format or --json is given (r.json: JSON; r.csv: CSV; r.txt, or a suffix no "
                   "format has: text).")
@click.option("--check-invariants", is_flag=True, help="Assert every pool's bookkeeping after every event.")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@click.option("--max-events", "max_events", type=EVENTS, default=None, metavar="N",
              help="Stop after N events with the partial report (exit status 3).")
@click.option("--max-wall", "max_wall", type=SECONDS, default=None,
              metavar="SECONDS", help="Stop after SECONDS of wall-clock time with the partial report (exit 3).")
@click.option("--max-samples", "max_samples", type=SAMPLES, default=None, metavar="N",
              help="Stop with the partial report once N samples are held (exit 3; default 100000000).")
@click.option("--strict", is_flag=True,
              help="Warnings are errors: exit status 4 when the report has a warning (sessions that wait for "
                   "ever, ...).")
@click.pass_obj
def run_command(pm, file, sets, defs, seed, horizon, warmup, arrivals, trace, as_json, fmt, dump, records_file,
                slo, output, check_invariants, no_progress, max_events, max_wall, max_samples, strict) -> None:
    """Simulate a program and print its report.

    The report's sections and figures: packages/serq-report/README.md; the simulation: docs/simulator.md.

    Exit status: 0; 1 for an error in the program or its inputs; 2 for a usage error; 3 when the run
    stopped at --max-events, --max-wall or --max-samples, or ran out of memory (the report is partial,
    marked so); 4 under --strict when the report has a warning; 130 on Ctrl-C, 143 on SIGTERM and 129 on
    SIGHUP (the partial report is written all the same).

    \b
    Examples:
      serq run examples/single-turn/mg1.sq --seed 2
      serq run examples/single-turn/mg1.sq --set lambda=0.9 --def service="~erlang(4, 1)" -o r.json
      serq run examples/multi-turn/vllm.sq --records req.csv --slo ttft=1,tpot=0.05 --dump out/
    """
    from .api import run
    from .report import PARTIAL_EXIT, record_program

    if as_json and fmt not in (None, "json"):
        raise click.UsageError("--json and --format name two formats")
    reporters = collect(pm, "serq_report_register_formats", "report format")
    # (--format "" names no format: refused)
    fmt = "json" if as_json else (report_format(output, reporters) if fmt is None else fmt)
    if fmt not in reporters:
        known = ", ".join(reporters.names())
        if not known:
            from serq.parts import how_to_have

            raise UserError(f"no report format is installed; {how_to_have(pm, 'serq-report')}")
        from serq.errors import did_you_mean
        from serq.parts import others_switched_off

        raise UsageError(f"--format {clipped(fmt) or repr(fmt)}: unknown report format (installed: {known})"
                         + did_you_mean(fmt, reporters.names()) + others_switched_off(pm))
    dumper = None
    if dump is not None:
        try:
            from serq_report import dump as dumper
        except ImportError:
            raise UserError("--dump needs serq-report (pip install serq-report)") from None
    options = to_load_options(sets, defs)
    try:
        program = load_program(pm, file, options)
    except MemoryError as e:  # no sample exists yet: --max-samples bounds nothing that took it
        from .memguard import escaped

        raise escaped(e, None) from None
    check_trace_beside(program, file, trace)
    with sets_noted(options.sets):  # (a horizon --set gave, below --warmup)
        program = apply_run_overrides(program, seed=seed, horizon=horizon, warmup=warmup, arrivals=arrivals,
                                      name=file)
    if program.run.horizon is None:
        from serq.loading import no_horizon

        raise no_horizon(program, file)
    slos = None
    if slo is not None:
        from .metrics import NO_REQUESTS, parse_slo, records_requests

        try:
            slos = parse_slo(slo)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--slo") from None
        # before the run, as the program's tables say (it ran to the end, its report and records lost, to be
        # refused for want of a table it never had)
        if not records_requests(program):
            raise UserError(f"--slo: {NO_REQUESTS}")
    record_paths: dict[str, str] = {}
    if records_file is not None:
        from .records import record_files

        if not records_file.lower().endswith((".csv", ".parquet")):
            raise click.BadParameter(f"{shown_path(records_file)}: a records file ends in .csv or .parquet",
                                     param_hint="--records")
        if not program.records:
            raise UserError(f"--records {shown_path(records_file)}: the program declares no records (`record NAME {{ col = "
                            "expr; … }`; lib/vllm.sq's vllm_request records every request)")
        if records_file.lower().endswith(".parquet"):
            from .records import need_parquet

            need_parquet(records_file)  # before the run, not after it (its report and records lost)
        record_paths = record_files(records_file, [r.name for r in program.records])
        from .records import writer_loaded

        writer_loaded(records_file)  # (before the run: not in the room a run stopped for memory kept)
    inputs = run_inputs(program, file, trace) if output or dump is not None or record_paths else []
    # every output is refused before the run, not after it: an input of the run, one the write would
    # refuse or could not create, two outputs that are one file
    outputs = [("-o", output, False)] if output else []
    # a program of several tables: STEM.NAME.EXT beside the file the user named, a name serq makes (own)
    outputs += [("--records", path, path != records_file) for path in record_paths.values()]
    if dump is not None:
        from serq_report.csv import file_names

        check_folder(dump)  # a dump makes its folder: one that cannot be is refused now, not after the run
        if program.gauges:
            check_folder(os.path.join(dump, "gauge"), own=True)
        dumped = []  # (each file the dump writes, what it holds)
        for folder, names, kind in ((dump, [o.name for o in program.observes], "observe"),
                                    (os.path.join(dump, "gauge"), [g.name for g in program.gauges], "gauge")):
            for name in file_names(names).values():
                outputs.append(("--dump", os.path.join(folder, f"{name}.csv"), True))
                dumped.append((outputs[-1][1], kind))
        from serq.files import DUMP_MANIFEST

        outputs.append(("--dump", os.path.join(dump, DUMP_MANIFEST), True))  # its list of files, written last
        dumped.append((outputs[-1][1], "list"))
    # the folders the dump makes (it, its gauge folder, the parents it lacks): an output in one of them that
    # is not there yet is checked with the dump's folder (check_folder), and it is made before any is written
    made = _dump_folders(dump, bool(program.gauges)) if dump is not None else set()
    for _what, path, own in outputs:
        check_not_input(path, inputs)
        folder = os.path.dirname(path) or "."
        if os.path.isdir(folder) or os.path.abspath(folder) not in made:
            check_output(path, own=own)
    # the folders the dump writes files into: DIR, and DIR/gauge when the program has gauges (`-o DIR/gauge`
    # wrote the report there, then the dump failed: "out/gauge: is not a folder")
    folders = [("--dump", dump)] if dump is not None else []
    if dump is not None and program.gauges:
        folders.append(("--dump's gauge folder", os.path.join(dump, "gauge")))
    check_distinct(((what, path) for what, path, _ in outputs), folders=folders)
    if dump is not None:
        from serq.files import check_dumped

        for path, kind in dumped:  # a file there that no dump wrote (the user named the folder, not its files)
            check_dumped(path, kind)
    if record_paths:
        from serq.files import check_recorded

        for path in record_paths.values():  # a file beside the one named that no run wrote
            if path != records_file:
                check_recorded(path, records_file)
    # each file is written by one command at a time (serq.files.output_held, the lock a sweep or a comparison
    # writing it holds while it runs): one held now is refused before the run, not after it
    locked = _locked_outputs(output, record_paths)
    with _outputs_held(locked, OUTPUT_LOOK, before=True):
        pass
    from .notes import never_ends, no_end_refused, no_sessions

    endless = no_end_refused(program, {"max_events": max_events, "max_wall": max_wall})
    if endless is not None:  # (it warned, then ran until it was killed: serq_sim.run refuses it as well)
        if program.run.span is not None and not isinstance(program.run.span.horizon, str | None):
            # the run block's `horizon inf;`: the error at it, where its user changes it (serq_sim.errors'
            # rule of a setting's errors); a horizon of --horizon inf has no place in the source to show
            from .errors import setting_error, setting_origins

            raise setting_error(setting_origins(program.run, {}), {"horizon": program.run.horizon}, ("horizon",),
                                None, endless)
        raise UserError(located(None, endless, file))
    for warning in no_sessions(program.workload):  # said before the run too (the report says it again)
        click.echo(f"serq: {warning}", err=True)
    for warning in never_ends(program):  # before the run: said at its end, it would come after the kill
        click.echo(f"serq: {warning}", err=True)
    if trace is not None:
        from .trace import check_replaceable

        check_replaceable(program, trace)  # (named --trace FILE here: run() names its argument, trace=FILE)
    # a run-time error of a program given --set: the values it ran with, after it; one in a --def body: its line;
    # one of an IR file: the lines of the files its spans name, from where it was compiled
    from serq.loading import stdout_to_stderr

    from .errors import spans_of

    # what a plugin's code writes to standard output during the run (a stage kind's or a policy's print, an
    # os.write(1, …)) goes to standard error: standard output is the report's (serq run --json began with it)
    with sets_noted(options.sets), defs_quoted(options.defs), spans_of(file, program), stdout_to_stderr():
        report = run(program, check_invariants=check_invariants, progress=not no_progress, trace=trace,
                     pm=pm, max_events=max_events, max_wall=max_wall, max_samples=max_samples)
    record_program(report, file, _read_bytes(file), program, options.sets, options.defs, pm)
    if slos is not None:
        try:
            report.set_slo(slos)
        except ValueError as e:
            raise UserError(f"--slo: {e}") from None
    from serq.files import folders_synced_once

    # a signal now would lose the report: it is written first; each file is fsynced, each folder once at the end
    with signals.deferred(), folders_synced_once(), contextlib.ExitStack() as held:
        from serq.plugins import FormatWallStop, report_text

        try:
            # --max-wall bounds a third party's format too, by the same number of seconds from its start (a
            # run stopped at the bound still has its partial report written by a format that returns)
            text = report_text(pm, reporters, fmt, report, max_wall=max_wall)
        except FormatWallStop as e:
            click.echo(f"serq: {e}", err=True)
            sys.exit(PARTIAL_EXIT["max-wall"])
        dump_made: list[str] = []  # (the folders made here for the dump: removed again, once empty, if it fails)
        if dump is not None:
            # checked again: made a file (or its parent one) during the run, it was "D: File exists"
            check_folder(dump)
            dump_made = _missing_folders(dump)
            os.makedirs(dump, exist_ok=True)  # (what the dump does first) for the outputs written into it
        printed = None  # standard output's failure, said once the files are written (| head, >&-: none is lost)
        held.enter_context(_outputs_held(locked, OUTPUT_WAIT))  # (until each file is written whole)
        if output:
            write_atomic(output, text, inputs=inputs)
        else:
            from serq.cli import StdoutError

            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except StdoutError as e:
                printed = e
        if dumper is not None:
            try:
                dumper(report, dump, inputs=inputs)
            except BaseException:
                # the dump is all or nothing (serq_report.csv): nothing of it is left, nor a folder made for it
                # that holds nothing else (the report's -o inside it keeps it)
                for folder in dump_made:
                    try:
                        os.rmdir(folder)
                    except OSError:
                        break
                raise
        if record_paths:
            from .records import hold_set
            from .records import write as write_records

            taken = hold_set(records_file, len(record_paths))  # (one run's set, never a mix of two runs')
            try:
                from serq.files import renamed_together

                # the set all or nothing: a write that failed part way (a full disk) left the tables written
                # before it beside an earlier run's others, a mix of two runs
                with renamed_together():
                    for name, path in record_paths.items():
                        write_records(report.record_table(name), path, inputs, own=path != records_file)
            finally:
                if taken is not None:
                    os.close(taken)
            if any(path != records_file for path in record_paths.values()):
                # FILE itself is not written: say which files are (the user looked for FILE and found none)
                names = [shown_path(path) for path in record_paths.values()]
                click.echo(f"serq: --records {shown_path(records_file)}: the program has {len(names)} record "
                           f"tables, written as {', '.join(names[:-1])} and {names[-1]}", err=True)
        if printed is not None:
            raise printed
    # a signal held while the report was written (or whose exception was dropped) is answered here
    held = signals.acknowledge()
    status = report.exit_status or held
    stopped = report.stopped_note
    if stopped is not None and output:
        # (the report, in its file, says so; the terminal said nothing but the exit status)
        from .report import STOPPED_TAIL

        why = stopped.removeprefix("note: ").removesuffix(STOPPED_TAIL)
        click.echo(f"serq: {why}: the report in {shown_path(output)} is partial (its figures cover what was "
                   "simulated)", err=True)
    if not status and strict and report.warnings:
        # (the status alone said nothing where the report went to a file: -o holds the warnings, the terminal none)
        click.echo(strict_message(report.warnings), err=True)
        status = STRICT_EXIT
    if status:
        sys.exit(status)


def strict_message(warnings: list[str]) -> str:
    """What ``serq run --strict`` says on stderr as it exits 4: how many warnings the report has, and the
    first of them whole (the report, on stdout or in ``-o FILE``, has them all)."""
    first = warnings[0].removeprefix("warning: ")
    if len(warnings) == 1:
        return f"error: --strict: the report has 1 warning (exit status {STRICT_EXIT}): {first}"
    return f"error: --strict: the report has {len(warnings)} warnings (exit status {STRICT_EXIT}); the first: {first}"


def report_format(output: str | None, reporters) -> str:
    """The report format of ``serq run`` when neither ``--format`` nor ``--json`` names one: the one the
    suffix of ``-o FILE`` names, compared without case (``r.json``: ``json``; a plugin's format ``html``
    for ``r.html``; ``r.csv``: ``csv``, serq-report's CSV report), else ``text`` (no ``-o``, ``r.txt``, a
    suffix no registered format has). ``serq run p.sq -o r.json`` wrote the text report into ``r.json``, and
    ``-o r.csv`` did until serq-report registered ``csv``. A format flag always wins, whatever the suffix."""
    if output:
        from serq.files import split_suffix

        suffix = split_suffix(output)[1][1:].lower()
        if suffix and suffix in reporters:
            return suffix
        # a format whose name has capitals (a plugin's HTML for r.html): without case, when one name fits
        named = [n for n in reporters.names() if n.lower() == suffix] if suffix else []
        if len(named) == 1:
            return named[0]
    return "text"


#: how long ``serq run`` waits, before its run, for another command writing one of its outputs (a run writes its
#: files in moments; a sweep or a comparison holds its table while it runs: refused then, nothing run)
OUTPUT_LOOK = 5.0
#: how long it waits for one, once its run is over, before its report and records are refused (as a set of
#: record tables waits for its folder, serq_sim.records.SET_WAIT)
OUTPUT_WAIT = 60.0


def _locked_outputs(output: str | None, record_paths: dict[str, str]) -> list[tuple[str, str]]:
    """The files ``serq run`` writes that are held as every writer of a file holds it (serq.files.output_held):
    ``-o FILE`` and each table of ``--records``, with the option that names it. A dump's files are its
    folder's, held as the folder (serq_report.csv)."""
    held = [("-o", output)] if output else []
    return held + [("--records", path) for path in dict.fromkeys(record_paths.values())]


@contextlib.contextmanager
def _outputs_held(outputs: list[tuple[str, str]], seconds: float, before: bool = False):
    """Within, each of ``outputs`` this run's alone (serq.files.output_held), each waited for up to ``seconds``:
    still held by another command (a sweep or a comparison writing that table, another run writing it at that
    moment), or a sweep's journal of runs there that did not end, it is refused, in the words every writer's
    refusal has, and nothing is written (``before``: nothing is run)."""
    from serq.files import OutputError, OutputTaken, output_held

    with contextlib.ExitStack() as stack:
        for what, path in outputs:
            try:
                stack.enter_context(output_held(path, f"another {what}", seconds=seconds,
                                                head=f"{what} {shown_path(path)}"))
            except OutputTaken as e:
                if e.why == "signal":
                    raise OutputError(f"{what} {shown_path(path)}: a signal came while this run waited for another "
                                      "command writing this file (nothing was written)") from None
                then = "nothing was run" if before else "the run's report and records were not written"
                raise OutputError(f"{str(e).removeprefix('error: ')} ({then})") from None
        yield


def _missing_folders(folder: str) -> list[str]:
    """The folders ``folder`` and its parents that are not there, innermost first (absolute)."""
    missing = []
    at = os.path.abspath(folder)
    while not os.path.lexists(at) and at != os.path.dirname(at):
        missing.append(at)
        at = os.path.dirname(at)
    return missing


def _dump_folders(dump: str, gauges: bool) -> set[str]:
    """The folders ``--dump DIR`` makes (absolute): DIR, its ``gauge`` folder when the program has gauges, and
    each parent of DIR that does not exist."""
    folder = os.path.abspath(dump)
    made = {folder, os.path.join(folder, "gauge")} if gauges else {folder}
    parent = os.path.dirname(folder)
    while not os.path.isdir(parent) and parent != os.path.dirname(parent):
        made.add(parent)
        parent = os.path.dirname(parent)
    return made


@click.command("fit")
@click.argument("steps", type=SerqPath(dir_okay=False))
@click.option("--name", default="fitted", show_default=True, metavar="NAME",
              help="The name of the profile's definition printed at the end.")
@click.option("--json", "as_json", is_flag=True,
              help="Write the fit as JSON (the form of examples/replay/a100_step_fit.json).")
def fit_command(steps, name, as_json) -> None:
    """Fit a step-cost profile to a step trace.

    STEPS is JSON Lines, one iteration a line: {"decoders": …, "kv_decode": …, "prefilled": …,
    "attention": …, "time": seconds}. Prints the non-negative least-squares coefficients of
    c + d * decoders + e * kv_decode + a * prefilled + b * attention (each a cost, at least 0: one the
    constraint holds at 0 is named, with its unconstrained value), the mean absolute percentage
    error by batch kind (decode-only, prefill-only, mixed, idle), and the profile as a definition a step
    stage's cost can name (lib/step_costs.sq). How to measure the steps and read the fit: docs/step-costs.md,
    "Fitting a new one".

    Exit status: 0; 1 for an error in STEPS (a line that is no step, a coefficient no step can fit) or a
    STEPS that cannot be read; 2 for a usage error (a flag, a --name that is no name).

    \b
    Examples:
      serq fit steps.jsonl --name h100_llama8b
      serq fit steps.jsonl --json
    """
    import re

    from .fit import fit_steps, read_steps, render, to_json

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise click.BadParameter(f"{clipped(name)!r} is not a name", param_hint="--name")
    try:  # a name the language keeps for itself prints a definition no program compiles
        from serq_frontend.names import word_kind
    except ImportError:  # pragma: no cover - serq-frontend is not installed: nothing compiles the profile here
        word_kind = None
    if word_kind is not None and word_kind(name) is not None:
        raise click.BadParameter(f"{name!r} is a word of the language; a definition needs another name",
                                 param_hint="--name")
    fit = fit_steps(read_steps(steps), steps)
    sys.stdout.write(to_json(fit) if as_json else render(fit, name))
