"""Known defects, round 15 (serq-sim)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import serq_frontend
import serq_sim
from serq_sim.errors import SimError
from tiers import same_json

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
# (a demand beyond a pool's capacity is told by that cause since round 46: test_conformance_round46_forever_words)
DEADLOCK = "for pools that only they hold: a deadlock"


def vllm_decode() -> str:
    """Where vllm.sq's request decodes (its run statement, line:col), found in its text."""
    lib = os.path.join(ROOT, "packages", "serq-vllm", "src", "serq_vllm", "lib", "vllm.sq")
    with open(lib, encoding="utf-8") as f:
        [(line, col)] = [(i, text.index("decode on engine") + 1) for i, text in enumerate(f, 1)
                         if "decode on engine (o - 1 - (known - prompt))" in text]
    return f"{lib}:{line}:{col}"


def report(src: str, monkeypatch, path: str | None = None) -> dict:
    """The JSON report on the default tier and on the general engine, which must be the same bytes."""
    prog = serq_frontend.compile(path=path) if path else serq_frontend.compile(source=src)
    return same_json(prog, monkeypatch)


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
    assert forever(r) == [f"warning: {n} sessions wait for ever at the end of the run (each waits "
                          f"{STALL.format('engine')}): 1 at stage engine, which will never complete them (session 0, "
                          f"in the run at {vllm_decode()} in `vllm_request_at` used at {tmp_path / 'v.sq'}:42:3); {n - 1} "
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
    assert forever(r) == [f"warning: 10 sessions wait for ever at the end of the run (each waits {STALL.format('E')}; "
                          f"or {DEADLOCK}): 1 at stage E, which will never complete them (session 0, in the run at "
                          "<source>:10:40); 1 queued at p2 "
                          "(session 1); 1 queued at p1 (session 2); 1 queued at reqs (session 3); 6 queued at a "
                          "(sessions 4, 5, 6, 7, 8, …)"]


def test_a_deadlock_alone_is_still_called_one(monkeypatch):
    # sessions 1 and 2 as above, the others queue at p1 and p2 behind them: no stage, no run of infinite work
    src = MIXED.replace("branch (serial == 0) {\n    hold reqs (1) { run E prefill (4); run E decode (4); }\n  } "
                        "else {", "branch (serial == 0) {\n    run d (1);\n  } else {").replace(
        "hold a (1) { hold reqs (1) { run E prefill (4); run E decode (4); } }", "hold p1 (1) { run d (1); }")
    assert "reqs (1)" not in src.split("session {")[1]
    r = report(src, monkeypatch)
    assert forever(r) == [f"warning: 9 sessions wait for ever at the end of the run (each waits {DEADLOCK}): 1 "
                          "queued at p2 (session 1); 8 queued at p1 (sessions 2, 3, 4, 5, 6, …)"]


# --- a stalled step stage judged through sqrt, exp, ln, pow, % and its chunk ---------------------------------
#
# docs/simulator.md: a step stage idle at the end with residents whose budget can never rise above 0 again
# never starts an iteration. While it is idle what the budget reads only grows (residents, now, ...), so the
# budget is bounded over each from its value at the end up to inf. sqrt, exp, ln and pow (over a positive
# base) are monotone and bounded from their arguments' bounds (widened by two ulps for the platform's
# exp, ln and pow); `%` is bounded by its divisor; and a chunk at most 0 for ever on a stage where no run
# decodes gives no job a token, a stall the same way. A budget that is 0 for a while and then rises again
# is not judged: a longer run serves its sessions. Arrivals at t = 1, 2, ..., 10 (renewal(1), horizon 10.5).

STEP = """stage E : step { budget BUDGET; cost 1;CHUNK }
workload { arrive renewal(1); }
session {
  BODY
}
run { horizon HORIZON; }
"""
BOTH = "run E prefill (4);\n  run E decode (4);"


def step_program(budget: str, chunk: str = "", body: str = BOTH, horizon: str = "10.5") -> str:
    return (STEP.replace("BUDGET", budget).replace("CHUNK", chunk).replace("BODY", body)
            .replace("HORIZON", horizon))


def stalled_words(why: str) -> str:
    return (f"warning: 10 sessions wait for ever at the end of the run (each waits at step stage E, {why}): 10 at "
            "stage E, which will never complete them (sessions 0, 1, 2, 3, 4, …, in the run at <source>:4:3)")


BUDGET_STAYS_0 = stalled_words("whose budget cannot rise above 0 as jobs arrive, so no iteration ever starts")


@pytest.mark.parametrize("budget", [
    "max(0, 8 - sqrt(residents) * 8)",  # 8 - 8 sqrt(r) <= 0 for r >= 1
    "exp(-residents) < 0.5 ? 0 : 64",  # exp(-r) <= exp(-1) = 0.368
    "ln(residents) > -1 ? 0 : 64",  # ln r >= 0
    "pow(residents, 2) > 0.5 ? 0 : 64",  # r^2 >= 1
    "pow(2, -residents) < 0.75 ? 0 : 64",  # 2^-r <= 1/2
    "max(0, residents % 4 - 4)",  # r % 4 < 4
])
def test_a_budget_bounded_through_a_function_or_a_remainder(budget, monkeypatch):
    r = report(step_program(budget), monkeypatch)
    assert (r["ended"], forever(r)) == (0, [BUDGET_STAYS_0])


@pytest.mark.parametrize("budget", [
    "exp(residents) < 1e6 ? 0 : 64",  # rises at 14 residents (e^14 = 1.2e6)
    "ln(now) < 2.5 ? 0 : 64",  # rises at t = e^2.5 = 12.18
    "pow(2, residents) < 5000 ? 0 : 64",  # rises at 13 residents (2^13 = 8192)
    "residents % 32 < 15 ? 0 : 64",  # rises at 15 residents
    "sqrt(residents) < 3.5 ? 0 : 64",  # rises at 13 residents (sqrt 13 = 3.6)
    "ln(residents - 3) > 5 ? 0 : 64",  # ln of what was negative: not bounded (and it is 64 at once)
])
def test_a_budget_that_is_0_for_a_while_and_then_rises_is_not_judged(budget, monkeypatch):
    r = report(step_program(budget), monkeypatch)
    assert forever(r) == []
    if "- 3" not in budget:
        # 0 through the run: no session is served by its end, and none waits for ever, as a longer run shows
        assert r["ended"] == 0
        longer = report(step_program(budget, horizon="30.5"), monkeypatch)
        assert longer["ended"] > 0 and forever(longer) == []


@pytest.mark.parametrize("chunk", ["0", "residents > 0 ? 0 : 8", "max(0, 4 - 4 * sqrt(residents))"])
def test_a_chunk_that_stays_0_on_a_stage_of_prefills_alone(chunk, monkeypatch):
    # no run decodes on E: every job is a prefill, and a chunk of 0 gives a prefill no token
    r = report(step_program("64", chunk=f" chunk {chunk};", body="run E prefill (4);"), monkeypatch)
    assert (r["ended"], forever(r)) == (0, [stalled_words(
        "whose chunk cannot rise above 0 as jobs arrive, and on which no run decodes, so no job is ever given a "
        "token")])


def test_a_chunk_of_0_where_a_run_decodes_is_not_judged(monkeypatch):
    # a session past its prefill (here none can be, but the test is of the program) would come back decoding
    r = report(step_program("64", chunk=" chunk residents > 0 ? 0 : 8;"), monkeypatch)
    assert (r["ended"], forever(r)) == (0, [])


def test_a_chunk_that_rises_again_is_not_judged(monkeypatch):
    # chunk 0 below 5 residents: the fifth arrival (t = 5) starts the stage
    r = report(step_program("64", chunk=" chunk residents < 5 ? 0 : 8;", body="run E prefill (4);"), monkeypatch)
    assert r["ended"] > 0 and forever(r) == []
