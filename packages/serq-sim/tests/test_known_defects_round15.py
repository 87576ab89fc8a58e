"""Known defects, round 15 (serq-sim)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.errors import SimError

pytestmark = pytest.mark.timeout(60)

SERQ = [sys.executable, "-c", "from serq.cli import main; main()"]

# --- serq_sim.run(trace=...) of a program without a trace clause names the argument -----------------------
#
# The refusal of a trace with nothing to replace said `--trace FILE` to a caller of serq_sim.run(trace=...),
# who gave no flag; the API's other errors name its arguments (serq.loading.argument_given).

PLAIN = """stage s : delay;
workload { arrive renewal(1); }
session { run s (1); }
run { horizon 5; }
"""
TAIL = ": the program's workload reads no trace (no `trace \"FILE\"` clause) for it to replace"


def test_run_names_its_argument_trace(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PLAIN)
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n1,1,1,1,0,0\n")
    monkeypatch.chdir(tmp_path)
    program = serq_frontend.compile(path="p.sq")
    with pytest.raises(SimError) as e:
        serq_sim.run(program, trace="t.csv")
    assert str(e.value) == "p.sq: error: trace=t.csv" + TAIL
    # the command line gave the option, and is told of it
    r = subprocess.run([*SERQ, "run", "p.sq", "--trace", "t.csv", "--no-progress"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "p.sq: error: --trace t.csv" + TAIL + "\n")


# --- the words of the warning that sessions wait for ever, for each kind of waiter ---------------------------
#
# docs/simulator.md: a session queued at a pool whose holders never release it waits for ever. The warning
# said of every such waiter "each waits for pools that only they hold: a deadlock, or a demand beyond the
# capacity", also of requests queued at an `admit via E` pool behind a step stage E that never starts an
# iteration, which are in no deadlock. A waiter is now told by who holds its pools (followed through holders
# that wait themselves): the residents of such a stage, a run of infinite work, sessions behind one at a fifo
# stage; or only waiters, a deadlock.

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
STALL = ("at step stage {0}, whose budget cannot rise above 0 as jobs arrive, so no iteration ever starts; or for "
         "pools that only sessions that never release them hold: the residents of step stage {0}, which never "
         "starts an iteration")
DEADLOCK = "for pools that only they hold: a deadlock, or a demand beyond the capacity"


def report(src: str, monkeypatch, path: str | None = None) -> dict:
    """The JSON report on the default tier and on the general engine, which must be the same bytes."""
    prog = serq_frontend.compile(path=path) if path else serq_frontend.compile(source=src)
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        out.append(encode_json(serq_sim.run(prog)))
    assert out[0] == out[1]
    return json.loads(out[1])


def forever(r: dict) -> list[str]:
    return [n for n in r["notes"] if "wait for ever" in n]


def test_requests_queued_behind_the_stalled_vllm_engine(tmp_path, monkeypatch):
    # bench/vllm_single.sq with `budget residents > 0 ? 0 : B;`: the first request is admitted to the engine
    # (no resident: budget B) and the engine never plans again; every later request queues at reqs (admit via
    # engine), which only that resident holds. No deadlock: every session that arrived waits behind the stage
    with open(os.path.join(ROOT, "bench", "vllm_single.sq")) as f:
        src = f.read()
    assert src.count("  budget B;\n") == 1 and src.count("run { horizon 1e9; warmup 0; seed 1; arrivals 10000; }") == 1
    src = src.replace("  budget B;\n", "  budget residents > 0 ? 0 : B;\n").replace(
        "run { horizon 1e9; warmup 0; seed 1; arrivals 10000; }", "run { horizon 30; warmup 0; seed 1; }")
    (tmp_path / "v.sq").write_text(src)
    r = report("", monkeypatch, path=str(tmp_path / "v.sq"))
    n = r["arrivals"]
    assert n > 100 and r["ended"] == 0
    assert forever(r) == [f"warning: {n} session(s) wait for ever at the end of the run (each waits "
                          f"{STALL.format('engine')}): 1 at a stage that will never complete them (session 0); {n - 1} "
                          "queued at reqs (sessions 1, 2, 3, 4, 5, …)"]


# arrivals at t = 1, 2, ..., 10 (renewal(1), horizon 10.5): serial 0 is E's resident for ever; 1 and 2
# deadlock (1 takes p1 at t=2 and asks for p2 at 4, 2 takes p2 at 3 and asks for p1 at 5); 3 takes a at t=4
# and queues at reqs behind 0; 4 to 9 queue at a, held by 3, which waits itself: behind the stage too, not
# deadlocked
MIXED = """pool reqs { cap 64; admit via E; }
pool a { cap 1; }
pool p1 { cap 1; }
pool p2 { cap 1; }
stage E : step { budget residents > 0 ? 0 : 64; cost 1; }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) {
    hold reqs (1) { run E prefill (4); run E decode (4); }
  } else {
    branch (serial == 1) {
      hold p1 (1) { run d (2); hold p2 (1) { run d (1); } }
    } else {
      branch (serial == 2) {
        hold p2 (1) { run d (2); hold p1 (1) { run d (1); } }
      } else {
        hold a (1) { hold reqs (1) { run E prefill (4); run E decode (4); } }
      }
    }
  }
}
run { horizon 10.5; }
"""


def test_each_kind_of_waiter_in_its_own_words(monkeypatch):
    r = report(MIXED, monkeypatch)
    assert r["arrivals"] == 10 and r["ended"] == 0
    assert forever(r) == [f"warning: 10 session(s) wait for ever at the end of the run (each waits {STALL.format('E')}; "
                          f"or {DEADLOCK}): 1 at a stage that will never complete them (session 0); 1 queued at p2 "
                          "(session 1); 1 queued at p1 (session 2); 1 queued at reqs (session 3); 6 queued at a "
                          "(sessions 4, 5, 6, 7, 8, …)"]


def test_a_deadlock_alone_is_still_called_one(monkeypatch):
    # sessions 1 and 2 as above, the others queue at p1 and p2 behind them: no stage, no run of infinite work
    src = MIXED.replace("branch (serial == 0) {\n    hold reqs (1) { run E prefill (4); run E decode (4); }\n  } "
                        "else {", "branch (serial == 0) {\n    run d (1);\n  } else {").replace(
        "hold a (1) { hold reqs (1) { run E prefill (4); run E decode (4); } }", "hold p1 (1) { run d (1); }")
    assert "reqs (1)" not in src.split("session {")[1]
    r = report(src, monkeypatch)
    assert forever(r) == [f"warning: 9 session(s) wait for ever at the end of the run (each waits {DEADLOCK}): 1 "
                          "queued at p2 (session 1); 8 queued at p1 (sessions 2, 3, 4, 5, 6, …)"]
