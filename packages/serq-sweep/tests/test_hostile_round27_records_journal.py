"""An entry of a sweep's records journal (``FILE.journal``) is held to what a run journals: each record table an
object of columns, ``session``, ``turn`` and ``time`` among them, each column a list of numbers (integers within
int64), all of one length. A column of lists, of text or of nulls, an integer beyond int64 or a column that is
an object was a traceback where the records table was written (numpy's ``all the input arrays must have same
number of dimensions``, serq_report's ``cannot dump a column of dtype``); columns of different lengths were
written out of line with each other, the rows of the runs after it shifted, and a table of no columns lost
the run's records, both silently. Each is now the one message naming the journal and the run, with what is
wrong, status 1, and no file written."""

from __future__ import annotations

import json

import pytest
from delay_programs import delay_program
from serq.errors import UserError
from serq_sweep import sweep

PROGRAM = delay_program(horizon=3, observe=False, record="wait = now - t0; n = 3;")

OWN = {"session": [0], "turn": [1], "time": [1.0]}


def _sweep(tmp_path):
    return sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(tmp_path / "t.csv"),
                 records=str(tmp_path / "r.csv"), progress=False)


@pytest.fixture
def key(tmp_path):
    """The key of the first run of a sweep whose table is kept and whose records file is gone."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    table = _sweep(tmp_path)[0]  # (the table, and the records)
    (tmp_path / "r.csv").unlink()
    return str(table["key"][0])


@pytest.mark.parametrize(("table", "why"), [
    ({**OWN, "wait": [[1, 2]], "n": [3]}, "column wait: not a list of numbers"),
    ({**OWN, "wait": ["x"], "n": [3]}, "column wait: not a list of numbers"),
    ({**OWN, "wait": [None], "n": [3]}, "column wait: not a list of numbers"),
    ({**OWN, "wait": [True], "n": [3]}, "column wait: not a list of numbers"),
    ({**OWN, "wait": [0.5], "n": {"a": 1}}, "column n: not a list of numbers"),
    ({**OWN, "wait": [0.5], "n": [2**63]}, "column n: an integer beyond int64"),
    ({**OWN, "wait": [0.5, 0.25], "n": [3]}, "columns of different lengths"),
    ({}, "no column session"),
    ({"session": [0], "turn": [1], "wait": [0.5]}, "no column time"),
])
def test_an_entry_no_run_journals_is_one_message(tmp_path, key, table, why):
    journal = tmp_path / "r.csv.journal"
    journal.write_text(json.dumps({"key": key, "tables": {"req": table}}) + "\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(UserError) as e:
        _sweep(tmp_path)
    assert str(e.value) == (f"error: {journal}: the records of run {key} are not a sweep's ({why}); remove the file "
                            "or give fresh=True")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_an_entry_a_run_journals_is_resumed(tmp_path, key):
    import pandas as pd

    rows = int(pd.read_csv(tmp_path / "t.csv")["records.req"][0])  # as many rows as the run counts (else it runs again)
    journal = tmp_path / "r.csv.journal"
    table = {"session": list(range(rows)), "turn": [1] * rows, "time": [1.0] * rows, "wait": [0.5] * rows,
             "n": [3] * rows}
    journal.write_text(json.dumps({"key": key, "tables": {"req": table}}) + "\n")
    _sweep(tmp_path)
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert rows[0] == "point,a,seed,key,session,turn,time,wait,n"
    assert rows[1] == f"0,1,1,{key},0,1,1.0,0.5,3"  # the journal's row, as it was kept
    assert not journal.exists()
