"""Known defects, round 21 (serq-report): the CSV report (serq_report.summary_csv) had the notes' words and
not the JSON report's `codes`, the short code of each warning's kind, which a script reads to tell warnings
apart (as a sweep's `warnings` column does). A note's row names the warning's code in its `name` column now:
`notes,few-samples,warning,too few samples …`, and `notes,,note,…` for a note that is no warning."""

from __future__ import annotations

import csv
import io
import json

import pytest
import serq_frontend
import serq_report
import serq_sim
from serq_ir.report import Result

pytestmark = pytest.mark.timeout(60)

# one observe of 3 samples after the warm-up: too few for a CI (`few-samples`); a constant-0 test observe
# of 40 samples and more is a note that is no warning; x = 7 can never fit pool m (`rejected`)
PROGRAM = """pool m { cap 4; }
stage s : delay;
workload { arrive renewal(1); }
session {
  set u = serial == 2 ? 7 : 1;
  hold m (u) { run s (0.5); }
  observe r = 1;
  end;
}
run { horizon 3.5; warmup 0; seed 1; }
"""


def _rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_a_warning_row_names_its_code():
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM))
    data = json.loads(serq_report.render(report, "json"))
    assert data["codes"] and all(c is not None for c in data["codes"])  # the run warned
    notes = [row for row in _rows(serq_report.render_csv(report)) if row[0] == "notes"]
    assert [(name, kind) for _, name, kind, _ in notes] == [(c, "warning") for c in data["codes"]]
    assert {"few-samples", "rejected"} <= {name for _, name, _, _ in notes}
    assert [f"warning: {text}" for _, _, _, text in notes] == data["notes"]


def test_a_note_that_is_no_warning_has_no_code_and_a_report_without_codes_none():
    result = Result(horizon=1.0, end=1.0, warmup=0.0, seed=1, events=0, arrivals=0, ended=0, turns=0,
                    mean_live=0.0, interrupted=False,
                    notes=["note: observe x is constant 0 over 40 samples", "warning: the run is not steady: …"],
                    codes=[None, "not-steady"])
    rows = _rows(serq_report.render_csv(result))
    assert rows[-2:] == [["notes", "", "note", "observe x is constant 0 over 40 samples"],
                         ["notes", "not-steady", "warning", "the run is not steady: …"]]
    old = Result(horizon=1.0, end=1.0, warmup=0.0, seed=1, events=0, arrivals=0, ended=0, turns=0, mean_live=0.0,
                 interrupted=False, notes=["warning: the run is not steady: …"])  # (a report before version 6)
    assert _rows(serq_report.render_csv(old))[-1] == ["notes", "", "warning", "the run is not steady: …"]
