"""An output whose folder takes no new file is refused before the work, saying so.

``serq run p.sq -o /proc/self/status`` ran the program and then said ``error: /proc/self/status: No such
file or directory`` of a file that exists: a report is written whole or not at all, as a new file beside
the output renamed over it (serq.files.open_atomic), and a folder of /proc takes no new file. The error
now says which folder refused a new file and why; serq.files.check_output, which every command calls on
its outputs before it runs, makes (and removes) such a file, so a run of an hour is not lost to it.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.files import OutputError, check_output, write_atomic

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); observe x = now; record r { y = now; } }
run { horizon 5; seed 1; }
"""

proc = pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="no /proc")


def _serq(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` of the program in ``tmp_path``, as a child process; given ``here`` (serq_in_process),
    serq.cli.main in the test's process, in that folder (a test of what is said and written)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          stdin=subprocess.DEVNULL)


@proc
@pytest.mark.parametrize("output", ["/proc/self/status", "/proc/version", "/proc/no-such-file"])
def test_a_folder_that_takes_no_new_file_is_named_with_its_reason(tmp_path, serq_in_process, output):
    here = None if output == "/proc/self/status" else serq_in_process  # (the first as a child process)
    r = _serq(tmp_path, "run", "p.sq", "--no-progress", "-o", output, here=here)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    folder = os.path.dirname(output)
    assert r.stderr.startswith(f"error: {output}: cannot create a file in its folder {folder} ("), r.stderr
    assert "serq writes a file whole or not at all" in r.stderr and len(r.stderr.splitlines()) == 1


@proc
def test_every_command_that_writes_refuses_it_before_it_runs(tmp_path, serq_in_process):
    # (the sweep that makes the table and the refusals but the first on serq.cli.main in this process)
    made = _serq(tmp_path, "sweep", "p.sq", "--workers", "0", "--no-progress", "--set", "a=1,2", "-o", "t.csv",
                 here=serq_in_process)
    assert made.returncode == 0, made.stderr
    for args in (["sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "/proc/self/status.csv"],
                 ["run", "p.sq", "--no-progress", "--records", "/proc/self/r.csv"],
                 ["sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.csv", "--records", "/proc/self/r.csv"],
                 ["plot", "t.csv", "--x", "a", "--y", "events", "-o", "/proc/self/p.svg"]):
        r = _serq(tmp_path, *args, here=None if args[-1] == "/proc/self/status.csv" else serq_in_process)
        assert r.returncode == 1 and "cannot create a file in its folder /proc/self" in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr


@proc
def test_check_output_and_write_atomic_say_it_too():
    with pytest.raises(OSError) as info:
        check_output("/proc/self/status")
    assert info.value.errno == errno.ENOENT and info.value.filename == "/proc/self/status"
    assert info.value.strerror.startswith("cannot create a file in its folder /proc/self (")
    with pytest.raises(OSError) as info:
        write_atomic("/proc/self/status", "x")
    assert info.value.filename == "/proc/self/status" and "cannot create a file in its folder" in str(info.value)


def test_a_writable_folder_is_left_as_it_was(tmp_path):
    check_output(tmp_path / "new.txt")
    (tmp_path / "old.txt").write_text("kept")
    check_output(tmp_path / "old.txt")
    assert sorted(os.listdir(tmp_path)) == ["old.txt"]  # the file made to try the folder is gone
    assert (tmp_path / "old.txt").read_text() == "kept"
    with pytest.raises(OutputError):  # a folder: refused as before
        check_output(tmp_path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write any folder")
def test_a_folder_this_user_may_not_write(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "r.txt").write_text("old")
    folder.chmod(0o555)
    try:
        r = _serq(tmp_path, "run", "p.sq", "--no-progress", "-o", "ro/r.txt")
        assert r.returncode == 1 and r.stderr.startswith("error: ro/r.txt: cannot create a file in its folder ro "
                                                         "(Permission denied)"), r.stderr
        assert (folder / "r.txt").read_text() == "old"
    finally:
        folder.chmod(0o755)
