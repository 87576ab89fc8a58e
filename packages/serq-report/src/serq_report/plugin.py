"""serq-report as a part of ``serq``: its hook specifications and the ``text``, ``json`` and ``csv`` formats."""

from __future__ import annotations

from serq import hookimpl


@hookimpl
def serq_addhooks(pluginmanager):
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def serq_report_register_formats(register):
    from .json import json_reporter
    from .summary_csv import csv_reporter
    from .text import text_reporter

    register("text", text_reporter)
    register("json", json_reporter)
    register("csv", csv_reporter)
