"""Nothing hangs: hostile programs a careless user could write stop as docs/simulator.md says, on both tiers.

Each run below is bounded (``max_events``, a small timeout): a regression fails fast instead of hanging."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_sim import SimError

TIERS = ["", "general"]


def _run(src: str, monkeypatch, tier: str, **kw):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(source=src), max_events=2_000_000, **kw)


# 200 decoders of infinite work at cost 0: every iteration serves all 200 at t=0, for ever. The guard
# counted events (iterations), allowing 1 000 000 + 1 000 a live session = 1 200 000 of them, each
# planning 200 jobs: about a minute before the error (3 million iterations of 2 000 jobs for
# batch(2000): hours). Counted in jobs served, it stops after 6 000 iterations.
MANY_ZERO_COST = """pool reqs { cap 100000; admit via e; }
stage e : step { budget 1e9; cost 0; }
workload { arrive batch(200); }
session { hold reqs (1) { run e prefill (10); run e decode (WORK); } }
run { horizon 10; }
"""


@pytest.mark.timeout(10)
@pytest.mark.parametrize("work", ["inf", "1e15"])  # not lazy; lazy (a whole number of tokens)
@pytest.mark.parametrize("tier", TIERS)
def test_many_decoders_at_cost_zero_meet_the_guard_at_once(monkeypatch, tier, work):
    with pytest.raises(SimError) as e:
        _run(MANY_ZERO_COST.replace("WORK", work), monkeypatch, tier)
    msg = str(e.value)
    # 1 000 000 + 1 000 × 200 sessions live at t=0, in jobs served by iterations of no time
    assert msg.startswith(
        "<source>:4:47: error: at t=0, session 0: no progress: the iterations of stage e take no time (its cost "
        "is 0, or below the clock's precision at this time) and served more than 1200000 jobs at one instant "
        "without simulated time passing: its residents are the run at <source>:4:47 of session 0, the run at "
        "<source>:4:47 of session 1,"), msg
    first, quoted, caret = msg.split("\n")  # the run of each resident's decode, its line and a caret under it
    assert first.endswith(" and 195 more"), msg
    line = MANY_ZERO_COST.replace("WORK", work).splitlines()[3]
    assert quoted == f"  {line}" and caret == "  " + " " * 46 + "^" and line[46:58] == "run e decode", msg


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_iterations_below_the_clocks_precision_meet_the_same_guard(monkeypatch, tier):
    # at t = 1e18 a cost of 1e-3 is below half an ulp (128): now + cost == now, every iteration at that instant
    src = """pool reqs { cap 100; admit via e; }
