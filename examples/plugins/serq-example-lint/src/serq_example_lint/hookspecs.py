"""The hook this plugin adds to serQ's plugin manager (through ``serq_addhooks``)."""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("serq")


@hookspec
def serq_example_lint_register(register) -> None:
    """Called by ``serq lint``, to add lints.

    :param register: ``register(name, lint)``; ``lint(program)`` takes a ``serq_ir.Program`` and returns
        a list of findings (strings), empty when the program passes.
    """
