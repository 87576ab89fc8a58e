"""Known defects of the frontend, round 25.

A program's names were of any length, and the report prints them whole: an observe named in 5 MB printed
15 MB of text report (its row, its warning, …). A name is now at most 256 characters
(serq_ir.validate.MAX_NAME), a longer one refused where it stands (file:line:col, the line quoted, a caret);
an IR file's declared name at most 1024 (MAX_IR_NAME), refused at its path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq_frontend import CompileError
from serq_ir.validate import MAX_IR_NAME, MAX_NAME

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")


def _program(observe: str = "response", stage: str = "s", gauge: str = "g", record: str = "r",
             column: str = "c") -> str:
    return (f"stage {stage} : fifo;\ngauge {gauge} = 1;\nworkload {{ arrive poisson(1); }}\n"
            f"session {{ set t0 = now; run {stage} (1);\n  observe {observe} = now - t0; record {record} {{ {column} = 1; }}"
            " end; }\nrun { horizon 20; }\n")


def test_the_bound_is_256():
    assert MAX_NAME == 256 and MAX_IR_NAME == 1024


@pytest.mark.parametrize("which", ["observe", "stage", "gauge", "record", "column"])
def test_a_name_of_the_bound_compiles_and_one_more_is_refused_at_it(which):
    serq_frontend.compile(source=_program(**{which: "n" * 256}))
    long = "n" * 257
    text = _program(**{which: long})
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=text)
    lines = str(info.value).splitlines()
    line_no = next(i for i, x in enumerate(text.splitlines(), 1) if long in x)
    col = text.splitlines()[line_no - 1].index(long) + 1
    assert lines[0] == (f"<source>:{line_no}:{col}: error: the name `{'n' * 60}…{'n' * 59}` is 257 characters long; "
                        "a name is at most 256 characters")
    assert lines[2].strip() == "^"


def test_a_name_of_5_mb_is_one_short_error(tmp_path):
    name = "o" * 5_000_000
    (tmp_path / "p.sq").write_text(_program(observe=name))
    r = subprocess.run([SERQ, "run", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 1
    assert r.stdout == ""
    assert len(r.stderr) < 1000
    assert r.stderr.startswith("p.sq:5:11: error: the name `" + "o" * 60 + "…")


def test_an_ir_files_long_name_is_refused(tmp_path):
    (tmp_path / "p.sq").write_text(_program(observe="n" * 200))
    r = subprocess.run([SERQ, "ir", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    i = [o["name"] for o in doc["observes"]].index("n" * 200)
    doc["observes"][i]["name"] = "n" * 1024
    (tmp_path / "ok.ir.json").write_text(json.dumps(doc))
    r = subprocess.run([SERQ, "check", "ok.ir.json"], capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr
    doc["observes"][i]["name"] = "n" * 1025
    (tmp_path / "long.ir.json").write_text(json.dumps(doc))
    r = subprocess.run([SERQ, "check", "long.ir.json"], capture_output=True, text=True, cwd=tmp_path, timeout=100)
    assert r.returncode == 1
    assert "is 1025 characters long; a name is at most 1024 characters" in r.stderr
    assert f"$.observes[{i}].name" in r.stderr
    assert len(r.stderr) < 1000
