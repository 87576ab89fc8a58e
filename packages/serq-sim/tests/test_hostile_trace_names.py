"""A trace name holding a NUL character, in a program (`trace "a<NUL>b.csv"`, written as it is or from an
IR file): os.path.realpath and os.open raise ValueError ("embedded null byte") on it, which came out of
`serq run` as a traceback. serq.files.open_input refuses such a name as an OSError, as every reader takes
a file it cannot open, so it is one error at the trace clause."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq.files import inside, open_input

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ('stage s : delay;\nworkload { arrive closed(1); trace "TRACE"; }\n'
           "session { loop { turn; run s (1); branch (more) { } else { end; } } }\nrun { horizon 5; seed 1; }\n")


def _run(tmp_path: Path, file: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "run", file, "--no-progress"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_a_program_naming_a_trace_with_a_nul(tmp_path):
    (tmp_path / "p.sq").write_bytes(PROGRAM.replace("TRACE", "a\0b.csv").encode())
    r = _run(tmp_path, "p.sq")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [
        "p.sq:2:30: error: cannot read the trace a\\x00b.csv: a file name holds no NUL character",
        '  workload { arrive closed(1); trace "a\\x00b.csv"; }', "                               ^"]


def test_an_ir_file_naming_a_trace_with_a_nul(tmp_path):
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,1,1,1,0\n")
    (tmp_path / "p.sq").write_text(PROGRAM.replace("TRACE", "t.csv"))
    ir = subprocess.run([SERQ, "ir", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    d = json.loads(ir.stdout)
    d["workload"]["trace"]["path"] = "t.csv\0../../etc/passwd"
    (tmp_path / "p.ir.json").write_text(json.dumps(d))
    r = _run(tmp_path, "p.ir.json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[0] == ("p.sq:2:30: error: cannot read the trace t.csv\\x00../../etc/passwd: a "
                                        "file name holds no NUL character")


def test_the_helpers_take_such_a_name_as_no_file(tmp_path):
    with pytest.raises(OSError) as e:
        open_input(str(tmp_path / "a\0b"))
    assert e.value.strerror == "a file name holds no NUL character" and e.value.filename.endswith("a\0b")
    assert not inside(str(tmp_path / "a\0b"), str(tmp_path))
