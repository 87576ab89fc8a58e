"""Hook specifications of serq-report (added to the host through ``serq_addhooks``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("serq")


@hookspec
def serq_report_register_formats(register: Callable[[str, Any], None]) -> None:
    """Called when a command writes a report, to add report formats.

    :param register: ``register(name, reporter)``; ``reporter(result, out)`` writes a
        ``serq_ir.report.Result`` to the text stream ``out``. The built-ins are ``text`` and ``json``.
    """
