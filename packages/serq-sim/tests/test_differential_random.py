"""Random step-stage programs on the two tiers of the step engine: the default one (lazy planning,
serq_sim/step/lazy.py: lazy decoders, lazy growers, quiet and busy round stretches, woken growers' blocks
taken at once) against the per-job reference planning (SERQ_SIM_TIER=general). The two must give the same
JSON report byte for byte, the same samples of every observe (values, times, sessions, turns), the same
columns of every record table, the same output-token gaps, or the same error (type and whole message):
stress18.outcome, which the stress runs compare too.

The programs are small and drawn by :func:`program` from ``random.Random(i)`` (deterministic: program i is
the same every run). They are built to reach the lazy paths and their edges: budgets that are constant,
infinite, fractional or read ``residents``, ``decoders``, ``holders(reqs)``, ``queued(reqs)`` or the kv
sums; chunks constant or vLLM's ``long_prefill`` on ``holders(reqs) + queued(reqs)``; costs reading
``tokens``, ``decoders``, ``residents``, ``kv_decode``, ``kv_prefill``, ``attention``; the serving orders;
pools with blocks, the preemption policies (``lifo``, by ``position``, by ``-admission`` requeued at the
tail), ``cache scheduled`` on a third of the pools that preempt, ``evict lru`` with prefix caching (``cache`` and ``reuse`` clauses written by hand, and
lib/vllm.sq's ``vllm_request_at``), ``admit via``; holds of ``reqs (1), kv (K)`` with growing runs;
stages with and without ``memory``; staggered, batch and Poisson arrivals; multi-turn sessions; two step
stages now and then; decodes across several block boundaries; memory tight enough for preemption storms;
gauges and records. About a third of the programs keep to what the lazy planning's stretches take (one
stage, its memory named, whole budgets, serve keys a job keeps while resident or none), so that its
shortcuts are taken often; the others
go to its edges, where it must decline them or plan per job. Budgets reading ``used``/``free`` of the
memory are in (``BUDGETS_READING_USED``): they found a stale budget in a quiet stretch after a planning
that grew (test_a_quiet_stretch_after_a_planning_that_grew_reads_the_budget_again). Each block of programs also checks that nearly every program compiles and that the lazy
planning's shortcuts were taken in aggregate (the stages' counters: ``lazy_iterations``,
``glazy_iterations``, ``quiet_rounds``, ``quiet_wakes``, ``busy_rounds``, ``wake_batches``), so the test
cannot pass by testing nothing.

``SERQ_DIFF_EXAMPLES=N`` runs N programs instead of the default (spread over the same blocks), and
``SERQ_DIFF_FIRST=S`` starts at program S instead of 0, e.g.::

    SERQ_DIFF_EXAMPLES=5000 .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 \\
        packages/serq-sim/tests/test_differential_random.py

A failure names the program's number; ``python test_differential_random.py I`` prints program I.
"""

from __future__ import annotations

import os
import random
import sys

import pytest
import serq_frontend
from serq_sim.api import registries
from serq_sim.engine import Simulation
from stress18 import COUNTERS, first_difference, outcome, pick, scheduled

#: programs in the default run, and the blocks they are spread over (a test each, for xdist): blocks of 100, each
#: enough for the aggregate checks, program 618 among them (the stale budget of a quiet stretch was found there). The
#: default was 1 200 in 16 blocks of 75; SERQ_DIFF_EXAMPLES runs more.
DEFAULT_EXAMPLES = 800
BLOCKS = 8
EXAMPLES = int(os.environ.get("SERQ_DIFF_EXAMPLES", "0")) or DEFAULT_EXAMPLES
FIRST = int(os.environ.get("SERQ_DIFF_FIRST", "0"))

#: budgets reading ``used`` or ``free`` of the memory (off: to find what else differs while a defect they
#: show is open)
BUDGETS_READING_USED = True



# --- the generator ------------------------------------------------------------------------------------------


