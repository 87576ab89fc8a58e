"""A resumed sweep keeps a run's records only when they hold as many rows of each table as the run's row in the
sweep's table counts (``records.NAME``, the rows after the warm-up): a journal entry of no rows, or a records
table cut down by hand, was resumed as the run's records and written back, its rows lost without a word. Such
a run runs again, which writes its row and its records anew; records that agree are resumed as before."""

from __future__ import annotations

import json

import pytest
from delay_programs import delay_program
from serq_sweep import sweep

PROGRAM = delay_program(horizon=8, observe=False)


def _sweep(tmp_path):
    """The table and the records table (as read back from the file) of a sweep of two points."""
    import pandas as pd

    table, _ = sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(tmp_path / "t.csv"),
                     records=str(tmp_path / "r.csv"), progress=False)
    return table, pd.read_csv(tmp_path / "r.csv")


@pytest.fixture
def whole(tmp_path):
    """A finished sweep's table and records, and the files' bytes."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    table, recs = _sweep(tmp_path)
    counts = dict(zip(table["key"], table["records.req"]))
    assert recs.groupby("key").size().to_dict() == counts  # (what a sweep writes: the two agree)
    assert min(counts.values()) > 2
    return table, (tmp_path / "r.csv").read_bytes()


def test_a_journal_entry_of_no_rows_runs_the_run_again(tmp_path, whole):
    table, data = whole
    key = str(table["key"][0])
    (tmp_path / "r.csv").unlink()
    empty = {c: [] for c in ("session", "turn", "time", "wait")}
    (tmp_path / "r.csv.journal").write_text(json.dumps({"key": key, "tables": {"req": empty}}) + "\n")
    _, recs = _sweep(tmp_path)
    assert (tmp_path / "r.csv").read_bytes() == data  # every row back, as the sweep run whole wrote them
    assert int((recs["key"] == key).sum()) == table["records.req"][0]


def test_a_records_table_cut_down_runs_the_cut_run_again(tmp_path, whole, monkeypatch):
    table, data = whole
    lines = data.decode().splitlines(keepends=True)
    (tmp_path / "r.csv").write_text("".join(lines[:3]))  # the header and two rows of the first run
    from serq_sweep import engines

    ran = []
    real = engines.run_task
    monkeypatch.setattr(engines, "run_task", lambda *a, **k: ran.append(a[3]) or real(*a, **k))
    _sweep(tmp_path)
    assert (tmp_path / "r.csv").read_bytes() == data
    assert len(ran) == 2  # the run cut down, and the run whose records were all cut


def test_records_that_agree_are_resumed(tmp_path, whole, monkeypatch):
    table, data = whole
    from serq_sweep import engines

    ran = []
    real = engines.run_task
    monkeypatch.setattr(engines, "run_task", lambda *a, **k: ran.append(a) or real(*a, **k))
    _sweep(tmp_path)
    assert ran == []  # every run resumed: none ran
    assert (tmp_path / "r.csv").read_bytes() == data
