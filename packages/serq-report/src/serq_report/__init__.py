"""serQ's reporters: the text and JSON reports of a simulation, and its CSV dumps.

A reporter is ``reporter(report, out)``: it writes a report (a ``serq_sim.Report``, of which the text
and JSON reporters read only ``.result``, a :class:`serq_ir.report.Result`; a bare ``Result`` is
accepted too) to the text stream ``out``. The formats are registered through the hook
``serq_report_register_formats(register)``; this part registers ``text`` and ``json``.
"""

from __future__ import annotations

import io
from typing import Any

from serq.errors import UserError

from .atomic import open_atomic, write_atomic
from .csv import dump
from .json import encode_json, json_reporter
from .text import format_number, render_text, text_reporter

__all__ = [
    "BUILTIN_FORMATS",
    "dump",
    "encode_json",
    "format_number",
    "formats",
    "json_reporter",
    "open_atomic",
    "render",
    "render_text",
    "text_reporter",
    "write_atomic",
]

#: The formats this part registers, by name.
BUILTIN_FORMATS = {"text": text_reporter, "json": json_reporter}


def formats(pm: Any = None) -> Any:
    """The report formats every installed plugin registers: a :class:`serq.plugins.Registry`.

    :param pm: a plugin manager; default: a new ``serq.get_plugin_manager()``. A name two plugins
        register is a :class:`serq.PluginError` naming both.
    """
    from serq import get_plugin_manager
    from serq.plugins import collect

    return collect(pm or get_plugin_manager(), "serq_report_register_formats", "report format")


def render(report: Any, fmt: str = "text", *, pm: Any = None) -> str:
    """The report in format ``fmt``, as a string.

    ``text`` and ``json`` are built in; another name is looked up among the formats the plugins of
    ``pm`` register (a new plugin manager when ``pm`` is not given). An unknown name is a
    :class:`serq.UserError` listing the known ones.
    """
    reporter = BUILTIN_FORMATS.get(fmt) if pm is None else None
    if reporter is None:
        registry = formats(pm)
        reporter = registry.get(fmt)
        if reporter is None:
            known = ", ".join(sorted(set(registry.names()) | (set(BUILTIN_FORMATS) if pm is None else set())))
            raise UserError(f"unknown report format {fmt!r} (known: {known})")
    out = io.StringIO(newline="")
    reporter(report, out)
    return out.getvalue()
