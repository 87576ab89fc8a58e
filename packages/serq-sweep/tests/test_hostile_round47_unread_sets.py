"""A ``--set`` name whose values make one program is said before the runs (a ``--def`` name's bodies too).

``serq sweep p.sq --set unused=1,2`` of a program that reads ``unused`` nowhere ran the same runs once a value,
and its rows differed only in their keys: a table that read as if the knob had no effect, without a word. A
name whose values compile alike at every point of the other axes (the IR but its list of constants, in which
a let's value is whether it is read or not) is now a warning before the runs, from ``serq sweep`` and ``serq
compare``; a name that some value changes is not, nor one zipped with another (each of its values meets one
value of the other only).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """def unused_def() = 1;
def service() = 1;

let lambda = 0.5;
let unused = 3;
let capped = 1;

stage svc : fifo;

workload {
  arrive poisson(lambda);
}

session {
  set t0 = now;
  run svc (max(capped, service()));
  observe response = now - t0;
  end;
}

run { horizon 20; seed 1; }
"""


def _words(name: str, values: str) -> str:
    return (f"serq: warning: --set {name}: its values make one program ({values} compile alike): the program reads "
            f"`{name}` nowhere, or only where these values come to the same, so each of them runs the same runs")


def _serq(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS --no-progress`` of the program in ``tmp_path``, as a child process; given ``here``
    (serq_in_process), on serq.cli.main in the test's process, in that folder (a test of what is said)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args, "--no-progress")
    return subprocess.run([SERQ, *args, "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=100)


def _rows(csv_text: str, name: str) -> list[list[str]]:
    """The table's rows from the column ``name`` on (the values, the seed and the figures), without the key."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(csv_text)))
    at, key = rows[0].index(name), rows[0].index("key")
    return [[c for j, c in enumerate(r) if j >= at and j != key] for r in rows[1:]]


def test_a_name_the_program_never_reads(tmp_path):
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "unused=1,2,3,4", "--workers", "0")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == _words("unused", "unused=1, unused=2, unused=3, …")
    rows = _rows(r.stdout, "unused")  # (what it says: the rows but their values and keys are the same)
    assert [row[0] for row in rows] == ["1", "2", "3", "4"]
    assert len({tuple(row[1:]) for row in rows}) == 1


def test_a_name_read_only_where_its_values_come_to_the_same(tmp_path, serq_in_process):
    # (serq.cli.main in this process, as the module's other sweeps but the first test's)
    # max(capped, 1) is 1 for every capped up to 1: the values 0 and 1 compile alike; 2 does not
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "capped=0,1", "--set", "lambda=0.5,1", "--workers", "0",
              here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == _words("capped", "capped=0, capped=1")
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "capped=0,1,2", "--workers", "0", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr


def test_serq_compare_says_it_too(tmp_path):
    r = _serq(tmp_path, "compare", "p.sq", "--set", "unused=1,2")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == _words("unused", "unused=1, unused=2")


def test_a_definition_the_program_never_calls(tmp_path, serq_in_process):
    r = _serq(tmp_path, "sweep", "p.sq", "--def", "unused_def=1", "--def", "unused_def=2", "--workers", "0",
              here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (
        "serq: warning: --def unused_def: its bodies make one program (unused_def=1, unused_def=2 compile alike): the "
        "program calls `unused_def` nowhere, or only where these bodies come to the same, so each of them runs the "
        "same runs")


@pytest.mark.parametrize("args", [
    ["--set", "lambda=0.5,1"],                                                   # read: two programs
    ["--set", "unused=1,2", "--set", "lambda=0.5,1", "--zip", "unused,lambda"],  # zipped with a read name
    ["--set", "unused=1"],                                                       # one value: nothing to compare
    ["--def", "service=1", "--def", "service=2"],                                # called: two programs
])
def test_no_word_where_the_values_make_programs_of_their_own(tmp_path, serq_in_process, args):
    r = _serq(tmp_path, "sweep", "p.sq", *args, "--workers", "0", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
