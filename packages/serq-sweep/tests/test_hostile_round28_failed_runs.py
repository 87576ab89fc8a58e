"""Which point and seed a failed run of a sweep, a comparison or a capacity search ran.

A run's error says where in the program it failed (FILE:LINE:COL, the time and the session), not which point
of the sweep or which seed: ``serq sweep --trace peak.csv --trace week.csv`` whose runs of week.csv failed said
'2 run(s) failed; the first:' and the program's error alone, naming no trace; ``serq compare --set P=-1,1``
whose arm P=-1 failed named no arm (where ``serq run --set P=-1`` notes '`P` is -1, given by --set P'); and the
capacity search said '(at N=1 of the capacity search)', naming neither the trace it replayed nor the seed. Each
now ends with the point's values and the seed (docs/sweep.md).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = [sys.executable, "-c", "from serq.cli import main; main()"]

# each session replays a session of the trace; a turn's work is t_pre * (new - 150): negative for a turn of
# fewer than 150 new tokens, the run's error there
TRACED = """let N = 1;
let t_pre = 0.001;

stage gpu : fifo(N);

workload {
  arrive poisson(2);
  trace "own.csv";
  session {
    turn;
    loop {
      request;
      branch (more) { turn; } else { end; }
    }
  }
}

server {
  set t0 = now;
  run gpu (t_pre * (new - 150));
  observe response = now - t0;
}

run { horizon 1000; }
"""
HEAD = "session,turn,new,out,think,forced\n"
PEAK = HEAD + "1,1,900,50,0,0\n2,1,700,40,0,0\n3,1,800,30,0,0\n"  # every turn of more than 150 tokens
WEEK = HEAD + "1,1,200,20,0.5,0\n1,2,50,10,0.5,0\n"  # a second turn of 50: a work of 0.001 * -100

PLAIN = """let P = 1;
stage s : fifo;
workload {
  arrive renewal(1);
}
session {
  run s (P + serial * 0);
}
run { horizon 10; }
"""


def write_files(tmp_path) -> None:
    (tmp_path / "p.sq").write_text(TRACED)
    (tmp_path / "own.csv").write_text(PEAK)
    (tmp_path / "peak.csv").write_text(PEAK)
    (tmp_path / "week.csv").write_text(WEEK)
    (tmp_path / "plain.sq").write_text(PLAIN)


def serq(tmp_path, *args, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS --no-progress --workers 0`` in ``tmp_path``, as a child process; given ``here``
    (serq_in_process), serq.cli.main in the test's process, in that folder (a test of what is said)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args, "--no-progress", "--workers", "0")
    return subprocess.run([*SERQ, *args, "--no-progress", "--workers", "0"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)


def test_a_sweep_names_the_trace_of_its_failed_run(tmp_path):
    # peak.csv's turns are all of more than 150 tokens, week.csv's first turn of 200 too, its second of 50 a
    # negative work: both seeds of week.csv fail, the first of them seed 1
    write_files(tmp_path)
    r = serq(tmp_path, "sweep", "p.sq", "--trace", "peak.csv", "--trace", "week.csv", "--seeds", "1..2",
             "--arrivals", "10", "-o", "t.csv")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    first = lines.index("error: 2 run(s) failed; the first:")
    assert lines[first + 1].startswith("p.sq:20:3: error: at t=") and "the run's work is negative" in lines[first + 1]
    assert lines[-1] == "(at the sweep's point trace=week.csv, seed 1)"


def test_a_sweeps_show_of_no_finished_run_names_its_point(tmp_path, serq_in_process):
    # (serq.cli.main in this process, as the module's commands but the first test's)
    # every run fails (week.csv alone): --show has no figure to show, and says why, with the point and seed
    write_files(tmp_path)
    r = serq(tmp_path, "sweep", "p.sq", "--trace", "week.csv", "--seeds", "3..4", "--arrivals", "10",
             "--show", "response.mean", here=serq_in_process)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "error: 2 run(s) failed; the first:\np.sq:20:3: error: at t=" in r.stderr
    assert r.stderr.splitlines()[-1] == "(at the sweep's point trace=week.csv, seed 3)"


def test_a_sweep_of_no_axis_names_the_seed(tmp_path, serq_in_process):
    # P = -1: every run's work is negative, at the first arrival (renewal(1): t = 1, session 0)
    write_files(tmp_path)
    (tmp_path / "minus.sq").write_text(PLAIN.replace("let P = 1;", "let P = -1;"))
    r = serq(tmp_path, "sweep", "minus.sq", "--seeds", "5..6", here=serq_in_process)
    assert r.returncode == 1
    assert r.stderr.splitlines()[-5:] == [
        "error: 2 run(s) failed; the first:",
        "minus.sq:7:3: error: at t=1, session 0: the run's work is negative (-1)",
        "    run s (P + serial * 0);",
        "    ^",
        "(at seed 5)"]


def test_a_comparison_names_the_arm_of_its_failed_run(tmp_path, serq_in_process):
    write_files(tmp_path)
    r = serq(tmp_path, "compare", "plain.sq", "--set", "P=1,-1", "--seeds", "1..2", here=serq_in_process)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "error: 2 run(s) failed; the first:\nplain.sq:7:3: error: at t=1, session 0: the run's work is negative" \
        in r.stderr
    assert r.stderr.splitlines()[-1] == "(at the sweep's point P=-1, seed 1)"


def test_a_capacity_search_names_the_trace_and_seed_of_its_failed_run(tmp_path, serq_in_process):
    write_files(tmp_path)
    r = serq(tmp_path, "sweep", "p.sq", "--trace", "peak.csv", "--trace", "week.csv", "--find",
             "response.mean <= 1", "--over", "N", "1:4:1", "--seeds", "1..2", "--arrivals", "10", here=serq_in_process)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "p.sq:20:3: error: at t=" in r.stderr
    assert r.stderr.splitlines()[-1] == "(at N=1 of the capacity search, trace=week.csv, seed 1)"
