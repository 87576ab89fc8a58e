"""`evict by` keys that read the time as `now - last` (or `last - now`), which is `age` (the Evict moment's
own subtraction) and its negation exactly, are ranked once as each entry is cached, as `age` keys are
(policies.eviction.age_sign, aged_key), where they were ranked again at every instant that evicts (C keys
read for a pool of C entries at each).

The truths: the same program with the key written with `age` (`now - last` as `age`, `last - now` as
`-age`), and with the key hidden from the ranking (`+ 0 * waiting`: `waiting` changes while an entry is
cached, so it is read at each eviction as before): the reports and samples byte for byte, on both tiers.
The key readings are counted: at most a few for each entry cached, against C for each evicting instant."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.policies.eviction import AgedKeyedOrder, KeyedOrder, aged_key
from tiers import run_on_tier

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

# the keys, and the same with `age`
KEYS = [
    ("-size, now - last", "-size, age"),
    ("last - now", "-age"),
    ("-(now - last) * 2, size", "-age * 2, size"),
    ("serial % 3, last - now", "serial % 3, -age"),
    ("size, (now - last) / 4 - 7", "size, age / 4 - 7"),
]


def _compile(keys: str, spill: bool, block: int, seed: int):
    src = PROGRAM.format(keys=keys, block=block, seed=seed,
                         spill="spill cpu via link (0.01) when (serial % 2 == 0);" if spill else "")
    return serq_frontend.compile(source=src, sets={}, defs={})


def _hidden(keys: str) -> str:
    return keys.replace("now - last", "(now - last + 0 * waiting)").replace("last - now",
                                                                            "(last - now + 0 * waiting)")


@pytest.mark.parametrize("keys, aged", KEYS)
@pytest.mark.parametrize("spill, block, seed", [(False, 1, 1), (True, 4, 2)])
def test_now_less_last_is_ranked_as_age(monkeypatch, keys, aged, spill, block, seed):
    programs = {name: _compile(k, spill, block, seed) for name, k in (("now", keys), ("age", aged),
                                                                        ("hidden", _hidden(keys)))}
    assert aged_key(programs["now"], programs["now"].pools[0].evict.keys) == aged_key(
        programs["age"], programs["age"].pools[0].evict.keys) is not None
    assert aged_key(programs["hidden"], programs["hidden"].pools[0].evict.keys) is None
    reads = {}
    key, rank_key = KeyedOrder.key, KeyedOrder.rank_key

    def counted(self, entry):
        reads[current] = reads.get(current, 0) + 1
        return key(self, entry)

    def rank_counted(self, entry):  # (the ranking's reads: the same keys, not checked for NaN)
        reads[current] = reads.get(current, 0) + 1
        return rank_key(self, entry)

    monkeypatch.setattr(KeyedOrder, "key", counted)
    monkeypatch.setattr(KeyedOrder, "rank_key", rank_counted)
    outcomes = {}
    for name, program in programs.items():
        for tier in ("", "general"):
            current = (name, tier)
            sim, outcome, samples = run_on_tier(program, tier)
            assert outcome[0] == "report", outcome
            outcomes[current] = (outcome, samples)
            if name == "now":
                assert isinstance(next(p for p in sim.pools if p.node.name == "kv").evict, AgedKeyedOrder)
    assert len({repr(v) for v in outcomes.values()}) == 1
    for tier in ("", "general"):
        # the aged ranking reads the keys as the age keys do; hidden, every entry's at every evicting instant
        # (1.6 to 25 times as many here: fewest where the size comes first and its ties are walked at a pick)
        assert reads["now", tier] == reads["age", tier]
        assert reads["hidden", tier] > 1.5 * reads["now", tier]


def test_an_arm_a_constant_test_never_takes_is_not_read():
    # `let order = 0;` folds `order == 0` to 1: the key is `size`, fixed while an entry is cached, and the
    # ranking is aged as for `now - last, size`; the arm never taken (`waiting`, which changes while an entry
    # is cached) made aged_key give None, where key_reads already read only the arm taken
    folded = "let order = 0;\n" + PROGRAM.format(keys="now - last, order == 0 ? size : waiting", block=1, seed=3,
                                                  spill="")
    programs = {"folded": serq_frontend.compile(source=folded, sets={}, defs={}),
                "plain": _compile("now - last, size", False, 1, 3)}
    for program in programs.values():
        assert aged_key(program, program.pools[0].evict.keys) == (0, 1)
    outcomes = set()
    for program in programs.values():
        for tier in ("", "general"):
            sim, outcome, samples = run_on_tier(program, tier)
            assert outcome[0] == "report", outcome
            assert isinstance(next(p for p in sim.pools if p.node.name == "kv").evict, AgedKeyedOrder)
            outcomes.add(repr((outcome, samples)))
    assert len(outcomes) == 1
