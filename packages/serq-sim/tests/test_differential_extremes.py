"""The two plannings of a step stage at extreme values: the lazy plannings (serq_sim.step.lazy) against the
per-job planning (SERQ_SIM_TIER=general, the reference), byte for byte: the JSON report, every observe's
samples, every record table and the output-token gaps (stress18.outcome). Each case is a program reduced from
a run whose `let` values were set to extremes, and proves the shortcut it is about was taken on the default
tier (its counters) and not on the reference.

A lazy planning adds the lazy decoders' tokens first and the other residents' after, where the per-job
planning adds them in serving order; the two sums are the same while every partial sum is a whole number
below 2**53. Under a budget of inf a chunk or a prompt of 2**53 tokens or more passes it: a prefill of
2**53 + 4 tokens served before two decoders sums to 2**53 + 4 in serving order (each + 1 a tie, kept even)
and to 2**53 + 6 lazily, and the engine's mean tokens and every iteration's cost reading `tokens` differed."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import serq_frontend
from serq_sim.step import StepStage
from stress18 import COUNTERS, first_difference, outcome
from tiers import run_on_tier, same_error

pytestmark = pytest.mark.timeout(60)

# one prefill of Pbig tokens in chunks of K, admitted first (first in serving order), beside n - 1 requests
# whose short prefills end at once and whose decoders are lazy
LAZY = """
let K = 9007199254740996;
let Pbig = 1e17;
let n = 3;
pool reqs { cap 8; admit via E; }
stage E : step { budget inf; cost 1 + 0.00000000000001 * tokens; chunk K; }
workload { arrive batch(n); }
session {
  set P = serial == 0 ? Pbig : 2;
  hold reqs (1) { run E prefill (P); run E decode (5); }
  observe done = now;
}
run { horizon 1e9; }
"""

# the same on a memory pool: the decoders grow their hold block by block (lazy growers), the prefill holds
# nothing of it; chunks of 2**53 - 1 (a whole number each, below 2**53), three decoders after it
GROWING = """
let K = 9007199254740991;
let Pbig = 1e17;
let n = 4;
pool reqs { cap 8; admit via E; }
pool kv { cap 1000; block 4; }
stage E : step { budget inf; cost COST; chunk K; memory kv; }
workload { arrive batch(n); }
session {
  branch (serial == 0) {
    hold reqs (1) { run E prefill (Pbig); }
  } else {
    hold reqs (1), kv (1) { run E prefill (2) growing kv; run E decode (20) growing kv; }
  }
  observe done = now;
  record request { done = now; }
}
run { horizon 1e9; }
"""


def _both(src: str, sets: dict) -> dict:
    prog = serq_frontend.compile(source=src, sets={k: float(v) for k, v in sets.items()}, defs={})
    got, counters = outcome(prog, "")
    ref, ref_counters = outcome(prog, "general")
    assert ref[0] == "report", ref
    assert got == ref, first_difference(got, ref)
    assert not any(ref_counters[c] for c in COUNTERS)  # the reference plans every job
    return counters


@pytest.mark.parametrize("sets", [{}, {"n": 4}, {"n": 6}, {"K": 2**53 + 2}, {"K": 2**52}, {"K": 1e300}],
                         ids=str)
def test_lazy_decoders_beside_a_prefill_of_2_53_tokens(sets):
    counters = _both(LAZY, sets)
    assert counters["lazy_iterations"] > 0 and counters["quiet_rounds"] > 0


@pytest.mark.parametrize("cost", ["1 + 0.00000000000001 * tokens", "1 + 0.001 * kv_decode", "1"])
@pytest.mark.parametrize("n", [3, 4, 6])
def test_lazy_growers_beside_a_prefill_of_2_53_tokens(cost, n):
    counters = _both(GROWING.replace("COST", cost), {"n": n})
    assert counters["glazy_iterations"] > 0 and counters["quiet_rounds"] > 0


# a pool that spills evicts a block at a time; a block below half the precision of the entry it is taken from
# (8 less 1e-30 is 8 in doubles: 2**-50 is half the spacing of the doubles below 8) leaves the entry as it was,
# and the admission at 1 that needs 6 of its 8 cached units spun at that instant for ever, on both tiers
SPILL = """
let bs = 1e-30;
pool kv { cap 10; block bs; evict lru; spill cpu via link (size) when (1); }
pool cpu { cap 100; block bs; }
stage link : fifo;
stage d : delay;
workload { arrive batch(2); }
session { run d (serial); hold kv (8) { run d (1); } cache (inf); observe done = now; }
run { horizon 100; }
"""


def test_a_block_below_the_entrys_precision_is_an_error_not_a_spin(monkeypatch):
    prog = serq_frontend.compile(source=SPILL, sets={}, defs={})
    msg = same_error(prog, monkeypatch)
    assert msg.startswith("<source>:3:1: error: at t=1: pool kv: a block of 1e-30 units evicted from a cached "
                          "entry of 8 units leaves it 8 (the block is below half the entry's precision in doubles, "
                          f"{2.0**-50:g}): evicting a block at a time"), msg


def test_a_small_block_that_the_entry_can_lose_is_evicted():
    # blocks of 2**-10 (8 units are 2**13 of them): each eviction takes one, the entry shrinks; session 1's
    # hold of 8 at 1 evicts 6 of session 0's 8 cached units, a block at a time, and runs [1, 2]
    prog = serq_frontend.compile(source=SPILL.replace("let bs = 1e-30;", "let bs = 0.0009765625;")
                                 .replace("cap 100;", "cap 4;"), sets={}, defs={})
    got, _ = outcome(prog, "")
    ref, _ = outcome(prog, "general")
    assert ref[0] == "report" and got == ref, first_difference(got, ref)
    kv = json.loads(ref[1])["pools"][0]
    assert (kv["name"], kv["evicted_units"], kv["spills"]) == ("kv", 6.0, 6 * 2**10)  # a write per block
    assert np.frombuffer(ref[2]["done"][1][1], dtype=ref[2]["done"][1][0]).tolist() == [1.0, 2.0]


# a stage whose serve keys a job keeps (serve by (-O, admission)) keeps its residents in serving order (`ranked`),
# the per-job planning in admission order; work(E) and budget_left(E) sum over them, and a sum that is not exact
# was another float in the other order: fractions (0.1 + 0.2 + 0.3 is 0.6000000000000001 in admission order, 0.6
# from the last), or works past 2**53 (1 + 1 + 2**53 is 2**53 + 2 in admission order; 2**53 + 1 + 1 in serving
# order, the largest O first, is 2**53, each + 1 a tie kept even)
ORDER = """
let A = 0.1;
let B = 0.2;
let C = 0.1 * 3;
pool reqs { cap 8; admit via E; }
stage E : step { budget inf; cost 1; serve by (-O, admission); }
stage d : delay;
workload { arrive batch(4); }
session {
  set O = serial == 0 ? A : serial == 1 ? B : C;
  branch (serial == 3) {
    run d (0.5);
    observe w = work(E);
    observe b = budget_left(E);
  } else {
    hold reqs (1) { run E prefill (O); }
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("works", [(0.1, 0.2, 0.1 * 3), (1.0, 1.0, 2.0**53), (0.5, 0.5, 2.0**53 + 2)], ids=str)
def test_work_and_budget_left_sum_in_admission_order(works):
    a, b, c = works
    prog = serq_frontend.compile(source=ORDER, sets={"A": a, "B": b, "C": c}, defs={})
    samples = {}
    for tier in ("", "general"):
        sim, out, obs = run_on_tier(prog, tier)
        assert out[0] == "report", out
        (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
        assert eng.ranked == (tier == "")  # the default keeps the residents by their serve keys
        samples[tier] = (out, obs)
        # read at 0.5, in the first iteration (all three admitted at 0), before it took any work: the three works
        # summed in admission order, and the budget (inf) less them
        w = np.frombuffer(obs["w"][0])
        bl = np.frombuffer(obs["b"][0])
        assert w.tolist() == [a + b + c] and bl.tolist() == [math.inf]
    assert samples[""] == samples["general"]
