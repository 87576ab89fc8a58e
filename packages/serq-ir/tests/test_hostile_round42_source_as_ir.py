"""An IR path whose text is a serQ program's says so, and a source path whose text is IR JSON says so.

``serq_ir.load("p.sq")``, and ``serq run p.json``/``p.ir.json`` of a program's source, said only ``JSON is malformed:
invalid character (at offset 0)``; ``serq run q.sq`` of the IR ``serq ir`` wrote said ``unexpected `{` (expected a
name)``. Each now says what the text is and which name reads it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_ir

SERQ = str(Path(sys.executable).parent / "serq")
SOURCE = "stage s : fifo;\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 10; }\n"
HINT = ("; the text looks like serQ source, not IR: a source program is read by a name ending in `.sq` "
        "(serq_frontend.compile in Python)")


@pytest.mark.parametrize("text", [SOURCE, "// a program\n\n  // its items\nlet x = 1;\n", "\n\npool p { cap 1; }\n"])
def test_load_of_source_names_the_frontend(tmp_path, text):
    p = tmp_path / "p.sq"
    p.write_text(text)
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.load(str(p))
    first = str(e.value).splitlines()[0]
    assert first.endswith(HINT), first
    assert "JSON is malformed: invalid character" in first


@pytest.mark.parametrize("text", ['{"version": 1, stage}', "[1, 2", "stagger", "x = 1", "hello\n"])
def test_other_malformed_json_has_no_hint(tmp_path, text):
    p = tmp_path / "p.ir.json"
    p.write_text(text)
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.load(str(p))
    assert "serQ source" not in str(e.value)


def test_serq_run_of_an_ir_path_holding_source(tmp_path):
    p = tmp_path / "p.ir.json"
    p.write_text(SOURCE)
    r = subprocess.run([SERQ, "run", str(p)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"{p}:1:1: error: JSON is malformed: invalid character (at offset 0){HINT}",
                                     "  stage s : fifo;", "  ^"]


def test_serq_run_of_a_source_path_holding_ir(tmp_path):
    src = tmp_path / "p.sq"
    src.write_text(SOURCE)
    ir = subprocess.run([SERQ, "ir", str(src)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert ir.returncode == 0, ir.stderr
    q = tmp_path / "q.sq"
    q.write_text(ir.stdout)
    r = subprocess.run([SERQ, "run", str(q)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0] == (f"{q}:1:1: error: the file is IR, as `serq ir` writes it, not serQ source: an "
                                        "IR file is read by a name ending in `.ir.json` (serq_ir.load in Python)")
    # a JSON object that is no IR, and a brace that is no JSON
    q.write_text('{"a": 1}\n')
    r = subprocess.run([SERQ, "run", str(q)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert "the file is a JSON object, not serQ source" in r.stderr.splitlines()[0]
    q.write_text("{ stage }\n")
    r = subprocess.run([SERQ, "run", str(q)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.stderr.splitlines()[0] == f"{q}:1:1: error: unexpected `{{` (expected a name)"
