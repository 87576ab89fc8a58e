"""Infinite amounts on a pool (docs/language.md, "Amounts are not negative"): a pool's books (used, reserved,
cached units) hold only finite amounts. A hold's units, its reserve under ``reserve held`` and a growth
that are inf are a run-time error on a pool without a cap, where they would fit (inf <= inf) and their
release would leave the books NaN (inf - inf) for the rest of the run; on a pool with a cap they never
fit, as any amount beyond the cap: rejected when known at the join, else waiting. A reserve the pool does
not hold is only the room a hold needs, and an infinite one fits a pool without a cap.

Hand-computed, on both tiers: the general engine and the automatic choice (the fast tier for the programs
it takes, the prepared admission of a step stage's ``admit via``)."""

from __future__ import annotations

import array
import json

import pytest
import serq_frontend
from serq_sim import fast
from serq_sim.compile import HoldInfo
from tiers import run_on_tier

TIERS = ["general", ""]

NO_CAP = "infinite on a pool without a cap"


def _compile(src: str):
    return serq_frontend.compile(source=src, sets={}, defs={})


def _run(src: str, tier: str):
    """``(outcome, pools, samples)``: the report's pools by name and the observes' values and times (or,
    for an error, ``outcome`` its message and the rest None)."""
    sim, outcome, samples = run_on_tier(_compile(src), tier)
    if tier == "":
        holds = [v for v in sim.compiler.g.values() if isinstance(v, HoldInfo)]
        if any(st.kind.__class__.__name__ == "Step" for st in sim.program.stages):
            assert holds and all(h.fast is not None for h in holds)  # the prepared admission ran
    if outcome[0] == "error":
        return outcome[2], None, None
    pools = {p["name"]: p for p in json.loads(outcome[1])["pools"]}
    obs = {k: (array.array("d", v[0]).tolist(), array.array("d", v[1]).tolist()) for k, v in samples.items()}
    return "report", pools, obs


def _error(src: str, tier: str) -> str:
    out, _, _ = _run(src, tier)
    assert out != "report"
    return out


# -- a hold's units (programs the fast tier takes) ------------------------------------------------------------

# session 0 holds 1 unit over [0, 1); session 1 joins at t=1 asking for 1 / (1 - 1) = inf units
UNITS = """
pool m {{ {cap} }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{ run d (serial); hold m ({units}) {{ run d (1); }} observe u = used(m); }}
run {{ horizon 10; }}
"""


def test_the_unit_programs_take_the_fast_tier():
    for cap in ("", "cap 4;"):
        for units in ("1 / (1 - serial)", "used(m) >= 0 ? 1 / (1 - serial) : 0", "inf"):
            assert fast.tier(_compile(UNITS.format(cap=cap, units=units))) == "fast"


@pytest.mark.parametrize("tier", TIERS)
def test_infinite_units_on_a_pool_without_a_cap_are_an_error_at_the_join(tier):
    # the units read only attributes: evaluated when session 1 joins, at t=1 (before: admitted, used(m) inf
    # while held and NaN from its release at t=2 on, the report's used null)
    msg = _error(UNITS.format(cap="", units="1 / (1 - serial)"), tier)
    assert msg.startswith("<source>:5:35: error: at t=1, session 1: ")  # at the units
    assert f"the units of m are {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_infinite_constant_units_on_a_pool_without_a_cap_are_an_error(tier):
    # every session asks for inf: session 0 is the first, at t=0
    msg = _error(UNITS.format(cap="", units="inf"), tier)
    assert f"at t=0, session 0: the units of m are {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_infinite_units_that_read_the_state_are_an_error_when_evaluated(tier):
    # units that read used(m) are evaluated at the admission attempt: session 1's at t=1
    msg = _error(UNITS.format(cap="", units="used(m) >= 0 ? 1 / (1 - serial) : 0"), tier)
    assert f"at t=1, session 1: the units of m are {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_infinite_units_on_a_pool_with_a_cap_are_rejected_at_the_join(tier):
    # inf > cap 4, known at the join: session 1 is rejected at t=1 and ends (no sample). Session 0 held 1
    # unit over [0, 1) of 10: used 0.1; its sample, after its release at t=1, is 0
    out, pools, obs = _run(UNITS.format(cap="cap 4;", units="1 / (1 - serial)"), tier)
    assert out == "report"
    m = pools["m"]
    assert (m["used"], m["holders"], m["admissions"], m["rejections"], m["queue"]) == (0.1, 0.1, 1, 1, 0.0)
    assert obs["u"] == ([0.0], [1.0])


@pytest.mark.parametrize("tier", TIERS)
def test_infinite_units_read_from_the_state_on_a_pool_with_a_cap_wait(tier):
    # evaluated at the admission attempts, inf never fits beside the cap: session 1 waits from t=1 to the
    # horizon (queue 9 / 10), counted in over_cap at the end
    out, pools, obs = _run(UNITS.format(cap="cap 4;", units="used(m) >= 0 ? 1 / (1 - serial) : 0"), tier)
    assert out == "report"
    m = pools["m"]
    assert (m["used"], m["admissions"], m["rejections"], m["queue"], m["over_cap"]) == (0.1, 1, 0, 0.9, 1)
    assert obs["u"] == ([0.0], [1.0])


