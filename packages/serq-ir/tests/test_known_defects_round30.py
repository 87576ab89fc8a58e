"""Known defects, round 30 (serq-ir).

An IR file with two constants of one name was accepted, and `serq sweep --find --over NAME`, `--set NAME=…` and
the report's constants look a knob up by its name there: which of the two a tool read was the first it met. It is
refused by serq_ir.validate at the second name, with its JSON path, as a second stage, pool, observe or attribute of
one name is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
from serq_ir import IRError

SOURCE = """let B = 2;
let C = 3;
stage d : delay;
workload { arrive batch(1); }
session { run d (B); }
run { horizon 10; }
"""

SERQ = str(Path(sys.executable).with_name("serq"))


def _file(tmp_path: Path) -> Path:
    text = serq_ir.encode_pretty(serq_frontend.compile(source=SOURCE))
    assert text.count('"C"') == 1
    p = tmp_path / "p.ir.json"
    p.write_text(text.replace('"C"', '"B"'))
    return p


def test_two_constants_of_one_name_are_refused_at_the_second(tmp_path):
    p = _file(tmp_path)
    with pytest.raises(IRError) as e:
        serq_ir.load(p)
    lines = str(e.value).splitlines()
    source = p.read_text().splitlines()
    row = next(i for i, x in enumerate(source) if '"B"' in x and i > next(j for j, y in enumerate(source)
                                                                          if '"B"' in y))
    col = source[row].index('"B"') + 1
    assert lines == [f"{p}:{row + 1}:{col}: error: the name 'B' is given twice (first at $.constants[0][0]); every "
                     "constant has a name of its own - at '$.constants[1][0]'", "  " + source[row],
                     "  " + " " * (col - 1) + "^"]
    # one constant of each name is a program
    q = p.with_name("q.ir.json")
    q.write_text(serq_ir.encode_pretty(serq_frontend.compile(source=SOURCE)))
    assert [c.name for c in serq_ir.load(q).constants] == ["B", "C"]


@pytest.mark.parametrize("command", ["check", "run"])
def test_the_commands_refuse_it_before_any_run(tmp_path, command):
    p = _file(tmp_path)
    r = subprocess.run([SERQ, command, str(p)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == "", r
    assert "error: the name 'B' is given twice (first at $.constants[0][0])" in r.stderr.splitlines()[0]
