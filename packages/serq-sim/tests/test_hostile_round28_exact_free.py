"""An exact count beyond the largest double beside inf (pools/exact.py).

A pool of cap inf counts its units exactly: two holds of 1e308 are 2e308, which rounds to inf as a double. The
count's operators took inf (and NaN) as a float beside the rounded value: ``inf - count`` was ``inf - inf``,
NaN, so ``free(kv)`` of a pool of cap inf read NaN while it held more than the largest double (an observe, a
gauge and a record column of it NaN, where a pool without a cap has infinite room), and a count of 2e308
compared as not below inf. The count is finite whatever its rounding: beside inf or NaN it is any finite
number.
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.pools.exact import _make

pytestmark = pytest.mark.timeout(60)

INF = math.inf

PROGRAM = """pool kv { cap inf; }
stage d : delay;
gauge room = free(kv);
workload {
  arrive renewal(1);
}
session {
  hold kv (1e308) {
    observe f = free(kv);
    observe roomy = free(kv) > 1e308;
    record r { f = free(kv); u = used(kv); }
    run d (1.5);
  }
}
run { horizon 10.5; }
"""


def runs(monkeypatch):
    prog = serq_frontend.compile(source=PROGRAM, sets={}, defs={})
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        out.append(serq_sim.run(prog))
    assert encode_json(out[0]) == encode_json(out[1])
    return out[1]


def test_free_of_a_pool_without_a_cap_is_inf_beyond_the_doubles(monkeypatch):
    # session k arrives at t = k (1 … 10) and holds 1e308 until k + 1.5: from the second on, each admission
    # finds the previous session holding, 2e308 in all (used reads inf); the room of a pool of cap inf is inf
    r = runs(monkeypatch)
    f = r.observe("f").values
    assert len(f) == 10 and all(v == INF for v in f)
    assert list(r.observe("roomy").values) == [1.0] * 10
    cols = r.records("r")
    assert list(cols["f"]) == [INF] * 10
    assert list(cols["u"]) == [1e308] + [INF] * 9  # 2e308 rounded
    g = r.result.gauges["room"]
    assert (g.min, g.max) == (INF, INF)


def test_a_count_beyond_the_doubles_beside_inf_and_nan():
    u = _make(2 * 10**308)  # 2e308: a whole number beyond the largest double, which it rounds to inf
    assert float(u) == INF
    assert u < INF and u <= INF and not u > INF and not u >= INF and u != INF and not u == INF
    assert u > -INF and not u < -INF
    assert INF - u == INF and u - INF == -INF and u + -INF == -INF and -INF + u == -INF
    nan = float("nan")
    assert not u < nan and not u >= nan and u != nan
    for v in (u + nan, u - nan, nan - u):
        assert v != v
    assert not isinstance(INF - u, type(u))  # a plain float
