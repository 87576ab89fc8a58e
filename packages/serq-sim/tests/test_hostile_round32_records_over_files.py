"""``serq run --records r.csv`` of a program of several record tables writes ``r.NAME.csv`` beside the file the
user named, and only over such a file a run wrote there.

The user named ``r.csv``, not ``r.req.csv``: a file of theirs there was replaced with the table ``req``. A
regular file at such a name is now replaced only when it begins as a table of records does (a CSV's first
line ``session,turn,time…``, a Parquet file's ``PAR1``) or is empty; another is refused before the run,
status 1, with nothing written (``serq.files.check_recorded``). The file the user named is theirs to replace.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """stage s : fifo;
workload { arrive batch(2); }
session {
  set t0 = now;
  run s (1);
  record req { sent = t0; done = now; }
  record other { x = 7; }
  end;
}
run { horizon 20; }
"""


def _serq(*args, cwd):
    return subprocess.run([sys.executable, "-m", "serq", "run", "--no-progress", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return tmp_path


@pytest.mark.parametrize(("file", "content", "named", "why"), [
    ("r.req.csv", b"mine\n", "r.csv", "its first line does not begin session,turn,time"),
    ("r.other.csv", b"session,turnover\n", "r.csv", "its first line does not begin session,turn,time"),
    ("r.req.parquet", b"mine\n", "r.parquet", "not a Parquet file"),
])
def test_a_file_no_run_wrote_beside_the_named_one_is_refused_before_the_run(folder, file, content, named, why):
    (folder / file).write_bytes(content)
    before = _snapshot(folder)
    r = _serq("p.sq", "--records", named, cwd=folder)
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"error: {file}: not a table of records serq wrote ({why}); --records {named} writes a "
                        "table of the program's records there (remove it, or give --records another name)\n")
    assert r.stdout == "" and _snapshot(folder) == before


def test_the_tables_a_run_wrote_are_replaced_and_the_named_file_is_the_users(folder):
    (folder / "r.csv").write_text("whatever the user keeps here\n")  # the name given: not written (two tables)
    (folder / "r.req.csv").write_bytes(b"\xef\xbb\xbfsession,turn,time,sent,done\r\n5,1,9.0,8.0,9.0\r\n")
    (folder / "r.other.csv").write_text("")
    r = _serq("p.sq", "--records", "r.csv", cwd=folder)
    assert r.returncode == 0, r.stderr
    # by hand: sessions 0 and 1 at 0 on one server of work 1 end at 1 and 2
    assert (folder / "r.req.csv").read_text() == "session,turn,time,sent,done\n0,0,1.0,0.0,1.0\n1,0,2.0,0.0,2.0\n"
    assert (folder / "r.other.csv").read_text() == "session,turn,time,x\n0,0,1.0,7\n1,0,2.0,7\n"  # (a whole column as integers)
    assert (folder / "r.csv").read_text() == "whatever the user keeps here\n"
    again = _snapshot(folder)
    assert _serq("p.sq", "--records", "r.csv", cwd=folder).returncode == 0
    assert _snapshot(folder) == again
