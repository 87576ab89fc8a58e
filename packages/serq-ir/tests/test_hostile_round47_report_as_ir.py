"""A report of ``serq run --json`` given where a program's IR is read says what it is.

A JSON report saved as ``r.ir.json`` (or any report given to ``serq run``, ``check`` or ``serq compare`` under
such a name) was refused as ``error: r.ir.json: IR version null is not supported (this serq-ir reads version
2)``: the report has no ``version``, and the message spoke of a version the user never wrote. It now says the
file is a report, not a program's IR, at the file's first line; JSON that is neither keeps the version's words.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_ir

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage s : delay;

workload {
  arrive poisson(1);
}

session {
  run s (1);
  end;
}

run { horizon 5; seed 1; }
"""

WORDS = ("not a program's IR but a report of serq run --json; serq check, run, sweep and compare read a program "
         "(.sq) or its IR (.ir.json, as serq ir writes it) - at '$'")


@pytest.fixture
def report(tmp_path, serq_in_process, monkeypatch) -> Path:
    # (made by serq.cli.main in the test's process, in its folder, as the child process made it there)
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    r = serq_in_process("run", "p.sq", "--json", "-o", "r.ir.json", "--no-progress")
    assert r.returncode == 0, r.stderr
    return tmp_path / "r.ir.json"


@pytest.mark.parametrize("command", [["run", "--no-progress"], ["check"], ["ir"]])
def test_the_commands_say_it_is_a_report(report, serq_in_process, command):
    before = sorted(p.name for p in report.parent.iterdir())
    if command[0] == "run":  # (a `serq` child process, as a shell runs it; check and ir in the test's process)
        r = subprocess.run([SERQ, command[0], "r.ir.json", *command[1:]], cwd=report.parent, capture_output=True,
                           text=True, timeout=50)
    else:
        r = serq_in_process(command[0], "r.ir.json", *command[1:])
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"r.ir.json:1:1: error: {WORDS}\n  {{\n  ^\n"
    assert sorted(p.name for p in report.parent.iterdir()) == before


def test_serq_compare_names_the_arm(report):
    r = subprocess.run([SERQ, "compare", "r.ir.json", "p.sq", "--no-progress"], cwd=report.parent,
                       capture_output=True, text=True, timeout=50)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.splitlines()[0] == f"r.ir.json:1:1: error: {WORDS}"
    assert r.stderr.splitlines()[-1] == "(at the sweep's point program=r.ir.json)"


def test_the_api_and_other_json(report):
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(report.read_bytes(), name="r.ir.json")
    assert str(e.value) == f"error: r.ir.json: {WORDS}"
    # (JSON that is no report keeps the version's words)
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(b'{"horizon": 1, "events": 2}', name="o.ir.json")
    assert str(e.value) == ("error: o.ir.json: IR version null is not supported (this serq-ir reads version 2) - at "
                            "'$.version'")
