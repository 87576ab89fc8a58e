"""Quiet rounds that take lazy growers' block boundaries (serq_sim.step.lazy: `_quiet_rounds`,
docs/simulator.md "Quiet rounds"), and the plannings that take those growers' blocks at once before the
walk (`_wake_plan`/`_wake_apply`), give what the per-job planning gives: the same JSON report byte for byte
(records included) and the same observe samples and output-token gaps, with SERQ_SIM_TIER=general (the
per-job reference) as the truth. Each case also says which shortcut it is about and proves it was (or was
not) taken, so a test cannot pass by never taking it."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serq_sim.step import StepStage
from tiers import run_on_tier

inf_ = float("inf")
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
STRESS = HERE / "lazy" / "vllm_stress.sq"


def _engine(sim) -> StepStage:
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    return eng


def _gaps(sim):
    g = getattr(sim, "token_gaps", None)
    return None if g is None else (g.values.tobytes(), g.weights.tobytes())


def assert_same(source: str, sets: dict, **kw) -> StepStage:
    """The two plannings agree (report, samples, gaps); returns the engine of the run that did not plan
    per job."""
    prog = serq_frontend.compile(source=source, sets={k: float(v) for k, v in sets.items()}, defs={})
    ref_sim, ref, ref_samples = run_on_tier(prog, "general", **kw)
    sim, got, got_samples = run_on_tier(prog, "", **kw)
    assert ref[0] == "report", ref
    assert got == ref
    assert got_samples == ref_samples
    assert _gaps(sim) == _gaps(ref_sim)
    assert _engine(ref_sim).quiet_rounds == 0  # the reference plans every round
    return _engine(sim)


def variant(*changes: tuple[str, str]) -> str:
    src = STRESS.read_text()
    for old, new in changes:
        assert old in src
        src = src.replace(old, new)
    return src


# the A100-like cost of the benchmarks reads kv_decode: an absorbed growth changes the cost of the rounds
# after it; a longer run with fewer arrivals leaves long stretches between events
LONG = (("run { horizon 40; warmup 2; seed 3; }", "run { horizon 120; warmup 5; seed 3; }"),)


@pytest.mark.parametrize("sets", [
    dict(rate=1),                              # roomy memory: growths from free blocks
    dict(rate=1, bs=16, blocks=60),            # a full prefix cache: the growths evict (LRU)
    dict(rate=3, blocks=40),                   # tight memory: some boundaries must preempt (not absorbed)
    dict(rate=1, C=8),                         # a chunk reading holders(reqs) and queued(reqs)
    dict(rate=1, bs=2, max_seqs=4, B=3),       # a budget that cannot serve every decoder
    dict(rate=2, turns=4, bs=8, blocks=100),   # prefix hits across turns beside evictions
], ids=str)
def test_block_boundaries_in_quiet_rounds_agree(sets):
    eng = assert_same(variant(*LONG), sets)
    assert eng.quiet_wakes > 0 and eng.quiet_rounds > eng.quiet_wakes
    # in plannings too (a prefill beside them), the boundaries' blocks were taken at once
    assert eng.wake_batches > 0


@pytest.mark.parametrize("change", [
    ("budget B;", "budget B + 0 * used(kv);"),                 # a growth changes used: not absorbed
    ("chunk long_prefill(reqs, C);", "chunk free(kv) > 0 ? C : inf;"),
], ids=lambda c: c[1])
def test_a_budget_or_chunk_reading_the_memory_keeps_boundaries_out(change):
    # quiet rounds still run between boundaries (nothing is allocated there), never across one
    eng = assert_same(variant(*LONG, change), dict(rate=1, C=8))
    assert eng.quiet_rounds > 0 and eng.quiet_wakes == 0


def test_a_cost_that_reads_no_kv_and_blocks_of_one_token():
    # a constant-per-round cost (decoders only): absorbed; blocks of one token leave no room after a
    # growth, so no decoder stays lazy across a boundary
    src = variant(*LONG, ("kvcost * kv_decode", "0"))
    assert assert_same(src, dict(rate=1)).quiet_wakes > 0
    eng = assert_same(src, dict(rate=1, bs=1))
    assert eng.quiet_wakes == 0


def test_the_multi_turn_example_agrees():
    src = (REPO / "examples" / "multi-turn" / "vllm.sq").read_text()
    eng = assert_same(src, {}, horizon=300.0, warmup=20.0)
    assert eng.quiet_wakes > 100


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(budget=st.one_of(st.integers(1, 200), st.just(12.5)), blocks=st.sampled_from([20, 40, 80, 400]),
       rate=st.sampled_from([0.5, 1.0, 3.0]), seqs=st.sampled_from([2, 8, 64]),
       chunk=st.sampled_from([3, 16, inf_]), bs=st.sampled_from([1, 2, 4, 16]),
       preempt=st.sampled_from(["preempt lifo;", "preempt by (admission);", "preempt none;"]),
       seed=st.integers(0, 1000))
def test_random_settings_agree(budget, blocks, rate, seqs, chunk, bs, preempt, seed):
    src = variant(("preempt lifo;", preempt), ("run { horizon 40; warmup 2; seed 3; }",
                                                 "run { horizon 60; warmup 2; seed 3; }"))
    assert_same(src, dict(B=budget, blocks=blocks, rate=rate, max_seqs=seqs, C=chunk, bs=bs), seed=seed)


@pytest.mark.parametrize("sets", [dict(rate=3, blocks=40), dict(rate=2, blocks=40, bs=8)], ids=str)
def test_a_waiting_head_whose_reserve_does_not_fit_leaves_the_boundaries_in_quiet_rounds(sets, monkeypatch):
    # lib/vllm.sq's hold reserves the request's known tokens (attributes only: known at the join) while
    # its units read the cache and budget_left: a head whose reserve does not fit cannot be admitted in
    # the stretch (growths only add to what is used), so its rounds, boundaries included, stay quiet
    from serq_sim.step import lazy

    seen = []
    orig = lazy.LazyDecoding._quiet_rounds

    def watched(self, now, t, cost, budget, *rest):
        waiting = any(p.front or p.queue for p in self.served_pools)
        w0 = self.quiet_wakes
        out = orig(self, now, t, cost, budget, *rest)
        seen.append((waiting, self.quiet_wakes - w0))
        return out

    monkeypatch.setattr(lazy.LazyDecoding, "_quiet_rounds", watched)
    assert_same(variant(*LONG), sets)
    assert sum(d for waiting, d in seen if waiting) > 100


# long prompts beside the lazy decoders: a prefill takes several chunks, and the rounds after the first
# plan its next chunks in the stretch (busy rounds: LazyDecoding._busy_job)
LONG_PROMPTS = (*LONG, ("let E_n = 40;", "let E_n = 300;"))


@pytest.mark.parametrize("sets", [
    dict(rate=1),                              # roomy memory: the prefill's blocks from free ones
    dict(rate=1, bs=16, blocks=120),           # a full prefix cache: its growth evicts (LRU)
    dict(rate=2, blocks=90),                   # tight memory: some growths must preempt (not taken)
    dict(rate=1, C=24),                        # a chunk cap reading holders(reqs) and queued(reqs)
    dict(rate=3, max_seqs=4),                  # heads waiting for a request slot beside the prefills
    dict(rate=1, B=40),                        # a budget the lazy decoders leave little of
], ids=str)
def test_busy_rounds_plan_a_prefill_s_chunks_and_agree(sets):
    eng = assert_same(variant(*LONG_PROMPTS), sets)
    assert eng.busy_rounds > 0


def test_busy_rounds_with_a_cost_that_reads_no_kv():
    eng = assert_same(variant(*LONG_PROMPTS, ("kvcost * kv_decode", "0")), dict(rate=1))
    assert eng.busy_rounds > 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(budget=st.integers(20, 300), blocks=st.sampled_from([60, 120, 400]), rate=st.sampled_from([0.5, 1.0, 3.0]),
       seqs=st.sampled_from([2, 8, 64]), chunk=st.sampled_from([7, 32, inf_]), bs=st.sampled_from([1, 4, 16]),
       seed=st.integers(0, 1000))
def test_busy_rounds_random_settings_agree(budget, blocks, rate, seqs, chunk, bs, seed):
    src = variant(("let E_n = 40;", "let E_n = 300;"),
                  ("run { horizon 40; warmup 2; seed 3; }", "run { horizon 60; warmup 2; seed 3; }"))
    assert_same(src, dict(B=budget, blocks=blocks, rate=rate, max_seqs=seqs, C=chunk, bs=bs), seed=seed)


FIRST_DECODE = """
pool reqs { cap 4; admit via e; }
pool kv { cap 4096; block 16; }
stage e : step { budget 64; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold reqs (1), kv (40) {
    run e prefill (40) growing kv;
    run e decode (20) growing kv;
  }
}
run { horizon 100; }
"""


def test_a_decode_not_yet_served_is_lazy_from_its_first_planning():
    # one request: its prefill (40 tokens, 48 allocated) is round 1, [0, 1); its 20 decode tokens are
    # rounds 2..21. Planned at t=1, the decode's slot is found then and it is lazy at once (8 tokens of
    # room, its block boundary a quiet round's), so the stretch after that planning takes rounds 2..20,
    # 19 rounds, and round 21, its last token, is pushed; served once first it would take 18
    eng = assert_same(FIRST_DECODE, {})
    assert eng.quiet_rounds == 19
    assert eng.iterations == 21
