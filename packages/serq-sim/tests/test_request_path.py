"""The per-request path of the general engine: what a request leaves behind when it ends, and the pools the
settle looks at (build.py: ``grow_pools``, the pools some grow or growing run names, the only ones that
can have a waiting grower; ``queue_free``, the free pools some hold names first, the only ones that can
have a queue; a pool no hold names first keeps its statistics without the queue's, Pool.acc_unqueued)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import serq_frontend
from serq_sim.api import registries
from serq_sim.engine import Simulation
from serq_sim.session import Session

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

# a two-pool hold without a cache clause (a pool with blocks: the general engine), a hold on a family member
# by index, a grow that waits, a growing run on a step stage
NO_CACHE = """
pool a { cap 3; }
pool b { cap 64; block 4; }
stage f : fifo;
workload { arrive poisson(2); }
session {
  hold a (1), b (8) {
    run f (~exp(0.4));
  }
}
run { horizon 1e9; warmup 0; seed 5; arrivals 300; }
"""

GROWERS = """
pool slots[2] { cap 3; }
pool kv { cap 64; block 4; }
pool reqs { cap 4; admit via E; }
pool mem { cap 40; block 4; evict lru; preempt lifo; }
stage E : step { budget 8; cost 1; memory mem; }
stage d : delay;
stage f : fifo;
workload { arrive poisson(3); }
session {
  set m = ~bernoulli(0.5);
  hold slots[m] (1) {
    hold kv (4) {
      run d (~exp(1));
      grow kv (~uniform(4, 40));
      run f (~exp(0.3));
    }
  }
  hold reqs (1), mem (4) {
    prefill on E (6) growing mem;
    decode on E (~uniform(1, 30)) growing mem;
  } cache (10);
}
run { horizon 200; warmup 0; seed 2; }
"""


def test_an_ended_request_is_freed_without_the_cycle_collector():
    # a hold's slots refer to their hold (Slot.hold) and the hold to its slots: the end of the hold's scope
    # empties the hold, so the slots, the hold and the session (each slot's owner) are freed when the
    # session ends, by reference counting; the cycle collector, off here, would otherwise be what frees them
    program = serq_frontend.compile(source=NO_CACHE)
    sim = Simulation(program, registries())
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = sum(1 for o in gc.get_objects() if isinstance(o, Session))
        r = sim.run()
        left = sum(1 for o in gc.get_objects() if isinstance(o, Session)) - before
    finally:
        if was:
            gc.enable()
    assert r is not None and sim.arrivals == 300 and sim.live == 0
    assert left == 0


#: the programs by name, and their runs' arguments (each compiled by its own test: listed here, the tests'
#: names cost no compile when the tests are collected)
PROGRAMS = {"growers": {}, "no_cache": {},
            "examples/multi-turn/vllm.sq": {"horizon": 400.0},
            "examples/multi-turn/vllm_subagents.sq": {"horizon": 300.0},
            "examples/pd-disaggregation/llmd_nixl_pull.sq": {"horizon": 300.0, "warmup": 0.0},
            "packages/serq-sim/tests/lazy/vllm_stress.sq": {},
            "packages/serq-sim/tests/lazy/preempted.sq": {}}


def _program(name: str):
    if name in ("growers", "no_cache"):
        return serq_frontend.compile(source=GROWERS if name == "growers" else NO_CACHE)
    return serq_frontend.compile(ROOT / name)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_settle_looks_at_every_pool_that_has_growers_or_a_queue(name, monkeypatch):
    program, kw = _program(name), PROGRAMS[name]
    seen = {"growers": 0, "queued": 0}
    original = Simulation.settle

    def checked(sim, pools=True):
        for pool in sim.pools:
            if pool.growers:
                seen["growers"] += 1
                assert pool in sim.grow_pools, pool.name
            if pool.via is None and (pool.front or pool.queue):
                seen["queued"] += 1
                assert pool in sim.queue_free, pool.name
            if pool.front or pool.queue:
                # a pool's statistics leave out the queue only where no hold can queue (Pool.acc_unqueued)
                assert "acc" not in vars(pool), pool.name
        original(sim, pools)

    monkeypatch.setattr(Simulation, "settle", checked)
    sim = Simulation(program, registries(), **kw)
    sim.run()
    if name == "growers":
        # the program makes both happen: a grow that waits, holds queued at free pools
        assert seen["growers"] > 0 and seen["queued"] > 0
        assert {p.name for p in sim.grow_pools} == {"kv", "mem"}
        assert {(p.name, p.index) for p in sim.queue_free} == {("slots", 0), ("slots", 1), ("kv", 0)}


# the report's per-sample sums and columns, made by map over chunks instead of Python code per sample
def _exact_squares(x, m):
    from fractions import Fraction

    fm = Fraction(m)
    return float(sum((Fraction(v) - fm) ** 2 for v in x))


@pytest.mark.parametrize("n", [1, 2, 3, 16383, 16384, 16385, 2 * 16384 + 7])
def test_squared_deviations_over_chunk_boundaries(n):
    import random
    from array import array

    from serq_sim import stats

    rnd = random.Random(n)
    x = array("d", (rnd.expovariate(0.01) * (1 + (k % 7 == 0) * 1e6) for k in range(n)))
    m = stats.total(x) / n
    got = stats._squared_deviations(x, m)
    # the exact sum of the exactly rounded squares, rounded once (fsum's contract), against a sum in rationals
    # of the squares as doubles: the same value
    from fractions import Fraction

    ref = float(sum(Fraction((v - m) * (v - m)) for v in x))
    assert got == ref
    assert got == stats._squared_deviations(list(x), m) == stats._squared_deviations(tuple(x), m)
    assert abs(got - _exact_squares(x, m)) <= 1e-9 * max(got, 1.0)


def _per_sample(x, m):
    # the sum as it was written before, one Python step a sample: the reference
    import math

    from serq_sim import stats

    try:
        return math.fsum((v - m) * (v - m) for v in x)
    except ValueError:
        return math.nan
    except OverflowError:
        return stats._exact_total((v - m) * (v - m) for v in x)


@pytest.mark.parametrize("x, m", [
    ([1.0, float("inf"), 2.0], 1.0),
    ([1.0, float("inf")], float("inf")),
    ([float("-inf"), float("inf")], 0.0),
    ([1e200, -1e200, 3.0] * 9000, 0.0),  # squares beyond the double range: the exact fallback
    ([1e154, 1e154, -1e154] * 7000, 1.0),  # partial sums beyond the range, the total too
    ([float("nan"), 1.0, 2.0] * 6000, 1.0),
])
def test_squared_deviations_of_non_finite_and_huge_values(x, m):
    from serq_sim import stats

    got, ref = stats._squared_deviations(x, m), _per_sample(x, m)
    assert got == ref or (got != got and ref != ref)


@pytest.mark.parametrize("warmup", [0.0, 3.0, 1e9])
def test_a_table_keeps_the_rows_sent_after_the_warm_up(warmup):
    from serq_sim.records import Records, RecordTable

    t = RecordTable("r", ["sent", "x"])
    sent = [5.0, 1.0, 3.0, float("nan"), 2.999, 7.0, 3.0]
    for k, s in enumerate(sent):
        t.add(k, 0, float(k), (s, float(k * k)))
    r = Records(t, warmup)
    # a row sent at NaN is judged by its time (here k), as a table without `sent` is (docs/language.md)
    want = [k for k, s in enumerate(sent) if s >= warmup or (s != s and float(k) >= warmup)]
    assert r.kept_rows == want
    assert r.column("x") == [float(k * k) for k in want]
    assert r.column("time") == [float(k) for k in want]
    assert all(type(v) is float for v in r.column("x"))


@pytest.mark.parametrize("zeros", [(3, 0), (0, 4), (5, 7), (2000, 1), (1, 2000)])
def test_an_order_statistic_among_zeros_keeps_their_signs(zeros):
    # -0.0 comes before 0.0 in the total order: the k-th of a sorted run of zeros is -0.0 for the first
    # (number of negative zeros) of them, whatever order sorted() left them in
    import math
    import random

    from serq_sim import stats

    neg, pos = zeros
    x = [-0.0] * neg + [0.0] * pos + [-1.5, 2.5, 7.0]
    random.Random(neg * 31 + pos).shuffle(x)
    srt = sorted(x)
    lo = 1  # -1.5 first
    for k in range(lo, lo + neg + pos):
        v = stats._kth_of_sorted(srt, k)
        assert v == 0 and math.copysign(1.0, v) == (-1.0 if k < lo + neg else 1.0)