stage e : step { budget 100; cost 1e-3; }
stage d : delay;
workload { arrive batch(50); }
session { run d (1e18); hold reqs (1) { run e decode (inf); } }
run { horizon 1e19; }
"""
    with pytest.raises(SimError) as e:
        _run(src, monkeypatch, tier)
    # the 50 sessions are live when the instant 1e18 begins: 1 000 000 + 50 000
    assert str(e.value).startswith(
        "<source>:5:41: error: at t=1e+18, session 0: no progress: the iterations of stage e take no time (its "
        "cost is 0, or below the clock's precision at this time) and served more than 1050000 jobs at one "
        "instant"), str(e.value)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_finite_work_at_cost_zero_ends_at_zero(monkeypatch, tier):
    # the guard counts no legitimate work: 200 decoders of 1 000 tokens each at cost 0 are 1 000 iterations of
    # 200 jobs (200 000 served, below 1 200 000), all at t = 0
    src = MANY_ZERO_COST.replace("decode (WORK);", "decode (1000); observe t = now;")
    r = _run(src, monkeypatch, tier)
    assert r.partial is None
    assert r.result.ended == 200
    assert set(r.observe("t").values.tolist()) == {0.0}


# An entry of 10⁹ units in blocks of 1 under an `evict by` order whose key is fixed and reads no size:
# its blocks went one by one, 10⁹ turns of a loop inside one admission (minutes, deaf to every bound).
EVICT_BLOCKS = """pool kv { cap 1e9; block 1; evict by (last); }
stage d : delay;
workload { arrive renewal(~det(1)); }
session { hold kv (UNITS) { run d (0.5); } cache (1e9); }
run { horizon 2.9; }
"""


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_an_entry_of_a_billion_blocks_is_evicted_at_once(monkeypatch, tier):
    # arrivals at 1 and 2: the first caches 1e9 at 1.5; the second needs all of it: 1e9 blocks evicted
    r = _run(EVICT_BLOCKS.replace("UNITS", "1e9"), monkeypatch, tier)
    kv = r.pool("kv")
    assert (kv.evicted_units, kv.evicted_entries) == (1e9, 1)
    # the first caches 6e8; the second needs 5e8 beside it: 6e8 + 5e8 - 1e9 = 1e8 blocks from its tail
    r = _run(EVICT_BLOCKS.replace("UNITS", "serial == 0 ? 6e8 : 5e8"), monkeypatch, tier)
    kv = r.pool("kv")
    assert (kv.evicted_units, kv.evicted_entries) == (1e8, 0)


def _blocks_loop(b, size, used, cached, need, limit):
    """The loop of cache.evict_blocks, a block a turn (the rule: eviction per block from the tail)."""
    taken = 0.0
    while True:
        amount = min(b, size)
        size -= amount
        cached -= amount
        taken += amount
        if size <= 1e-9 or not (used + cached + need > limit):
            return taken


@pytest.mark.timeout(10)
def test_the_blocks_taken_at_once_are_those_the_loop_takes():
    import random

    from serq_sim.pools.cache import _whole_blocks

    rng = random.Random(5)
    for _ in range(3000):
        b = float(rng.choice([1, 2, 16, 7, 1000]))
        size = float(rng.randint(1, 300) * rng.choice([1, b]) + rng.choice([0, 0, rng.randint(0, int(b))]))
        cap = float(rng.randint(int(size), int(size) + 2000))
        cached = size + float(rng.randint(0, int(cap - size)))
        used = float(rng.randint(0, int(cap - cached)))
        need = float(rng.randint(1, int(cap)))
        limit = cap + 1e-9
        got = _whole_blocks(b, size, used, cached, need, limit, 0.0)
        assert got == _blocks_loop(b, size, used, cached, need, limit), (b, size, used, cached, need, cap)
    # amounts in halves, quarters, eighths (whole numbers of a power of two): the same, scaled
    for _ in range(3000):
        unit = rng.choice([0.5, 0.25, 0.125, 2.0**-20])
        b = unit * rng.choice([1, 3, 6, 40])
        size = unit * rng.randint(1, 3000)
        cap = size + unit * rng.randint(0, 20000)
        cached = size + unit * rng.randint(0, int((cap - size) / unit))
        used = unit * rng.randint(0, int((cap - cached) / unit))
        need = unit * rng.randint(1, int(cap / unit))
        limit = cap + 1e-9
        got = _whole_blocks(b, size, used, cached, need, limit, 0.0)
        assert got is not None and got == _blocks_loop(b, size, used, cached, need, limit), (b, size, used, need)
    # an entry of 4·10⁹ blocks of 0.5 (the loop: 4·10⁹ turns, about 20 minutes), at once
    assert _whole_blocks(0.5, 2e9, 2e9, 2e9, 2e9, 4e9 + 1e-9, 0.0) == 2e9
    # no power of two makes them whole within 2⁵³ (0.1 is a fraction of 2⁵⁵), or beyond 2⁵³: the loop decides
    assert _whole_blocks(0.1, 100.0, 0.0, 100.0, 10.0, 50.0, 0.0) is None
    assert _whole_blocks(1.0, 2.0**60, 0.0, 2.0**60, 10.0, 2.0**60, 0.0) is None


@pytest.mark.timeout(20)
def test_entries_of_billions_of_half_blocks_are_evicted_at_once(monkeypatch):
    # a hold of 2·10⁹ units each second for 1.5 s on a pool of 4·10⁹ in blocks of 0.5, each caching all it
    # held: from t=3 every admission evicts the oldest entry whole, 4·10⁹ blocks taken one by one by the loop
    # (some 20 minutes each); by hand: arrivals at 1 … 6, evictions at 3, 4, 5 and 6 of 2·10⁹ units each
    src = """pool kv { cap 4000000000; block 0.5; evict by (age); }
