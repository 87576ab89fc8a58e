"""A growth on a pool whose count is exact (a cap of 2**53 or more, pools/exact.py, docs/simulator.md).

A hold's units are a double; the pool's total is exact. pool-reference.txt: growth by d requires
used + (others' reservations) + d <= cap. Two faults of the doubles' ``alloc + d`` and ``x - alloc``:

* a hold of 0.1 grown by 1e20 booked 1e20 - 0.1 rounded (1e20) and released 0.1 + 1e20 rounded (1e20), so
  used(kv) read 0.1 after every hold had ended;
* a hold of 2**59 grown by 1 was 2**59 again (the double spacing there is 128): the growth booked nothing and
  fitted a full pool of 2**60 with no preemption. Now the hold takes the next double up, 2**59 + 128, as a
  block rounds a growth up, and the full pool preempts.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(60)

TIERS = ["", "general"]


def _run(src: str, monkeypatch, tier: str) -> dict:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    report = serq_sim.run(serq_frontend.compile(source=src), check_invariants=True)
    return json.loads(encode_json(report))


@pytest.mark.parametrize("tier", TIERS)
def test_a_growth_released_leaves_the_pool_empty(monkeypatch, tier):
    src = """pool kv { cap inf; }
workload { arrive batch(1); }
session {
  hold kv (0.1) {
    grow kv (100000000000000000000);
    observe a = used(kv);
  }
  observe u = used(kv);
}
run { horizon 30; }
"""
    r = _run(src, monkeypatch, tier)
    # nothing is held once the hold ended: 0, exactly
    assert r["observes"]["u"]["mean"] == 0.0
    assert r["pools"][0]["used"] == 0.0
    # 1e20 + 0.1 is no double; the hold takes the next one above it, 1e20 + 2**14 (the spacing at 1e20)
    assert r["observes"]["a"]["mean"] == 1e20 + 2.0**14


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("d, held", [(1, 2**59 + 128), (129, 2**59 + 256), (128, 2**59 + 128)])
def test_a_growth_the_doubles_round_away_is_booked_and_preempts_on_a_full_pool(monkeypatch, tier, d, held):
    # two holds of 2**59 fill cap 2**60; at t=1 session 0 grows by d: used + d > cap, so preempt lifo takes
    # session 1 (the latest admitted); session 0 then holds the next double at or above 2**59 + d alone
    src = f"""pool kv {{ cap 1152921504606846976; preempt lifo; }}
stage w : delay;
workload {{ arrive batch(2); }}
session {{
  hold kv (576460752303423488) {{
    run w (serial + 1);
    grow kv ({d});
    observe u = used(kv);
    run w (10);
  }}
}}
run {{ horizon 30; }}
"""
    r = _run(src, monkeypatch, tier)
    (kv,) = r["pools"]
    assert kv["preemptions"] == 1
    assert r["ended"] == 2
    # session 0's growth at t=1 (alone after the preemption), then session 1's (readmitted at t=11 when
    # session 0's hold ended, grown at t=13): each reads its own hold alone
    assert r["observes"]["u"] == {**r["observes"]["u"], "count": 2, "mean": float(held), "cv2": 0.0}


@pytest.mark.parametrize("tier", TIERS)
def test_whole_growths_within_the_doubles_book_what_they_say(monkeypatch, tier):
    # 2**59 grown by 2**58 (3 * 2**58) and by 3 * 2**7 (the spacing there is 2**7) are doubles: booked as
    # they are, no rounding up
    src = """pool kv { cap 2305843009213693952; }
workload { arrive batch(1); }
session {
  hold kv (576460752303423488) {
    grow kv (288230376151711744);
    observe u = used(kv);
    grow kv (384);
    observe v = used(kv);
  }
  observe w = used(kv);
}
run { horizon 30; }
"""
    r = _run(src, monkeypatch, tier)
    assert r["observes"]["u"]["mean"] == float(2**59 + 2**58)
    assert r["observes"]["v"]["mean"] == float(2**59 + 2**58 + 384)
    assert r["observes"]["w"]["mean"] == 0.0


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("block, d, held", [("1", 1, 2**59 + 128), ("1", 129, 2**59 + 256), ("256", 1, 2**59 + 256),
                                            ("128", 1, 2**59 + 128)])
def test_a_growth_in_blocks_the_doubles_round_away_is_booked(monkeypatch, tier, block, d, held):
    # 2**59 + d rounded up to blocks is no double: the next double up that is whole blocks (the spacing at
    # 2**59 is 128, so blocks of 1 take 2**59 + 128; blocks of 256 take 2**59 + 256)
    src = f"""pool kv {{ cap 1152921504606846976; block {block}; }}
workload {{ arrive batch(1); }}
session {{
  hold kv (576460752303423488) {{
    grow kv ({d});
    observe u = used(kv);
  }}
  observe w = used(kv);
}}
run {{ horizon 30; }}
"""
    r = _run(src, monkeypatch, tier)
    assert r["observes"]["u"]["mean"] == float(held)
    assert r["observes"]["w"]["mean"] == 0.0


@pytest.mark.parametrize("alloc, d", [(0.0, 1.0), (5.0, 7.0), (2.0**53 - 2, 1.0), (2.0**53 - 1, 1.0),
                                      (2.0**53 - 1, 2.0), (2.0**53 - 1, 3.0), (0.5, 0.25), (2.0**59, 1.0)])
def test_exact_growth_without_blocks_is_the_next_double_at_or_above_the_sum(alloc, d):
    # pools.growth.exact_growth as grow_slot calls it on a pool without blocks (x = alloc + d as the doubles
    # round it): the hold takes the least double at or above the exact sum, and the pool books exactly its
    # difference from alloc. 2**53 - 1 + 2 is 2**53 + 1, no double (the spacing from 2**53 is 2): 2**53 + 2
    import math
    from fractions import Fraction
    from types import SimpleNamespace

    from serq_sim.pools.exact import _exact
    from serq_sim.pools.growth import exact_growth

    x, need = exact_growth(SimpleNamespace(block=None), alloc, d, alloc + d, (alloc + d) - alloc)
    true = Fraction(alloc) + Fraction(d)
    want = float(true)
    if Fraction(want) < true:
        want = math.nextafter(want, math.inf)
    assert x == want and Fraction(x) >= true
    assert Fraction(_exact(need)) == Fraction(x) - Fraction(alloc)
