"""An integer beyond a float's range edited into a sweep's table or journal is one message naming where: in a
CSV table it was read as a Python int, and averaging it into the per-point table was an OverflowError
traceback (``int too large to convert to float``), and one of more than 4 300 digits was refused in Python's
words (``use sys.set_int_max_str_digits() to increase the limit``); in the journal it was the same
traceback. At most 308 digits, as every JSON a user gives (serq.jsonin.MAX_DIGITS)."""

from __future__ import annotations

import json

import pytest
from serq.errors import UserError
from serq_sweep import sweep
from serq_sweep.core import read_table

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; arrivals 3; }
"""


def _table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    sweep("p.sq", out="t.csv", workers=0, progress=False)
    header, row = (tmp_path / "t.csv").read_text().splitlines()
    return header, row.split(",")


@pytest.mark.parametrize("digits", [400, 5000])
def test_a_table_cell_beyond_a_float_is_one_message(tmp_path, monkeypatch, digits):
    header, cells = _table(tmp_path, monkeypatch)
    cells[header.split(",").index("events")] = "9" * digits
    (tmp_path / "t.csv").write_text(f"{header}\n{','.join(cells)}\n")
    with pytest.raises(UserError) as e:
        sweep("p.sq", out="t.csv", workers=0, progress=False)
    # at the cell: its column is 1 + the characters of the cells before it and their commas
    i = header.split(",").index("events")
    col = len(",".join(cells[:i])) + 2
    head, quote, caret = str(e.value).split("\n")
    assert head == (f"t.csv:2:{col}: error: cannot read the table to resume from (column events: the integer "
                    f"999999999999...999999 ({digits} digits) is beyond the range of a number (at most 308 "
                    "digits)); remove it or give fresh=True")
    at = len(caret) - 1
    assert caret.strip() == "^" and quote[at] == "9" and quote[at - 1] == ","


def test_an_integer_of_308_digits_is_a_number(tmp_path):
    (tmp_path / "t.csv").write_text("point,seed,status,message,key,x\n0,1,ok,,k," + "9" * 308 + "\n")
    assert read_table(str(tmp_path / "t.csv"))[0]["x"] == int("9" * 308)


def test_a_journal_figure_beyond_a_float_is_no_entry(tmp_path, monkeypatch):
    header, cells = _table(tmp_path, monkeypatch)
    key = cells[header.split(",").index("key")]
    (tmp_path / "t.csv").unlink()
    entry = {"key": key, "status": "ok", "message": "", "figures": {"events": 10**400}}
    line = json.dumps(entry)
    (tmp_path / "t.csv.journal").write_text(line + "\n")
    with pytest.raises(UserError) as e:
        sweep("p.sq", out="t.csv", workers=0, progress=False)
    # at the value of "figures", the line quoted (around the column: the line is longer than 200 characters)
    col = line.index('"figures": ') + len('"figures": ') + 1
    head, quote, caret = str(e.value).split("\n")
    assert head == (f"t.csv.journal:1:{col}: error: not an entry of a sweep's journal; remove the file or give "
                    "fresh=True")
    at = len(caret) - 1
    assert caret.strip() == "^" and quote[at:at + 12] == '{"events": 1'
