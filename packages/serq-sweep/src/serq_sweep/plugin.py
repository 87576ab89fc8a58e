"""serq-sweep as a part of ``serq``: the ``sweep``, ``compare``, ``plot`` and ``metrics`` commands."""

from __future__ import annotations

from serq import hookimpl


@hookimpl
def serq_register_commands(register):
    from serq.cli import LazyCommand  # the commands' module is imported when one of them runs

    for name in ("sweep", "compare", "plot"):
        register(LazyCommand(name, f"serq_sweep.cli:{name}_command"))
    register(LazyCommand("metrics", "serq_sweep.served:metrics_command"))
