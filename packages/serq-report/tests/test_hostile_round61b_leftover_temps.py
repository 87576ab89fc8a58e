"""A write killed where nothing can clean up after it (SIGKILL, the OOM killer) in the middle of a dump or a set
of record tables left its temporary files (``.NAME.csv.….tmp``, one a file written and not yet renamed) in the
folder for good: nothing looked at them again. A temporary file's name now carries its writer's pid
(``.NAME.PID-XXXXXXXX.tmp``), and a writer that holds the folder's lock (a dump, a set of record tables:
serq.files.take_folder) removes those of a writer that no longer runs: only regular files of this user's with
serQ's own name, never a live writer's, an older name without a pid, a link, or a user's file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

PROGRAM = ("stage s : delay;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (1); observe wait = now - t0; record a { x = now; } record b { y = 1; } }\n"
           "gauge live = 1;\nrun { horizon 3; seed 1; }\n")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _plant(where, dead: int) -> dict[str, bool]:
    """Files at ``where``: name -> whether the next writer holding the folder removes it."""
    where.mkdir(parents=True, exist_ok=True)
    files = {f".wait.csv.{dead}-0123abcd.tmp": True,  # a killed writer's
             f".a%2Fb.csv.{dead}-89abcdef.tmp": True,
             f".wait.csv.{os.getpid()}-0123abcd.tmp": False,  # a live writer's (this process)
             ".wait.csv.0123abcd.tmp": False,  # (the name before the pid: its writer cannot be told)
             f".wait.csv.{dead}-0123ABCD.tmp": False,  # not serQ's name (capitals)
             f"wait.csv.{dead}-0123abcd.tmp": False,  # nor this (no leading dot)
             ".notes.tmp": False}
    for name in files:
        (where / name).write_text("x\n")
    os.symlink("nowhere", where / f".link.csv.{dead}-00000000.tmp")  # a link of that name: not removed
    files[f".link.csv.{dead}-00000000.tmp"] = False
    return files


def _left(where, files):
    return {n: os.path.lexists(where / n) for n in files}


def test_a_dump_removes_a_dead_writers_temporary_files(folder, serq_in_process):
    dead = _dead_pid()
    top, gauges = _plant(folder / "d", dead), _plant(folder / "d" / "gauge", dead)
    r = serq_in_process("run", "p.sq", "--no-progress", "--dump", "d", "-o", "rep.txt")
    assert r.returncode == 0, r.stderr
    assert _left(folder / "d", top) == {n: not removed for n, removed in top.items()}
    assert _left(folder / "d" / "gauge", gauges) == {n: not removed for n, removed in gauges.items()}
    assert (folder / "d" / "wait.csv").exists() and (folder / "d" / "gauge" / "live.csv").exists()


def test_a_set_of_record_tables_removes_them_and_one_file_does_not(folder, serq_in_process):
    dead = _dead_pid()
    files = _plant(folder / "out", dead)
    # one file written alone (-o) takes no folder lock: it judges nothing there
    r = serq_in_process("run", "p.sq", "--no-progress", "-o", "out/rep.txt")
    assert r.returncode == 0, r.stderr
    assert all(_left(folder / "out", files).values())
    r = serq_in_process("run", "p.sq", "--no-progress", "--records", "out/r.csv")
    assert r.returncode == 0, r.stderr
    assert _left(folder / "out", files) == {n: not removed for n, removed in files.items()}
    assert (folder / "out" / "r.a.csv").exists() and (folder / "out" / "r.b.csv").exists()


def test_a_set_killed_between_its_files_is_cleaned_by_the_next_dump(folder, serq_in_process):
    """A real SIGKILL: a writer of a set (renamed_together) killed once its first file is written leaves that
    file under its own pid; the next dump into the folder removes it, and its own files are there whole."""
    (folder / "d").mkdir()
    code = textwrap.dedent("""
        import sys, time
        from serq.files import renamed_together, write_atomic
        with renamed_together():
            write_atomic("d/wait.csv", "time,session,turn,value\\n", own=True)
            print("written", flush=True)
            time.sleep(60)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "written\n"
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.wait()
        p.stdout.close()
    left = [n for n in os.listdir(folder / "d") if n.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(f".wait.csv.{p.pid}-"), left
    r = serq_in_process("run", "p.sq", "--no-progress", "--dump", "d", "-o", "rep.txt")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(folder / "d")) == ["gauge", "serq-dump.json", "wait.csv"]
