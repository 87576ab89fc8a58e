"""serQ's reporters: the text, JSON and CSV reports of a simulation, and its CSV dumps.

A reporter is ``reporter(report, out)``: it writes a report (a ``serq_sim.Report``, of which the text
and JSON reporters read only ``.result``, a :class:`serq_ir.report.Result`; a bare ``Result`` is
accepted too) to the text stream ``out``. The formats are registered through the hook
``serq_report_register_formats(register)``; this part registers ``text``, ``json`` and ``csv`` (the
report's figures as rows ``section,name,statistic,value``: :mod:`serq_report.summary_csv`).
"""

from __future__ import annotations

from typing import Any

from serq.errors import UserError

# The names below are imported on first use (PEP 562), so that importing the package (as the plugin
# host does to register the formats) does not import numpy, msgspec or the IR.
_LAZY = {
    "open_atomic": "atomic", "write_atomic": "atomic",
    "dump": "csv",
    "encode_json": "json", "json_reporter": "json",
    "csv_reporter": "summary_csv", "render_csv": "summary_csv",
    "format_number": "text", "render_text": "text", "text_reporter": "text",
}


def __getattr__(name: str) -> Any:
    g = globals()
    if name in g:
        return g[name]
    if name == "BUILTIN_FORMATS":
        from .json import json_reporter
        from .summary_csv import csv_reporter
        from .text import text_reporter

        value: Any = {"text": text_reporter, "json": json_reporter, "csv": csv_reporter}
    elif name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    g[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

__all__ = [
    "BUILTIN_FORMATS",
    "csv_reporter",
    "dump",
    "encode_json",
    "format_number",
    "formats",
    "json_reporter",
    "open_atomic",
    "render",
    "render_csv",
    "render_text",
    "text_reporter",
    "write_atomic",
]

#: ``BUILTIN_FORMATS``: the formats this part registers, by name (``text``, ``json``, ``csv``), made on first use.


def formats(pm: Any = None) -> Any:
    """The report formats every plugin of ``pm`` registers: a :class:`serq.plugins.Registry`.

    :param pm: a plugin manager; default: the installed plugins
        (``serq.plugins.installed_plugin_manager()``). A name two plugins register is a
        :class:`serq.PluginError` naming both.
    """
    from serq.plugins import api_plugin_manager, collect

    return collect(api_plugin_manager(pm), "serq_report_register_formats", "report format")


def render(report: Any, fmt: str = "text", *, pm: Any = None) -> str:
    """The report in format ``fmt``, as a string.

    The format is looked up among those the plugins of ``pm`` register through
    ``serq_report_register_formats`` (default: the installed plugins), ``text``, ``json`` and ``csv`` as any
    other: serq-report registers them through the hook. An unknown name is a :class:`serq.UserError` listing the
    registered ones.
    """
    from serq.plugins import api_plugin_manager, report_text

    if not isinstance(fmt, str):  # (fmt=3, None: "unknown report format 3", as if a name were misspelt)
        raise TypeError(f"fmt must be a report format's name (a str), not {type(fmt).__name__}")
    pm = api_plugin_manager(pm)
    registry = formats(pm)
    if fmt not in registry:
        # (the name clipped: one of 100 000 characters was quoted whole, where serq run --format clips it)
        from serq.errors import clipped

        if not registry.names():
            raise UserError(f"unknown report format {clipped(fmt)!r}: no plugin registers a report format (serq-report "
                            "registers text, json and csv)")
        from serq.errors import did_you_mean
        from serq.parts import others_switched_off

        raise UserError(f"unknown report format {clipped(fmt)!r} (known: {', '.join(sorted(registry.names()))})"
                        + did_you_mean(fmt, registry.names()) + others_switched_off(pm))
    return report_text(pm, registry, fmt, report)
