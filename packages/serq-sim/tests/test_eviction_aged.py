"""`evict by` keys that read the time only through `age`, as a monotone function of it, with every other key
fixed (policies.eviction.aged_key): at any instant they order the cached entries as the same keys with
that one read as `-last` (or `last`), which does not change while an entry is cached, so the entries are
ranked once, as they are cached, instead of at every instant that evicts (a pool of C entries read C
keys an eviction: 8 000 sessions spilling into 1 000 entries 10.5 s, now 0.45 s). `now - last` rounds
two release times to one age once the clock is far beyond both; the pick settles such ties as the scan
does (the keys after it, then the release order).

The truth here is the same program with the age key written so that it is no longer recognised
(`age + 0 * waiting`: `waiting` changes while an entry is cached, so the keys are evaluated at each
eviction as before, and `0 * waiting` is 0): the reports, observe samples and records must be the same byte
for byte; and a hand count where ties of rounding decide."""

from __future__ import annotations

import re

import pytest
import serq_frontend
import serq_sim
from serq_ir import nodes as N
from serq_report.json import encode_json
from serq_sim.policies.eviction import AgedKeyedOrder, age_sign, aged_key

pytestmark = pytest.mark.timeout(120)

PROGRAM = """
pool kv {{ cap 600; block {block}; evict by ({keys}); {spill} }}
pool cpu {{ cap 300; block {block}; evict by ({keys}); }}
stage link : delay;
stage s : delay;
workload {{ arrive poisson(10); }}
session {{
  set u = 1 + floor(~exp(6));
  hold kv (u) {{ run s (~exp(0.2)); }} cache (u + serial % 4);
  branch with (0.3) {{ hold kv (2 * u) reuse (u / 2) {{ run s (0.1); }} cache (2 * u); }}
  observe hit = cached;
  end;
}}
run {{ horizon 1e9; arrivals 1500; seed {seed}; }}
"""

KEYS = ["-size, age", "age", "-age", "-age * 2, size", "1 - age / 3, -size", "size, age - 7", "-(age * 0.5)",
        "serial % 3, -age", "last * 0 + size, 2 - age"]


def _twin(keys: str) -> str:
    """The same keys with ``age`` not recognised (it is still the same number)."""
    return re.sub(r"\bage\b", "(age + 0 * waiting)", keys)


def _compile(keys: str, spill: bool, block: int, seed: int):
    src = PROGRAM.format(keys=keys, block=block, seed=seed,
                         spill="spill cpu via link (0.01) when (serial % 2 == 0);" if spill else "")
    return serq_frontend.compile(source=src, sets={}, defs={})


@pytest.mark.parametrize("keys", KEYS)
@pytest.mark.parametrize("spill, block, seed", [(False, 1, 1), (True, 1, 2), (False, 4, 3), (True, 4, 4)])
def test_ranked_by_release_time_as_the_keys_order_them(keys, spill, block, seed):
    prog = _compile(keys, spill, block, seed)
    twin = _compile(_twin(keys), spill, block, seed)
    assert aged_key(prog, prog.pools[0].evict.keys) is not None
    assert aged_key(twin, twin.pools[0].evict.keys) is None
    a = serq_sim.run(prog)
    b = serq_sim.run(twin)
    assert a.pool("kv").evicted_entries > 50, keys
    assert 0 < len([x for x in a.observe("hit").values if x > 0]) < 1500
    if spill:
        assert a.pool("kv").spills > 20 and a.pool("cpu").evicted_entries > 10
    ja, jb = encode_json(a), encode_json(b)
    assert ja == jb
    assert a.observe("hit").values.tobytes() == b.observe("hit").values.tobytes()


# 50 sessions cache 1 to 3 units as they leave, at times 1e-12 apart (serial s at s * 1e-12); then, at 1e8,
# sessions 50 to 53 each ask for 40 units of the 100, evicting. At 1e8 every age is the same float,
# 1e8 - s * 1e-12 rounds to 1e8, so under `evict by (age, -size)` the sizes decide, the largest first, and
# among them the release order: the 3-unit entries (serials 2, 5, 8, …, 47: 16 of them, 48 units), then
# the 2-unit ones (1, 4, …, 49: 17 of them) in release order. Cached before the first big hold: 1 + 2 + 3
# repeated, serials 0..49: 17 × 1 + 17 × 2 + 16 × 3 = 99 units; the first big hold (40) evicts 39 units
# beyond the 1 free: thirteen 3-unit entries (39 units). Read as -last, the ranking alone would take the
# latest releases first (49, 48, 47, …): the pick must see past it.
TIES = """
pool kv { cap 100; block 1; evict by (age, -size); }
stage s : delay;
workload { arrive batch(54); }
session {
  branch (serial < 50) {
    hold kv (1 + serial % 3) { run s (serial * 0.000000000001); } cache (1 + serial % 3);
  } else {
    run s (100000000 + serial);
    hold kv (40) { run s (0.5); }
    observe left = cachedin(kv);
  }
  end;
}
run { horizon 1e9; seed 1; }
"""


def test_ties_of_rounding_are_settled_by_the_keys_after_the_age_and_the_release_order(monkeypatch):
    prog = serq_frontend.compile(source=TIES, sets={}, defs={})
    assert aged_key(prog, prog.pools[0].evict.keys) == (0, 1)
    picked = []
    pick = AgedKeyedOrder.pick

    def spy(self, pool):
        e = pick(self, pool)
        if e is not None:
            picked.append(e.owner.serial)
        return e

    monkeypatch.setattr(AgedKeyedOrder, "pick", spy)
    r = serq_sim.run(prog)
    monkeypatch.undo()
    twin = serq_sim.run(serq_frontend.compile(source=_twin(TIES), sets={}, defs={}))
    first = list(dict.fromkeys(picked))[:13]
    assert first == [2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38]
    assert encode_json(r) == encode_json(twin)


@pytest.mark.parametrize("text, sign", [
    ("age", 1), ("-age", -1), ("age + 3", 1), ("3 + age", 1), ("age - 3", 1), ("3 - age", -1),
    ("age * 2", 1), ("2 * age", 1), ("age * -2", -1), ("age / 4", 1), ("age / -4", -1), ("-(age * 0.5)", -1),
    ("age * 0", None), ("4 / age", None), ("age * age", None), ("age + size", None), ("floor(age)", None),
    ("age > 3 ? 1 : 0", None), ("age % 5", None), ("age * inf", None),
])
def test_which_age_keys_are_monotone(text, sign):
    src = f"pool kv {{ cap 10; evict by ({text}); }}\nworkload {{ arrive poisson(1); }}\nsession {{ end; }}\n"
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    key = prog.pools[0].evict.keys[0]
    assert isinstance(key, (N.Ctx, N.Unary, N.Binary, N.Call, N.Cond))
    assert age_sign(key) == sign


@pytest.mark.parametrize("keys, expect", [
    ("-size, age", (1, 1)), ("age, -age", None), ("age, now", None), ("age, waiting", None),
    ("serial, -age", (1, -1)), ("age, ~uniform(0, 1)", None), ("size", None),
])
def test_which_key_lists_are_ranked_by_release_time(keys, expect):
    src = (f"pool kv {{ cap 10; evict by ({keys}); }}\nworkload {{ arrive poisson(1); }}\n"
           "session { end; }\n")
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    assert aged_key(prog, prog.pools[0].evict.keys) == expect
