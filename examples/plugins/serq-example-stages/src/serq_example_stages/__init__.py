"""``serq stages FILE``: a program's stages, one line each: name, family size and kind (a plugin's
kind as ``@name`` and its params).

A command is a ``click.Command`` registered through ``serq_register_commands``; the ``serq`` command
passes its plugin manager as the click context object, and ``serq.loading.load_program`` loads a file
through the loaders it has (so a source program may name every plugin's kinds).
"""

from __future__ import annotations

import json

import click
from serq import hookimpl


@click.command("stages")
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_obj
def stages_command(pm, file):
    """List the stages of a program (source or IR) and their kinds."""
    from serq.loading import load_program
    from serq_ir import nodes as N

    program = load_program(pm, file)
    for stage in program.stages:
        kind = stage.kind
        if isinstance(kind, N.Extension):
            what = f"@{kind.name}" + ("" if kind.params is None else f" {json.dumps(kind.params)}")
        else:
            what = type(kind).__name__.lower()
        click.echo(f"{stage.name} {stage.size} {what}")


@hookimpl
def serq_register_commands(register):
    register(stages_command)
