"""The step engine's fast paths against the per-job planning, by differential stress where
test_conformance_round16*.py and test_differential_random.py do not go: random small programs
(stress18.program) of a family of engines behind a `choose` (lib/vllm.sq's replicas: routed by load, by
serial, by a session's home after its first turn, by what a replica holds beside its cache) or one engine;
multi-turn sessions (`turn;`) whose later turns find their own prefix cached on the memory pool (lib/vllm.sq's
request, which resumes from `computed`, or a hold with `cache` and `reuse` written by hand); an offload
tier the memory spills into (`spill cpu via link (…) when (…)`); `reserve held`; `preempt by (…) requeue
head | tail` beside `preempt lifo`; `serve by` keys that change while a job is resident (`remaining`, the
totals) and ones it keeps (attributes, `admission`, `decoding`); chunk caps computed from `residents`,
`decoders`, `kv_decode` or vLLM's `long_prefill`; budgets reading `decoders`, `residents`, `kv_prefill`,
headers reading `budget_left`, and a second engine whose budget reads the first's `budget_left`; costs
reading `kv_decode`, `kv_prefill`, `attention`; a warm-up, which may fall inside a quiet or busy stretch, a
bound on events (`--max-events`), which may stop a run inside one, and horizons that end inside an
iteration.

For each program the run with every fast path on (lazy decoders, lazy growers, wake batches, quiet and busy
stretches, ranked serve keys, the prepared admission) and the one with them off (SERQ_SIM_TIER=general, the
per-job planning) must give the same JSON report, every observe's samples, every record table (what
--records writes) and the output tokens' gaps, byte for byte, or the same error. Each block also checks
that its programs reached what they are for (the lazy planning's counters, preemptions, spills, a later
turn's prefix hit, a stop at the bound on events, a horizon inside an iteration), so the test cannot pass
by testing nothing.

``python stress18.py I`` prints program I; ``python stress18.py A B`` compares programs A … B-1
(``--stretch``, ``--offload``, ``--second``: those kinds).

Power (serq_sim/step/lazy.py mutated, each run on the ten blocks of 100 programs): a quiet stretch
under a bound on events taking one round more (``LazyDecoding._quiet_rounds``' ``kend`` plus one) fails
three blocks (programs that stop at the bound inside a stretch: their event count and clock); a quiet
stretch not bounded by the horizon (``tlim = t_next``) fails eight; a busy stretch's rounds counted as
iterations before the warm-up (``if warm:`` there taken as true) fails a stretch block; a wake batch taken
under `reserve held` (``_judge_wake_batch`` without ``not pool.reserve_held``) fails both offload blocks.
(The second-engine blocks failed under none of these, which are stretches and wake batches of one engine.)
Allowing it with a pool that spills (``pool.spill is None`` dropped) failed none: even so, none of 977
offload programs with a spill took a wake batch (something else in the planning declines them there), so
these programs cannot tell whether that condition is needed.
"""

from __future__ import annotations

import pytest
from stress18 import COUNTERS, FEATURES, compare

pytestmark = pytest.mark.timeout(120)

#: programs a block (150 before: 75 left a mixed block short of what its programs must reach), and the blocks
#: (a test each, for xdist): of every kind of program ("mixed"), of one engine
#: on the quiet and busy stretches' ground under a warm-up and, half the time, a bound on events ("stretch"),
#: of one engine whose lazy growers grow past a memory full of cached prefixes that spills into an offload
#: tier or holds reservations ("offload"), and of a second engine whose budget reads the first's `budget_left`
#: ("second")
PER_BLOCK = 100
BLOCKS = [("mixed", 0), ("mixed", 1), ("mixed", 2), ("mixed", 3), ("stretch", 0), ("stretch", 1),
          ("offload", 0), ("offload", 1), ("second", 0), ("second", 1)]

#: what each kind's programs reach (an offload program has one turn, and a pool that spills or holds
#: reservations takes no block boundary into a stretch nor a wake batch: docs/simulator.md)
REACHED = {"mixed": COUNTERS + FEATURES, "stretch": COUNTERS + FEATURES,
           "offload": ("lazy_iterations", "glazy_iterations", "quiet_rounds", "served", "preempted", "spilled",
                       "max_events", "cut"),
           "second": ("lazy_iterations", "glazy_iterations", "wake_batches", "served", "preempted", "spilled", "hit",
                      "max_events", "cut")}


@pytest.mark.parametrize("kind, block", BLOCKS, ids=lambda x: str(x))
def test_random_programs_agree_with_the_per_job_planning(kind, block):
    took = dict.fromkeys(COUNTERS + FEATURES, 0)
    differ = []
    failed_compile = errors = 0
    for i in range(block * PER_BLOCK, (block + 1) * PER_BLOCK):
        ok, differs, err, counters, text = compare(i, stretch=kind == "stretch", offloaded=kind == "offload",
                                                   two=kind == "second")
        if not ok:
            failed_compile += 1
            continue
        errors += err
        if differs:
            differ.append((i, text))
        for c in COUNTERS + FEATURES:
            took[c] += counters.get(c, 0) > 0
    assert not differ, "\n\n".join(f"program {i}: {what}" for i, what in differ[:3]) + (
        f"\n\n{len(differ)} of {PER_BLOCK} programs differ: {[i for i, _ in differ]}")
    # every program compiles and nearly every one runs to its end; the shortcuts were taken, and the programs
    # reached what they are for
    assert failed_compile == 0
    assert errors <= 0.05 * PER_BLOCK, errors
    assert took["served"] >= 0.9 * PER_BLOCK, took
    assert all(took[c] >= 0.02 * PER_BLOCK for c in REACHED[kind]), took
