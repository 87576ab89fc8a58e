"""The plugin code docs/hooks.md shows, taken from its own ```python fences (not a copy), registered
in-process (``get_plugin_manager(plugins=[…])``, as docs/hooks.md says a plugin may be) and run on small
programs whose answers are worked out by hand below. test_docs_commands.py only runs each fence as a
script, which defines the classes and functions and uses none of them; here a fence that no longer
does what its prose says (a renamed base-class attribute, a wrong sign in a key) fails.

Also the IR docs/hooks.md says a program's arguments to a plugin's name give (``params``)."""

from __future__ import annotations

import re
import types

import pytest
import serq_frontend
import serq_ir
import serq_sim
from host_helpers import REPO, returning_sessions
from serq import hookimpl
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(120)

HOOKS = (REPO / "docs" / "hooks.md").read_text()
FENCES = re.findall(r"^```python\n(.*?)^```$", HOOKS, re.S | re.M)


def fences_defining(name: str) -> list[types.ModuleType]:
    """Every python fence of docs/hooks.md that defines ``name``, each executed as a module of its own."""
    out = []
    for i, body in enumerate(FENCES):
        if re.search(rf"^(?:class|def) {name}\b", body, re.M):
            mod = types.ModuleType(f"hooks_md_fence_{i}")
            exec(compile(body, f"docs/hooks.md (python fence {i + 1})", "exec"), mod.__dict__)
            out.append(mod)
    assert out, f"docs/hooks.md shows no {name}"
    return out


def observes(source: str, plugins: list) -> dict[str, list[float]]:
    pm = get_plugin_manager(plugins=plugins)
    report = serq_sim.run(serq_frontend.compile(source=source, pm=pm), seed=1, pm=pm)
    return {name: sorted(report.observe(name).values.tolist()) for name in report.result.observes}


def plugin(**hooks) -> object:
    """An in-process plugin object implementing the given hooks."""
    cls = type("DocsPlugin", (), {name: hookimpl(staticmethod(fn)) for name, fn in hooks.items()})
    return cls()


# Three sessions on a pool of 24 units without blocks, so an entry is evicted whole (docs/simulator.md,
# "Pools"). Session 0 caches 8 at t=1, session 1 caches 16 at t=2: the pool is full. At t=3 session 2
# needs 8, and the largest entry, session 1's 16, goes. Session 0 comes back at t=11 and finds its 8;
# session 1 at t=12 finds nothing. Under `evict lru` session 0's entry, released first, goes instead.
LARGEST = returning_sessions("@largest", 24, 8, 16)


@pytest.mark.parametrize("which", [0, 1], ids=["fixed_key", "plain"])
def test_the_eviction_orders_largest_first(which):
    mods = fences_defining("LargestFirst")
    assert len(mods) == 2  # the annotated one under its hook's section, the short one at the end
    mod = mods[which]
    got = observes(LARGEST, [mod])
    assert got == {"hit0": [8.0], "hit1": [0.0]}  # the largest entry went, not the oldest
    lru = observes(LARGEST.replace("evict @largest", "evict lru"), [mod])
    assert lru == {"hit0": [0.0], "hit1": [16.0]}  # the contrast


def test_the_largest_first_order_keeps_the_pool_docs_hooks_md_writes():
    (mod,) = fences_defining("LargestFirst")[:1]
    src = HOOKS[HOOKS.index("A program then writes `") + len("A program then writes `"):]
    pool = src[:src.index("`")]
    assert pool == "pool kv { cap 4096; block 16; evict @largest; }"
    pm = get_plugin_manager(plugins=[mod])
    program = serq_frontend.compile(source=pool + "\nstage d : delay;\nworkload { arrive batch(1); }\n"
                                    "session { hold kv (16) { run d (1); } }\nrun { horizon 10; }\n", pm=pm)
    assert program.pools[0].evict.name == "largest"


# Session 0 holds 4 of 10 from t=0, session 1 holds 4 from t=1. At t=2 session 0 grows by 4: 12 > 10.
# The candidates, in admission order, are sessions 0 and 1, neither of which has computed anything (no
# step stage): the tie goes to the last admitted, session 1, which is preempted and re-queued at the
# tail. Session 0's grow then fits (8); it ends its hold at 3 (`done0` = 3), when session 1 is admitted
# again: `start1` is observed at 1 and at 3.
PREEMPT = """
pool a { cap 10; preempt @longest; }
stage d : delay;
workload { arrive batch(2); }
session {
  set t0 = now;
  branch (serial == 0) {
    hold a (4) { run d (2); grow a (4); run d (1); observe done0 = now - t0; }
  } else {
    run d (1);
    hold a (4) { observe start1 = now - t0; run d (10); }
  }
}
run { horizon 100; }
"""


def test_the_preemption_policy_longest_first():
    (mod,) = fences_defining("LongestFirst")
    reg = plugin(serq_sim_register_preemption_policies=lambda register: register("longest", mod.LongestFirst))
    got = observes(PREEMPT, [reg])
    assert got == {"done0": [3.0], "start1": [1.0, 3.0]}


# Two runs of work 1 start at t=0 over `a` (capacity 1) and `b` (capacity 2).
SHARE = """
stage a : ps(1);
stage b : ps(2);
share NAME;
workload { arrive batch(2); }
session { set t0 = now; run a, b (1); observe t = now - t0; }
run { horizon 100; }
"""


def test_the_share_policy_equal():
    # a is held by 2 flows (1/2 each), b by 2 (2/2 each): both run at min = 1/2 and end at 2
    (mod,) = fences_defining("share_equal")
    reg = plugin(serq_sim_register_share_policies=lambda register: register("equal", mod.share_equal))
    assert observes(SHARE.replace("NAME", "equal"), [reg]) == {"t": [2.0, 2.0]}


def test_the_share_policy_priority():
    # the first flow takes min(1, 2) = 1 and ends at 1; the second has nothing left on a until then, then
    # rate 1: it ends at 2
    (mod,) = fences_defining("share_priority")
    assert observes(SHARE.replace("NAME", "priority"), [mod]) == {"t": [1.0, 2.0]}


def test_the_params_a_programs_arguments_give():
    """docs/hooks.md: `stage svc : @batch(2);` gives the kind {"kind": "Extension", "name": "batch",
    "params": [2.0]}, and `preempt @oldest(requeue = 1);` the params {"requeue": 1.0}."""
    assert '"params": [2.0]}' in HOOKS and 'the params `{"requeue": 1.0}`' in HOOKS
    reg = plugin(serq_sim_register_stage_kinds=lambda register: register("batch", lambda sim, node, member, flat: None),
                 serq_sim_register_preemption_policies=lambda register: register("oldest", lambda sim, pool, node: None))
    pm = get_plugin_manager(plugins=[reg])
    program = serq_frontend.compile(source="pool p { cap 10; preempt @oldest(requeue = 1); }\nstage svc : @batch(2);\n"
                                    "workload { arrive batch(1); }\nsession { hold p (1) { run svc (1); } }\n"
                                    "run { horizon 10; }\n", pm=pm)
    data = serq_ir.encode(program, spans=False).decode()
    assert '{"kind":"Extension","name":"batch","params":[2.0]}' in data
    assert '"name":"oldest","params":{"requeue":1.0}' in data
