"""The Python API given a file's name as text that this process cannot give the system: under `LC_ALL=C
PYTHONUTF8=0` Python encodes file names as ASCII, so `serq_sim.run(p, trace="tré.csv")`, a program's
`trace "tré.csv"`, `serq_frontend.compile("prö.sq")`, `serq_ir.load("irö.ir.json")`, `use "libö.sq";`,
`serq_sweep.sweep(..., out="oé.csv")`, `serq_sweep.metrics("ré.csv")` and `serq_sweep.plot(..., "pé.svg")`
were each a UnicodeEncodeError traceback from whichever call met the name first (the `serq` command starts
itself again in UTF-8 mode there; a program calling the API cannot be). Each is now the project's error,
naming the file, the character and the way out (serq.files.unnamable: what open_input says of the name,
check_output_name refuses, and a `use` says at its place); `use` said `no such library` and offered the very
file as `lib\\udcc3\\udcb6.sq`. With PYTHONUTF8=1 the same calls read and write those files, so the name is
the one fault. A lone surrogate (`"\\ud800.csv"`), which no encoding gives the system, is told so in any
locale."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import serq_ir
from serq.files import unnamable

ROOT = Path(__file__).resolve().parents[3]
TRACE = ROOT / "examples" / "replay" / "short_base.csv"

PROGRAM = """stage d : delay;
workload { arrive batch(2); trace "t\u00e9.csv"; }
session { turn; run d (1); observe w = now; }
run { horizon 100; }
"""

#: each door of the API, called on a name beyond ASCII, and what it said: ok, or its error's class and message
SCRIPT = r"""
import json, sys
import serq_frontend, serq_ir, serq_sim, serq_sweep
said = {}
def call(label, f):
    try:
        f()
        said[label] = "ok"
    except Exception as e:
        said[label] = [type(e).__name__, bool(getattr(type(e), "serq_user_error", False)), str(e).split("\n")[0]]
plain = serq_frontend.compile("plain.sq")
call("compile", lambda: serq_frontend.compile("pr\u00f6.sq"))
call("use", lambda: serq_frontend.compile("uses.sq"))
call("load", lambda: serq_ir.load("ir\u00f6.ir.json"))
call("trace", lambda: serq_sim.run(plain, seed=1, trace="t\u00e9.csv"))
call("clause", lambda: serq_sim.run(serq_frontend.compile("clause.sq"), seed=1))
call("sweep", lambda: serq_sweep.sweep("plain.sq", seeds=[1], out="o\u00e9.csv", workers=0, progress=False))
call("metrics", lambda: serq_sweep.metrics("r\u00e9.csv"))
call("plot", lambda: serq_sweep.plot("o\u00e9.csv", "p\u00e9.svg", x="seed", y="end"))
sys.stdout.write(json.dumps(said, ensure_ascii=True))
"""

C = {"LC_ALL": "C", "PYTHONUTF8": "0"}
UTF8 = {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"}
WHY = ("its name holds {}, and this process encodes file names as ASCII (the C or POSIX locale with Python's UTF-8 "
       "mode off, PYTHONUTF8=0): run Python with PYTHONUTF8=1 or -X utf8, as the serq command runs itself there")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("names")
    plain = PROGRAM.replace("t\u00e9.csv", "t.csv")
    (d / "plain.sq").write_text(plain)
    (d / "pr\u00f6.sq").write_text(plain)
    (d / "clause.sq").write_text(PROGRAM)
    (d / "lib\u00f6.sq").write_text("def k() = 1;\n")
    (d / "uses.sq").write_text('use "lib\u00f6.sq";\n' + plain)
    shutil.copy(TRACE, d / "t.csv")
    shutil.copy(TRACE, d / "t\u00e9.csv")
    serq_frontend = pytest.importorskip("serq_frontend")
    (d / "ir\u00f6.ir.json").write_bytes(serq_ir.encode(serq_frontend.compile(str(d / "plain.sq"))))
    shutil.copy(TRACE, d / "r\u00e9.csv")  # (no table of requests: metrics reads it, then refuses its columns)
    return d


def _calls(folder: Path, env: dict) -> dict:
    full = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_CTYPE", "LANGUAGE")} | env
    r = subprocess.run([sys.executable, "-c", SCRIPT], cwd=folder, env=full, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


def test_every_door_names_the_cause_under_ascii_names(folder):
    said = _calls(folder, C)
    reading = {"compile": ("pr\u00f6.sq", "U+00F6"), "load": ("ir\u00f6.ir.json", "U+00F6")}
    for label, (name, code) in reading.items():
        assert said[label] == ["CompileError" if label == "compile" else "IRError", True,
                               f"error: {name}: cannot read: {WHY.format(code)}"], said[label]
    for label, name in (("sweep", "o\u00e9.csv"), ("plot", "p\u00e9.svg")):
        assert said[label] == ["OutputError", True, f"error: {name}: cannot write: {WHY.format('U+00E9')}"]
    assert said["trace"] == ["SimError", True, f"t\u00e9.csv: error: cannot read the trace: {WHY.format('U+00E9')}"]
    assert said["clause"][1] and said["clause"][2].startswith("clause.sq:2:")
    assert said["clause"][2].endswith(f"error: cannot read the trace t\u00e9.csv: {WHY.format('U+00E9')}")
    assert said["metrics"] == ["UserError", True,
                               f"error: r\u00e9.csv: cannot read the records: {WHY.format('U+00E9')}"]
    assert said["use"][1] and said["use"][2] == f'uses.sq:1:1: error: `use "lib\u00f6.sq"`: {WHY.format("U+00F6")}'
    assert not (folder / "o\u00e9.csv").exists() and not (folder / "p\u00e9.svg").exists()


def test_the_same_calls_in_utf8_mode_reach_the_files(folder):
    # (the premise: the names are the one fault; metrics of a trace is no table of requests, an error of its
    # content, said after it was read; the plot draws the table the sweep wrote under its name)
    said = _calls(folder, UTF8)
    for label in ("compile", "use", "load", "trace", "clause", "sweep", "plot"):
        assert said[label] == "ok", (label, said[label])
    assert "cannot read" not in said["metrics"][2] and said["metrics"][2].startswith("error: r\u00e9.csv")


def test_a_lone_surrogate_names_no_file_in_any_locale():
    assert unnamable("\ud800.csv") == "its name holds U+D800, a lone surrogate, which names no file"
    assert unnamable(os.fsdecode(b"caf\xe9.csv")) is None  # (bytes the system gave: given back as they were)
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.load("\ud800.ir.json")
    assert str(e.value) == "error: \\ud800.ir.json: cannot read: its name holds U+D800, a lone surrogate, which names no file"
