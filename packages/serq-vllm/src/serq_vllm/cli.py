"""``serq vllm …``: the oracle scenarios, the engine configuration a program implies, the bridge."""

from __future__ import annotations

import json

import click
from serq import UserError
from serq.errors import shown_path
from serq.options import Number, set_def_options
from serq.options import Path as SerqPath

#: ``serq vllm real --timeout``: seconds, more than 0, or inf
TIMEOUT = Number("a positive number of seconds, or inf", low=0.0, above=True, inf=True)


@click.group("vllm")
def vllm_group() -> None:
    """vLLM v1 as a serQ program: oracle scenarios, targets, the real scheduler.

    \b
    Examples:
      serq vllm scenarios
      serq vllm scenario vllm/preempt
      serq vllm target examples/multi-turn/vllm.sq
    """


@vllm_group.command("scenarios")
def scenarios_command() -> None:
    """List the oracle scenarios shipped with serq-vllm (group/name, requests, path).

    Exit status: 0; 2 for a usage error.

    \b
    Example:
      serq vllm scenarios
    """
    from .scenarios import list_scenarios

    rows = list_scenarios()
    width = max(len(r.name) for r in rows)
    for r in rows:
        click.echo(f"{r.name:<{width}}  {r.summary}  {r.path}")


def _read(file: str) -> dict:
    from .scenarios import read_scenario

    return read_scenario(file)


@vllm_group.command("scenario")
@click.argument("file", type=SerqPath())
@click.pass_obj
def scenario_command(pm, file: str) -> None:
    """Run a scenario (a file, or a name `serq vllm scenarios` lists) through lib/vllm.sq's
    vllm_request on the step clock and print the answer as JSON, in the oracle's conventions. A scenario
    file is JSON (docs/vllm-oracle.md, "What a scenario may say").

    Exit status: 0; 1 for an error in the scenario (or no such scenario); 2 for a usage error.

    \b
    Example:
      serq vllm scenario vllm/preempt
    """
    from serq.loading import stdout_to_stderr

    from .scenarios import ScenarioError, _run, scenario_path

    sc = _read(file)  # read_scenario checked it
    try:
        # what a plugin's code writes to standard output while lib/vllm.sq compiles and runs (a sugar layer's or
        # a stage kind's hook, a print, an os.write(1, …)) goes to standard error, as serq run's does: standard
        # output is the answer's JSON, which such a line came ahead of
        with stdout_to_stderr():
            answer = _run(sc, pm)
    except ScenarioError as e:  # the run's error (a request that never finished) at its place in the file
        from serq.jsonin import fault_at, read_text

        p = scenario_path(file)
        raise UserError(fault_at(read_text(p, "a scenario"), p, e)) from None
    except UserError as e:  # any other of the run's errors names the scenario's file
        msg, shown = str(e).removeprefix("error: "), shown_path(file)
        raise UserError(f"{shown}: {msg}" if not msg.startswith(f"{shown}:") else msg) from None
    click.echo(json.dumps(answer, sort_keys=False))


@vllm_group.command("real")
@click.argument("file", type=SerqPath())
@click.option("--python", "python", type=SerqPath(dir_okay=False), default=None, metavar="PATH",
              help="Run the bridge in this interpreter (one that has vLLM), not serQ's own.")
@click.option("--timeout", "timeout", type=TIMEOUT, default=None, metavar="SECONDS",
              help="Stop the bridge and fail when it has not answered after SECONDS "
                   "(default 600; inf: wait as long as it takes).")
def real_command(file: str, python: str | None, timeout: float | None) -> None:
    """Run a scenario through an installed vLLM's real scheduler (fake model runner) and print the same
    JSON. vLLM is not a dependency: see docs/vllm-oracle.md ("Installing vLLM CPU-only").

    Exit status: 0; 1 for an error in the scenario, a vLLM that is not installed, or a bridge that failed
    or did not answer in time; 2 for a usage error.

    \b
    Examples:
      serq vllm real vllm/preempt
      serq vllm real --python ~/vllm-venv/bin/python --timeout 120 vllm/preempt
    """
    import sys

    from . import real

    scenario = _read(file)
    limit = real.TIMEOUT if timeout is None else timeout
    if python is not None:
        result = real.run_real_in(python, scenario, timeout=limit)
    elif real.vllm_version() is None:  # said at once, without starting an interpreter
        raise UserError(str(real.not_installed()))
    elif not sys.executable:  # (an embedding Python that cannot name itself: here, without a time limit)
        try:
            result = real.run_real(scenario)
        except real.VllmNotInstalled as e:
            raise UserError(str(e)) from None
    else:
        # in serQ's own interpreter, as a process of its own, so that it has the timeout of --python's: run
        # here, a vLLM that never answered (an import waiting on a lock, a scheduler that loops) kept the
        # command waiting for ever, with nothing to stop it but Ctrl-C
        result = real.run_real_in(sys.executable, scenario, timeout=limit,
                                  named=f"the bridge in serQ's interpreter ({sys.executable})")
    click.echo(json.dumps(result))


@vllm_group.command("target")
@click.argument("file", type=SerqPath(dir_okay=False))
@set_def_options
@click.pass_obj
def target_command(pm, file: str, sets, defs) -> None:
    """Print the vLLM engine configuration a program implies (the *.target.json shape).

    What the configuration cannot say of the program is a warning on stderr (and under "warnings"); the
    correspondence: docs/vllm.md.
    Exit status: 0; 1 for an error in the program, or one vLLM has no configuration for; 2 for a usage error.

    \b
    Examples:
      serq vllm target examples/multi-turn/vllm.sq
      serq vllm target examples/multi-turn/vllm.sq --set C=64
    """
    from serq.loading import defs_quoted, load_program, sets_noted, stdout_to_stderr
    from serq.options import to_load_options

    from .target import target

    options = to_load_options(sets, defs)
    program = load_program(pm, file, options)  # (a loader's output goes to standard error: load_program)
    # (`budget B;` refused as inf named no --set B; one in a --def body quotes the body, as serq run does); what
    # plugin code writes to standard output while the target is worked out goes to standard error, as serq run's
    with sets_noted(options.sets), defs_quoted(options.defs), stdout_to_stderr():
        answer = target(program, file)
    for warning in answer.get("warnings", ()):  # (in the JSON too, under warnings)
        click.echo(f"warning: {warning}", err=True)
    click.echo(json.dumps(answer, indent=2, sort_keys=True))
