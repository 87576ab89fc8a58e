"""A positive amount takes one block at least (Pool.round_up and its inlined forms: a growth, an
eviction's amount, the prepared admission). The rounding's tolerance, ceil(x / b - 1e-12), forgives a
quotient that a rounding error put just past a whole number; an amount below 1e-12 blocks took none (a
hold of 10 units on blocks of 1e13 allocated nothing and fit a pool of 100)."""

from __future__ import annotations

import json

import pytest
import serq_frontend
from tiers import run_on_tier

TIERS = ["general", ""]


def _report(src: str, tier: str) -> dict:
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    _sim, outcome, _ = run_on_tier(prog, tier)
    assert outcome[0] == "report", outcome
    return json.loads(outcome[1])


@pytest.mark.parametrize("tier", TIERS)
def test_a_hold_below_a_huge_block_takes_the_block_and_is_rejected(tier):
    # 10 units on blocks of 1e13 need one block, 1e13 > the cap of 100: each of the three is rejected
    src = """
pool kv { cap 100; block 1e13; }
stage svc : delay;
workload { arrive batch(3); }
session { hold kv (10) { run svc (1); } end; }
run { horizon 5; }
"""
    (kv,) = _report(src, tier)["pools"]
    assert kv["rejections"] == 3 and kv["admissions"] == 0 and kv["used"] == 0


@pytest.mark.parametrize("tier", TIERS)
def test_a_hold_below_a_huge_block_allocates_the_block(tier):
    # one session, 10 units on blocks of 1e13 on a pool without a cap: it holds one block for [0, 1) of
    # the horizon 4, so the time-average used is 1e13 / 4
    src = """
pool kv { block 1e13; }
stage svc : delay;
workload { arrive batch(1); }
session { hold kv (10) { run svc (1); } end; }
run { horizon 4; }
"""
    (kv,) = _report(src, tier)["pools"]
    assert kv["used"] == 2.5e12


@pytest.mark.parametrize("tier", TIERS)
def test_a_growth_below_a_huge_block_takes_the_block(tier):
    # a step stage's prefill of 10 tokens growing a hold of nothing on blocks of 1e13: the growth is one
    # block; the one iteration costs 1, and the block is held for [0, 1) of the horizon 2
    src = """
pool reqs { cap 4; admit via e; }
pool kv { block 1e13; }
stage e : step { budget 64; cost 1; memory kv; }
workload { arrive batch(1); }
session { hold reqs (1), kv (0) { run e prefill (10) growing kv; } end; }
run { horizon 2; }
"""
    pools = {p["name"]: p for p in _report(src, tier)["pools"]}
    assert pools["kv"]["used"] == 5e12