stage d : delay;
workload { arrive renewal(1); }
session { hold kv (2000000000) { run d (1.5); } cache (inf); }
run { horizon 6; }
"""
    (kv,) = _run(src, monkeypatch, "general").result.pools
    assert (kv.admissions, kv.evicted_entries, kv.evicted_units) == (6, 4, 8e9), kv


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_a_loop_of_no_time_around_a_choose_counts_its_candidates(monkeypatch, tier):
    # each pass evaluates 100 000 candidates' keys: counted a pass each pass, SPIN_LIMIT passes were 10¹¹
    # evaluations (days); counted a pass a candidate, the guard comes after 10 passes (SPIN_LIMIT = 10⁶)
    src = """stage d[4] : delay;
workload { arrive batch(1); }
session { set n = 0; loop { set n = n + 1; choose k in 100000 by (k % 7); run d[k % 4] (0); observe n = n; } }
run { horizon 10; }
"""
    with pytest.raises(SimError) as e:
        _run(src, monkeypatch, tier)
    assert str(e.value) == (
        "<source>:3:22: error: at t=0, session 0: loop: 1000000 passes at one instant without simulated time "
        "passing (none of them reached a run, hold or grow that took time; a `choose` of n candidates in it "
        "counts n passes)\n"
        "  session { set n = 0; loop { set n = n + 1; choose k in 100000 by (k % 7); run d[k % 4] (0); observe n = n; } }\n"
        "  " + " " * 21 + "^")  # (under the loop)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_a_loop_around_a_choose_that_waits_is_never_counted(monkeypatch, tier):
    # a pass a unit of time: the count starts again at every instant, whatever the candidates
    src = """stage d[4] : delay;
workload { arrive batch(1); }
session { loop { choose k in 100000 by (k % 7); run d[k % 4] (1); observe t = now; } }
run { horizon 30; }
"""
    r = _run(src, monkeypatch, tier)
    assert r.partial is None
    assert r.observe("t").values.tolist() == [float(t) for t in range(1, 31)]


@pytest.mark.timeout(10)
def test_record_rows_count_against_max_samples(monkeypatch):
    # a row a microsecond for ever: the rows were no samples, so --max-samples never stopped the run and its
    # memory grew until the system's ran out. (A program with `record` runs in the general engine.)
    src = """stage d : delay;
workload { arrive batch(1); }
session { loop { run d (1e-6); record req { sent = now; x = 1; } } }
run { horizon 1e9; }
"""
    r = _run(src, monkeypatch, "", max_samples=1000)
    # the samples are counted down where they are added: a row an event, 2 columns a row, so the run stops at the
    # 500th row, holding 1 000 (checked every 20 000 events, it stopped at 20 000 rows, 40 000 samples)
    assert r.partial == "max-samples"
    assert r.result.events == 500
    # (and names the record holding them, 2 columns of 500 rows: test_known_defects_round39_holders)
    assert any("stopped holding 1000 samples, 1000 of them by record req at <source>:3:32 (--max-samples 1000)"
               in n for n in r.result.notes), r.result.notes


@pytest.mark.timeout(10)
@pytest.mark.parametrize("tier", TIERS)
def test_output_token_gaps_count_against_max_samples(monkeypatch, tier):
    # a cost that grows with the time: every iteration's gap differs from the last, a run of the gaps each,
    # held for ever; they were no samples, so --max-samples never stopped the run
    import re

    src = """stage e : step { budget 4; cost 1e-3 + 1e-12 * now; }
workload { arrive batch(1); }
session { run e decode (inf); }
run { horizon 1e9; }
"""
    r = _run(src, monkeypatch, tier, max_samples=1000)
    assert r.partial == "max-samples"
    assert r.result.events == 20_000  # the first check, at 20 000 events
    held = [int(m.group(1)) for n in r.result.notes for m in [re.search(r"stopped holding (\d+) samples", n)] if m]
    assert len(held) == 1 and 1000 <= held[0] <= 20_000, r.result.notes  # at most a run of gaps an iteration
