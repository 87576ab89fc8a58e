"""A step stage's budget, cost or chunk, and a ps stage's capacity, refused at run time is told at its expression
(serq_sim.step.planner: Planner._at, serq_sim.stages.PsStage and the fast tier's ps stages; docs/language.md,
"Amounts are not negative"), where a constant one that breaks the same rule is refused at link time. They were
told at the stage's first line, `stage E : step {`, which in a block of several lines does not show the
setting: a cost `sqrt(tokens - 50)` that is NaN for a decode-only iteration said `p.sq:1:1: … the
iteration's cost is NaN` under `stage`."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_sim import SimError
from serq_sim.fast import tier as fast_tier

pytestmark = pytest.mark.timeout(60)


def program(budget: str = "64", cost: str = "0.01", chunk: str = "inf") -> str:
    # the stage's settings on lines 3, 4 and 5, each expression at column 10, 8 and 9
    return f"""pool kv {{ cap 1000; }}
stage E : step {{
  budget {budget};
  cost {cost};
  chunk {chunk};
  memory kv;
}}
workload {{
  arrive batch(2);
}}
session {{
  hold kv (10) {{
    run E prefill (60);
    run E decode (5);
  }}
  end;
}}
run {{ horizon 10; seed 1; }}
"""


def error(src: str, monkeypatch, tier: str) -> list[str]:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    with pytest.raises(SimError) as e:
        serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))
    return str(e.value).splitlines()


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize(("settings", "first"), [
    # two prefills of 60 tokens: the first iteration serves 64 tokens (cost sqrt(14)), the second 57 (a decode
    # and the other prefill's 56: sqrt(7)), the third the two decoders' 2, sqrt(-48), NaN, at sqrt(14) +
    # sqrt(7) = 6.38741
    ({"cost": "sqrt(tokens - 50)"}, ["<source>:4:8: error: at t=6.38741: stage E: the iteration's cost is NaN "
     "(its batch: tokens 2, decoders 2, prefilled 0, residents 2, kv_decode 20, kv_prefill 0; sessions 0, 1)",
     "    cost sqrt(tokens - 50);", "         ^"]),
    # the budget read before the first iteration: 1 - 2 residents
    ({"budget": "1 - residents"}, ["<source>:3:10: error: at t=0: stage E: the budget is negative (-1)",
                                   "    budget 1 - residents;", "           ^"]),
    # the chunk read before the second iteration, the first's end (cost 0.01): a decoder is resident then
    ({"chunk": "decoders > 0 ? -1 : 64"}, ["<source>:5:9: error: at t=0.01: stage E: the chunk is negative (-1)",
                                           "    chunk decoders > 0 ? -1 : 64;", "          ^"]),
])
def test_the_setting_is_told_at_its_expression(monkeypatch, tier, settings, first):
    # the place, the setting's line quoted and a caret under its expression's first character
    assert error(program(**settings), monkeypatch, tier) == first


def test_a_setting_from_a_definition_is_told_in_its_body_with_a_note_at_the_use(monkeypatch):
    # the second iteration (at 0.01, the first's cost: no decoder in it) has one decoder: 0.01 - 0.02
    src = "def c(x) = 0.01 - x * decoders;\n" + program(cost="c(0.02)")
    assert error(src, monkeypatch, "") == [
        "<source>:1:12: error: at t=0.01: stage E: the iteration's cost is negative (-0.01) "
        "(its batch: tokens 57, decoders 1, prefilled 56, residents 2, kv_decode 10, kv_prefill 10; sessions 0, 1)",
        "  def c(x) = 0.01 - x * decoders;", "             ^",  # (under the body, `0.01 - …`, at its 12th character)
        "<source>:5:8: note: in the expansion of `c`, used here", "    cost c(0.02);", "         ^"]


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_ps_capacity_is_told_at_its_expression_on_both_tiers(monkeypatch, tier):
    # ps(2 - present) with the 3 sessions of the batch present: -1, at the capacity (1:14), where ps(-1) is
    # refused at link time; the fast tier (the program is one of its) and the general engine alike
    src = "stage p : ps(2 - present);\nworkload { arrive batch(3); }\nsession { run p (1); end; }\nrun { horizon 5; }\n"
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    assert fast_tier(prog) == (tier or "fast")
    assert error(src, monkeypatch, tier) == [
        "<source>:1:14: error: at t=0: stage p: the capacity is negative (-1) at present = 3; a ps stage's capacity "
        "is at least 0", "  stage p : ps(2 - present);", "               ^"]
