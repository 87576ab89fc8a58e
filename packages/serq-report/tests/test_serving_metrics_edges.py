"""vLLM's serving metrics at the edges, against schedules worked out by hand.

vLLM's benchmark (vllm/benchmarks/serve.py, ``calculate_metrics``): ITL is every gap between consecutive
output tokens of a request, so a request of ``output`` tokens has ``output - 1`` of them, adding up to
``last_token - first_token``. The programs run on the step clock (cost 1: times are iteration numbers).
"""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

# Three requests of prompt 1 and 4 output tokens (the prefill's, then decode (3)) on a budget of 2.5 tokens
# an iteration, served in admission order A, B, C (docs/language.md, "A decoder gets the part of a token
# the budget has left"):
#   t=0  A prefills 1, B prefills 1, C prefills 0.5                 end 1: A's and B's first tokens
#   t=1  A decodes 1, B decodes 1, C prefills 0.5                   end 2: A, B token 2; C's first token
#   t=2  A 1, B 1, C decodes 0.5 (3 -> 2.5: part of a token)        end 3: A, B token 3; none of C's
#   t=3  A 1, B 1 (done), C 0.5 (2.5 -> 2: its 2nd token is whole)  end 4: A, B token 4; C token 2
#   t=4  C 1 (2 -> 1)                                               end 5: C token 3
#   t=5  C 1 (1 -> 0)                                               end 6: C token 4
# Per request (first, last; gaps): A 1, 4; 1 1 1    B 1, 4; 1 1 1    C 2, 6; 2 1 1
# (an iteration that gives a decoder part of a token is no output token of it: C's three decode tokens
# come at 4, 5 and 6, not at 3, 4, 5 and 6, which would be four gaps for three tokens)
FRACTION = """
pool reqs { cap 8; admit via engine; }
stage engine : step { budget 2.5; cost 1; }
workload { arrive batch(3); }
session {
  set t0 = now;
  hold reqs (1) {
    prefill on engine (1);
    set tf = now;
    decode on engine (3);
  }
  record request { sent = t0; first_token = tf; last_token = now; output = 4; }
}
run { horizon 100; warmup 0; }
"""

FRACTION_ITL = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0]

# One request whose decode has a fractional length: decode (1.5) takes two iterations, 1 then 0.5, and
# the last part is its last token (its work is done): tokens at 1 (the prefill's), 2 and 3, gaps 1 1.
LAST_PART = """
pool reqs { cap 8; admit via engine; }
stage engine : step { budget 8; cost 1; }
workload { arrive batch(1); }
session {
  set t0 = now;
  hold reqs (1) {
    prefill on engine (1);
    set tf = now;
    decode on engine (1.5);
  }
  record request { sent = t0; first_token = tf; last_token = now; output = 3; }
}
run { horizon 100; warmup 0; }
"""


def _stats(m):
    return (m.count, m.mean, m.median, m.p90, m.p95, m.p99)


def _numpy(x):
    a = np.asarray(x, dtype=float)
    return (len(x), float(np.mean(a)), float(np.median(a)), float(np.percentile(a, 90)),
            float(np.percentile(a, 95)), float(np.percentile(a, 99)))


@pytest.mark.parametrize("tier", ["lazy", "general"])
def test_part_of_a_token_is_no_output_token(tier, monkeypatch):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    report = serq_sim.run(serq_frontend.compile(source=FRACTION))
    rows = report.records(kind="numpy")
    got = sorted(zip(rows["first_token"].tolist(), rows["last_token"].tolist()))
    assert got == [(1.0, 4.0), (1.0, 4.0), (2.0, 6.0)]
    itl = report.result.requests.itl
    # nine gaps, output - 1 of each request, adding up to last - first of each (3 + 3 + 4)
    assert itl.count == int((rows["output"] - 1).sum()) == 9
    assert itl.mean * itl.count == pytest.approx(float((rows["last_token"] - rows["first_token"]).sum()))
    assert _stats(itl) == _numpy(FRACTION_ITL)


@pytest.mark.parametrize("tier", ["lazy", "general"])
def test_a_fractional_last_part_is_the_last_token(tier, monkeypatch):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    report = serq_sim.run(serq_frontend.compile(source=LAST_PART))
    rows = report.records(kind="numpy")
    assert (rows["first_token"].tolist(), rows["last_token"].tolist()) == ([1.0], [3.0])
    assert _stats(report.result.requests.itl) == _numpy([1.0, 1.0])


# Six requests of whole lengths on budgets that leave fractions (2.5, 1.75): decoders take 1, part of a
# token, or none, iteration by iteration. However the parts fall, each request's output tokens are its
# prefill's and its decode's whole ones, so a run that drains has output - 1 gaps of each, adding up to
# last_token - first_token (vLLM's ITL of the same tokens).
MANY = """
pool reqs { cap 8; admit via engine; }
stage engine : step { budget B; cost 1; }
stage wait : delay;
workload { arrive batch(6); }
session {
  run wait (serial % 2);
  set t0 = now;
  set o = 2 + (serial * 5) % 7;
  hold reqs (1) {
    prefill on engine (1 + serial % 2);
    set tf = now;
    decode on engine (o - 1);
  }
  record request { sent = t0; first_token = tf; last_token = now; output = o; }
}
run { horizon inf; warmup 0; }
"""


@pytest.mark.parametrize("budget", ["2.5", "1.75"])
@pytest.mark.parametrize("tier", ["lazy", "general"])
def test_fractional_budgets_give_output_minus_one_gaps_a_request(budget, tier, monkeypatch):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    report = serq_sim.run(serq_frontend.compile(source=MANY.replace("budget B", f"budget {budget}")))
    rows = report.records(kind="numpy")
    assert len(rows["output"]) == 6
    itl = report.result.requests.itl
    assert itl.count == int((rows["output"] - 1).sum())
    assert itl.mean * itl.count == pytest.approx(float((rows["last_token"] - rows["first_token"]).sum()),
                                                 rel=1e-12)


# vLLM's vllm:kv_cache_usage_perc is the blocks requests hold over the pool's (a cached block no request
# holds is free); the KV pool's `used` over its `cap` is its time average. One request, prompt 8, 3 output
# tokens, blocks of 4 tokens, 5 blocks:
#   t=0  admitted, prefills 8 (2 blocks)                   end 1: its first token
#   t=1  decodes (position 8 -> 9: a 3rd block)            end 2: token 2
#   t=2  decodes (9 -> 10)                                 end 3: token 3, done: its blocks are released
#        and it caches its 10 computed tokens in whole blocks: 8 (the partial 3rd block is free)
# Horizon 4: used 8, 12, 12, 0 tokens over the four unit intervals (usage 0.4, 0.6, 0.6, 0: mean 0.4);
# cached 0, 0, 0, 8 (mean 2).
USAGE = """
use "vllm.sq";
pool reqs { cap 8; admit via engine; }
pool kv { cap 5 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
workload { arrive batch(1); hidden o; }
session { set prompt = 8; set o = 3; set t0 = now; vllm_request(reqs, kv, engine, prompt, o, t0); }
run { horizon 4; warmup 0; }
"""


def test_the_kv_pool_s_used_over_its_cap_is_vllm_s_kv_cache_usage():
    report = serq_sim.run(serq_frontend.compile(source=USAGE))
    rows = report.records(kind="numpy")
    assert (rows["first_token"].tolist(), rows["last_token"].tolist()) == ([1.0], [3.0])
    kv = next(p for p in report.result.pools if p.name == "kv")
    assert (kv.used / 20, kv.cached, kv.preemptions) == (0.4, 2.0, 0)
