"""The lazy planning of growing decoders on a memory pool without a cap (`cap inf`: serq_sim.step.lazy,
`glazy_wide`): such a pool counts exactly (pools/exact.py), and the planning is lazy while what it holds stays far
below 2**53 (`_wide_room`); past that, a planning is made per job, and a sum of the iteration's tokens or KV that
passes 2**52 is added in the per-job planning's order (`_wide_sums`). The truth is the per-job planning
(SERQ_SIM_TIER=general): the same JSON report byte for byte, the same observe samples and output-token gaps. Each
case says which path it is about and proves it was taken, so that no case passes by never taking it."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_sim.step import StepStage
from tiers import run_on_tier

pytestmark = pytest.mark.timeout(120)

STRESS = Path(__file__).resolve().parent / "lazy" / "vllm_stress.sq"
CAPPED = "pool kv { cap blocks * bs; block bs; evict lru; preempt lifo; }"
UNCAPPED = "pool kv { cap inf; block bs; evict lru; preempt lifo; }"


def _engine(sim) -> StepStage:
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    return eng


def _gaps(sim):
    g = getattr(sim, "token_gaps", None)
    return None if g is None else (g.values.tobytes(), g.weights.tobytes())


def _same(source: str, sets: dict | None = None, defs: dict | None = None) -> StepStage:
    """The default planning and the per-job one agree on ``source``; the default run's engine."""
    prog = serq_frontend.compile(source=source, sets={k: float(v) for k, v in (sets or {}).items()},
                                 defs=defs or {})
    ref_sim, ref, ref_samples = run_on_tier(prog, "general")
    sim, got, got_samples = run_on_tier(prog, "")
    assert ref[0] == "report", ref
    assert got == ref
    assert got_samples == ref_samples
    assert _gaps(sim) == _gaps(ref_sim)
    assert _engine(ref_sim).glazy_iterations == 0 and _engine(ref_sim).quiet_rounds == 0
    return _engine(sim)


def _uncapped(*changes: tuple[str, str]) -> str:
    src = STRESS.read_text()
    for old, new in ((CAPPED, UNCAPPED), *changes):
        assert old in src
        src = src.replace(old, new)
    return src


@pytest.mark.parametrize(("sets", "defs"), [
    ({}, {}),
    ({"bs": 2}, {}),
    ({"bs": 16, "rate": 6}, {}),
    ({"B": "inf", "turns": 3}, {}),
    ({"C": 8, "E_n": 200}, {}),
    ({}, {"serve_key": "-admission"}),
    ({"max_seqs": 64, "rate": 20, "E_o": 80}, {}),
])
def test_uncapped_pool_is_planned_lazily_with_the_per_job_answer(sets, defs):
    eng = _same(_uncapped(), sets, defs)
    assert eng.glazy_wide  # the judge took the pool without a cap
    assert eng.glazy_iterations > 0  # ... and the lazy planning ran
    assert eng.quiet_rounds > 0


def test_capped_pool_is_not_the_wide_case():
    # a finite cap of 2**53 or more keeps its plannings per job (its evictions sum block by block)
    src = STRESS.read_text().replace(CAPPED, "pool kv { cap 1e17; block bs; evict lru; preempt lifo; }")
    eng = _same(src)
    assert not eng.glazy_wide and eng.glazy_iterations == 0


# A pool without a cap whose holds pass 2**52: a turn's prompt of 2**53 tokens or more now and then (budget and
# chunk unbounded, so its prefill is one iteration's tokens) among small ones. The cost reads the sums at the bits
# where their order shows: kv_decode and the tokens near 2**53 are multiplied by 1e-18.
HUGE = """\
use "vllm.sq";

let huge = 9007199254740993;
let p_huge = 0.08;
let bs = 16;

pool reqs { cap 32; admit via engine; }
pool kv { cap inf; block bs; evict lru; preempt lifo; }
stage engine : step {
  budget inf;
  cost 0.01 + 0.0002 * decoders + 0.000000000000000001 * kv_decode + 0.000000000000000001 * tokens;
  chunk long_prefill(reqs, inf);
  memory kv;
}

workload { arrive poisson(4); hidden o; }

session {
  set prompt = ~uniform(0, 1) < p_huge ? huge + 16 * floor(~uniform(0, 1000)) : 1 + floor(~exp(60));
  set o = 1 + floor(~exp(40));
  set t0 = now;
  vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, inf);
  end;
}

run { horizon 60; warmup 0; seed 5; }
"""


def test_uncapped_pool_past_two_to_the_52(monkeypatch):
    refused = []
    summed = []
    room, sums = StepStage._wide_room, StepStage._wide_sums

    def counted_room(self, more=0.0):
        ok = room(self, more)
        if not ok:
            refused.append(1)
        return ok

    def counted_sums(self, assign, split, kv):
        summed.append(1)
        return sums(self, assign, split, kv)

    monkeypatch.setattr(StepStage, "_wide_room", counted_room)
    monkeypatch.setattr(StepStage, "_wide_sums", counted_sums)
    eng = _same(HUGE)
    assert eng.glazy_wide and eng.glazy_iterations > 0
    assert refused  # plannings were made per job while the pool held near 2**53
    assert summed  # and a lazy planning's sums passed 2**52: added in the per-job order


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_uncapped_pool_past_two_to_the_52_seeds(seed):
    # the same program at other seeds and with the tokens left out of the cost (the tally's own sums)
    src = HUGE.replace("seed 5;", f"seed {seed};")
    _same(src)
    _same(src.replace(" + 0.000000000000000001 * tokens", ""))
    _same(src.replace("cost 0.01 + 0.0002 * decoders + 0.000000000000000001 * kv_decode"
                      " + 0.000000000000000001 * tokens", "cost 0.01"))
