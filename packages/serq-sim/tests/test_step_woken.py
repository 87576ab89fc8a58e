"""The lazy-grower planning's fixed work per iteration (step/lazy.py): a woken decoder (its next token
needs a block) is grown in its place in the walk while still lazy and stays lazy when the next planning
would make it so; a decoder the walk grows becomes lazy at once; the cost is a function of the sums (no
context object); a constant budget is not evaluated per iteration. Each case gives what the per-job
planning gives (SERQ_SIM_TIER=general: the JSON report byte for byte, the observe samples), the lazy
bookkeeping holds after every planning, and the path it is about was taken."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import serq_frontend
from serq_sim.stages import Ctx
from serq_sim.step import StepStage
from serq_sim.step import lazy as lazy_mod
from serq_sim.step.common import _COST_NAMES
from tiers import run_on_tier

HERE = Path(__file__).resolve().parent
STRESS = HERE / "lazy" / "vllm_stress.sq"


def compile_(path=STRESS, **sets):
    return serq_frontend.compile(str(path), sets={k: float(v) for k, v in sets.items()}, defs={})


#: the lazy growers listed again by a batch of woken growers that check_lazy_books has checked
WV_SEEN: list = []


def check_lazy_books(st: StepStage) -> None:
    """The lazy bookkeeping of ``st`` between two plannings: every lazy resident is listed once, under
    the round its table says, and is not in ``eager``; every other resident is in ``eager``, which is in
    admission order; the counts and the KV total are those of the lazy residents."""
    lazy = [j for j in st.residents if j.lz >= 0]
    seen_wv = WV_SEEN
    listed = {}
    for table in (st.due, st.wake):
        for key, jobs in table.items():
            assert jobs, "an empty list left in a lazy table"
            assert key > st.rounds - (1 if st.iter is None else 0), "a lazy job listed in a round gone by"
            for j in jobs:
                assert id(j) not in listed, "a lazy job listed twice"
                listed[id(j)] = (table is st.wake, key)
    assert sorted(listed) == sorted(id(j) for j in lazy)
    for j in lazy:
        table, key = st._lazy_key(j)
        assert listed[id(j)] == (table is st.wake, key)
        if j.wv and table is st.wake:
            # listed again by a batch of woken growers: at its boundary it meets the batch's conditions
            # unchecked (_wake_plan), which hold here: its slot on the memory pool, its position at its
            # boundary its allocation, a whole number of blocks, its KV that one slot, its hold grown
            seen_wv.append(j)
            slot = j.gslot
            assert slot.pool is st.memory and slot.pos + (key - j.lz) == slot.alloc
            assert slot.alloc % st.memory.block == 0
            assert not st.cost_kv or (len(j.mslots) == 1 and j.mslots[0] is slot)
            assert j.owner.holds[j.ghi].grown
    assert [id(j) for j in st.eager] == [id(j) for j in st.residents if j.lz < 0]
    assert st.nlazy == len(lazy)
    assert st.nlazy_x == sum(1 for j in lazy if not j.owner.tokw)
    if st.cost_kv:
        assert st.kv_lazy == sum(j.lzm for j in lazy)
        for j in lazy:
            assert j.lzm == st._held(j)


@pytest.fixture
def watched(monkeypatch):
    """Checks the lazy books after every planning; counts the blocks grown for a decoder still lazy (a
    woken one, in its place) and the decoders that were lazy again right after the walk grew them."""
    seen = {"woken_grown": 0, "relazied": 0, "checked": 0}
    grow = lazy_mod.grow_slot

    def grow_slot(sim, s, slot, d, job):
        if job is not None and job.lz >= 0:
            seen["woken_grown"] += 1
        return grow(sim, s, slot, d, job)

    try_start = StepStage.try_start

    def checked(self):
        try_start(self)
        if self.glazy_ok and self._glazy_judged:
            check_lazy_books(self)
            seen["checked"] += 1

    relazy = StepStage._relazy

    def counted(self, *a):
        r = relazy(self, *a)
        seen["relazied"] += r
        return r

    monkeypatch.setattr(lazy_mod, "grow_slot", grow_slot)
    monkeypatch.setattr(StepStage, "try_start", checked)
    monkeypatch.setattr(StepStage, "_relazy", counted)
    return seen


def assert_same(program):
    _ref_sim, ref, ref_samples = run_on_tier(program, "general")
    sim, got, got_samples = run_on_tier(program, "")
    assert ref[0] == "report"
    assert got == ref
    assert got_samples == ref_samples
    return sim


WOKEN = [
    dict(),                                          # steady growth, prefix hits
    dict(blocks=60, rate=6),                         # preemption storms: woken decoders preempted, or preempting
    dict(B=5, max_seqs=16, rate=8),                  # the walk stops before woken decoders
    dict(B=3, bs=2, rate=6, blocks=200),             # blocks of 2: woken decoders have no room to be lazy again
    dict(B=512, max_seqs=64, blocks=300, rate=10, turns=3),
    dict(B=2048, bs=16, blocks=30, rate=6, E_n=100),
]


@pytest.mark.parametrize("sets", WOKEN, ids=str)
def test_woken_decoders_grow_in_place(sets, watched):
    WV_SEEN.clear()
    sim = assert_same(compile_(**sets))
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    assert eng.glazy_iterations > 0
    assert watched["checked"] > 0
    # the woken decoders were grown in their place while lazy (before, they were made eager first): by
    # the walk, or, when every one of them fits and they come before the residents that are not lazy,
    # all at once before it (wake_batches; quiet_wakes in quiet rounds); where memory is short (a
    # preemption storm) the walk grows them one by one
    assert watched["woken_grown"] + eng.wake_batches + eng.quiet_wakes > 0
    if sets.get("blocks", 400) <= 60:
        assert watched["woken_grown"] > 0
    if not sets:  # steady growth: growers listed again by a batch were checked between plannings
        assert WV_SEEN
    if sets.get("bs", 4) > 2:
        # decoders the walk grew that were not lazy (a decode begun at a block boundary) are lazy at once
        assert watched["relazied"] > 0


@pytest.mark.parametrize("change", [
    ("preempt lifo;", "preempt none;"),                        # woken decoders stall as growers
    ("preempt lifo;", "preempt by (-admission) requeue tail;"),
    ("preempt lifo;", "preempt by (admission);"),              # victims ahead of the grower
])
def test_woken_decoders_under_other_rules(change, watched, tmp_path):
    path = tmp_path / "p.sq"
    text = STRESS.read_text()
    assert change[0] in text
    path.write_text(text.replace(*change))
    assert_same(compile_(path, blocks=60, rate=6))
    assert watched["woken_grown"] > 0


def test_woken_decoders_stall(watched, tmp_path):
    # without preemption a woken decoder whose block is not there waits as a grower: it is lazy no more
    path = tmp_path / "p.sq"
    path.write_text(STRESS.read_text().replace("preempt lifo;", "preempt none;"))
    sim = assert_same(compile_(path, blocks=40, rate=8))
    pool = sim.pools[1]
    assert pool.preemptions == 0
    assert watched["woken_grown"] > 0


# ---------------------------------------------------------------- the cost as a function of the sums
COSTS = [
    "0.013939 + 0.00004105 * decoders + 0.00000013786 * kv_decode + 0.000051527 * prefilled"
    " + 0.0000000040196 * attention",
    "tokens * 2 + residents - kv_prefill / 3",
    "decoders > 3 ? tokens : attention",
    "max(tokens, prefilled) + min(decoders, 1) * residents",
    "now + tokens",
    "1.5",
]


@pytest.mark.parametrize("cost", COSTS)
def test_cost_of_sums_is_the_cost(cost, tmp_path):
    path = tmp_path / "p.sq"
    text = STRESS.read_text()
    old = next(line for line in text.splitlines() if line.strip().startswith("cost "))
    path.write_text(text.replace(old, f"  cost {cost};"))
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    sim = Simulation(compile_(path), registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                     check_invariants=False, progress=False, trace_path=None)
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    rng = random.Random(7)
    for _ in range(200):
        vals = [float(rng.randrange(0, 600)) for _ in _COST_NAMES]
        ctx = Ctx()
        for name, v in zip(_COST_NAMES, vals):
            setattr(ctx, name, v)
        want = eng.cost_fn(None, None, ctx)
        got = eng.cost_of(*vals)
        assert repr(got) == repr(want)


def test_constant_budget_is_folded(tmp_path):
    # a budget that is the same whatever the state is taken once (whole or not: the lazy plannings take
    # only whole ones); one that reads the state is evaluated at every planning
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    for budget, const, whole in (("37", 37.0, True), ("B", 64.0, True), ("1 > 0 ? 12 : 12", 12.0, True),
                                 ("inf", math.inf, True), ("63.5", 63.5, False), ("B + 0 * residents", None,
                                                                                  False)):
        path = tmp_path / "p.sq"
        text = STRESS.read_text()
        old = next(line for line in text.splitlines() if line.strip().startswith("budget "))
        path.write_text(text.replace(old, f"  budget {budget};"))
        sim = Simulation(compile_(path), registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                         check_invariants=False, progress=False, trace_path=None)
        (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
        assert eng.budget_const == const
        assert eng.budget_whole == whole
