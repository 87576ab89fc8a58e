"""The host's own commands, ``plugins``, ``check`` and ``ir`` (registered by :mod:`serq.builtin`)."""

from __future__ import annotations

import json

import click

from .builtin import plugin_info, summary
from .loading import apply_run_overrides, load_program, sets_noted
from .options import Path as SerqPath
from .options import load_options, run_options, set_def_options, to_load_options


@click.command("plugins")
@click.pass_obj
def plugins_command(pm) -> None:
    """List the installed plugins, their distributions, versions, hooks and what each registers (commands,
    loaders, sugar layers, stage kinds, policies, report formats), as JSON.

    Exit status: 0; 1 when a plugin's registration is wrong (what could be collected is listed, each
    fault said on stderr).

    \b
    Example:
      serq plugins
    """
    from .plugins import registrations

    registers, problems = registrations(pm)
    click.echo(json.dumps(plugin_info(pm, registers), indent=2))
    if problems:
        # what could be collected is listed; a plugin whose registration is wrong is named, status 1
        for message in problems:
            click.echo(message, err=True)
        raise SystemExit(1)


@click.command("check")
@load_options
@click.pass_obj
def check_command(pm, file, sets, defs) -> None:
    """Load and validate a program (source or IR) and print a one-line summary (docs/language.md, "Commands
    and API").

    Exit status: 0 (a trace the workload names that cannot be read is a warning); 1 for an error in the
    program or its inputs; 2 for a usage error.

    \b
    Examples:
      serq check examples/multi-turn/vllm.sq
      serq check examples/multi-turn/vllm.sq --set blocks=2000
      serq check examples/single-turn/mg1.sq --def service="~erlang(4, 1)"
      serq check prog.ir.json
    """
    program = load_program(pm, file, to_load_options(sets, defs))
    click.echo(summary(program))
    from serq_ir.analysis import budget_not_given

    from .errors import shown_path

    for stage in budget_not_given(program):
        # language.txt §2 writes a step stage's `budget` as required; this frontend takes none as infinite, a
        # difference a program may rely on (docs/language.md), said where a program is checked
        # (at the stage's span, or, in an IR without spans, by the file given: the stage is named either way)
        span = stage.span
        where = f"{shown_path(span.file)}:{span.line}:{span.col}" if span is not None else shown_path(file)
        click.echo(f"{where}: note: stage `{stage.name}` gives no `budget`: its budget "
                   "is infinite, every token its residents want in one iteration (docs/language.md, Stages)", err=True)
    unread = unreadable_trace(program)
    if unread is not None:
        click.echo(unread, err=True)


def unreadable_trace(program) -> str | None:
    """The warning of ``serq check`` for a program whose workload's ``trace "FILE"`` cannot be read as a run
    reads it (relative to the program's folder, a regular file only: :func:`serq.files.open_input`), at the
    clause, or None. A warning, not a refusal (docs/language.md, Commands): ``serq run --trace FILE`` replaces
    the workload's trace, so the program may still run; without it ``serq run`` refuses it with the same
    words. The file is opened and closed, not read (a trace's rows are the run's to check)."""
    import os

    from .errors import located, missing_file_note, shown_path
    from .files import open_input

    trace = program.workload.trace
    if trace is None:
        return None
    path = trace.path
    if program.source and not os.path.isabs(path):  # as the run resolves it (serq_sim.trace.resolve_trace)
        path = os.path.join(os.path.dirname(program.source), path)
    path = path or "."
    try:
        open_input(path).close()
    except OSError as e:
        why = e.strerror or str(e)
        if isinstance(e, FileNotFoundError):
            why += missing_file_note(path)
        return located(trace.span, f"cannot read the trace {shown_path(path)}: {why}; `serq run` of the program "
                       "refuses it unless `--trace FILE` replaces it", program.source, kind="warning")
    return None


@click.command("ir")
@click.argument("file", type=SerqPath(dir_okay=False), required=False)
@set_def_options
@run_options
@click.option("--schema", is_flag=True, help="Print the IR's JSON Schema instead.")
@click.option("--no-spans", is_flag=True, help="Leave out source spans.")
@click.pass_obj
def ir_command(pm, file, sets, defs, seed, horizon, warmup, arrivals, schema, no_spans) -> None:
    """Print a program's IR as JSON (or the IR's JSON Schema with --schema).

    The IR's form: packages/serq-ir/README.md, docs/architecture.md and serq ir --schema.

    Exit status: 0; 1 for an error in the program or its inputs; 2 for a usage error.

    \b
    Examples:
      serq ir examples/single-turn/mg1.sq --seed 2 --no-spans
      serq ir --schema
    """
    import serq_ir

    if schema:
        # the schema is the same whatever else is given: a FILE or an option for one was ignored, status 0
        given = [what for what, v in (("FILE", file), ("--set", sets), ("--def", defs), ("--seed", seed),
                                      ("--horizon", horizon), ("--warmup", warmup), ("--arrivals", arrivals),
                                      ("--no-spans", no_spans)) if v is not None and v is not False and v != ()]
        if given:
            raise click.UsageError(f"--schema prints the IR's JSON Schema, of no program: {given[0]} is not "
                                   "for it")
        click.echo(json.dumps(serq_ir.schema(), indent=2, sort_keys=True))
        return
    if file is None:
        raise click.UsageError("missing FILE (or --schema)")
    options = to_load_options(sets, defs)
    program = load_program(pm, file, options)
    with sets_noted(options.sets):  # (a horizon --set gave, below --warmup)
        program = apply_run_overrides(program, seed=seed, horizon=horizon, warmup=warmup, arrivals=arrivals,
                                      name=file)
    if not no_spans:  # (an IR file's nodes without spans, placed in it for its errors, are written without)
        from serq_ir.codec import unplaced

        program = unplaced(program)
    click.echo(serq_ir.encode_pretty(program, spans=not no_spans))
