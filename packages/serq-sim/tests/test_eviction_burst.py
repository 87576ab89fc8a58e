"""Evicting many cached entries at one instant under `evict by` keys that read the time (age) or a live
session costs a ranking of the entries, not a scan of every entry for each one evicted: such keys are not
fixed while an entry is cached, so the order evaluates them at the eviction, but they cannot change while
one eviction makes room (they read no draw and no observable), and pools.cache.evict_for ranks the
entries once for it, also on a pool that spills what it evicts. Before, one hold making room for N entries evaluated about N * N / 2 keys (20 000
entries: a minute). The keys evaluated are counted (KeyedOrder.key), the reports are the general
engine's byte for byte, and which entries go is the hand count below."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.policies.eviction import KeyedOrder
from tiers import run_on_tier

N = 1000

# N sessions each cache one block (16 units) as they leave their first hold, one after the other (serial
# s at 1 + s * 1e-6), and then each asks for half the pool (8 N units). Allocated and cached stay 16 N
# as the first holds end, so serial 0's big hold is admitted when N / 2 of them have ended (8 N units
# allocated), evicting all N / 2 blocks cached then, at one instant; serial 1's is admitted when serial
# 0's ends (at 2 + 1e-6, its units free), every first hold having ended and N / 2 blocks cached: it evicts
# them all, again at one instant; no block is cached after that
PROGRAM = """
pool kv {{ cap 16 * {n}; block 16; evict by ({keys}); {spill} }}
pool cpu {{ cap 1e9; block 16; evict lru; }}
stage link : delay;
stage s : delay;
workload {{ arrive batch({n}); }}
session {{
  hold kv (16) {{ run s (1 + serial * 0.000001); }} cache (16);
  hold kv (8 * {n}) {{ run s (1); }}
  end;
}}
run {{ horizon 1e9; seed 1; }}
"""


@pytest.fixture
def keys_read(monkeypatch):
    key = KeyedOrder.key
    count = [0]

    def counting(self, entry):
        count[0] += 1
        return key(self, entry)

    monkeypatch.setattr(KeyedOrder, "key", counting)
    return count


@pytest.mark.timeout(60)
@pytest.mark.parametrize("keys, spill", [("-size, age", ""), ("age", ""), ("serial % 2, -age", ""),
                                         ("-size, age", "spill cpu via link (1) when (1);")])
def test_making_room_for_many_entries_reads_each_key_a_bounded_number_of_times(tmp_path, keys_read, keys,
                                                                                spill):
    src = tmp_path / "evict.sq"
    src.write_text(PROGRAM.format(n=N, keys=keys, spill=spill))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    reports = {}
    for tier in ("", "general"):
        keys_read[0] = 0
        sim, outcome, samples = run_on_tier(program, tier)
        assert outcome[0] == "report", outcome
        assert sim.ended == N
        kv = sim.pools[0]
        assert kv.evicted_entries == N
        if spill:
            assert kv.spills == N  # a block an entry, each written to the tier
        # a scan of the entries at each pick reads N / 2 + (N / 2 - 1) + ... + 1 keys per burst: 250 500
        assert keys_read[0] < 10 * N, (tier, keys_read[0])
        reports[tier] = (outcome, samples)
    assert reports[""] == reports["general"]
