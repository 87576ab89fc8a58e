"""A lazy planning tallies the k rounds of a quiet stretch at once (serq_sim.step.lazy: `_launch`); the per-job
planning adds each round's tokens and budget to the engine's run-long sums one at a time. Once such a sum passes
2**53 (a budget of 123456789012345 tokens passes it in 73 iterations) or holds a fraction, `s + x * k` may differ
from k additions in its last bits, and the report's `token_utilisation` did (6.546857201778858e-14 against the
per-job 6.546857201778619e-14). `repeat_add` makes the k additions' sum, in one jump per binade; the truth is
the plain loop of additions, and the per-job planning (SERQ_SIM_TIER=general)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import serq_frontend
from hypothesis import given, settings
from hypothesis import strategies as st
from serq_sim.step import StepStage
from serq_sim.step.common import repeat_add
from tiers import run_on_tier

pytestmark = pytest.mark.timeout(120)

STRESS = Path(__file__).resolve().parent / "lazy" / "vllm_stress.sq"


def _loop(s: float, x: float, k: int) -> float:
    for _ in range(k):
        s = s + x
    return s


def _same_bits(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


whole_near_2_53 = st.integers(2**53 - 10**6, 2**53 + 10**6).map(float)
whole_big = st.integers(0, 2**62).map(float)
small_whole = st.integers(0, 10**5).map(float)
odd = st.integers(0, 2**24).map(lambda n: float(2 * n + 1))
anyfloat = st.floats(min_value=0.0, max_value=1e18, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(s=st.one_of(whole_near_2_53, whole_big, small_whole, anyfloat, st.just(0.0), st.just(2.0**53)),
       x=st.one_of(small_whole, odd, anyfloat, st.sampled_from([0.5, 1.5, 2.5, 3.0, 2.0**52 + 1, 123456789012345.0])),
       k=st.integers(0, 2500))
def test_repeat_add_is_k_additions(s, x, k):
    assert _same_bits(repeat_add(s, x, k), _loop(s, x, k))


def test_repeat_add_ties_and_binade_crossings():
    # odd steps from below 2**53 across it (each addition beyond is a tie: round half to even), and from 2**54
    for s0 in (9007199254089887.0, 9007199254740991.0, 2.0**54 - 7, 2.0**60 + 8):
        for x in (1.0, 3.0, 7359.0, 2.0**52 + 1, 0.75):
            for k in (1, 2, 3, 89, 90, 91, 1000, 4099):
                assert repeat_add(s0, x, k) == _loop(s0, x, k), (s0, x, k)


def test_repeat_add_infinite_and_long():
    assert repeat_add(5.0, math.inf, 10**12) == math.inf
    assert repeat_add(math.inf, 3.0, 10**12) == math.inf
    # a long stretch is crossed binade by binade, not addition by addition (10**15 of them: the loop would not end)
    assert repeat_add(2.0**53, 3.0, 10**15) == 2.0**53 + 4.0 * 10**15  # each a tie, to the even neighbour: + 4
    assert repeat_add(2.0**60, 1.0, 10**15) == 2.0**60  # below half an ulp: every addition leaves it


def _engine(sim) -> StepStage:
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    return eng


@pytest.mark.parametrize("budget", ["123456789012345", "4503599627370497", "3000000000000001", "1e15"])
def test_large_budget_tallied_as_the_per_job_planning(budget):
    prog = serq_frontend.compile(source=STRESS.read_text(), sets={"B": float(budget)}, defs={})
    _ref_sim, ref, ref_samples = run_on_tier(prog, "general")
    sim, got, samples = run_on_tier(prog, "")
    assert ref[0] == "report", ref
    assert got == ref and samples == ref_samples
    assert _engine(sim).quiet_rounds > 0  # rounds were tallied k at a time
