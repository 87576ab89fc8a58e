"""`serq run --dump D` where D (or the folder it is to be made in) becomes a file while the program runs: the
folder was checked before the run, and made after it with os.makedirs, whose refusal was the bare
"error: D: File exists" (and, for D/sub under a file, "Not a directory"). Now it is checked again where it is
made, and said as before the run: "D: is a file; files are written into a folder here". Nothing is written
into or over the file. The run is replaced at serq_sim.api.run by one that makes the file after simulating,
the moment a run that the user outraces it with ends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); observe r = now - t0; }
run { horizon 100; seed 1; }
"""

# serq, its run making the file FILE (argv[1]) once the simulation is done, before the report is written
WRAP = """import os, sys
import serq_sim.api as api
made, real = sys.argv.pop(1), api.run
def run(*a, **k):
    report = real(*a, **k)
    parent = os.path.dirname(made)
    if parent and os.path.isdir(parent) and not os.listdir(parent):
        os.rmdir(parent)
        made_file = parent
    else:
        if os.path.isdir(made):
            os.rmdir(made)
        made_file = made
    with open(made_file, "w") as f:
        f.write("theirs")
    return report
api.run = run
from serq.cli import entry
sys.argv = ['serq'] + sys.argv[1:]
entry()
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("dump, premade, said", [
    ("D", None, "error: D: is a file; files are written into a folder here"),
    ("D", "D", "error: D: is a file; files are written into a folder here"),  # made before, replaced
    ("E/sub", "E", "error: E/sub: cannot be made a folder: E is a file"),
])
def test_a_dump_folder_made_a_file_during_the_run_is_said_as_before_it(tmp_path: Path, dump, premade, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    if premade:
        (tmp_path / premade).mkdir()
    r = subprocess.run([sys.executable, "-c", WRAP, dump, "run", "p.sq", "--no-progress", "--dump", dump,
                        "-o", "rep.txt"], cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == said, r.stderr
    theirs = tmp_path / (premade or dump)
    assert theirs.is_file() and theirs.read_text() == "theirs"  # not written over, nor into
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["p.sq", theirs.name])


@pytest.mark.timeout(120)
def test_a_dump_folder_left_alone_is_written(tmp_path: Path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--no-progress", "--dump", "D", "-o", "rep.txt"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "D").iterdir()) == ["r.csv", "serq-dump.json"]
    assert (tmp_path / "D" / "r.csv").read_text().startswith("time,session,turn,value\n")
