"""The seeds of a sweep's table of runs, as ``serq plot`` and ``serq_sweep.aggregate`` read them: a seed that is
no seed (a text, a fraction, an empty cell, a negative number) was averaged with its point's other seeds in
silence, and so were two rows of one point and seed under two keys (the tables of two sweeps joined, a key
edited): only a row copied whole (its key too) was refused. Now a seed that is no seed is an error at its cell,
and two rows of one point and seed are one run twice, whatever their keys, named by both rows' lines (a CSV
file's) or rows. Truth: the tables by hand."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from serq_sweep import aggregate

pytestmark = pytest.mark.timeout(60)

HEADER = "point,lam,seed,status,message,warnings,key,events,observes.w.mean\n"
ROWS = ["0,0.5,1,ok,,,aaaaaaaaaaaaaaaaaaaaaaaa,10,1.0\n",
        "0,0.5,2,ok,,,bbbbbbbbbbbbbbbbbbbbbbbb,10,4.0\n",
        "1,1,1,ok,,,cccccccccccccccccccccccc,10,2.0\n",
        "1,1,2,ok,,,dddddddddddddddddddddddd,10,3.0\n"]
RULE = "a seed is a whole number from 0 to 2**64 - 1"


def _plot(serq_in_process, tmp_path, rows):
    (tmp_path / "t.csv").write_text(HEADER + "".join(rows))
    out = tmp_path / "p.svg"
    r = serq_in_process("plot", str(tmp_path / "t.csv"), "--x", "lam", "--y", "w.mean", "-o", str(out))
    assert out.exists() == (r.returncode == 0)
    return r


@pytest.mark.parametrize("seed, said", [("x", "'x'"), ("1.5", "1.5"), ("", "an empty cell"), ("-3", "-3")])
def test_a_seed_that_is_no_seed_is_refused_at_its_cell(tmp_path, serq_in_process, seed, said):
    rows = list(ROWS)
    rows[1] = rows[1].replace("0,0.5,2,", f"0,0.5,{seed},", 1)
    r = _plot(serq_in_process, tmp_path, rows)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0] == (f"{tmp_path / 't.csv'}:3:7: error: the seed of the run at line 3 is {said}, which is no seed "
                        f"({RULE}): a row of a sweep's table is the run of one seed of its point, and its seeds are "
                        "what its mean and CI are over; fix or remove the row")
    assert lines[1:] == ["  " + rows[1].rstrip("\n"), "        ^"]
    frame = pd.read_csv(io.StringIO(HEADER + "".join(rows)), dtype={"key": str})
    with pytest.raises(ValueError) as e:
        aggregate(frame)
    assert str(e.value).startswith(f"the seed of the run at row 2 is {said}, which is no seed ({RULE})")


def test_one_point_and_seed_under_two_keys_is_one_run_twice(tmp_path, serq_in_process):
    """Row 4 (line 5) is point 0, seed 1 again, under key e…: before, the mean at lam 0.5 was that of 1, 4, 7."""
    again = "0,0.5,1,ok,,,eeeeeeeeeeeeeeeeeeeeeeee,10,7.0\n"
    rows = [ROWS[0], ROWS[1], ROWS[2], again, ROWS[3]]
    r = _plot(serq_in_process, tmp_path, rows)
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == (
        f"{tmp_path / 't.csv'}:5:7: error: the table holds the run of point 0, lam 0.5, seed 1 twice (lines 2 and 5): "
        "a run is one row, and each seed of a point is counted once in its mean and CI; remove the copy")
    frame = pd.read_csv(io.StringIO(HEADER + "".join(rows)), dtype={"key": str})
    with pytest.raises(ValueError) as e:
        aggregate(frame)
    assert "holds the run of point 0, lam 0.5, seed 1 twice (rows 1 and 4)" in str(e.value)


def test_a_good_table_is_drawn_and_aggregated_as_before(tmp_path, serq_in_process):
    """By hand: the means at lam 0.5 and 1 are (1 + 4) / 2 and (2 + 3) / 2; seeds of 64 bits are seeds."""
    rows = [r.replace(",2,ok", f",{2**64 - 1},ok", 1) if r.startswith("1,") else r for r in ROWS]
    assert _plot(serq_in_process, tmp_path, rows).returncode == 0
    points = aggregate(pd.read_csv(io.StringIO(HEADER + "".join(ROWS)), dtype={"key": str}))
    assert points["observes.w.mean:mean"].tolist() == [2.5, 2.5]