# -- grow ------------------------------------------------------------------------------------------------------

# session 0 (t=0) and session 1 (t=1) hold 1 unit and grow it by 1 / (1 - serial): 1, then inf
GROW = """
pool m {{ {cap} }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  run d (serial);
  hold m (1) {{
    grow m (1 / (1 - serial));
    observe u = used(m);
    run d (1);
  }}
  observe after = used(m);
}}
run {{ horizon 10; }}
"""


@pytest.mark.parametrize("tier", TIERS)
def test_an_infinite_grow_on_a_pool_without_a_cap_is_an_error(tier):
    msg = _error(GROW.format(cap=""), tier)
    assert msg.startswith("<source>:8:5: error: at t=1, session 1: ")
    assert f"grow m: the amount is {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_an_infinite_grow_on_a_pool_with_a_cap_waits(tier):
    # session 0 grows to 2 at t=0 (sample u = 2) and releases at t=1; session 1, admitted at t=1 with 1
    # unit, cannot grow by inf (preempt none: it waits as a grower to the horizon). used: 2 over [0, 1),
    # 1 over [1, 10): 1.1; session 0's sample after its release: session 1's 1
    out, pools, obs = _run(GROW.format(cap="cap 4;"), tier)
    assert out == "report"
    m = pools["m"]
    assert (m["used"], m["holders"], m["admissions"]) == (1.1, 1.0, 2)
    assert obs["u"] == ([2.0], [0.0])
    assert obs["after"] == ([1.0], [1.0])


# a growing run with an infinite budget: its one iteration would give it inf tokens
GROWING = """
pool kv {{ {cap} }}
stage e : step {{ budget inf; cost 0.01; memory kv; }}
workload {{ arrive batch(1); }}
session {{ hold kv (1) {{ prefill on e (inf) growing kv; }} observe u = used(kv); }}
run {{ horizon 10; }}
"""


@pytest.mark.parametrize("tier", TIERS)
def test_an_infinite_growth_of_a_run_on_a_pool_without_a_cap_is_an_error(tier):
    # (before: used(kv) inf from the first iteration on)
    msg = _error(GROWING.format(cap=""), tier)
    assert msg.startswith("<source>:5:25: error: at t=0, session 0: ")
    assert f"the growth of kv is {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_an_infinite_growth_of_a_run_on_a_pool_with_a_cap_waits(tier):
    out, pools, obs = _run(GROWING.format(cap="cap 12;"), tier)
    assert out == "report"
    assert (pools["kv"]["used"], pools["kv"]["holders"]) == (1.0, 1.0)
    assert obs["u"] == ([], [])


# -- cache (inf) -----------------------------------------------------------------------------------------------

# session 0 (t=0) and session 1 (t=1) hold for 1 time unit and cache all they held
CACHE = """
pool m {{ {cap} }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  run d (serial);
  hold m ({units}) {{ run d (1); }} cache (inf);
  observe c = cachedin(m);
}}
run {{ horizon 10; }}
"""


@pytest.mark.parametrize("tier", TIERS)
def test_cache_inf_keeps_the_allocation(tier):
    # what is cached is at most the allocation: 2 (session 0, from t=1) and 3 (session 1, from t=2).
    # used: 2 over [0, 1), 3 over [1, 2): 0.5; cached: (2 * 9 + 3 * 8) / 10 = 4.2
    out, pools, obs = _run(CACHE.format(cap="", units="2 + serial"), tier)
    assert out == "report"
    assert (pools["m"]["used"], pools["m"]["cached"]) == (0.5, 4.2)
    assert obs["c"] == ([2.0, 3.0], [1.0, 2.0])


@pytest.mark.parametrize("tier", TIERS)
def test_cache_inf_of_infinite_units_on_a_pool_without_a_cap_is_an_error(tier):
    # (before: cached inf from session 1's release on, and used NaN)
    msg = _error(CACHE.format(cap="", units="1 / (1 - serial)"), tier)
    assert f"at t=1, session 1: the units of m are {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_cache_inf_of_infinite_units_on_a_pool_with_a_cap(tier):
    # rejected at the join (units known then) or waiting (units read from the state): session 0's 1 unit
    # is held over [0, 1) and cached from t=1 on (0.9)
    for units, rejections, queue in (("1 / (1 - serial)", 1, 0.0),
                                     ("used(m) >= 0 ? 1 / (1 - serial) : 0", 0, 0.9)):
        out, pools, obs = _run(CACHE.format(cap="cap 4;", units=units), tier)
        assert out == "report"
        m = pools["m"]
        assert (m["used"], m["cached"], m["rejections"], m["queue"]) == (0.1, 0.9, rejections, queue)
        assert obs["c"] == ([1.0], [1.0])


# -- reserve ---------------------------------------------------------------------------------------------------

