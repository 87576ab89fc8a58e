"""`serq plot SOURCE`: a source that is no regular file (a FIFO nobody writes, a link to /dev/zero) or a
dump's CSV that is not one is one message and status 1: never a hang, never a traceback, no picture."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
SERQ = str(Path(sys.executable).parent / "serq")

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="FIFOs and /dev/zero are POSIX")


def _plot(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    # a read that blocks fails here, at the timeout, instead of hanging the suite; given ``here``
    # (serq_in_process, for a source that is a regular file), serq.cli.main in the test's process, in the folder
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here("plot", *args, "-o", "f.svg")
    return subprocess.run([SERQ, "plot", *args, "-o", "f.svg"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, stdin=subprocess.DEVNULL)


def _refused(r, tmp_path: Path, *parts: str) -> None:
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    for part in parts:
        assert part in r.stderr, r.stderr
    assert not (tmp_path / "f.svg").exists()


def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@needs_fifo
@pytest.mark.parametrize("kind, what", [("fifo", "is a FIFO (a named pipe), not a file"),
                                        ("zero", "is a character device, not a file")])
@pytest.mark.parametrize("args, reads", [(("--x", "a", "--y", "b"), "the table"), (("--cdf", "ttft"), "the records")])
def test_a_table_or_records_that_is_not_a_regular_file_is_refused(tmp_path, kind, what, args, reads):
    _special(tmp_path / "t.csv", kind)
    _refused(_plot(tmp_path, "t.csv", *args), tmp_path, f"t.csv: cannot read {reads}: {what}")


@needs_fifo
def test_a_dump_entry_that_is_not_a_regular_file_is_refused(tmp_path):
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "d" / "x.csv")
    _refused(_plot(tmp_path, "d", "--cdf", "x"), tmp_path, "x.csv: cannot read: is a FIFO (a named pipe), not a file")


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,2\n", "x.csv:1: error: not a dump's CSV (its header has no columns time and value)"),
    ("", "x.csv:1: error: not a dump's CSV"),
])
def test_a_dump_csv_that_is_not_one_is_located(tmp_path, serq_in_process, text, message):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.csv").write_text(text)
    _refused(_plot(tmp_path, "d", "--cdf", "x", here=serq_in_process), tmp_path, message)


# a row's fault is at its cell (value is the fourth field, after "1,0,0,": column 7), or at the start of a row
# without one; the line quoted with a caret, as a source's mistake is (it was the line's number alone)
@pytest.mark.parametrize("row, col", [("1,0,0,x", 7), ("1,0", 1), ("x,0,0,1", 1)])
def test_a_dump_rows_fault_is_at_its_cell(tmp_path, serq_in_process, row, col):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.csv").write_text(f"time,session,turn,value\n0,0,0,1\n{row}\n")
    r = _plot(tmp_path, "d", "--cdf", "x", here=serq_in_process)
    assert r.returncode == 1 and not (tmp_path / "f.svg").exists(), r.stderr
    assert r.stderr == (f"d/x.csv:3:{col}: error: the row has no number under time or value ({row!r})\n"
                        f"  {row}\n  {' ' * (col - 1)}^\n")


def test_a_dump_csv_that_is_not_utf8_is_one_message(tmp_path, serq_in_process):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.csv").write_bytes(b"time,session,turn,value\n1,0,0,2\n2,0,0,\xff\n")
    r = _plot(tmp_path, "d", "--cdf", "x", here=serq_in_process)
    assert r.returncode == 1 and not (tmp_path / "f.svg").exists(), r.stderr
    # the byte is the seventh character of line 3, shown as \xff
    assert r.stderr == ("d/x.csv:3:7: error: not a dump's CSV (not UTF-8 text (byte 0xFF))\n"
                        "  2,0,0,\\xff\n        ^\n")


def test_a_source_of_another_kind_names_the_source_not_an_option(tmp_path, serq_in_process):
    (tmp_path / "t.sq").write_text("")
    _refused(_plot(tmp_path, "t.sq", "--x", "a", "--y", "b", here=serq_in_process), tmp_path, "serq plot t.sq: a table is .parquet or .csv")
