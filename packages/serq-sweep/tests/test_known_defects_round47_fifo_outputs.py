"""A FIFO given as a sweep's ``-o``/``--out`` (or ``--records``) that the sweep would resume from is refused before
anything is compiled, as the other ``-o`` checks are (test_hostile_round49_out_name_first): it was refused
after every point was compiled, and behind the program's compile error when it had one. So are FIFOs at the
names serq gives beside the table (``OUT.journal``, ``OUT.points.csv``). Outputs that are not read back are
written through a FIFO, as every output is (docs/security.md): ``serq sweep --fresh -o``, ``serq compare -o``,
``serq run --records``; each is checked here with a reader, the whole output read."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import api, core

SERQ = str(Path(sys.executable).parent / "serq")
ENV = dict(os.environ)

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(a); }
session { run s (1); }
run { horizon 5; seed 1; }
"""
#: a program every point of which fails to compile: a compile before the refusal is said first
BROKEN = PROGRAM.replace("run s (1);", "run s (nosuch);")

RECORDS = """let a = 1;
stage s : delay;
workload { arrive poisson(a); }
session {
  set t0 = now;
  run s (1);
  record job {
    sent = t0;
    done = now;
  }
}
run { horizon 5; seed 1; }
"""


def _serq(cwd, *args, timeout=120):
    return subprocess.run([SERQ, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=ENV,
                          stdin=subprocess.DEVNULL)


def _listing(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.timeout(120)
def test_sweep_out_fifo_is_refused_before_compiling(tmp_path):
    (tmp_path / "p.sq").write_text(BROKEN)
    os.mkfifo(tmp_path / "t.csv")
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "a=1,2", "-o", "t.csv", "--workers", "0", "--no-progress")
    assert (r.returncode, r.stderr, r.stdout) == (1, "error: t.csv: cannot read the table to resume from (is a FIFO "
                                                     "(a named pipe), not a file); remove it or give --fresh\n", "")
    assert _listing(tmp_path) == ["p.sq", "t.csv"]


@pytest.mark.timeout(120)
def test_sweep_records_fifo_is_refused_before_compiling(tmp_path):
    (tmp_path / "p.sq").write_text(BROKEN)
    os.mkfifo(tmp_path / "r.csv")
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "a=1,2", "-o", "t.csv", "--records", "r.csv", "--workers", "0",
              "--no-progress")
    assert (r.returncode, r.stderr) == (1, "error: r.csv: cannot read the records to resume from (is a FIFO (a named "
                                           "pipe), not a file); remove it or give --fresh\n")
    assert _listing(tmp_path) == ["p.sq", "r.csv"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("beside", ["t.csv.journal", "t.points.csv"])
@pytest.mark.parametrize("fresh", [[], ["--fresh"]])
def test_a_fifo_at_a_name_serq_gives_is_refused_before_compiling(tmp_path, beside, fresh):
    (tmp_path / "p.sq").write_text(BROKEN)
    os.mkfifo(tmp_path / beside)
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "a=1,2", "-o", "t.csv", *fresh, "--workers", "0", "--no-progress")
    assert r.returncode == 1
    assert r.stderr == (f"error: {beside}: is a FIFO (a named pipe); serq names this file itself and writes it only "
                        "as a new or regular file (remove it, or choose another output)\n")
    assert _listing(tmp_path) == sorted(["p.sq", beside])


@pytest.mark.timeout(120)
def test_the_api_compiles_nothing_for_a_fifo_out(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    os.mkfifo(tmp_path / "t.csv")
    compiled = []
    monkeypatch.setattr(core, "compile_point", lambda *a, **k: compiled.append(a))
    with pytest.raises(UserError) as e:
        api.sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, out=str(tmp_path / "t.csv"), workers=0, progress=False)
    assert str(e.value) == (f"error: {tmp_path / 't.csv'}: cannot read the table to resume from (is a FIFO (a named "
                            "pipe), not a file); remove it or give fresh=True")
    assert compiled == [] and _listing(tmp_path) == ["p.sq", "t.csv"]


def _read_through(fifo: Path, *args, cwd) -> tuple[subprocess.CompletedProcess, bytes]:
    """Run serq with ``args`` while a thread reads ``fifo`` whole; the command's result and what was read."""
    got: list[bytes] = []

    def read():
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        r = _serq(cwd, *args)
    finally:
        reader.join(30)
        if reader.is_alive():  # (the command never opened it: end the reader's wait)
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(30)
    return r, got[0] if got else b""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("command, name", [
    (["sweep", "p.sq", "--set", "a=1,2", "--fresh", "--workers", "0", "--no-progress", "-o"], "t.csv"),
    (["compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o"], "t.csv"),
    (["run", "p.sq", "--records"], "r.csv"),
])
def test_outputs_not_read_back_are_written_through_a_fifo(tmp_path, command, name):
    (tmp_path / "p.sq").write_text(RECORDS)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "p.sq").write_text(RECORDS)
    r = _serq(plain, *command, name)
    assert r.returncode == 0, r.stderr
    os.mkfifo(tmp_path / name)
    through, read = _read_through(tmp_path / name, *command, name, cwd=tmp_path)
    assert through.returncode == 0, through.stderr
    assert read == (plain / name).read_bytes() and read.count(b"\n") >= 2  # the whole, as a file has it
