"""A file's name in an IR file (a span's, a use's, the trace's, the source) is at most 4 096 characters, a path
the system opens (PATH_MAX). A span's file of ten million characters was taken by ``serq check`` (OK), and a
run-time error at that span printed it whole, 10 MB on stderr (and 760 MB of memory); a trace's was quoted whole
in ``cannot read the trace``. Such a name is refused when the file is read, one message at its JSON path (its
line and column); a source's trace clause of such a name at the clause, before the IR is made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
SOURCE = ("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (~det(-1)); }\n"
          "run { horizon 5; }\n")
WORDS = "a file's name is at most 4096 characters (a path the system opens), and this one is longer"


def _ir(tmp_path: Path, name: str) -> str:
    (tmp_path / "p.sq").write_text(SOURCE)
    text = serq_ir.encode_pretty(serq_frontend.compile(str(tmp_path / "p.sq")))
    return text.replace(str(tmp_path / "p.sq"), name)


def _serq(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=50,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_span_file_name_past_the_bound_is_refused_at_it(tmp_path, command):
    name = "x" * 4097
    text = _ir(tmp_path, name)
    (tmp_path / "p.ir.json").write_text(text)
    r = _serq(tmp_path, command, "p.ir.json")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    at = text.index(name) - 1  # (the value, at its opening quote)
    line, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    assert lines[0].startswith(f"p.ir.json:{line}:{col}: error: {WORDS} - at '$.")
    assert lines[0].endswith(".span[0]'")
    assert len(r.stderr) < 1000


def test_a_span_file_name_at_the_bound_still_runs(tmp_path):
    (tmp_path / "p.ir.json").write_text(_ir(tmp_path, "y" * 4096))
    assert _serq(tmp_path, "check", "p.ir.json").returncode == 0
    r = _serq(tmp_path, "run", "p.ir.json")  # (the run-time error of its work, at the span: the name as every
    assert r.returncode == 1  # message prints a file's, serq.errors.shown_path, cut around '…' past 240 characters)
    assert r.stderr.startswith("y" * 120 + "…" + "y" * 119 + ":3:") and "the run's work is negative (-1)" in r.stderr


@pytest.mark.parametrize("field", ["source", "trace"])
def test_the_trace_and_the_source_too(tmp_path, field):
    program = serq_frontend.compile(source=SOURCE)
    text = serq_ir.encode(program).decode()
    assert text.endswith("}")
    value = "z" * 5000
    extra = (f', "source": "{value}"' if field == "source" else "")
    text = text[:-1] + extra + "}"
    if field == "trace":
        text = text.replace('"workload":{', f'"workload":{{"trace":{{"path":"{value}"}},', 1)
    (tmp_path / "p.ir.json").write_text(text)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.load(str(tmp_path / "p.ir.json"))
    path = "$.source" if field == "source" else "$.workload.trace.path"
    assert f"error: {WORDS} - at '{path}'" in str(info.value).splitlines()[0]


def test_a_program_built_in_python_is_held_to_it():
    program = serq_frontend.compile(source=SOURCE)
    import msgspec

    with pytest.raises(serq_ir.IRError, match=r"<program>: a file's name is at most 4096 characters .* - at "
                                              r"'\$\.source'"):
        serq_ir.encode(msgspec.structs.replace(program, source="s" * 4097))


def test_a_source_s_trace_clause_is_refused_at_it(tmp_path):
    (tmp_path / "p.sq").write_text(f'stage s : delay;\nworkload {{\n  arrive batch(1);\n  trace "{"t" * 4097}";\n}}\n'
                                   "session { turn; run s (new); }\nrun { horizon 5; }\n")
    r = _serq(tmp_path, "check", "p.sq")
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == ("p.sq:4:3: error: the trace's file name is 4097 characters long; a file's "
                                        "name is at most 4096 characters (a path the system opens)")
