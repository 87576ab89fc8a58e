"""A sweep reads back the CSV table it wrote whatever the length of its cells, up to the line bound: a swept
definition's text is a cell of its point's rows, and one of more than 131 072 characters (the csv module's
default bound on a field) made a table whose resume raised ``_csv.Error: field larger than field limit`` (a
traceback from ``serq sweep``, a hand-edited cell the same). What cannot be read is the one message
``cannot read the table to resume from``. And a message names a point by its values cut short: a swept
definition of 140 000 characters was quoted whole in the message of the error at its point, and in the one
of a point given twice."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UsageError, UserError
from serq_sweep import sweep

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """def svc() = 0.5;
stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (svc()); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; arrivals 3; }
"""
LONG = "0.5" + " " * 200_000  # a definition's body of 200 003 characters (the blanks are no part of its value)


def test_a_table_with_a_cell_longer_than_the_csv_default_is_resumed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    limit = csv.field_size_limit()
    first = sweep("p.sq", defs={"svc": [LONG]}, out="t.csv", workers=0, progress=False)
    assert max(len(line) for line in (tmp_path / "t.csv").read_text().splitlines()) > 200_000
    again = sweep("p.sq", defs={"svc": [LONG]}, out="t.csv", workers=0, progress=False)  # (it raised)
    assert list(again["svc"]) == [LONG] and list(again["key"]) == list(first["key"])
    assert list(again["observes.y.mean"]) == list(first["observes.y.mean"])
    assert csv.field_size_limit() == limit  # the module's bound put back


def test_a_hand_edited_long_cell_is_read(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    args = [SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.csv"]
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    header, row = (tmp_path / "t.csv").read_text().splitlines()
    cells = row.split(",")
    cells[header.split(",").index("message")] = "m" * 200_000
    (tmp_path / "t.csv").write_text(f"{header}\n{','.join(cells)}\n")
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "(0 run now, 1 resumed)" in r.stderr, r.stderr


def test_a_field_past_every_bound_is_one_message(tmp_path, monkeypatch):
    # a quoted field over many lines, each within the line bound, longer than the field bound (the line bound
    # made 1 000 here for a small file, the field bound is the csv module's 131 072): the reader's error is the
    # one message, not a traceback
    import serq_sweep.core as core

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(core, "MAX_LINE", 1000)
    (tmp_path / "p.sq").write_text(PROGRAM)
    sweep("p.sq", out="t.csv", workers=0, progress=False)
    header, row = (tmp_path / "t.csv").read_text().splitlines()
    cells = row.split(",")
    cells[header.split(",").index("message")] = '"' + "m\n" * 70_000 + '"'
    (tmp_path / "t.csv").write_text(f"{header}\n{','.join(cells)}\n")
    with pytest.raises(UserError) as e:
        sweep("p.sq", out="t.csv", workers=0, progress=False)
    assert str(e.value) == ("error: t.csv: cannot read the table to resume from (field larger than field limit "
                            "(131072)); remove it or give fresh=True")


def test_a_long_value_is_cut_in_a_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as e:  # the body does not parse: the error at the point
        sweep("p.sq", defs={"svc": ["(" + " " * 140_000 + "1"]}, workers=0, progress=False)
    said = str(e.value)  # (cut as a name is, serq.errors.clipped: its first 60 and last 59 characters around …)
    assert len(said) < 1000 and said.endswith("(at the sweep's point svc=(" + " " * 59 + "…" + " " * 58 + "1)"), \
        said[-300:]
    with pytest.raises(UsageError) as e:
        sweep("p.sq", defs={"svc": [LONG, LONG]}, workers=0, progress=False)
    assert len(str(e.value)) < 300 and "the point svc=0.5" + " " * 57 + "…" + " " * 59 + " is given twice" in str(e.value)
