"""What the reporters read from a report."""

from __future__ import annotations

from typing import Any

from serq_ir.report import Result


def result_of(report: Any) -> Result:
    """The :class:`~serq_ir.report.Result` of a report (anything with ``.result``), or ``report``
    itself when it is a ``Result``."""
    if isinstance(report, Result):
        return report
    try:
        result = report.result
    except AttributeError:
        raise TypeError(
            f"expected a report with .result or a serq_ir Result, got {type(report).__name__}"
        ) from None
    if not isinstance(result, Result):
        raise TypeError(f"report.result is a {type(result).__name__}, not a serq_ir.report.Result")
    return result
