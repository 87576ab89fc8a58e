"""`serq plot` of a dump folder whose sample or change point has a number with blanks around it.

A dump's CSV cells are numbers written as the language writes one, without blanks (`serq run --dump` writes
them so); a cell edited to ``' 2.0'`` is refused, and the message said only ``the row has no number under time or
value``, as of a cell ``x``, where ``1_0`` was told the rule: the reason every flag gives such a number, ``a number
has no blanks around it: 2.0``, was dropped. Truth: the files are written by hand here; the reason is
serq.numbers.not_a_number's of the same text."""

from __future__ import annotations

import json

import pytest
from serq.numbers import not_a_number


@pytest.fixture
def dump(tmp_path):
    d = tmp_path / "d"
    (d / "gauge").mkdir(parents=True)
    (d / "serq-dump.json").write_text(json.dumps({"serq-dump": 1, "observes": ["r"], "gauges": ["q"]}))
    (d / "r.csv").write_text("time,session,turn,value\n0.5,0,0,1.5\n1.0,1,0,2.5\n")
    (d / "gauge" / "q.csv").write_text("time,value\n0.0,1.0\n0.5,2.0\n")
    return d


@pytest.mark.parametrize(("file", "row", "cell", "flag"), [
    ("r.csv", "0.5,0,0, 1.5", " 1.5", ("--cdf", "r")),
    ("r.csv", " 0.5,0,0,1.5", " 0.5", ("--cdf", "r")),
    ("gauge/q.csv", "0.5,2.0 ", "2.0 ", ("--gauge", "q")),
])
def test_the_blanks_are_said(dump, tmp_path, serq_in_process, file, row, cell, flag):
    path = dump / file
    lines = path.read_text().splitlines()
    lines[1] = row
    path.write_text("\n".join(lines) + "\n")
    r = serq_in_process("plot", str(dump), *flag, "-o", str(tmp_path / "p.png"))
    assert r.returncode == 1 and r.stdout == ""
    why = not_a_number(cell)
    assert why.endswith(f"(a number has no blanks around it: {cell.strip()})")
    assert f"error: the row has no number under time or value ({row!r}): {why}\n  {row}\n" in r.stderr
    assert not (tmp_path / "p.png").exists()


def test_a_word_is_told_no_rule(dump, tmp_path, serq_in_process):
    (dump / "r.csv").write_text("time,session,turn,value\n0.5,0,0,x\n")
    r = serq_in_process("plot", str(dump), "--cdf", "r", "-o", str(tmp_path / "p.png"))
    assert r.returncode == 1
    assert "error: the row has no number under time or value ('0.5,0,0,x')\n" in r.stderr