def _engine(rng: random.Random, name: str, kv: str | None, reqs: str | None, other: str | None,
            easy: bool) -> str:
    """A step stage ``name`` whose memory may be ``kv`` and whose own expressions may read ``reqs`` (and
    the stage ``other``); ``easy``: only what the lazy planning's stretches take (whole constant budgets
    or pool counts, no serve keys, the memory named)."""
    if easy:
        budgets = [(2, "2"), (2, "3"), (2, "4"), (2, "6"), (1, "16"), (1, "inf"), (2, f"holders({reqs}) + 1"),
                   (1, f"queued({reqs}) + 3"), (1, "residents + 1")]
        chunks = [(2, ""), (3, "chunk 1;"), (3, "chunk 2;"), (2, "chunk 3;"),
                  (3, f"chunk holders({reqs}) + queued({reqs}) > 1 ? 2 : inf;")]
        costs = [(2, "1"), (2, "1 + 0.1 * tokens"), (2, "1 + 0.01 * kv_decode"), (1, "0.5 + 0.1 * decoders"),
                 (2, "0.3 + 0.01 * kv_decode + 0.02 * kv_prefill + 0.1 * decoders"),
                 (1, "1 + 0.001 * attention")]
        # serve keys that a job keeps while resident (attributes, numbers, admission, decoding; a NaN counts
        # as inf)
        # are taken once and keep the residents in their order: the lazy planning takes them
        serve = pick(rng, [(6, ""), (2, "serve by (admission);"), (2, "serve by (P);"),
                            (1, "serve by (-O, admission);"), (1, "serve by (P > 4 ? (P - P) / (P - P) : -P, O);"),
                            (1, "serve by (1, -admission);"), (1, "serve decode first;"),
                            (1, "serve by (decoding, -P);")])
        return (f"stage {name} : step {{ budget {pick(rng, budgets)}; cost {pick(rng, costs)}; "
                f"{pick(rng, chunks)} {serve} memory {kv}; }}")
    budgets = [(3, "1"), (3, "2"), (3, "3"), (3, "5"), (2, "8"), (1, "16"), (3, "inf"), (2, "residents"),
               (1, "residents + 1"), (2, "2 + decoders"), (1, "residents >= 3 ? 4 : 8"), (1, "2.5"),
               (1, "kv_decode > 12 ? 2 : 6"), (1, "kv_prefill > 0 ? 3 : 5"), (1, "6 - residents"),
               (1, "decoders + 0.5"), (1, "now < 8 ? 4 : 2"), (1, f"queue({name}) > 2 ? 2 : 4"),
               (1, f"work({name}) > 10 ? 3 : 6")]
    if other:
        budgets.append((2, f"busy({other}) + 1"))
    if reqs:
        budgets += [(3, f"holders({reqs}) + 1"), (2, f"queued({reqs}) + 2"),
                    (1, f"max(1, 6 - holders({reqs}))"), (1, f"holders({reqs}) + queued({reqs})")]
    if kv and BUDGETS_READING_USED:
        budgets += [(1, f"free({kv}) > 4 ? 6 : 2"), (1, f"used({kv}) > 8 ? 3 : inf")]
    chunks = [(8, ""), (2, "chunk 1;"), (3, "chunk 2;"), (2, "chunk 3;"), (1, "chunk 5;"), (1, "chunk inf;"),
              (1, "chunk residents > 1 ? 1 : 4;"), (1, "chunk decoders > 0 ? 2 : inf;"),
              (1, "chunk now > 4 ? 2 : inf;")]
    if reqs:
        chunks += [(3, f"chunk holders({reqs}) + queued({reqs}) > 1 ? 2 : inf;"),
                   (1, f"chunk holders({reqs}) + queued({reqs}) > 1 ? 3 : 8;"),
                   (1, f"chunk holders({reqs}) + queued({reqs}) > 1 ? inf : inf;")]
    if kv:
        chunks += [(2, f"chunk used({kv}) < 8 ? 2 : 1;"), (2, f"chunk free({kv}) > 6 ? 3 : 1;")]
    costs = [(3, "1"), (3, "1 + 0.1 * tokens"), (3, "1 + 0.01 * kv_decode"), (2, "0.5 + 0.1 * decoders"),
             (2, "0.25 + 0.125 * tokens + 0.0625 * kv_prefill"), (2, "1 + 0.001 * attention"),
             (1, "0.5 + 0.05 * residents"),
             (2, "0.3 + 0.01 * kv_decode + 0.02 * kv_prefill + 0.1 * decoders"),
             (1, "0.75 + 0.03 * tokens + 0.0001 * attention + 0.007 * kv_decode"), (1, "0.1 * tokens"),
             (1, "0.2 + 0.1 * prefilled"), (1, "2 - 0.25 * decoders"), (1, "0.5"), (1, "now > 6 ? 1 : 0.5")]
    serves = [(12, ""), (2, "serve decode first;"), (2, "serve by (remaining);"),
              (3, "serve by (admission);"),
              (1, "serve exclusive prefill;"), (1, "serve by (-remaining);"), (1, "serve by (1, admission);"),
              (1, "serve by (P);"), (1, "serve by (-P, O);"), (1, "serve by (O > 3 ? (O - O) / (O - O) : O);")]
    budget = pick(rng, budgets)
    chunk = pick(rng, chunks)
    cost = pick(rng, costs)
    serve = pick(rng, serves)
    memory = f"memory {kv};" if kv and rng.random() < 0.8 else ""
    return f"stage {name} : step {{ budget {budget}; cost {cost}; {chunk} {serve} {memory} }}"


