"""Conformance of pool-reference.txt's `evict` and `block`, by hand, in cases no earlier test held together:

* "`lru`: release time, then release order; `by (k1, …)`: ascending keys, then release order. Keys are
  evaluated per cache entry at the Evict moment and may read size, age, last and waiting (context
  variables), and the entry's session's attributes: current while the session lives, as they were at its
  last release after it has ended. The smallest key goes first.";
* `block`: "cache entries are kept and evicted, in blocks of this many units. An entry is evicted from its
  tail, block by block.";
* `cap`: "Cached prefixes never block an admission: they are evicted to make room."

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the report's pool is asserted as its JSON reads, and
every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import pool_json, run


def _fields(report, name, want: dict) -> dict:
    got = pool_json(report, name)
    return {k: got[k] for k in want}


# Three sessions cache 2 units each: s1 releases at 0.5, s0 and s2 at 1 (s0's job was scheduled first, so
# it releases first). s3 holds 3 at 2 in a pool of 6 with 6 cached: 3 units must go, two entries of 2.
# Every row: used s0, s2 2 on [0, 1], s1 2 on [0, 0.5], s3 3 on [2, 3]: 8 over 5 = 1.6; cached s1 2 on
# [0.5, 2], s0 and s2 2 on [1, 2], the survivor 2 on [2, 5]: 3 + 2 + 2 + 6 = 13 over 5 = 2.6.
RELEASES = """
pool kv { cap 6; EVICT; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 3) { run d (2); hold kv (3) { run d (1); } }
  else {
    hold kv (2) { run d (serial == 1 ? 0.5 : 1); } cache (2);
    run d (4 - now);
    observe c = cachedin(kv);
  }
}
run { horizon 5; }
"""


@pytest.mark.parametrize("evict, survivor", [
    # lru: release time first, s1 (0.5); then s0 and s2 tie at 1 and go in release order: s0. s2 is left.
    ("evict lru", 2),
    # ascending age (now - last, read at 2): s0 and s2 (1) tie before s1 (1.5); release order: s0, s2.
    ("evict by (age)", 1),
    # -age: s1 (-1.5), then the tie s0, s2 (-1) in release order: s0. lru's order.
    ("evict by (-age)", 2),
    # last is the release time itself: lru's order.
    ("evict by (last)", 2),
    # -last: the latest release first, s0 and s2 (-1, in release order), then s1 (-0.5).
    ("evict by (-last)", 1),
    # one key for all: release order alone, s1 (0.5), s0, s2: s2 is left.
    ("evict by (0)", 2),
    # s0 and s2 key 0, s1 key 1: the tie s0, s2 goes in release order.
    ("evict by (serial == 1 ? 1 : 0)", 1),
])
def test_eviction_order_then_release_order(monkeypatch, evict, survivor):
    r, o = run(RELEASES.replace("EVICT", evict), monkeypatch)
    assert {s: v for s, _t, v in o["c"]} == {s: (2.0 if s == survivor else 0.0) for s in (0, 1, 2)}
    want = {"used": 1.6, "cached": 2.6, "admissions": 4, "evicted_entries": 2, "evicted_units": 4.0,
            "preemptions": 0}
    assert _fields(r, "kv", want) == want


# Block 2, cap 8: s0 caches 6 (3 blocks) and s1 2 (one block), both released at 1 (s0 first). s2 holds 4
# at 2: 4 of the 8 cached units go, block by block from an entry's tail, the keys read again at each block.
# used 6 + 2 on [0, 1], 4 on [2, 3]: 12 over 5 = 2.4; cached 8 on [1, 2], 4 on [2, 5]: 20 over 5 = 4.
BLOCKS = """
pool kv { cap 8; block 2; EVICT; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (2); hold kv (4) { run d (1); } }
  else {
    hold kv (serial == 0 ? 6 : 2) { run d (1); } cache (8);
    run d (3);
    observe c = cachedin(kv);
  }
}
run { horizon 5; }
"""


@pytest.mark.parametrize("evict, left, entries", [
    # size: s1's entry (2) is the smallest and goes whole (one entry evicted); then s0's (6) loses its tail
    # block: 4 left. 4 units evicted.
    ("evict by (size)", {0: 4.0, 1: 0.0}, 1),
    # -size: s0 (6) loses a block (4 left), and is still the largest (4 > 2): another block, 2 left. No
    # entry goes whole.
    ("evict by (-size)", {0: 2.0, 1: 2.0}, 0),
    # lru: both released at 1, s0 first: its tail goes block by block, 2 left; s1's entry stays.
    ("evict lru", {0: 2.0, 1: 2.0}, 0),
])
def test_an_entry_goes_block_by_block_from_its_tail(monkeypatch, evict, left, entries):
    r, o = run(BLOCKS.replace("EVICT", evict), monkeypatch)
    assert {s: v for s, _t, v in o["c"]} == left
    want = {"used": 2.4, "cached": 4.0, "admissions": 3, "evicted_entries": entries, "evicted_units": 4.0}
    assert _fields(r, "kv", want) == want


# Key x: s0 caches with x = 1 and lives on with x = LATER; s1 caches with x = 3, then sets x = 9 and ends.
# s2's hold of 2 at 2 in a pool of 4 with 4 cached evicts one entry. s0 is alive: its current x; s1 has
# ended: its x at its last release, 3 (not 9). used 2 + 2 on [0, 1], 2 on [2, 3]: 6 over 5 = 1.2; cached
# 4 on [1, 2], 2 on [2, 5]: 10 over 5 = 2.
ATTRIBUTES = """
pool kv { cap 4; evict by (x); }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (2); hold kv (2) { run d (1); } }
  branch (serial == 0) { set x = 1; hold kv (2) { run d (1); } cache (2); set x = LATER; run d (3); observe c = cachedin(kv); }
  branch (serial == 1) { set x = 3; hold kv (2) { run d (1); } cache (2); set x = 9; }
}
run { horizon 5; }
"""


@pytest.mark.parametrize("later, c", [
    # s0's current 5 against s1's 3 at its release: s1 goes, s0 keeps 2 (with s1's current 9, s0 would go).
    (5, 2.0),
    # s0's current 2 against 3: s0 goes (with s0's 1 at its release the same; with s1's 9, too).
    (2, 0.0),
])
def test_a_key_reads_a_live_sessions_attributes_now_an_ended_ones_at_its_release(monkeypatch, later, c):
    r, o = run(ATTRIBUTES.replace("LATER", str(later)), monkeypatch)
    assert o["c"] == [(0, 4.0, c)]
    want = {"used": 1.2, "cached": 2.0, "admissions": 3, "evicted_entries": 1, "evicted_units": 2.0}
    assert _fields(r, "kv", want) == want


# s0 and s1 cache 2 each at 1. s2 holds g over [0, 3], so s0's hold of g waits there from 1: s0 is waiting,
# s1 is running d. s3 holds 2 at 2 in a pool of 4 with 4 cached: one entry goes. s0 is admitted to g at 3
# and reads its cachedin(kv) there; s1 reads its own at 4. kv: used 2 + 2 on [0, 1], 2 on [2, 3]: 6 over
# 6 = 1; cached 4 on [1, 2], 2 on [2, 6]: 12 over 6 = 2. g: s2 on [0, 3], s0 on [3, 4]: 4 over 6; waits s2 0,
# s0 2 (from 1 to 3): mean 1; queue 1 on [1, 3]: 2 over 6.
WAITING = """
pool kv { cap 4; EVICT; }
pool g { cap 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); } cache (2); hold g (1) { observe c = cachedin(kv); run d (1); } }
  branch (serial == 1) { hold kv (2) { run d (1); } cache (2); run d (3); observe c = cachedin(kv); }
  branch (serial == 2) { hold g (1) { run d (3); } }
  branch (serial == 3) { run d (2); hold kv (2) { run d (1); } }
}
run { horizon 6; }
"""


@pytest.mark.parametrize("evict, c", [
    # waiting is 1 for s0 (in g's queue), 0 for s1: waiting first goes s0.
    ("evict by (waiting ? 0 : 1)", {0: 0.0, 1: 2.0}),
    # the smallest waiting is s1's 0.
    ("evict by (waiting)", {0: 2.0, 1: 0.0}),
    # lru: both released at 1, s0 first.
    ("evict lru", {0: 0.0, 1: 2.0}),
])
def test_a_key_reads_whether_the_entrys_session_waits(monkeypatch, evict, c):
    r, o = run(WAITING.replace("EVICT", evict), monkeypatch)
    assert {s: v for s, _t, v in o["c"]} == c
    assert [t for _s, t, _v in o["c"]] == [3.0, 4.0]
    want = {"used": 1.0, "cached": 2.0, "admissions": 3, "evicted_entries": 1, "evicted_units": 2.0}
    assert _fields(r, "kv", want) == want
    want = {"used": 4 / 6, "queue": 2 / 6, "wait": 1.0, "admissions": 2}
    assert _fields(r, "g", want) == want


# Block 2, cap 10: s1 caches 4 at 0.5, s0 6 at 1 (10 cached). s2 holds 4 at 2: two blocks go. A key that
# reads size is read again once a block has gone: "Keys are evaluated per cache entry at the Evict moment".
# used 6 on [0, 1], 4 on [0, 0.5], 4 on [2, 3]: 12 over 5 = 2.4; cached 4 on [0.5, 2], 6 on [1, 2], 6 on
# [2, 5]: 30 over 5 = 6.
SHRINKING = """
pool kv { cap 10; block 2; EVICT; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 2) { run d (2); hold kv (4) { run d (1); } }
  else {
    hold kv (serial == 0 ? 6 : 4) { run d (serial == 0 ? 1 : 0.5); } cache (8);
    run d (4 - now);
    observe c = cachedin(kv);
  }
}
run { horizon 5; }
"""


@pytest.mark.parametrize("evict, left, entries", [
    # -size: s0 (6) loses a block; now s0 and s1 tie at 4, and the release order puts s1 (0.5) first: s1
    # loses the second block. Had s0 kept its first key, it would have lost both (2 left, s1 4).
    ("evict by (-size)", {0: 4.0, 1: 2.0}, 0),
    # the tie broken by -last: s0 (released later) again
    ("evict by (-size, -last)", {0: 2.0, 1: 4.0}, 0),
    # size: s1 (4) is the smaller, before and after its first block: it goes whole
    ("evict by (size)", {0: 6.0, 1: 0.0}, 1),
    # lru: s1, released first, whole
    ("evict lru", {0: 6.0, 1: 0.0}, 1),
])
def test_a_size_key_is_read_again_as_its_entry_shrinks(monkeypatch, evict, left, entries):
    r, o = run(SHRINKING.replace("EVICT", evict), monkeypatch)
    assert {s: v for s, _t, v in o["c"]} == left
    want = {"used": 2.4, "cached": 6.0, "admissions": 3, "evicted_entries": entries, "evicted_units": 4.0}
    assert _fields(r, "kv", want) == want
