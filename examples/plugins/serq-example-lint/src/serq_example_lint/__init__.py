"""``serq lint FILE``: runs every lint that an installed plugin registers through the hook
``serq_example_lint_register``, which this plugin adds to the plugin manager.

``serq_addhooks`` is how a part adds hook specifications of its own (serq-frontend, serq-sim and
serq-report add theirs so); any plugin, this one included, may then implement them. This plugin adds the
hook, a command that calls it, and one lint of its own: a stage that no ``run`` names.
"""

from __future__ import annotations

import click
import msgspec
from serq import hookimpl


@hookimpl
def serq_addhooks(pluginmanager):
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def _runs(obj):
    """Every ``Run`` node below ``obj`` (a walk of the IR's structs and lists)."""
    from serq_ir import nodes as N

    todo = [obj]
    while todo:
        x = todo.pop()
        if isinstance(x, N.Run):
            yield x
        if isinstance(x, msgspec.Struct):
            todo.extend(getattr(x, f) for f in x.__struct_fields__)
        elif isinstance(x, list):
            todo.extend(x)


def unused_stages(program):
    used = {ref.stage for run in _runs(program) for ref in run.stages}
    return [f"stage `{s.name}` is declared and no run names it" for i, s in enumerate(program.stages)
            if i not in used]


@hookimpl
def serq_example_lint_register(register):
    register("unused-stage", unused_stages)


@click.command("lint")
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_obj
def lint_command(pm, file):
    """Run every registered lint on a program (source or IR); exit 1 when one finds something."""
    from serq.loading import load_program

    program = load_program(pm, file)
    lints = []
    pm.hook.serq_example_lint_register(register=lambda name, fn: lints.append((name, fn)))
    found = 0
    for name, fn in sorted(lints, key=lambda x: x[0]):
        for finding in fn(program):
            click.echo(f"{file}: {name}: {finding}")
            found += 1
    if found:
        raise SystemExit(1)
    click.echo(f"{file}: {len(lints)} lint(s), nothing found")


@hookimpl
def serq_register_commands(register):
    register(lint_command)
