"""A pool that names itself as its own spill tier does not link.

language.txt's spill writes a pool's evicted prefixes to a tier; a pool evicts only while it makes room
(serq_sim.pools.cache.evict_for), and a spill into a pool that is making room writes nothing (a cycle of tiers
coming back to it: docs/language.md, "A spill's work is what it writes"). So ``pool kv { cap 4; spill kv via l
(1) when (1); }`` never wrote a unit: it was accepted and its report said spills 0. It is one error at the
clause now (serq_ir.rules.spills_to_itself, the linker's and an IR file's rule); a cycle of two tiers, and a
member of a family spilling to another member, still link and spill.
"""

from __future__ import annotations

import pytest
import serq_sim
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(60)

SAID = ("pool `kv` spills to itself: it evicts only while it makes room, and a spill into a pool making room "
        "writes nothing, so this spill never writes; spill to another pool (a tier)")

TAIL = """stage l : fifo;
stage d : delay;
workload { arrive batch(2); }
session { run d (serial); hold kv (4) { run d (0.5); } cache (4); }
run { horizon 20; }
"""


@pytest.mark.parametrize("decl", [
    "pool kv { cap 4; ⟨spill kv via l (1) when (1); }",
    "pool kv { cap 4; evict lru; ⟨spill kv via l (size) when (size > 1); }",
    "pool kv[1] { cap 4; ⟨spill kv via l (1) when (1); }",
    "pool kv[1] { cap 4; ⟨spill kv[0] via l (1) when (1); }",
    "pool kv[2] { cap 4; ⟨spill kv via l (1) when (1); }",  # each member paired with itself
])
def test_a_pool_spilling_to_itself_does_not_link(decl):
    tail = TAIL.replace("hold kv (4)", "hold kv[0] (4)") if "kv[" in decl else TAIL
    e = refused(decl + "\n" + tail, SAID)
    assert str(e).splitlines()[0].endswith(SAID)


def test_a_member_spilling_to_another_member_links_and_spills():
    # kv[0] spills to kv[1]: s0 caches 4 in kv[0] at 0.5; s1's hold of 4 at 1 evicts it, 4 written to kv[1]
    program = compile_src("pool kv[2] { cap 4; spill kv[1] via l (1) when (1); }\n"
                          + TAIL.replace("hold kv (4)", "hold kv[0] (4)"))
    r = serq_sim.run(program)
    assert (r.pool("kv", 0).spills, r.pool("kv", 1).spills) == (1, 0)
    assert r.stage("l").completions == 1


def test_a_cycle_of_two_tiers_still_links():
    program = compile_src("pool kv { cap 4; spill tier via l (1) when (1); }\npool tier { cap 4; spill kv via l (1) "
                          "when (1); }\n" + TAIL)
    r = serq_sim.run(program)
    assert r.pool("kv").spills == 1 and r.stage("l").completions == 1