RESERVE = """
pool m {{ {opts} }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  run d (serial);
  hold m (1) reserve ({reserve}) {{ observe u = used(m); run d (1); }}
  observe after = free(m);
}}
run {{ horizon 10; }}
"""
AT_JOIN = "1 / (1 - serial)"
AT_ADMISSION = "used(m) >= 0 ? 1 / (1 - serial) : 0"


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("reserve", [AT_JOIN, AT_ADMISSION])
def test_an_infinite_held_reserve_on_a_pool_without_a_cap_is_an_error(tier, reserve):
    # (before: reserved inf while held, NaN from the release on: no hold fitted again)
    msg = _error(RESERVE.format(opts="reserve held;", reserve=reserve), tier)
    assert msg.startswith("<source>:7:23: error: at t=1, session 1: ")  # at the reserve
    assert f"the reserve of m is {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_an_infinite_reserve_the_pool_does_not_hold_fits_a_pool_without_a_cap(tier):
    # only the room the hold needs, never booked: session 1 is admitted at t=1 beside session 0's 1 unit
    # (u = 2), and each releases its 1 unit: used 1 over [0, 2) of 10, free(m) inf after each release
    out, pools, obs = _run(RESERVE.format(opts="", reserve=AT_JOIN), tier)
    assert out == "report"
    assert (pools["m"]["used"], pools["m"]["admissions"]) == (0.2, 2)
    assert obs["u"] == ([1.0, 2.0], [0.0, 1.0])
    assert obs["after"][0] == [float("inf")] * 2


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("reserve, rejections, queue", [(AT_JOIN, 1, 0.0), (AT_ADMISSION, 0, 0.9)])
def test_an_infinite_held_reserve_on_a_pool_with_a_cap(tier, reserve, rejections, queue):
    # beyond the cap: rejected when the reserve is known at the join, else waiting to the horizon
    out, pools, obs = _run(RESERVE.format(opts="reserve held; cap 4;", reserve=reserve), tier)
    assert out == "report"
    m = pools["m"]
    assert (m["used"], m["admissions"], m["rejections"], m["queue"]) == (0.1, 1, rejections, queue)
    assert obs["after"] == ([4.0], [1.0])


# -- a step stage's admission (admit via: the prepared admission) ------------------------------------------------

# both join at t=0; session 0 is admitted with 4 units of kv and prefills its 4 tokens in [0, 1); session 1
# asks (units or reserve read from the state, so evaluated at the planning) for 4 / (1 - 1) = inf
STEPPED = """
pool reqs {{ cap 4; admit via e; }}
pool kv {{ block 1; {opts} }}
stage e : step {{ budget 16; cost 1; memory kv; }}
workload {{ arrive batch(2); }}
session {{
  hold reqs (1), kv ({units}) {reserve} {{
    observe got = used(kv);
    run e prefill (4) growing kv;
  }}
}}
run {{ horizon 100; }}
"""
INF_AT_PLANNING = "used(kv) >= 0 ? 4 / (1 - serial) : 0"


@pytest.mark.parametrize("tier", TIERS)
def test_a_step_stage_refuses_infinite_units_on_a_pool_without_a_cap(tier):
    msg = _error(STEPPED.format(opts="", units=INF_AT_PLANNING, reserve=""), tier)
    assert msg.startswith("<source>:7:22: error: at t=0, session 1: ")  # at kv's units
    assert f"the units of kv are {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
def test_a_step_stage_refuses_an_infinite_held_reserve_on_a_pool_without_a_cap(tier):
    src = STEPPED.format(opts="reserve held;", units="4", reserve=f"reserve ({INF_AT_PLANNING})")
    msg = _error(src, tier)
    assert f"at t=0, session 1: the reserve of kv is {NO_CAP}" in msg


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("held", ["", "reserve held;"])
def test_a_step_stage_does_not_admit_an_infinite_demand_on_a_pool_with_a_cap(tier, held):
    # session 1 waits at reqs for the rest of the run (queue 1); kv held 4 over [0, 1) of 100
    for units, reserve in ((INF_AT_PLANNING, ""), ("4", f"reserve ({INF_AT_PLANNING})")):
        out, pools, obs = _run(STEPPED.format(opts=f"cap 12; {held}", units=units, reserve=reserve), tier)
        assert out == "report"
        assert (pools["reqs"]["queue"], pools["kv"]["used"], pools["kv"]["over_cap"]) == (1.0, 0.04, 1)
        assert obs["got"] == ([4.0], [0.0])


@pytest.mark.parametrize("tier", TIERS)
def test_a_step_stage_admits_an_infinite_reserve_the_pool_does_not_hold(tier):
    # both prefill in the iteration [0, 1): used(kv) 4 then 8 at the admissions, 8 over [0, 1) of 100
    out, pools, obs = _run(STEPPED.format(opts="", units="4", reserve=f"reserve ({INF_AT_PLANNING})"), tier)
    assert out == "report"
    assert (pools["kv"]["used"], pools["kv"]["admissions"]) == (0.08, 2)
    assert obs["got"] == ([4.0, 8.0], [0.0, 0.0])
