"""``serq sweep`` and ``serq compare`` whose standard error refuses a write (``2>/dev/full``) end with their work's
status (docs/sweep.md, "Standard error that refuses a write"): what they would say there is dropped, and their
outputs are written as with a working stderr. A sweep with ``-o`` ended with status 1 after writing every output
(its summary line's OSError, taken for a bug), and a comparison whose runs drew nothing random printed no table
(its note came first). A run that fails still ends the sweep with status 1, and a usage error with 2 (it was 1:
its own message's OSError). The rule is the host's (serq.cli._Diagnostics, docs/architecture.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
ENV = dict(os.environ)

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(a); }
session { run s (1); }
run { horizon 5; seed 1; }
"""
#: no random number drawn: every seed runs the same run, which a comparison notes on stderr before its table
FIXED = PROGRAM.replace("poisson(a)", "renewal(a)")


def _serq(cwd, *args, full: bool):
    if not full:
        return subprocess.run([SERQ, *args], cwd=cwd, capture_output=True, text=True, timeout=200, env=ENV)
    with open("/dev/full", "w") as err:
        r = subprocess.run([SERQ, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=err, text=True, timeout=200,
                           env=ENV)
    return r


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def full():
    if not os.path.exists("/dev/full"):  # pragma: no cover - Linux has it
        pytest.fail("the test needs /dev/full")
    return True


@pytest.mark.timeout(300)
@pytest.mark.parametrize("more", [[], ["--show", "events"]])
def test_a_sweep_into_a_full_stderr_writes_everything_and_ends_with_0(tmp_path, full, more):
    runs = {}
    for name, is_full in (("ok", False), ("full", True)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "p.sq").write_text(PROGRAM)
        r = _serq(folder, "sweep", "p.sq", "--set", "a=1,2", "-o", "t.csv", "--workers", "0", "--no-progress", *more,
                  full=is_full)
        assert r.returncode == 0, r.stderr
        runs[name] = (r.stdout, _files(folder))
    assert runs["full"] == runs["ok"]  # the table, its points table and --show's lines alike
    assert sorted(runs["full"][1]) == ["p.sq", "t.csv", "t.points.csv"]
    assert (runs["full"][0] != "") == bool(more)


@pytest.mark.timeout(300)
def test_a_comparison_into_a_full_stderr_prints_its_table(tmp_path, full):
    (tmp_path / "p.sq").write_text(FIXED)
    args = ["compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress", "--figure",
            "events"]
    ok = _serq(tmp_path, *args, full=False)
    assert ok.returncode == 0 and ok.stderr.startswith("note: every seed ran the same run"), ok.stderr
    r = _serq(tmp_path, *args, full=True)
    assert r.returncode == 0
    assert r.stdout == ok.stdout and r.stdout.startswith("a=2 - a=1, paired over 2 seeds")


@pytest.mark.timeout(300)
def test_a_failed_run_is_still_status_1(tmp_path, full):
    # a session of negative work (b - now, b = -1) fails its run at its first session (the row says why); stderr's
    # refusal changes nothing
    (tmp_path / "p.sq").write_text(PROGRAM.replace("let a = 1;", "let a = 1;\nlet b = 100;")
                                   .replace("run s (1);", "run s (b - now);"))
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "b=-1,100", "-o", "t.csv", "--workers", "0", "--no-progress",
              full=True)
    assert r.returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "t.csv", "t.points.csv"]
    assert ",error," in (tmp_path / "t.csv").read_text()


@pytest.mark.timeout(300)
def test_a_usage_error_is_still_status_2(tmp_path, full):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "sweep", "p.sq", "--fresh", "--workers", "0", "--no-progress", full=True)
    assert r.returncode == 2 and r.stdout == ""
    r = _serq(tmp_path, "run", "p.sq", "--horizon", "x", full=True)
    assert r.returncode == 2 and r.stdout == ""
