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


def text_out(out: Any, who: str) -> Any:
    """``out``, the text stream a reporter ``who`` writes to, or a TypeError naming it: a reporter took
    anything and failed after the report was made, ``None`` with an AttributeError ('NoneType' object has
    no attribute 'write') and a binary stream (``io.BytesIO``, a file opened ``"wb"``) with "a bytes-like
    object is required"."""
    import io

    if isinstance(out, (io.RawIOBase, io.BufferedIOBase)) or not callable(getattr(out, "write", None)):
        raise TypeError(f"{who}: out is a text stream (sys.stdout, io.StringIO(), a file opened with 'w'), "
                        f"not {type(out).__name__}")
    return out
