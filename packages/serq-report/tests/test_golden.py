"""Golden files: the text and JSON reports, byte for byte.

Regenerate with ``SERQ_UPDATE_GOLDEN=1 .venv/bin/python -m pytest packages/serq-report/tests`` and
read the diff before committing it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import serq_report

GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("SERQ_UPDATE_GOLDEN"))


def check_golden(name: str, data: bytes) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_bytes(data)
    assert path.exists(), f"missing golden file {path}; run with SERQ_UPDATE_GOLDEN=1"
    assert data == path.read_bytes(), f"{name} differs from its golden file"


@pytest.mark.parametrize("fmt, ext", [("text", "txt"), ("json", "json")])
def test_full_report(report, fmt, ext):
    check_golden(f"full.{ext}", serq_report.render(report, fmt).encode("utf-8"))


@pytest.mark.parametrize("fmt, ext", [("text", "txt"), ("json", "json")])
def test_minimal_report(fake_report, minimal_result, fmt, ext):
    check_golden(f"minimal.{ext}", serq_report.render(fake_report(minimal_result), fmt).encode("utf-8"))


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_reporter_writes_what_render_returns(report, fmt):
    out = io.StringIO()
    serq_report.BUILTIN_FORMATS[fmt](report, out)
    assert out.getvalue() == serq_report.render(report, fmt)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_bare_result_is_accepted(report, fmt):
    assert serq_report.render(report.result, fmt) == serq_report.render(report, fmt)
