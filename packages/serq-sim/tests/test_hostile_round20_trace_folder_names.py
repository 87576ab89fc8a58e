"""A trace clause's name is read as the system reads it, never as another file's.

``trace "t.csv/"``, ``trace "t.csv/."`` and ``trace "t.csv//"`` name a folder ``t.csv`` that does not
exist (``cat t.csv/``: "Not a directory"); pathlib spelled each as ``t.csv`` (serq_sim.trace.resolve_trace
joined the program's folder and the name with it), so ``serq run``, ``serq sweep`` and ``serq_sim.run``
replayed ``t.csv`` for a name that names no file. Each is now the system's refusal at the trace clause;
the name as written is quoted, and the program's folder is still where a relative name is read from.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.trace import resolve_trace

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
HEADER = "session,turn,new,out,think,forced\n"


def program(name: str) -> str:
    return ('stage s : fifo;\nworkload { arrive poisson(1); trace "' + name + '"; }\n'
            "session { turn; run s (new / 1000); observe n = new; end; }\nrun { horizon 50; }\n")


def serq(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of the error said, or the report, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", ["t.csv/", "t.csv/.", "t.csv//", "t.csv/./"])
def test_a_trace_named_as_a_folder_is_not_the_file(tmp_path, serq_in_process, name):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "p.sq").write_text(program(name))
    (sub / "t.csv").write_text(HEADER + "0,1,100,5,0,0\n")
    here = None if name == "t.csv/" else serq_in_process  # (the first name's commands as child processes)
    r = serq(tmp_path, "run", "sub/p.sq", "--no-progress", here=here)
    col = 3 + len('workload { arrive poisson(1); ')
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"sub/p.sq:2:{col - 2}: error: cannot read the trace sub/{name}: Not a directory",
        '  workload { arrive poisson(1); trace "' + name + '"; }',
        "  " + " " * (col - 3) + "^",
    ], r.stderr
    if name == "t.csv/":  # a sweep's runs build the program as serq run does
        r = serq(tmp_path, "sweep", "sub/p.sq", "--no-progress", "--workers", "0")
        assert r.returncode == 1
        assert f"sub/p.sq:2:{col - 2}: error: cannot read the trace sub/{name}: Not a directory" in r.stderr


def test_the_trace_as_written_is_still_read(tmp_path, serq_in_process):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "t.csv").write_text(HEADER + "0,1,100,5,0,0\n")
    for name in ("t.csv", "./t.csv", "../sub/t.csv"):
        (sub / "p.sq").write_text(program(name))
        r = serq(tmp_path, "run", "sub/p.sq", "--no-progress", "--json", here=serq_in_process)
        assert r.returncode == 0, r.stderr
        assert '"n"' in r.stdout


def test_resolve_trace_keeps_the_name_as_written():
    # relative names are read from the program's folder, absolute ones as they are
    assert resolve_trace("t.csv", "p.sq") == "t.csv"
    assert resolve_trace("t.csv", "a/p.sq") == "a/t.csv"
    assert resolve_trace("t.csv/", "a/p.sq") == "a/t.csv/"
    assert resolve_trace("t.csv/.", "/x/p.sq") == "/x/t.csv/."
    assert resolve_trace("/d/t.csv/", "/x/p.sq") == "/d/t.csv/"
    assert resolve_trace("t.csv/", None) == "t.csv/"
    # the empty name is the program's folder, refused as a folder (as it was)
    assert resolve_trace("", "p.sq") == "."
    assert resolve_trace("", "/x/p.sq") == "/x/"
    assert resolve_trace("", None) == "."


def test_the_empty_name_is_refused_as_a_folder(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(program(""))
    r = serq(tmp_path, "run", "p.sq", "--no-progress", here=serq_in_process)
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == "p.sq:2:31: error: cannot read the trace .: is a folder, not a file"
