"""A `--trace` FILE that cannot be opened as a file (a FIFO, a missing name) was `serq run`'s error, a bad
input file, status 1 (`t.csv: error: cannot read the trace: is a FIFO (a named pipe), not a file`), but a
usage error of `serq sweep` and `serq compare`, status 2 (`error: --trace t.csv: cannot read the trace: …`):
one file, two statuses, decided in two places. A file that cannot be read is a bad input file, status 1, as a
program that cannot be read is in every command; one function says it (serq_sim.trace.unreadable). A folder
is the option's type's refusal (click's `is a directory`), a usage error, status 2, in all three."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay" / "vllm_replay.sq"


def _serq(cwd, *args):
    return subprocess.run([sys.executable, "-m", "serq", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def _commands():
    return {"run": ["run", "a.sq"], "sweep": ["sweep", "a.sq", "--no-progress", "--workers", "0"],
            "compare": ["compare", "a.sq", "b.sq", "--no-progress", "--workers", "0"]}


@pytest.mark.parametrize("kind", ["fifo", "missing", "folder"])
def test_every_command_gives_one_status_for_one_bad_trace(tmp_path, kind):
    shutil.copy(REPLAY, tmp_path / "a.sq")
    shutil.copy(REPLAY, tmp_path / "b.sq")
    if kind == "fifo":
        os.mkfifo(tmp_path / "t.csv")
    elif kind == "folder":
        (tmp_path / "t.csv").mkdir()
    before = sorted(os.listdir(tmp_path))
    said = {}
    for name, args in _commands().items():
        r = _serq(tmp_path, *args, "--trace", "t.csv", "-o", "out.csv")
        assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, (name, r.stderr)
        said[name] = (r.returncode, r.stderr if kind != "folder" else r.stderr.split(" (see ")[0])
        assert sorted(os.listdir(tmp_path)) == before, name  # nothing written
    assert said["run"] == said["sweep"] == said["compare"], said
    status, line = said["run"]
    assert status == {"fifo": 1, "missing": 1, "folder": 2}[kind]
    assert line.rstrip("\n") == {
        "fifo": "t.csv: error: cannot read the trace: is a FIFO (a named pipe), not a file",
        "missing": "t.csv: error: cannot read the trace: No such file or directory",
        "folder": "error: invalid value for '--trace': File 't.csv' is a directory"}[kind]
