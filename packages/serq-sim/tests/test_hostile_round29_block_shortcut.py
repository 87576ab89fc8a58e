"""The blocks an entry loses at once (pools.cache._whole_blocks) are what the per-block loop takes.

The loop (the rule: eviction a block at a time from the entry's tail) stops when the need fits or when what
is left of the entry is at most EPS (1e-9); that remainder is given back by ``evicted`` and is no evicted
unit. With blocks below EPS (2**-30, 3*2**-40) the loop stops one block or more before the entry is gone;
the count at once took the whole entry, so the evicted units of a report differed with and without it."""

from __future__ import annotations

import random

import pytest
import serq_frontend
import serq_sim
import serq_sim.pools.cache as cache
from serq_report.json import encode_json
from serq_sim.pools.cache import _whole_blocks

pytestmark = pytest.mark.timeout(60)

EPS = 1e-9


def _loop(b, size, used, cached, need, limit, units):
    """cache.evict_blocks' loop, written out: what is left of the entry, the pool's cached, evicted units."""
    while True:
        amount = min(b, size)
        size -= amount
        cached -= amount
        units += amount
        if size <= EPS or not (used + cached + need > limit):
            return size, cached, units


def test_blocks_below_eps_stop_where_the_loop_stops():
    # by hand: an entry of 4 blocks of 2**-30 (3.7e-9), nothing else fits until it is gone; after 3 blocks
    # 2**-30 = 9.3e-10 <= 1e-9 is left, so the loop takes 3 blocks, not 4
    b = 2.0**-30
    assert _whole_blocks(b, 4 * b, 0.0, 4 * b, 1.0, 1.0 + EPS, 0.0) == 3 * b
    assert _loop(b, 4 * b, 0.0, 4 * b, 1.0, 1.0 + EPS, 0.0)[2] == 3 * b
    # a remainder of 2**-40 beside whole halves: the halves are taken, the remainder is left to evicted()
    assert _whole_blocks(0.5, 100.5 + 2.0**-40, 0.0, 200.0 + 2.0**-40, 300.0, 300.0 + EPS, 0.0) == 100.5


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_amounts_in_units_of_a_power_of_two_match_the_loop(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(4000):
        unit = rng.choice([0.5, 0.25, 0.75, 1.5, 2.0**-30, 3 * 2.0**-40, 2.0**-20])
        b = unit * rng.choice([1, 2, 3])
        size = unit * rng.randint(65, 3000) + rng.choice([0.0, 0.0, 2.0**-40, 2.0**-35])
        cap = size + unit * rng.randint(0, 5000)
        cached = size + unit * rng.randint(0, int((cap - size) / unit))
        used = unit * rng.randint(0, max(0, int((cap - cached) / unit)))
        need = unit * rng.randint(1, int(cap / unit))
        units = rng.choice([0.0, unit * rng.randint(0, 1000)])
        limit = cap + EPS
        t = _whole_blocks(b, size, used, cached, need, limit, units)
        if t is None:
            continue
        checked += 1
        want = _loop(b, size, used, cached, need, limit, units)
        assert (size - t, cached - t, units + t) == want, (b, size, used, cached, need, cap, units)
    assert checked > 2000


SRC = """pool kv { cap CAP; block BLOCK; evict by (age); }
stage d : delay;
workload { arrive renewal(1); }
session { hold kv (HOLD) { run d (1.5); } cache (inf); }
run { horizon 6; WARM }
"""


@pytest.mark.parametrize("block, cap, hold", [
    ("0.000000000931322574615478515625", "0.000001", "0.0000006"),  # 2**-30
    ("0.000000000002728484105318784713745117188", "0.000000002", "0.0000000012"),  # 3 * 2**-40
    ("0.5", "200", "120"),
    ("1.5", "300", "180"),
])
@pytest.mark.parametrize("warm", ["", "warmup 1.5;"])
@pytest.mark.parametrize("tier", ["", "general"])
def test_reports_are_byte_identical_with_and_without_the_count_at_once(monkeypatch, block, cap, hold, warm, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    src = SRC.replace("CAP", cap).replace("BLOCK", block).replace("HOLD", hold).replace("WARM", warm)
    ir = serq_frontend.compile(source=src)
    at_once = serq_sim.run(ir, seed=3)
    monkeypatch.setattr(cache, "_BLOCKS_AT_ONCE", 10**30)  # the per-block loop only
    by_block = serq_sim.run(ir, seed=3)
    (kv,) = by_block.result.pools
    assert kv.evicted_entries >= 2  # the runs evict whole entries of many blocks
    assert encode_json(at_once) == encode_json(by_block)


@pytest.mark.parametrize("seed", [7, 8])
def test_pools_near_2_53_units_whose_test_rounds_match_the_loop(seed):
    # the loop's test used + cached + need > limit may round (a pool of nearly 2**53 of the unit, a used that
    # is no multiple of it): the count at once evaluates that test as the loop does, so it still agrees;
    # before, such a pool went by the loop (8e15 turns for a pool of 4e15 in blocks of 0.5)
    rng = random.Random(seed)
    checked = 0
    for _ in range(6000):
        unit = rng.choice([0.5, 0.25, 0.75, 1.5, 1.0, 2.0**-30, 3 * 2.0**-40])
        b = unit * rng.choice([1, 2, 3])
        cap = float(min(2**53 * unit * rng.choice([0.3, 0.9, 1.0]), 2**53 - 1))
        size = unit * rng.randint(1, 3000)
        cached = unit * round(min(cap, size + unit * rng.randint(0, int(cap / unit / 2))) / unit)
        used = (rng.uniform(0, cap - cached) if rng.random() < 0.5
                else unit * rng.randint(0, int((cap - cached) / unit)))
        need = cap - used - cached + rng.choice([unit, 2 * unit, 100 * unit, size / 2, size, 0.3 * unit])
        units = rng.choice([0.0, unit * rng.randint(0, 1000)])
        limit = cap + EPS
        if not used + cached + need > limit:
            continue
        t = _whole_blocks(b, size, used, cached, need, limit, units)
        if t is None:
            continue
        checked += 1
        want = _loop(b, size, used, cached, need, limit, units)
        assert (size - t, cached - t, units + t) == want, (b, size, used, cached, need, cap, units)
    assert checked > 3000


def test_a_pool_of_4e15_in_half_blocks_evicts_at_once(monkeypatch):
    # as test_hang_hunt's 2e9 case, at 2e15: holds of 2e15 for 1.5 s each second on a pool of 4e15 in blocks
    # of 0.5, each caching all it held; after the warm-up (4.5) the arrivals at 5 and 6 each evict the oldest
    # entry whole (the loop: 4e15 turns each)
    src = """pool kv { cap 4000000000000000; block 0.5; evict by (age); }
stage d : delay;
workload { arrive renewal(1); }
session { hold kv (2000000000000000) { run d (1.5); } cache (inf); }
run { horizon 6; warmup 4.5; }
"""
    monkeypatch.setenv("SERQ_SIM_TIER", "")
    report = serq_sim.run(serq_frontend.compile(source=src), max_wall=20)
    assert report.result.partial is None
    (kv,) = report.result.pools
    assert (kv.admissions, kv.evicted_entries, kv.evicted_units) == (2, 2, 4e15), kv


def _added(units, b, n, rest):
    """``units += b`` n times, then ``units += rest`` when there is one: the loop's evicted units, written out."""
    for _ in range(n):
        units += b
    return units + rest if rest else units


@pytest.mark.parametrize("seed", [3, 4])
def test_evicted_units_beyond_2_53_of_the_unit_are_the_loops_sums(seed):
    # evicted units past 2**53 of the block's unit: each of the loop's additions rounds (it sticks where a
    # block is below half the spacing, or steps by a spacing); the count at once adds as it does, a binade
    # at a time. Before, such units sent every later eviction to the loop (a pool of 4e15 in blocks of 0.5
    # without a warm-up: 4e15 turns from its third eviction on)
    rng = random.Random(seed)
    for _ in range(1500):
        b = rng.choice([0.5, 0.25, 0.75, 1.5, 1.0, 3.0, 6.0, 2.0**-30, 3 * 2.0**-40])
        n = rng.randint(1, 20000)
        rest = rng.choice([0.0, 0.0, b / 2])
        e = rng.randint(-60, 70)
        units = rng.choice([2.0**e, 2.0**e * rng.uniform(1, 2), max(0.0, 2.0**e - rng.randint(0, 5000) * b)])
        assert cache._units_after(units, b, n * b + rest) == _added(units, b, n, rest), (units, b, n, rest)


def test_a_pool_of_4e15_in_half_blocks_without_a_warm_up_ends():
    # by hand: arrivals at 1 … 8, evictions at 3 … 8 of an entry of 2e15 units each (4e15 turns each by the
    # loop: it never ended)
    src = """pool kv { cap 4000000000000000; block 0.5; evict by (age); }
stage d : delay;
workload { arrive renewal(1); }
session { hold kv (2000000000000000) { run d (1.5); } cache (inf); }
run { horizon 8; }
"""
    report = serq_sim.run(serq_frontend.compile(source=src), max_wall=20)
    assert report.result.partial is None
    (kv,) = report.result.pools
    assert (kv.admissions, kv.evicted_entries) == (8, 6), kv
