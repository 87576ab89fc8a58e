"""serq-sweep as a part of ``serq``: the ``sweep``, ``compare`` and ``plot`` commands."""

from __future__ import annotations

from serq import hookimpl


@hookimpl
def serq_register_commands(register):
    from .cli import compare_command, plot_command, sweep_command

    register(sweep_command)
    register(compare_command)
    register(plot_command)
