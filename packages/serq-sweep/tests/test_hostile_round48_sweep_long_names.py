"""serq sweep, serq compare and a capacity search name a program of a long file name as serq run does
(serq.errors.shown_path, cut around '…' past 240 characters) when they refuse it before any run: runs with
no end ('FILE: the run has no end: …'), a --over knob the program has no let of. Each printed the name
whole (a first line of 892 characters for a program in a folder of 600), where serq run cut it. Nothing is
written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; end; }
run { horizon 1000; seed 1; }
"""
NO_END = ("the run has no end: horizon inf and arrivals that never stop (`arrive poisson`), and no --max-events or "
          "--max-wall to stop it; give --arrivals N (or `arrivals N;` in the run block), a finite horizon, or "
          "--max-events N or --max-wall S (a partial report where it stops)")


def _program(tmp_path: Path) -> Path:
    folder = tmp_path / ("y" * 200) / ("z" * 200) / ("w" * 200)
    folder.mkdir(parents=True)
    p = folder / "p.sq"
    p.write_text(PROGRAM)
    return p


@pytest.mark.parametrize("command", [
    ["sweep", "{p}", "--set", "lam=0.1,0.2", "--horizon", "inf", "--seeds", "1", "-o", "t.csv"],
    ["compare", "{p}", "--set", "lam=0.1,0.2", "--horizon", "inf", "--seeds", "1..2"],  # (one seed: a usage error)
    ["sweep", "{p}", "--find", "response.mean < 3", "--over", "lam", "0.1:0.9", "--horizon", "inf", "--seeds", "1",
     "-o", "t.csv"],
])
def test_runs_with_no_end_name_a_long_program_cut(tmp_path, command):
    p = _program(tmp_path)
    args = [str(p) if a == "{p}" else a for a in command]
    r = subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    shown = shown_path(p)
    assert len(shown) == 240 and "…" in shown
    assert r.stderr == f"{shown}: error: {NO_END}\n", r.stderr[:600]
    assert sorted(os.listdir(tmp_path)) == ["y" * 200]


def test_a_search_over_a_knob_the_program_lacks_names_it_cut(tmp_path):
    p = _program(tmp_path)
    r = subprocess.run([SERQ, "sweep", str(p), "--find", "response.mean < 3", "--over", "zz", "0.1:0.9", "--seeds", "1",
                        "-o", "t.csv"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode != 0 and r.stdout == ""
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"error: {shown_path(p)}: --over zz: the program has no `let zz`"), first[:600]
    assert str(p) not in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["y" * 200]
