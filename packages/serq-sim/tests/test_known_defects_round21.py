"""Known defects, round 21 (serq-sim): what a stage's `completions` counts, checked by hand.

The tutorial's first run shows `completions 1086` on its engine beside the engine table's 542 requests: not
2 × 542. A stage's completions are the runs of positive work that completed on it at or after the warm-up:
each request of lib/vllm.sq is a prefill run and a decode run (one more prefill a preemption), a decode of 0
tokens (a request of one output token) is no job of the stage, a run done before the warm-up or still under
way at the end is not counted; the engine's `requests` counts the requests that ended after the warm-up,
the `requests` section those sent after it (docs/simulator.md, "What a stage's completions count")."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

# One request every 10 s (serial 0 at t = 10), each a 32-token prompt, one iteration of 0.25 s a step: the
# prefill takes one iteration (the budget holds the prompt), the decode of o - 1 tokens o - 1 iterations. No
# two requests overlap, so each runs alone:
#   serial 0, sent 10, o = 5: prefill done 10.25 (before the warm-up 10.5), decode done 11.25    -> 1
#   serial 1, sent 20, o = 5: prefill 20.25, decode 21.25                                          -> 2
#   serial 2, sent 30, o = 1: prefill 30.25, decode (0) no job                                     -> 1
#   serial 3, sent 40, o = 5: prefill 40.25, decode under way at the end, 40.5 (done at 41.25)   -> 1
# completions 5; the engine's requests, those that ended after the warm-up: serials 0, 1, 2 (3); the records
# (the `requests` section), those sent after it and done: serials 1 and 2 (2).
PROGRAM = """use "vllm.sq";

pool reqs { cap 8; admit via engine; }
pool kv { cap 1000 * 16; block 16; evict lru; preempt lifo; }
stage engine : step { budget 2048; cost 0.25; memory kv; }

workload {
  arrive renewal(10);
  hidden o;
}

session {
  set prompt = 32;
  set o = serial == 2 ? 1 : 5;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}

run { horizon 40.5; warmup 10.5; seed 1; }
"""


def test_completions_count_runs_of_work_done_in_the_window(monkeypatch):
    r = same_json(serq_frontend.compile(source=PROGRAM), monkeypatch)
    (engine,) = r["stages"]
    assert engine["completions"] == 5
    assert engine["requests"] == 3
    assert r["requests"]["completed"] == 2
    # the first tokens after the warm-up (one prefill each) and the requests done after it, less the decode of 0
    assert r["instants"] == {"first_token": 3, "done": 3}


def test_without_warm_up_and_horizon_cuts_every_request_is_two_runs_less_its_empty_decode(monkeypatch):
    prog = serq_frontend.compile(source=PROGRAM.replace("horizon 40.5; warmup 10.5;", "horizon 50; warmup 0;"))
    r = same_json(prog, monkeypatch)
    # four requests done, each a prefill and a decode, but serial 2's decode of 0 tokens: 4 * 2 - 1
    assert r["stages"][0]["completions"] == 7 and r["stages"][0]["requests"] == 4


# -- the memory guard without a ulimit ------------------------------------------------------------------------
# `serq sweep mg1.sq --set lambda=1e12:…` was killed by the kernel's OOM killer (exit 137): the memory guard
# (serq_sim/memguard.py) bounded a run only under a ulimit, and without one the sessions piling up at the
# server took the machine's memory. It bounds the run's resident memory by half the memory available when
# the run began now (memguard.available), whatever the ulimits: a partial report, reason `memory`, exit 3.
# The machine's available memory is far more than a test may take, so the run here is told that 160 MiB is
# available, in its own process, under a ulimit -v of 4 GiB besides (whose own bound, half the room below it,
# is far above: the stop is the new bound's).

GROWING = """stage s : fifo(1);
workload { arrive poisson(1e9); }
session { run s (1); }
run { horizon 10; warmup 0; seed 1; }
"""

RUN = """import sys
from serq_sim import memguard
memguard.available = lambda: (160 * 2**20, memguard.MACHINE)
from serq.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.timeout(150)
def test_a_run_outgrowing_the_available_memory_stops_with_its_report(tmp_path, tier):
    import json
    import os
    import subprocess
    import sys

    resource = pytest.importorskip("resource")
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("the guard reads /proc (Linux)")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))

    (tmp_path / "p.sq").write_text(GROWING)
    out = tmp_path / "out.json"
    r = subprocess.run([sys.executable, "-c", RUN, "run", str(tmp_path / "p.sq"), "--no-progress", "--json", "-o",
                        str(out)], env={**os.environ, "SERQ_SIM_TIER": tier}, capture_output=True, text=True,
                       timeout=120, preexec_fn=limit)
    assert "Traceback" not in r.stderr and r.returncode == 3, (r.returncode, r.stderr)
    res = json.loads(out.read_text())
    assert res["partial"] == "memory" and res["interrupted"] is True
    (note,) = [n for n in res["notes"] if "memory limit" in n]
    assert ("MiB resident memory the machine had room for when the run began (MemAvailable) in use" in note
            and "address space" not in note)
    assert 10_000 < res["arrivals"] and res["end"] < 10
