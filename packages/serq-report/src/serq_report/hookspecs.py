"""Hook specifications of serq-report (added to the host through ``serq_addhooks``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

import pluggy

hookspec = pluggy.HookspecMarker("serq")

# ---------------------------------------------------------------------------------------------------
# Report formats
# ---------------------------------------------------------------------------------------------------


@hookspec
def serq_report_register_formats(register: Callable[[str, Callable[[Any, TextIO], None]], None]) -> None:
    """Called when a command writes a report, to add report formats.

    :param register: ``register(name, reporter)``; ``reporter(report, out)`` writes ``report`` to the
        text stream ``out``. ``report`` is a ``serq_sim.Report``: ``report.result`` is a
        ``serq_ir.report.Result``, ``report.observe(name)`` has the samples (numpy arrays ``values,
        times, sessions, turns``) and ``report.gauge(name)`` the change points (``times, values``). The
        built-ins are ``text``, ``json`` and ``csv``; a name two plugins register is an error naming both.
    """