def _pool_kv(rng: random.Random, name: str, bs: int, via: str, easy: bool, key: str) -> str:
    """A KV pool; `cache scheduled` on a third of those that preempt, drawn from a stream of its own
    (``stress18.scheduled`` of ``key``), so that every other draw of the program is what it was."""
    if easy:
        cap = pick(rng, [(1, 12), (2, 24), (2, 40), (2, 200)])
        pre = pick(rng, [(3, "preempt lifo;"), (1, "preempt by (-admission) requeue tail;"), (1, "")])
        sched = " cache scheduled;" if pre and scheduled(key) else ""
        return f"pool {name} {{ cap {cap}; block {bs}; {pre} {pick(rng, [(3, 'evict lru;'), (1, '')])}{sched} }}"
    cap = pick(rng, [(3, 6), (3, 8), (3, 12), (3, 16), (2, 24), (2, 40), (2, 200)])
    if bs > 1 and rng.random() < 0.7:
        cap = max(cap // bs, 2) * bs  # whole blocks, usually
    block = f"block {bs};" if bs > 1 else pick(rng, [(4, ""), (1, "block 1;")])
    pre = pick(rng, [(4, "preempt lifo;"), (2, ""), (2, "preempt by (position);"),
                      (2, "preempt by (-admission) requeue tail;"), (1, "preempt by (decoding, -admission);"),
                      (1, "preempt by (-P);")])
    evict = pick(rng, [(6, "evict lru;"), (2, ""), (1, "evict by (-size);")])
    extra = pick(rng, [(12, ""), (1, "reserve held;"), (1, "queue by (P);"), (1, f"admit via {via};")])
    sched = " cache scheduled;" if pre and scheduled(key) else ""
    return f"pool {name} {{ cap {cap}; {block} {pre} {evict} {extra}{sched} }}"


def _request(rng: random.Random, e: dict, vllm: bool) -> str:
    """One request on the engine ``e`` (``S`` its stage, ``kv``, ``reqs`` and ``aux`` its pools or None,
    ``bs`` the block), reading the attributes ``P`` (prompt), ``O`` (output) and ``G`` (a growth)."""
    S, kv, reqs, aux, bs = e["S"], e["kv"], e["reqs"], e["aux"], e["bs"]
    kinds = [(3, "plain")]
    if kv:
        kinds += [(3, "cached"), (1, "grow")]
        if reqs and vllm:
            kinds.append((3, "vllm"))
    kind = pick(rng, kinds)
    if kind == "vllm":
        match = pick(rng, [(4, "inf"), (1, "P"), (1, "0"), (1, "-1")])
        thr = pick(rng, [(3, "inf"), (1, "2"), (1, "3")])
        return f"set t0 = now; vllm_request_at({reqs}, {kv}, {S}, P, O, t0, {match}, {thr});"
    obs = pick(rng, [(4, ""), (1, "observe a = now;"), (1, f"observe bl = budget_left({S});"),
                      (1, "observe pc = computed;"), (1, f"observe w = work({S});")])
    after = pick(rng, [(4, ""), (1, f"observe b = busy({S});"), (1, f"observe q = queue({S});"),
                        (1, "end;")])
    # the pool a growing run grows: the engine's memory, usually, or another pool
    gp = kv if not aux or rng.random() < 0.6 else aux
    grow = f"growing {gp}" if gp else ""
    if kind == "plain":
        holds = [(2, "")]
        if reqs:
            holds.append((2, f"{reqs} (1)"))
        if gp:
            holds.append((2, f"{gp} (K)"))
            if reqs:
                holds += [(6, f"{reqs} (1), {gp} (K)"), (1, f"{gp} (K), {reqs} (1)")]
            if gp != kv and kv:
                holds.append((2, f"{kv} (K), {gp} (1)"))
        hold = pick(rng, holds).replace("K", pick(rng, [(3, "1"), (2, "P"), (1, "P + O"), (1, "2")]))
        held = gp and gp in hold.split(" ")
        g_pre = grow if held and rng.random() < 0.85 else ""
        g_dec = grow if held and rng.random() < 0.9 else ""
        body = f"{obs} run {S} prefill (P) {g_pre}; set tf = now; run {S} decode (O) {g_dec}; {after}"
        if not hold:
            return body
        if reqs and f"{reqs} (1)" == hold and gp and rng.random() < 0.5:  # nested holds
            return f"hold {hold} {{ hold {gp} (P) {{ {body} }} }}"
        return f"hold {hold} {{ {body} }}"
    if kind == "grow":
        hold = f"{reqs} (1), {kv} (P)" if reqs else f"{kv} (P)"
        return (f"hold {hold} {{ {obs} grow {kv} (G); run {S} prefill (P) growing {kv}; set tf = now; "
                f"run {S} decode (O) growing {kv}; {after} }}")
    # prefix caching by hand: the session's own prefix, bounded by reuse, consumed at admission
    units = pick(rng, [(3, "P"), (1, "P + O"), (2, f"min(P, cachedin({kv}) + 1)"),
                        (1, f"min(P, cachedin({kv}) + {bs})")])
    reuse = pick(rng, [(3, "P - 1"), (2, f"floor((P - 1) / {bs}) * {bs}"), (1, "0")])
    reserve = pick(rng, [(4, ""), (1, " reserve (P + O)")])
    hold = f"{kv} ({units}){reserve}"
    if reqs:
        hold = pick(rng, [(3, f"{reqs} (1), {hold}"), (1, f"{hold}, {reqs} (1)")])
    cache = pick(rng, [(4, "P + O"), (1, "inf"), (1, "P")])
    return (f"hold {hold} reuse ({reuse}) {{ observe hit = cached; {obs} run {S} prefill (P - cached) "
            f"growing {kv}; set tf = now; run {S} decode (O) growing {kv}; {after} }} cache ({cache});")


def program(i: int) -> str:
    """Program ``i``: a small random program of one or two step stages."""
    rng = random.Random(i)
    # a third of the programs are the lazy planning's own ground (easy), the others go to its edges
    easy = rng.random() < 0.35
    two = not easy and rng.random() < 0.2
    engines = []
    pools = []
    for k, S in enumerate(["E", "F"] if two else ["E"]):
        suffix = "" if k == 0 else "2"
        if k and engines[0]["kv"] and rng.random() < 0.3:  # two engines of one memory
            kv, bs = engines[0]["kv"], engines[0]["bs"]
        else:
            kv = f"kv{suffix}" if easy or rng.random() < 0.85 else None
            bs = pick(rng, [(2, 2), (2, 3), (3, 4)] if easy else [(2, 1), (3, 2), (2, 3), (3, 4)])
            if kv:
                pools.append(_pool_kv(rng, kv, bs, S, easy, f"random {i} {kv}"))
        reqs = f"reqs{suffix}" if easy or rng.random() < 0.7 else None
        if reqs:
            via = f"admit via {S};" if easy or rng.random() < 0.7 else ""
            order = pick(rng, [(8, ""), (1, "queue by (P);"), (1, "queue by (-P);")])
            cap = pick(rng, [(2, 1), (3, 2), (2, 3), (2, 4), (2, 8)])
            pools.append(f"pool {reqs} {{ cap {cap}; {via} {order} }}")
        aux = None
        if not easy and rng.random() < 0.15:  # a pool growing runs grow that is no engine's memory
            aux = f"aux{suffix}"
            pre = pick(rng, [(1, "preempt lifo;"), (1, "preempt by (position);"), (1, "")])
            pools.append(f"pool {aux} {{ cap {pick(rng, [(1, 10), (1, 20), (1, 60)])}; "
                         f"block {pick(rng, [(1, 1), (1, 2)])}; {pre} }}")
        other = "E" if k else ("F" if two else None)
        decl = _engine(rng, S, kv, reqs, other, easy)
        engines.append(dict(S=S, kv=kv, reqs=reqs, aux=aux, bs=bs, decl=decl))
    vllm = rng.random() < 0.5
    frac = not easy and rng.random() < 0.07  # fractional tokens: the planning per job, now and then
    pmax = pick(rng, [(2, 4), (3, 8), (1, 16), (1, 40)])
    omax = pick(rng, [(1, 3), (3, 10), (2, 20), (1, 40)])
    prompt = f"1 + floor(~uniform(0, {pmax}))" + (" + 0.5" if frac else "")
    out = f"1 + floor(~uniform(0, {omax}))"
    turns = pick(rng, [(5, 1), (2, 2), (1, 3)])
    wl = pick(rng, [(6, "batch"), (3, "poisson"), (1, "closed")])
    run_extra = ""
    start = ""
    if wl == "poisson":
        arrive = f"arrive poisson({pick(rng, [(1, 0.2), (2, 0.4), (2, 0.8), (1, 1.5)])});"
        horizon = pick(rng, [(2, 15), (2, 30)])
        if rng.random() < 0.25:  # the run ends once the n-th session has arrived and every one ended
            horizon = 400
            run_extra = f" arrivals {rng.randint(2, 8)};"
    else:
        n = rng.randint(2, 8)
        arrive = f"arrive batch({n});" if wl == "batch" else f"arrive closed({min(n, 5)});"
        gap = pick(rng, [(1, "0.5"), (1, "1"), (1, "1.25"), (1, "2")])
        start = pick(rng, [(2, ""), (3, f"run d (serial * {gap});"), (2, "run d (~uniform(0, 3));"),
                            (1, f"run d ((serial % 3) * {gap});")])
        if wl == "batch":
            horizon = pick(rng, [(6, 60), (1, 7.5), (1, 12)])
        else:
            horizon = pick(rng, [(1, 20), (1, 35)])
    if rng.random() < 0.2:
        run_extra += f" warmup {rng.choice([1, 3.5, 6])};"

    def request(e):
        return _request(rng, e, vllm)

    if len(engines) == 1:
        req = request(engines[0])
    else:
        how = pick(rng, [(2, "split"), (1, "pd")])
        if how == "split":
            req = f"branch (serial % 2 == 0) {{ {request(engines[0])} }} else {{ {request(engines[1])} }}"
        else:  # a prefill on E, a decode on F, each in its own holds
            e, f = engines
            pre = f"run E prefill (P) {'growing ' + e['kv'] if e['kv'] else ''};"
            if e["kv"]:
                pre = f"hold {e['kv']} (1) {{ {pre} }} cache (P);"
            dec = f"run F decode (O) {'growing ' + f['kv'] if f['kv'] else ''};"
            if f["kv"]:
                dec = f"hold {f['kv']} (P) {{ {dec} }}"
            if f["reqs"]:
                dec = f"hold {f['reqs']} (1) {{ {dec} }}"
            req = f"set tf = now; {pre} {dec}"
    record = ""
    if "vllm_request_at" not in req and rng.random() < 0.3:
        record = "record request { sent = t0; first_token = tf; last_token = now; output = O; }"
    body = (f"set O = {out}; set G = floor(~uniform(0, 6)); set t0 = now; set tf = now; {req} {record} "
            "observe done = now;")
    if wl == "closed":  # each session's turns for ever
        body = (f"set P = {prompt}; loop {{ turn; {body} run d (~uniform(0, 2)); "
                f"set P = P + O + 1 + floor(~uniform(0, 4)); }}")
    elif turns > 1:
        body = (f"set P = {prompt}; set k = 0; loop {{ {body} set k = k + 1; "
                f"branch (k >= {turns}) {{ end; }} "
                f"run d (~uniform(0, 2)); set P = P + O + 1 + floor(~uniform(0, 4)); }}")
    else:
        body = f"set P = {prompt}; {body}"
    gauge = ""
    if not easy and engines[0]["kv"] and rng.random() < 0.07:
        gauge = f"gauge g = used({engines[0]['kv']});"
    observe_used = f"observe u = used({engines[0]['kv']});" if engines[0]["kv"] and rng.random() < 0.5 else ""
    lines = ['use "vllm.sq";' if vllm else "", *pools, *(e["decl"] for e in engines), "stage d : delay;",
             f"workload {{ {arrive} }}", gauge,
             f"session {{ {start} {body} {observe_used} }}", f"run {{ horizon {horizon};{run_extra} }}"]
    return "\n".join(x for x in lines if x) + "\n"


# --- running and comparing ----------------------------------------------------------------------------------


def _blocks() -> list[range]:
    per = -(-EXAMPLES // BLOCKS)
    return [range(FIRST + k * per, FIRST + min((k + 1) * per, EXAMPLES)) for k in range(BLOCKS)
            if k * per < EXAMPLES]


@pytest.mark.parametrize("seeds", _blocks(), ids=lambda r: f"{r.start}-{r.stop - 1}")
def test_random_programs_agree_on_both_tiers(seeds):
    failed_compile = 0
    errors = 0
    lazy_programs = 0
    took = dict.fromkeys(COUNTERS, 0)  # the programs in which each shortcut was taken
    differ = []
    for i in seeds:
        src = program(i)
        try:
            prog = serq_frontend.compile(source=src, sets={}, defs={})
        except serq_frontend.CompileError:
            failed_compile += 1
            continue
        got, counters = outcome(prog, "")
        ref, ref_counters = outcome(prog, "general")
        assert not any(ref_counters[c] for c in COUNTERS), (i, ref_counters)  # the reference plans every job
        if got != ref:
            differ.append((i, src, first_difference(got, ref)))
        errors += ref[0] == "error"
        lazy_programs += counters["lazy_iterations"] + counters["glazy_iterations"] > 0
        for c in COUNTERS:
            took[c] += counters[c] > 0
    assert not differ, "\n\n".join(f"program {i}:\n{src}{what}" for i, src, what in differ[:3]) + (
        f"\n\n{len(differ)} of {len(seeds)} programs differ: {[i for i, _, _ in differ]}")
    n = len(seeds)
    if n >= 50:  # (a block of a few programs, SERQ_DIFF_EXAMPLES below 400, proves nothing either way)
        # nearly every program compiles and runs to its end, and the lazy planning's shortcuts were taken
        assert failed_compile <= 0.05 * n, failed_compile
        # (a hold that outgrows its pool re-executes as language.txt §3 says and ends in the livelock's error,
        # where it was rejected before 5f25427e: of 3 000 programs from 0 and 700 000, 3 % end in an error,
        # a block of 125 from 1 to 14 of them)
        assert errors <= 0.15 * n, errors
        assert lazy_programs >= 0.25 * n, lazy_programs
        assert all(took[c] >= 0.03 * n for c in COUNTERS), took


# --- defects the random programs found ----------------------------------------------------------------------


def _done_on_each_tier(src: str, monkeypatch) -> dict[str, tuple[list, int]]:
    """``{tier: ([(session, time) of observe done], E's iterations)}`` for the default tier ("") and the
    per-job reference, without requiring them to agree."""
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    out = {}
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        sim = Simulation(prog, registries(), seed=None, horizon=None, warmup=None, arrivals=None,
                         check_invariants=False, progress=False, trace_path=None)
        r = sim.run()
        o = r.observes["done"]
        out[tier] = (sorted(zip(o.sessions.tolist(), o.times.tolist()), key=lambda x: (x[1], x[0])),
                     r.stage("E").iterations)
    return out


def test_a_quiet_stretch_after_a_planning_that_grew_reads_the_budget_again(monkeypatch):
    # §2/§3 step: the budget is read before each iteration (the residents before the iteration, before its
    # growth); it may read pool observables. block 3: s0 and s1 hold 1 (a block each: used 6) and prefill
    # 1 on [0,1] (position 1), then decode 4 (positions 2, 3, 4, 5), budget 2 while used < 12: [1,2]
    # position 2, [2,3] position 3; the iteration at 3 takes them to 4, a block each first (used 12). At 4
    # the budget reads used 12: 1, so only s0 (first admitted) gets its token: position 5, done at 5; its
    # release leaves used 6, budget 2 again, and s1 takes its last token on [5,6]. E: 6 iterations.
    src = """
pool kv { cap 100; block 3; }
stage E : step { budget used(kv) < 12 ? 2 : 1; cost 1; memory kv; }
workload { arrive batch(2); }
session { hold kv (1) { run E prefill (1) growing kv; run E decode (4) growing kv; } observe done = now; }
run { horizon 60; }
"""
    for tier, (done, iterations) in _done_on_each_tier(src, monkeypatch).items():
        assert done == [(0, 5.0), (1, 6.0)], tier
        assert iterations == 6, tier


if __name__ == "__main__":
    print(program(int(sys.argv[1])), end="")
