"""``serq run FILE``: simulate a program (``.sq`` or ``.ir.json``) and write its report."""

from __future__ import annotations

import io
import sys

import click
from serq.errors import UserError
from serq.files import write_atomic
from serq.loading import apply_run_overrides, load_program
from serq.options import load_options, run_options, to_load_options
from serq.plugins import collect


@click.command("run")
@load_options
@run_options
@click.option("--trace", "trace", type=click.Path(dir_okay=False), default=None,
              help="Replay this CSV trace instead of the workload's.")
@click.option("--json", "as_json", is_flag=True, help="Write the report as JSON (--format json).")
@click.option("--format", "fmt", default=None, metavar="NAME", help="Report format (text, json, …).")
@click.option("--dump", "dump", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write each observe's samples and each gauge's change points as CSV into DIR.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file (atomically) instead of stdout.")
@click.option("--check-invariants", is_flag=True, help="Assert every pool's bookkeeping after every event.")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@click.pass_obj
def run_command(pm, file, sets, defs, seed, horizon, warmup, arrivals, trace, as_json, fmt, dump, output,
                check_invariants, no_progress) -> None:
    """Simulate a program and print its report."""
    from .api import run

    if as_json and fmt not in (None, "json"):
        raise click.UsageError("--json and --format name two formats")
    fmt = "json" if as_json else (fmt or "text")
    reporters = collect(pm, "serq_report_register_formats", "report format")
    if fmt not in reporters:
        known = ", ".join(reporters.names())
        if not known:
            raise UserError("no report format is installed; install serq-report (pip install serq-report)")
        raise UserError(f"--format {fmt}: unknown report format (installed: {known})")
    dumper = None
    if dump is not None:
        try:
            from serq_report import dump as dumper
        except ImportError:
            raise UserError("--dump needs serq-report (pip install serq-report)") from None
    program = load_program(pm, file, to_load_options(sets, defs))
    program = apply_run_overrides(program, seed=seed, horizon=horizon, warmup=warmup, arrivals=arrivals)
    report = run(program, check_invariants=check_invariants, progress=not no_progress, trace=trace,
                 pm=pm)
    buf = io.StringIO()
    reporters[fmt](report, buf)
    text = buf.getvalue()
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if dumper is not None:
        dumper(report, dump)
    if report.interrupted:
        sys.exit(130)
