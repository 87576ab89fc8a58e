"""Rules of language.txt §3 that the simulator wrote twice, now written once (docs/simulator.md, "The rules of
§3, one function each"): each test pins the rule's answer by hand on both tiers and, where the rules table
names the function, that the function named is the one that runs (a variant of it patched in changes the
answer; before, the table named a copy the planning never called).

* A step stage's admission attempt (`Planner._admit_one`, through `admission.admit_from`): the per-job,
  lazy and exclusive plannings inlined it and the named method had no caller.
* A waiting grower's retry (`growth.retry_growers`) computed the growth's blocks and tested its fit with
  a copy of `grow_slot`'s; it now asks `grow_slot` itself, which grows it or leaves it waiting.
* A `cache (ℓ)` length (`cache.cache_length`): read at a hold's end, a `release`, a lease's end, each with
  its own copy of "NaN is an error, below 0 caches nothing".
"""

from __future__ import annotations

import serq_frontend
from serq_sim.step import StepStage

TWO_QUEUES = """
pool hi { cap 10; admit via E; }
pool lo { cap 10; admit via E; }
stage E : step { budget 2; cost 1; }
workload { arrive batch(3); }
session {
  branch (serial < 2) { hold lo (1) { observe a = now; run E prefill (2 - serial); } }
  else { hold hi (1) { observe a = now; run E prefill (1); } }
}
run { horizon 20; }
"""


def _admissions(src: str, tier: str) -> list[tuple[int, float]]:
    """``(session, time)`` of observe ``a``, in the order taken, on ``tier``."""
    import os

    import serq_sim

    old = os.environ.get("SERQ_SIM_TIER")
    os.environ["SERQ_SIM_TIER"] = tier
    try:
        r = serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))
    finally:
        if old is None:
            del os.environ["SERQ_SIM_TIER"]
        else:
            os.environ["SERQ_SIM_TIER"] = old
    o = r.observes["a"]
    return [(int(s), float(t)) for s, t in zip(o.sessions, o.times)]


def test_an_engine_tries_its_queues_in_declaration_order_through_the_named_attempt(monkeypatch):
    # §3 admit via: "A stage that serves several queues tries them in the order their pools are declared".
    # hi is declared first: s2 (hi) at 0, then s0 (lo) with the budget's last token; s1 at 1 (as
    # test_conformance_audit2 has it by hand).
    want = [(2, 0.0), (0, 0.0), (1, 1.0)]
    for tier in ("", "general"):
        assert _admissions(TWO_QUEUES, tier) == want

    # the attempt the rules table names is the one every planning makes: trying the pools in the reverse
    # order there admits lo's head (s0) first
    def reversed_attempt(self, budget_left):
        from serq_sim.pools import admission

        for pool in reversed(self.served_pools):
            if pool.front or pool.queue:
                return admission.admit_from(self.sim, pool, budget_left, self)
        return None

    monkeypatch.setattr(StepStage, "_admit_one", reversed_attempt)
    for tier in ("", "general"):
        got = _admissions(TWO_QUEUES, tier)
        assert got[0] == (0, 0.0), got


GROWERS = """
pool kv { cap 10; preempt none; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (4) { hold kv (1) { run d (5); } run d (5); } }
  branch (serial == 1) { run d (0.5); hold kv (3) { run d (0.5); grow kv (3); observe g = now; observe f = free(kv); run d (1); } }
  branch (serial == 2) { run d (0.5); hold kv (2) { run d (1); grow kv (1); observe g = now; observe f = free(kv); run d (1); } }
}
run { horizon 30; }
"""


def test_waiting_growers_grow_in_the_order_they_stalled_the_head_blocking(monkeypatch):
    # cap 10. s0 holds 4 until 10 and 1 more inside it until 5; s1 holds 3 from 0.5 and grows by 3 at 1
    # (5 + 3 + 2 + 3 > 10: it waits, preempt none); s2 holds 2 from 0.5 and grows by 1 at 1.5 (10 + 1 > 10:
    # it waits, behind s1). At 5 s0's inner hold ends: used 9, one unit free, which s2's growth would fit,
    # but s1, the head, needs 3: both wait (§3 Ties: "A pool's growers: the order they stalled, the head
    # blocking the rest"). At 10 s0 ends (used 5): s1 grows (8), then s2 (9), before either runs on: both
    # read free 1.
    import serq_sim

    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(serq_frontend.compile(source=GROWERS, sets={}, defs={}))
        g = r.observes["g"]
        assert [(int(s), float(t)) for s, t in zip(g.sessions, g.times)] == [(1, 10.0), (2, 10.0)], tier
        assert [float(v) for v in r.observes["f"].values] == [1.0, 1.0], tier


def test_a_waiting_grower_that_fits_grows_at_the_settle(monkeypatch):
    # the same without the head: s1 alone grows by 3 at 1 (5 + 3 + 3 > 10, waits) and at 5, when s0's
    # inner hold ends (used 7), it grows (used 10): free 0 at 5
    import serq_sim

    src = GROWERS.replace("branch (serial == 2)", "branch (serial == 9)")
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))
        g = r.observes["g"]
        assert [(int(s), float(t)) for s, t in zip(g.sessions, g.times)] == [(1, 5.0)], tier
        assert [float(v) for v in r.observes["f"].values] == [0.0], tier


def test_a_computed_member_is_refused_in_the_rules_words_on_both_tiers(monkeypatch):
    # serq_ir.rules.member_problem is the rule of a computed index at run time: the fast tier's generated
    # code and the general engine say it in its words (the fast tier wrote them out again)
    from serq_ir.rules import member_problem
    from tiers import same_error

    for ref, idx, kind in (("s[serial + 0.5]", 0.5, "stage"), ("s[serial + 2]", 2.0, "stage")):
        src = f"stage s[2] : fifo(1);\nworkload {{ arrive batch(1); }}\nsession {{ run {ref} (1); }}\nrun {{ horizon 5; }}\n"
        prog = serq_frontend.compile(source=src, sets={}, defs={})
        assert member_problem(kind, idx, 2, "s") in same_error(prog, monkeypatch)
    for ref, idx in (("p[serial - 1]", -1.0), ("p[serial + 0.25]", 0.25)):
        src = (f"pool p[2] {{ cap 2; }}\nstage s : fifo(1);\nworkload {{ arrive batch(1); }}\n"
               f"session {{ hold {ref} (1) {{ run s (1); }} }}\nrun {{ horizon 5; }}\n")
        prog = serq_frontend.compile(source=src, sets={}, defs={})
        assert member_problem("pool", idx, 2, "p") in same_error(prog, monkeypatch)
