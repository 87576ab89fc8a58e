"""Evicting the blocks of a large entry, at once, from a pool whose count is exact (a cap of 2**53 or more).

A fixed-key eviction order (``evict by (age)``) takes an entry's blocks one by one from its tail
(pools/cache.py, evict_blocks), computed at once for entries of many blocks only when every sum stays within
2**53. Past it, on a pool of cap 2**60 with block 1, an entry of 2**59 units took a block a turn: its double
less 1 is itself, so the turns took blocks off the exact count and none off the entry, some 2**59 of them, and
the run never ended (``evict lru`` took them at once and ended in 0.3 s). They are taken at once on such a pool
too, counted exactly.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.pools.cache import _exact_blocks
from serq_sim.pools.exact import _make
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

PROGRAM = """pool kv { cap 1152921504606846976; EVICT block 1; }
stage d : delay;
workload {
  arrive renewal(1);
}
session {
  hold kv (576460752303423488) {
    run d (1.5);
  } cache (inf);
}
run { horizon 6; }
"""


def report(evict: str, monkeypatch) -> dict:
    prog = serq_frontend.compile(source=PROGRAM.replace("EVICT", evict), sets={}, defs={})
    return same_json(prog, monkeypatch)


@pytest.mark.parametrize("evict", ["evict by (age);", "evict by (-age);", "evict lru;"])
def test_entries_of_2_59_blocks_are_evicted_at_once(evict, monkeypatch):
    # cap 2**60, holds of 2**59 at t = 1 … 6 for 1.5 each, cached whole at release: from t = 3 on each
    # admission finds one held and one cached (2**60 with its own 2**59 beyond the cap) and evicts the one
    # entry cached, whole (2**59 blocks): four evictions, 2**61 units; sessions 0 … 3 end by 5.5
    r = report(evict, monkeypatch)
    kv = r["pools"][0]
    assert (r["ended"], kv["evicted_entries"], kv["evicted_units"]) == (4, 4, float(2**61))


def test_the_blocks_taken_at_once_are_counted_exactly():
    # 3 units short of an entry of 2**60 in blocks of 1: 3 blocks, but 2**60 - 3 is no double (they are 128
    # apart below 2**60): the entry keeps the double below, 2**60 - 128, and 128 are taken
    used, cached = _make(0), _make(2**60)
    assert _exact_blocks(1.0, 2.0**60, used, cached, 3.0, 2.0**60) == (128, 2.0**60 - 128)
    # 2**59 held and the entry of 2**59 cached, 2**58 more needed: 2**58 short, 2**48 blocks of 2**10; what is left, 2**59 - 2**58 = 2**58, is a double
    assert _exact_blocks(1024.0, 2.0**59, _make(2**59), _make(2**59), 2.0**58, 2.0**60) == (2**58, 2.0**58)
    # more short than the entry: the whole entry
    assert _exact_blocks(1.0, 2.0**59, _make(2**60), _make(2**59), 1.0, 2.0**60) == (2**59, 0.0)
    # a block, an entry or a count with a fraction: not computed here (the loop's own way)
    assert _exact_blocks(0.5, 2.0**59, used, cached, 3.0, 2.0**60) is None
    assert _exact_blocks(1.0, 2.0**59, used, _make(2**59) + 0.5, 3.0, 2.0**60) is None
