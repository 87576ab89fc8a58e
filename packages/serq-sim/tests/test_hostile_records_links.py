"""`serq run --records OUT.csv` of a program of several record tables writes OUT.NAME.csv per table, names
serq makes: a symbolic link planted at one was followed and the file it named replaced, and a FIFO there
was written through (the run waited for a reader). Such a name is now serq's own file (docs/security.md):
anything there but a regular file is refused before the run, one error naming it, status 1, nothing
written. The file the user named exactly (a program of one table) may still be a link, followed as a
shell's `>` follows it.

`serq run --max-events` and `--max-samples` were click's IntRange ("'1e400' is not a valid integer
range"); they are serq.options.EVENTS and SAMPLES, as in `serq sweep` and `serq compare`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
TWO = ("stage s : delay;\nworkload { arrive poisson(1); }\n"
       "session { run s (1); record req { a = 1; } record sub { b = 2; } }\nrun { horizon 5; }\n")
ONE = ("stage s : delay;\nworkload { arrive poisson(1); }\n"
       "session { run s (1); record req { a = 1; } }\nrun { horizon 5; }\n")
posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="symbolic links and FIFOs of POSIX")


def serq(cwd: Path, *args: str, here=None, command: str = "run") -> subprocess.CompletedProcess:
    """``serq COMMAND p.sq --no-progress ARGS`` in ``cwd``, as a child process; given ``here``
    (serq_in_process), serq.cli.main in the test's process, in that folder (a test of what is said and of
    the files written or left as they were, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(command, "p.sq", "--no-progress", *args)
    return subprocess.run([SERQ, command, "p.sq", "--no-progress", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)


def entries(folder: Path) -> dict[str, str]:
    """What the folder holds: each entry's kind (and a regular file's text)."""
    out = {}
    for p in sorted(folder.iterdir()):
        out[p.name] = ("link " + os.readlink(p) if p.is_symlink() else "fifo" if p.is_fifo()
                       else p.read_text())
    return out


@posix
@pytest.mark.parametrize("table", ["req", "sub"])
@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_a_link_at_a_per_table_name_is_refused(tmp_path, serq_in_process, table, ext):
    (tmp_path / "p.sq").write_text(TWO)
    (tmp_path / "victim").write_text("keep me\n")
    os.symlink("victim", tmp_path / f"out.{table}{ext}")
    before = entries(tmp_path)
    here = None if (table, ext) == ("req", ".csv") else serq_in_process  # (the first case as a child process)
    r = serq(tmp_path, "--records", f"out{ext}", "-o", "report.txt", "--dump", "dump", here=here)
    assert r.returncode == 1, r.stderr
    assert r.stderr == (f"error: out.{table}{ext}: is a symbolic link; serq names this file itself and writes "
                        "it only as a new or regular file (remove it, or choose another output)\n")
    assert r.stdout == ""
    assert entries(tmp_path) == before  # the link's target as it was; no report, dump or other table


@posix
def test_a_dangling_link_creates_nothing(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(TWO)
    os.symlink("elsewhere.csv", tmp_path / "out.sub.csv")
    r = serq(tmp_path, "--records", "out.csv", here=serq_in_process)
    assert r.returncode == 1 and r.stderr.startswith("error: out.sub.csv: is a symbolic link;"), r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["out.sub.csv", "p.sq"]


@posix
def test_a_fifo_at_a_per_table_name_is_refused_without_waiting(tmp_path):
    (tmp_path / "p.sq").write_text(TWO)
    os.mkfifo(tmp_path / "out.sub.csv")
    r = serq(tmp_path, "--records", "out.csv", "-o", "report.txt")  # no reader: a write through would wait
    assert r.returncode == 1, r.stderr
    assert r.stderr == ("error: out.sub.csv: is a FIFO (a named pipe); serq names this file itself and writes "
                        "it only as a new or regular file (remove it, or choose another output)\n")
    assert entries(tmp_path) == {"out.sub.csv": "fifo", "p.sq": TWO}


@posix
def test_a_folder_at_a_per_table_name_is_refused(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(TWO)
    (tmp_path / "out.req.csv").mkdir()
    r = serq(tmp_path, "--records", "out.csv", here=serq_in_process)
    assert r.returncode == 1 and r.stderr.startswith("error: out.req.csv: is a folder;"), r.stderr
    assert r.stderr.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["out.req.csv", "p.sq"]


def test_regular_per_table_files_are_replaced(tmp_path, serq_in_process):
    # an earlier run's (a file no run wrote there is refused: test_hostile_round32_records_over_files.py)
    (tmp_path / "p.sq").write_text(TWO)
    (tmp_path / "out.req.csv").write_text("session,turn,time,a\n0,0,5.0,5.0\n")
    r = serq(tmp_path, "--records", "out.csv", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.req.csv").read_text().startswith("session,turn,time,a\n")
    assert (tmp_path / "out.sub.csv").read_text().startswith("session,turn,time,b\n")
    assert not (tmp_path / "out.csv").exists()


@posix
def test_the_file_the_user_named_may_be_a_link(tmp_path, serq_in_process):
    """One table: its file is the one named, followed as a shell's `>` follows a link; the link stays."""
    (tmp_path / "p.sq").write_text(ONE)
    (tmp_path / "target.csv").write_text("old\n")
    os.symlink("target.csv", tmp_path / "out.csv")
    r = serq(tmp_path, "--records", "out.csv", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert os.readlink(tmp_path / "out.csv") == "target.csv"
    assert (tmp_path / "target.csv").read_text().startswith("session,turn,time,a\n")


@posix
def test_the_file_the_user_named_may_be_a_fifo(tmp_path):
    """One table, --records FIFO with a reader: written through, as documented."""
    (tmp_path / "p.sq").write_text(ONE)
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    proc = subprocess.Popen([SERQ, "run", "p.sq", "--no-progress", "--records", "out.csv"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        with open(fifo) as f:  # the reader: the write goes through once it is there
            text = f.read()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert text.startswith("session,turn,time,a\n")
    assert fifo.is_fifo()


@posix
@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_the_writer_refuses_an_own_link(tmp_path, ext):
    """serq_sim.records.write(own=True), as the command calls it: refused at the write too (a link
    planted while the run went on); without own, the link the user named is followed."""
    from serq.files import OutputError
    from serq_sim.records import Records, RecordTable, write

    (tmp_path / "victim").write_text("keep me\n")
    os.symlink("victim", tmp_path / f"out.req{ext}")
    table = RecordTable("req", ["a"], [True])
    table.add(0, 0, 1.0, (1.0,))
    records = Records(table, 0.0)
    with pytest.raises(OutputError, match="is a symbolic link; serq names this file itself"):
        write(records, str(tmp_path / f"out.req{ext}"), [], own=True)
    assert (tmp_path / "victim").read_text() == "keep me\n"
    if ext == ".csv":
        write(records, str(tmp_path / f"out.req{ext}"), [])
        assert (tmp_path / "victim").read_text() == "session,turn,time,a\n0,0,1.0,1\n"
        assert (tmp_path / f"out.req{ext}").is_symlink()


@pytest.mark.parametrize("command, flag, what", [("run", "--max-events", "events"),
                                                 ("run", "--max-samples", "samples"),
                                                 ("sweep", "--max-events", "events")])  # sweep's, as it was
@pytest.mark.parametrize("value, said", [
    ("1e400", "'1e400' is not a whole number"),
    ("abc", "'abc' is not a whole number"),
    ("1.5", "'1.5' is not a whole number"),
    ("-1", "-1 is not a positive whole number of {what}"),
    ("0", "0 is not a positive whole number of {what}"),
    ("9" * 5000, "99999999999999999999… (5000 characters) is not a positive whole number of {what}: more than 4300 "
     "digits, the most a whole number is read or written with"),
])
def test_a_count_that_is_not_one_says_so(tmp_path, serq_in_process, command, flag, what, value, said):
    (tmp_path / "p.sq").write_text(ONE)
    here = None if value == "1e400" else serq_in_process  # (the first value of each flag as a child process)
    r = serq(tmp_path, flag, value, here=here, command=command)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"error: invalid value for '{flag}': {said.format(what=what)} (see 'serq {command} "
                        "--help')\n")
    assert r.stdout == "" and os.listdir(tmp_path) == ["p.sq"]


@pytest.mark.parametrize("flag", ["--max-events", "--max-samples"])
def test_a_huge_count_is_no_bound(tmp_path, serq_in_process, flag):
    """A whole number past 2**64 is a bound the run never reaches (sweep takes it too)."""
    (tmp_path / "p.sq").write_text(ONE)
    r = serq(tmp_path, flag, "99999999999999999999999999", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert "PARTIAL" not in r.stdout


def test_a_count_still_bounds_the_run(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(ONE)
    r = serq(tmp_path, "--max-events", "1", here=serq_in_process)
    assert r.returncode == 3, r.stderr
    assert r.stdout.startswith("run: PARTIAL")
