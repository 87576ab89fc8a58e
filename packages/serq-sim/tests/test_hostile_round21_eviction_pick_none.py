"""A third party's eviction order whose ``pick(pool)`` says ``None``, nothing to evict, while the pool caches
entries (docs/hooks.md, "When a plugin misbehaves"; the contract, serq_sim.policies.eviction: ``None`` "when
the pool caches nothing").

The engine stops making room at a ``None`` and admits the hold all the same, so before the check
(serq_sim.guards) the pool below, of capacity 10, held the 6 units of session 1's hold beside the 6 session
0 had cached: 12 units in a pool of 10, its report's ``over_cap`` 0 and its cached units 6 from t=1 to the
horizon, without a word, where pool-reference.txt has "Cached prefixes never block an admission: they are
evicted to make room"."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.policies import EvictionOrder

pytestmark = pytest.mark.timeout(60)


class Refusing(EvictionOrder):
    """The release order, but ``None`` when its case says so."""

    case = ""

    def key(self, entry):
        return (entry.seq,)

    def pick(self, pool):
        return None if self.case == "none" else super().pick(pool)


class Plugin:
    def __init__(self, case: str):
        self.case = case

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        case = self.case

        def refusing(sim, pool, node):
            order = Refusing(sim, pool, node)
            order.case = case
            return order

        register("refusing", refusing)


# session 0 holds 6 over [0, 1] and caches them; session 1 asks for 6 at t=2, when 6 are cached: 6 + 6 > 10, and
# a pool without blocks evicts an entry whole (pool-reference.txt's `block`: entries go block by block only with
# one), all 6
PROGRAM = """pool p { cap 10; evict @refusing; }
stage d : delay;
workload { arrive batch(2); }
session { run d (2 * serial); set t0 = now; hold p (6) { run d (1); } cache (6); observe t = now - t0; }
run { horizon 10; }
"""


def run(case: str):
    pm = get_plugin_manager(plugins=[Plugin(case)])
    return serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)


def test_the_order_as_it_should_be():
    r = run("")
    assert r.observe("t").values.tolist() == [1.0, 1.0]  # neither waits
    p = r.pool("p")
    assert (p.evicted_entries, p.evicted_units) == (1, 6.0)
    # cached: 6 over [1, 2], none over [2, 3], session 1's 6 over [3, 10]: (6 + 0 + 42) / 10
    assert p.cached == pytest.approx(4.8)


def test_a_pick_of_none_while_entries_are_cached_is_refused():
    with pytest.raises(PluginError) as e:
        run("none")
    head, _, hint = str(e.value).partition("\n")
    assert head == (f"error: plugin '{Plugin.__module__}.Plugin' failed in its eviction order 'refusing' (pool p): "
                    "pick(pool) returned None while the pool caches 6 unit(s) in 1 entry (None is for a pool that "
                    "caches nothing: the pool would hold more than its capacity) (at t=2)")
    assert hint.startswith(
        "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)")
