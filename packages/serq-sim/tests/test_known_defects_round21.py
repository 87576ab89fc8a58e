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
