"""A resumed sweep refuses a run of its table or journal whose status is ``ok`` or ``partial`` and that has no
number of events, the figure every run that did not fail reports: a journal entry ``"figures": {}`` of an ``ok``
run, or a row whose cells were blanked by hand, was resumed and written back as a run of every figure NaN,
silently. It is the one error at the cell (the table's line quoted with a caret) or at the entry's figures,
status 1, no file written; a failed run (``error``) has no figures, and is resumed as before."""

from __future__ import annotations

import csv
import json

import pytest
from serq.errors import UserError
from serq_sweep import sweep

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); }
run { horizon 3; seed 1; }
"""


def _sweep(tmp_path):
    return sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(tmp_path / "t.csv"), progress=False)


@pytest.fixture
def key(tmp_path):
    """The key of the first run of a finished sweep into t.csv (its table kept)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    return str(_sweep(tmp_path)["key"][0])


def _files(tmp_path):
    return {p.name: p.read_bytes() for p in tmp_path.iterdir()}


@pytest.mark.parametrize("figures", [{}, {"events": None}, {"events": "12"}, {"events": True}, {"end": 3.0}])
@pytest.mark.parametrize("status", ["ok", "partial"])
def test_a_journaled_run_without_events_is_refused(tmp_path, key, figures, status):
    (tmp_path / "t.csv").unlink()
    (tmp_path / "t.points.csv").unlink()
    line = json.dumps({"key": key, "status": status, "message": "", "warnings": "", "figures": figures})
    (tmp_path / "t.csv.journal").write_text(line + "\n")
    before = _files(tmp_path)
    with pytest.raises(UserError) as e:
        _sweep(tmp_path)
    at = line.index('"events": ') + len('"events": ') if "events" in figures else line.index('"figures": ') + 11
    # a figure that is no number says so (core.figure_fault, test_known_defects_round47_journal_text_figures)
    why = {"12": ' (the figure events is the text "12", not a number)',
           True: " (the figure events is true, not a number)"}.get(figures.get("events"), "")
    assert str(e.value) == (f"{tmp_path / 't.csv.journal'}:1:{at + 1}: error: not an entry of a sweep's journal{why}; "
                            f"remove the file or give fresh=True\n  {line}\n  {' ' * at}^")
    assert _files(tmp_path) == before


@pytest.mark.parametrize("blank", ["events", "all"])
def test_a_row_without_events_is_refused_at_its_cell(tmp_path, key, blank):
    path = tmp_path / "t.csv"
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    for i in range(head.index("horizon"), len(head)) if blank == "all" else [head.index("events")]:
        rows[1][i] = ""
    with path.open("w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    before = _files(tmp_path)
    with pytest.raises(UserError) as e:
        _sweep(tmp_path)
    line = ",".join(rows[1])
    col = len(",".join(rows[1][:head.index("events")])) + 2  # the events cell, after its comma
    assert str(e.value) == (f"{path}:2:{col}: error: the run {key} (row 1) is ok and has no number under events, "
                            f"which every run that did not fail has; remove it or give fresh=True\n  {line}\n"
                            f"  {' ' * (col - 1)}^")
    assert _files(tmp_path) == before


def test_a_failed_run_and_a_whole_run_are_resumed(tmp_path, key):
    (tmp_path / "t.csv.journal").write_text(
        json.dumps({"key": key, "status": "error", "message": "boom", "warnings": "", "figures": {}}) + "\n")
    table = _sweep(tmp_path)
    assert list(table["status"]) == ["error", "ok"] and table["message"][0] == "boom"
    (tmp_path / "t.csv.journal").write_text(
        json.dumps({"key": key, "status": "ok", "message": "", "warnings": "", "figures": {"events": 7}}) + "\n")
    table = _sweep(tmp_path)
    assert list(table["status"]) == ["ok", "ok"] and table["events"][0] == 7
