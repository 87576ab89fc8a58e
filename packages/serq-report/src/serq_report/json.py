"""The JSON report: the :class:`~serq_ir.report.Result` encoded with msgspec.

Keys in the order of the struct's fields (``report_version, serq_version, program, horizon, end,
warmup, seed, events, arrivals, ended, turns, mean_live, interrupted, partial, observes, instants,
records, requests, stages, pools, gauges, notes``), every field present (defaults included), NaN and infinities as ``null``, pretty-printed with a 2-space indent, UTF-8,
ending in a newline. The same Result always gives the same bytes.
"""

from __future__ import annotations

from typing import Any, TextIO

import msgspec

from ._result import result_of

__all__ = ["encode_json", "json_reporter"]

_encoder = msgspec.json.Encoder()


def encode_json(report: Any) -> bytes:
    """The JSON report of a report (or a bare Result) as UTF-8 bytes."""
    return msgspec.json.format(_encoder.encode(result_of(report)), indent=2) + b"\n"


def json_reporter(report: Any, out: TextIO) -> None:
    """The ``json`` format: writes :func:`encode_json` to ``out``."""
    from ._result import text_out

    text_out(out, "json_reporter")
    out.write(encode_json(report).decode("utf-8"))
