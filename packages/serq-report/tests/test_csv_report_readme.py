"""serq-report's README on the CSV report: a figure the run does not have (None in the Result) is left out,
while one that is NaN or infinite, which the JSON report writes as null too, is a row written nan or inf.
The README said every figure the JSON report has as null is left out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import serq_report
from serq_ir.report import ObserveStats, Result, StageStats

pytestmark = pytest.mark.timeout(60)

README = Path(__file__).resolve().parents[1] / "README.md"
NAN, INF = float("nan"), float("inf")

RESULT = Result(
    horizon=INF, end=50.5, warmup=0.0, seed=3, events=12, arrivals=4, ended=4, turns=0, mean_live=0.1,
    interrupted=False, partial=None,
    observes={"ttft": ObserveStats(count=39, mean=0.1, ci=NAN, cv2=0.5, p99=NAN)},
    stages=[StageStats(name="e", index=None, present=1.5, utilisation=1.0, completions=7, throughput=0.5,
                       wait=0.0, service=-INF, iterations=None)],
)


def _csv_section() -> str:
    text = README.read_text()
    return text[text.index("## CSV\n"):text.index("## CSV dumps")]


def test_nan_and_infinities_are_rows_and_absent_figures_are_not():
    data = json.loads(serq_report.render(RESULT, "json"))
    rows = serq_report.render_csv(RESULT).splitlines()
    # null in the JSON report, both for want of a value and for NaN or an infinity
    assert data["horizon"] is None and data["partial"] is None and data["requests"] is None
    assert data["observes"]["ttft"]["p99"] is None and data["stages"][0]["iterations"] is None
    assert data["stages"][0]["service"] is None
    # in the CSV report the NaN and the infinities are rows, what the run does not have is not
    assert {"run,,horizon,inf", "observes,ttft,p99,nan", "observes,ttft,ci,nan", "stages,e,service,-inf"} <= set(rows)
    assert not [r for r in rows if r.startswith(("run,,partial,", "requests,")) or ",iterations," in r]


def test_the_readme_says_so():
    section = " ".join(_csv_section().split())
    assert "A figure the JSON report has as `null` is left out" not in section
    rows = set(serq_report.render_csv(RESULT).splitlines())
    # the rows the README quotes for NaN and infinities are rows the report writes
    quoted = re.findall(r"`([a-z_]+,[a-z_]*,[a-z_0-9]+,(?:nan|-?inf))`", section)
    assert {"run,,horizon,inf", "observes,ttft,p99,nan"} <= set(quoted)
    assert set(quoted) <= rows
