"""``serq metrics`` of a sweep's records in which the rows of one ``key`` differ in a label (``point``, a swept
name, ``seed``): a key names one run (serq_sweep.records writes the run's key beside its point and seed), so
such rows are two runs under one key (the records of two sweeps joined, a cell edited). They were taken as
one run, labelled by its first row, their requests pooled over one window. Now an error (status 1) at the
first cell that differs, naming the key, the column and both values, and the line of the run's first row.
Truth: the rows by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from serq.errors import UserError
from serq_sweep import metrics

HEADER = "point,B,seed,key,sent,first_token,last_token,output\n"
# point 0 seed 1 (key a): two requests; point 0 seed 2 (key b): one; point 1 seed 1 (key c): one
GOOD = ["0,8,1,a,0,1,2,3", "0,8,2,b,0,1,3,3", "1,16,1,c,0,1,5,3", "0,8,1,a,1,2,2.5,3"]


def _write(tmp_path, rows, name="r.csv"):
    p = tmp_path / name
    p.write_text(HEADER + "".join(r + "\n" for r in rows))
    return p


def test_a_run_of_one_key_is_as_before(tmp_path):
    """The same label written 8 and 8.0 is one value."""
    rows = metrics(_write(tmp_path, GOOD[:3] + ["0,8.0,1,a,1,2,2.5,3"]))
    assert [(r.run, r.requests.completed, r.requests.duration) for r in rows] == [
        ({"point": 0, "B": 8, "seed": 1}, 2, 2.5), ({"point": 0, "B": 8, "seed": 2}, 1, 3.0),
        ({"point": 1, "B": 16, "seed": 1}, 1, 5.0)]


def test_another_seed_under_one_key(tmp_path, serq_in_process):
    p = _write(tmp_path, GOOD[:3] + ["0,8,2,a,1,2,2.5,3"])
    why = ("the rows of the run of key a differ in column seed: 2 here, 1 at line 2, its first row; a key names one "
           "run (one point and seed), so these are two runs under one key (the records of two sweeps joined, or a "
           "cell edited): give each run its own key, or keep the rows of one")
    with pytest.raises(UserError) as e:
        metrics(p)
    assert str(e.value).splitlines() == [f"{p}:5:5: error: {why}", "  0,8,2,a,1,2,2.5,3", "      ^"]
    r = serq_in_process("metrics", str(p))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines()[0] == f"{p}:5:5: error: {why}"


def test_another_point_under_one_key_is_said_at_its_first_column(tmp_path):
    """Row 5 differs from key a's first row (line 2) in point and B: the error is at point, the first."""
    p = _write(tmp_path, GOOD[:3] + ["1,16,1,a,1,2,2.5,3"])
    with pytest.raises(UserError) as e:
        metrics(p)
    assert str(e.value).splitlines()[0] == (
        f"{p}:5:1: error: the rows of the run of key a differ in column point: 1 here, 0 at line 2, its first "
        "row; a key names one run (one point and seed), so these are two runs under one key (the records of two "
        "sweeps joined, or a cell edited): give each run its own key, or keep the rows of one")


def test_the_first_row_that_differs_is_said(tmp_path):
    """Key b's second row (line 4) differs in seed, key a's (line 5) in point: line 4 first. A text label is
    quoted."""
    rows = ["0,x,1,a,0,1,2,3", "0,x,2,b,0,1,3,3", "0,x,3,b,0,1,5,3", "0,y,1,a,1,2,2.5,3"]
    with pytest.raises(UserError) as e:
        metrics(_write(tmp_path, rows))
    assert ":4:5: error: the rows of the run of key b differ in column seed: 3 here, 2 at line 3" in str(e.value)
    rows[2] = "0,x,2,b,0,1,5,3"
    with pytest.raises(UserError) as e:
        metrics(_write(tmp_path, rows))
    assert ":5:3: error: the rows of the run of key a differ in column B: 'y' here, 'x' at line 2" in str(e.value)


def test_a_parquet_file_is_told_by_rows(tmp_path):
    frame = pd.read_csv(_write(tmp_path, GOOD[:3] + ["0,8,2,a,1,2,2.5,3"]))
    p = tmp_path / "r.parquet"
    frame.to_parquet(p)
    with pytest.raises(UserError) as e:
        metrics(p)
    assert str(e.value) == (
        f"error: {p}: row 4: the rows of the run of key a differ in column seed: 2 here, 1 at row 1, its first row; "
        "a key names one run (one point and seed), so these are two runs under one key (the records of two sweeps "
        "joined, or a cell edited): give each run its own key, or keep the rows of one")


def test_nan_labels_are_one_value(tmp_path):
    rows = ["0,,1,a,0,1,2,3", "0,,1,a,1,2,2.5,3"]
    (run,) = metrics(_write(tmp_path, rows))
    assert run.requests.completed == 2
