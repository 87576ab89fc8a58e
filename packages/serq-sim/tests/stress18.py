"""What test_conformance_round18*.py share: a generator of small random step-engine programs built to reach
what test_conformance_round16*.py and test_differential_random.py leave out (families of engines behind a
`choose`, multi-turn sessions whose later turns hit their own cached prefix, an offload tier the memory
spills into, `reserve held`, `preempt by (…) requeue head | tail`, `cache scheduled` (:func:`scheduled`), serve keys that change while resident and
ones a job keeps, chunk caps and budgets reading `residents`, `decoders`, `budget_left`, costs reading
`kv_decode`, `kv_prefill` and `attention`), run under a warm-up, a horizon that falls inside an iteration or
a bound on events; and the comparison of a run with every fast path on against the per-job planning
(SERQ_SIM_TIER=general): the JSON report, every observe's samples, every record table and the output
tokens' gaps, byte for byte, or the same error. A shared module, not a test module (one test module
importing another is refused by packages/serq/tests/test_suite_layout.py).

``python stress18.py I`` prints program I; ``python stress18.py A B`` runs programs A … B-1 on both
plannings and prints the ones that differ (``--stretch``, ``--offload``, ``--second``: the stretch, offload
or second-engine programs).
"""

from __future__ import annotations

import math
import os
import random
import sys

import serq_frontend
from serq_report.json import encode_json
from serq_sim.api import registries
from serq_sim.engine import Simulation
from serq_sim.step import StepStage

#: the lazy planning's counters on StepStage (not reported; the tests read them to show the shortcuts ran)
COUNTERS = ("lazy_iterations", "glazy_iterations", "quiet_rounds", "quiet_wakes", "busy_rounds",
            "wake_batches")

#: what a run reached, beside the counters (:func:`outcome`)
FEATURES = ("served", "preempted", "spilled", "hit", "max_events", "cut")


def pick(rng: random.Random, weighted):
    """One of ``[(weight, value), …]``."""
    total = sum(w for w, _ in weighted)
    x = rng.random() * total
    for w, v in weighted:
        x -= w
        if x < 0:
            return v
    return weighted[-1][1]


def scheduled(key: str) -> bool:
    """Whether the program keyed ``key`` gives its KV pool `cache scheduled` (a third of them): a draw of its own
    stream (``random.Random("cache scheduled " + key)``), which leaves the program's other draws as they were."""
    return random.Random(f"cache scheduled {key}").random() < 1 / 3


def program(i: int, *, family: bool | None = None, stretch: bool = False) -> tuple[str, dict]:
    """Program ``i`` (``random.Random(i)``) and its run's bounds (``horizon``, ``warmup``, ``max_events``
    for :func:`outcome`). ``family``: a family of engines behind a `choose` (True), one engine (False), or
    either (None). ``stretch``: one engine on the quiet and busy stretches' ground (whole constant budgets,
    keys a job keeps), always under a warm-up, and under a bound on events half the time (a program of its
    own: ``random.Random(-1 - i)``)."""
    rng = random.Random(-1 - i if stretch else i)
    if stretch:
        family = False
    fam = rng.random() < 0.45 if family is None else family
    N = rng.choice([2, 3]) if fam else 1
    ix = "[j]" if fam else ""
    dims = f"[{N}]" if fam else ""
    # a third of the programs keep to the lazy planning's own ground (whole constant budgets, the memory
    # named, keys a job keeps), the others go to its edges
    easy = stretch or rng.random() < 0.35
    bs = pick(rng, [(2, 1), (3, 2), (2, 3), (3, 4)])
    # prompts of up to pmax tokens, outputs of up to omax, turns that add the last output and a few tokens;
    # memory from a fraction of what the longest session needs (rejections, preemption storms) to plenty
    pmax = pick(rng, [(2, 4), (3, 8), (1, 16)] if not stretch else [(1, 8), (2, 24), (1, 48)])
    omax = pick(rng, [(1, 3), (3, 8), (1, 16)] if not stretch else [(1, 8), (2, 24), (2, 60)])
    turns = pick(rng, [(2, 1), (3, 2), (2, 3)])
    need = pmax + omax + (turns - 1) * (omax + 4)
    cap_blocks = max(2, math.ceil(need * pick(rng, [(2, 0.5), (3, 0.8), (3, 1.2), (1, 3)]) / bs))
    cap = cap_blocks * bs
    spill = (stretch or not easy) and rng.random() < 0.3
    held = (stretch or not easy) and not spill and rng.random() < 0.25
    pre = pick(rng, [(4, "preempt lifo;"), (1, ""),
                     (2, "preempt by (decoding, -position) requeue head;"),
                     (2, "preempt by (decoding, -position) requeue tail;"),
                     (2, "preempt by (-admission) requeue tail;"), (1, "preempt by (-admission) requeue head;"),
                     (1, "preempt by (position) requeue tail;"), (1, "preempt by (-serial) requeue head;")]
               if not stretch else  # (a policy reading `position` keeps the per-job planning)
               [(4, "preempt lifo;"), (1, ""), (2, "preempt by (-admission) requeue tail;"),
                (2, "preempt by (-admission) requeue head;"), (1, "preempt by (decoding, -serial) requeue tail;")])
    evict = pick(rng, [(5, "evict lru;"), (1, ""), (1, "evict by (-size);")])
    kv_extra = ""
    pools = []
    if spill:
        kv_extra = f" spill cpu via link ({pick(rng, [(1, 'size / 4'), (1, '1'), (1, '0.5 + size / 8')])}) " \
                   f"when ({pick(rng, [(2, '1'), (1, f'size >= {bs}'), (1, 'waiting')])});"
    if held:
        kv_extra += " reserve held;"
    qkeys = pick(rng, [(6, ""), (1, "queue by (-serial);"), (1, "queue by (waited);"), (1, "queue by (P);")])
    R = pick(rng, [(2, 1), (3, 2), (3, 3), (2, 8)])
    pools.append(f"pool reqs{dims} {{ cap {R}; admit via E; {qkeys} }}")
    # now and then the replicas share one memory pool (a family of engines beside one pool: every member
    # counts it, and one engine's growth may preempt another's resident)
    shared = fam and rng.random() < 0.3
    kdims = "" if shared else dims
    # `cache scheduled` (a victim its engine's planning had served caches those tokens too, as vLLM hashes a
    # block when it allocates it) on a third of the pools that preempt, drawn from a stream of its own so that
    # every other draw of program i is what it was
    if pre and scheduled(f"{i} {stretch}"):
        kv_extra += " cache scheduled;"
    pools.append(f"pool kv{kdims} {{ cap {cap * (N if shared else 1)}; block {bs}; {pre} {evict}{kv_extra} }}")
    if spill:
        cpu_cap = pick(rng, [(1, 2 * cap), (1, 4 * cap), (1, cap_blocks // 2 * bs or bs)])
        pools.append(f"pool cpu {{ cap {cpu_cap}; block {bs}; evict lru; }}")
    reqs, kv, E = f"reqs{ix}", f"kv{'' if shared else ix}", f"E{ix}"
    if easy:
        budget = pick(rng, [(2, "2"), (2, "3"), (2, "4"), (1, "6"), (1, "inf"), (1, "residents + 1"),
                            (1, "holders(reqs) + 1"), (1, "decoders + 2")])
        chunk = pick(rng, [(2, ""), (2, "chunk 1;"), (2, "chunk 2;"), (1, "chunk 3;"),
                           (2, "chunk long_prefill(reqs, 2);")])
        cost = pick(rng, [(2, "1"), (2, "1 + 0.1 * tokens"), (2, "1 + 0.01 * kv_decode"),
                          (1, "0.3 + 0.01 * kv_decode + 0.02 * kv_prefill + 0.1 * decoders"),
                          (1, "1 + 0.001 * attention"), (1, "0.5 + 0.125 * decoders")])
        serve = pick(rng, [(5, ""), (1, "serve decode first;"), (1, "serve by (-P, admission);"),
                           (1, "serve by (decoding, -admission);"), (1, "serve by (serial % 2);")])
    else:
        budget = pick(rng, [(2, "2"), (2, "3"), (2, "5"), (1, "8"), (1, "inf"), (2, "decoders + 2"),
                            (1, "residents >= 3 ? 3 : 6"), (1, "2 + residents"), (1, "decoders > 1 ? 2 : 4"),
                            (1, "kv_decode > 6 ? 2 : 5"), (1, "kv_prefill > 0 ? 3 : 6"), (1, "2.5"),
                            (1, "max(1, 6 - decoders)")])
        chunk = pick(rng, [(3, ""), (1, "chunk 1;"), (2, "chunk 2;"), (1, "chunk 3;"),
                           (2, "chunk residents > 1 ? 2 : 5;"), (1, "chunk residents >= 3 ? 1 : inf;"),
                           (2, "chunk long_prefill(reqs, 3);"), (1, "chunk decoders > 0 ? 2 : inf;"),
                           (1, "chunk kv_decode > 4 ? 1 : 3;")])
        cost = pick(rng, [(2, "1"), (2, "1 + 0.1 * tokens"), (2, "1 + 0.01 * kv_decode"),
                          (2, "0.3 + 0.01 * kv_decode + 0.02 * kv_prefill + 0.1 * decoders"),
                          (2, "1 + 0.001 * attention"), (1, "0.25 + 0.125 * tokens + 0.0625 * kv_prefill"),
                          (1, "0.75 + 0.03 * tokens + 0.0001 * attention + 0.007 * kv_decode"),
                          (1, "0.5 + 0.05 * residents"), (1, "0.5")])
        serve = pick(rng, [(4, ""), (2, "serve by (remaining);"), (2, "serve by (-remaining);"),
                           (1, "serve by (decoding, remaining);"), (1, "serve decode first;"),
                           (1, "serve by (-decoding, -remaining, admission);"), (1, "serve by (P, admission);"),
                           (1, "serve by (residents > 2 ? remaining : 0);"), (1, "serve by (-admission);"),
                           (1, "serve exclusive prefill;"), (1, "serve admission;"),
                           (1, "serve by (kv_decode > 4 ? remaining : -remaining);")])
    stages = [f"stage E{dims} : step {{ budget {budget}; cost {cost}; {chunk} {serve} memory kv; }}",
              "stage d : delay;"]
    if spill:
        stages.append("stage link : fifo;")

    # the request: lib/vllm.sq's (resumes from computed, hits its own prefix) or one written by hand
    kind = pick(rng, [(3, "vllm"), (2, "hand"), (1, "plain")])
    head = pick(rng, [(3, f"min(P, budget_left({E}))"), (1, "P"), (1, f"min(P, 1 + budget_left({E}))")])
    mid = pick(rng, [(3, "set tf = now;"), (1, f"set tf = now; observe mid = budget_left({E}) + 100 * work({E});")])
    if kind == "vllm":
        thr = pick(rng, [(3, "inf"), (1, "2")])
        match = pick(rng, [(4, "inf"), (1, "0"), (1, "-1")])
        req = f"vllm_request_at({reqs}, {kv}, {E}, P, O, t0, {match}, {thr});"
    elif kind == "hand":
        reuse = pick(rng, [(3, f"floor((P - 1) / {bs}) * {bs}"), (1, "P - 1"), (1, "0")])
        reserve = " reserve (P + O)" if rng.random() < 0.3 else ""
        req = (f"hold {reqs} (1), {kv} (min(P, cachedin({kv}) + budget_left({E}))){reserve} reuse ({reuse}) "
               f"{{ observe hit = cached; run {E} prefill (P - cached) growing {kv}; {mid} "
               f"run {E} decode (O) growing {kv}; }} cache ({pick(rng, [(3, 'P + O'), (1, 'P'), (1, 'inf')])});")
    else:
        req = (f"hold {reqs} (1), {kv} ({head}) {{ run {E} prefill (P) growing {kv}; {mid} "
               f"run {E} decode (O) growing {kv}; }}")
    if fam:
        route = pick(rng, [(2, "holders(reqs[j]) + queued(reqs[j])"), (1, "j == serial % N ? 0 : 1"),
                           (2, "turn_no > 1 ? (j == home ? 0 : 1) : holders(reqs[j]) + queued(reqs[j])"),
                           (1, "holders(reqs[j]) - queued(reqs[j])" if shared else "used(kv[j]) - cachedin(kv[j])")]
                     ).replace("N", str(N))
        req = f"choose j in {N} by ({route}, holders(reqs[j])); set home = j; {req}"
    record = "" if kind == "vllm" or rng.random() < 0.5 else \
        "record request { sent = t0; first_token = tf; last_token = now; output = O; }"
    obs_in = pick(rng, [(3, ""), (1, "observe u = used(kv[0]);" if fam and not shared else "observe u = used(kv);"),
                        (1, "observe c = cachedin(cpu);" if spill else ""),
                        (1, f"observe bl = budget_left({'E[home]' if fam else 'E'}); observe w = work({E});"),
                        (1, f"observe q = queue({E}) + 10 * busy({E}); observe f = free({kv});")])
    # a turn: the prompt grows by the last turn's output and a few new tokens, so a later turn's prompt
    # starts with what the earlier one cached (its own prefix)
    body = (f"set O = 1 + floor(~uniform(0, {omax})); set t0 = now; set tf = now; {req} {record} {obs_in} "
            "observe done = now;")
    wl = pick(rng, [(5, "batch"), (3, "poisson")])
    if wl == "batch":
        n = rng.randint(2, 7)
        arrive = f"arrive batch({n});"
        start = pick(rng, [(2, ""), (2, "run d (serial * 0.5);"), (1, "run d (~uniform(0, 3));")])
    else:
        arrive = f"arrive poisson({pick(rng, [(1, 0.3), (2, 0.6), (1, 1.2)])});"
        start = ""
    session = (f"session {{ {start} set home = 0; set P = 1 + floor(~uniform(0, {pmax})); set k = 0; turn; "
               f"loop {{ {body} set k = k + 1; branch (k >= {turns}) {{ end; }} "
               f"run d (~uniform(0, 2)); turn; set P = P + O + 1 + floor(~uniform(0, 4)); }} }}")
    bounds: dict = {}
    horizon = pick(rng, [(3, 60), (1, 7.3), (1, 12.55), (1, 20.05)])
    if wl == "poisson":
        horizon = pick(rng, [(1, 15.3), (1, 30.7)])
    bounds["horizon"] = horizon
    if stretch or rng.random() < 0.3:
        bounds["warmup"] = rng.choice([1, 2.5, 3.7, 6.2]) if not stretch else round(rng.uniform(0.2, 7), 2)
    if rng.random() < (0.5 if stretch else 0.2):
        bounds["max_events"] = rng.randint(5, 150)
    lines = ['use "vllm.sq";', *pools, *stages, f"workload {{ {arrive} }}", session,
             f"run {{ horizon {horizon}; seed {i % 1000}; }}"]
    return "\n".join(lines) + "\n", bounds


def offload(i: int) -> tuple[str, dict]:
    """Offload program ``i`` (``random.Random(-100000 - i)``): one engine whose decoders grow block by block
    past a memory full of other sessions' cached prefixes (each session caches a short hold first), the memory
    spilling what it evicts into an offload tier, or holding its reservations (`reserve held`, the request
    reserving more than it allocates); lazy growers at their block boundaries evict, spill or wait for the
    reservations there."""
    rng = random.Random(-100000 - i)
    b = rng.choice([1, 2, 4])
    n = rng.randint(2, 6)
    cap = b * rng.randint(6, 20)
    P = rng.randint(1, 6)
    omax = rng.randint(5, 40)
    extra = rng.choice(["spill cpu via link (size / 4) when (1);", "spill cpu via link (1) when (size >= 2);",
                        "reserve held;"])
    pre = rng.choice(["preempt lifo;", "preempt by (-admission) requeue tail;", "preempt by (-serial) requeue head;"])
    reserve = rng.choice(["1", f"{P + 3}", f"{P} + O"])
    if scheduled(f"offload {i}"):
        extra += " cache scheduled;"
    src = f"""pool reqs {{ cap {rng.randint(2, 6)}; admit via E; }}
pool kv {{ cap {cap}; block {b}; {pre} evict lru; {extra} }}
pool cpu {{ cap {rng.choice([4, 16, 100])}; block {b}; evict lru; }}
stage E : step {{ budget {rng.choice([4, 8, 'inf'])}; cost {rng.choice(['1', '1 + 0.01 * kv_decode'])}; memory kv; }}
stage d : delay;
stage link : fifo;
workload {{ arrive batch({n}); }}
session {{
  run d (serial * {rng.choice([0.5, 1, 3])});
  hold kv ({rng.randint(1, 3) * b}) {{ run d (0.5); }} cache (inf);
  set O = 1 + floor(~uniform(0, {omax}));
  hold reqs (1), kv (1) reserve ({reserve}) {{ run E prefill ({P}) growing kv; run E decode (O) growing kv; }} cache (inf);
  observe done = now;
  observe c = cachedin(cpu);
}}
run {{ horizon 80; }}
"""
    bounds = {"max_events": rng.randint(10, 100)} if rng.random() < 0.2 else {}
    # a horizon inside an iteration ("cut"), drawn as well as the one a session that outgrows the memory
    # reaches (language.txt §3: it preempts itself and re-executes until the horizon): while such a session
    # was rejected instead (from 8066ccce), few programs ran to their horizon without these
    horizon = rng.choice([80, 80, 12.5, 20.5])
    return src.replace("run { horizon 80; }", f"run {{ horizon {horizon}; }}"), bounds


def second(i: int) -> tuple[str, dict]:
    """Program ``i`` (a family of engines for odd ``i``) with a second step engine F beside it, whose budget
    reads ``budget_left`` of E (of E[0] in a family: that engine's planning of an iteration, read whenever F
    plans one), and on which every third session also runs a request that observes ``budget_left(F)``
    between its prefill and its decode (two step stages: no quiet stretch, the lazy plannings per stage)."""
    src, bounds = program(i, family=bool(i % 2))
    rng = random.Random(7 * i + 3)
    target = "E[0]" if "stage E[" in src else "E"
    budget = rng.choice([f"budget_left({target}) + 1", f"budget_left({target}) > 2 ? 2 : 5",
                         f"max(1, 6 - budget_left({target}))"])
    cost = rng.choice(["1", "0.7 + 0.01 * kv_decode", "0.5 + 0.1 * tokens"])
    engine = (f"pool reqsF {{ cap {rng.randint(1, 4)}; admit via F; }}\n"
              f"pool kvF {{ cap {rng.choice([12, 24, 60])}; block {rng.choice([1, 2, 4])}; preempt lifo; evict lru;"
              f"{' cache scheduled;' if scheduled(f'second {i}') else ''} }}\n"
              f"stage F : step {{ budget {budget}; cost {cost}; {rng.choice(['', 'chunk 2;'])} memory kvF; }}\n")
    side = ("branch (serial % 3 == 0) { hold reqsF (1), kvF (min(4, budget_left(F))) { "
            "run F prefill (4) growing kvF; observe fb = budget_left(F); "
            "run F decode (1 + floor(~uniform(0, 10))) growing kvF; } } ")
    src = src.replace("stage d : delay;", engine + "stage d : delay;").replace("observe done = now;",
                                                                           side + "observe done = now;")
    return src, bounds


def outcome(prog, tier: str, **bounds):
    """``(outcome, counters)``: ``outcome`` the JSON report, every observe's columns, every record table's
    columns and the token gaps, or the error's type and message; ``counters`` the lazy planning's
    counters summed over the step stages, and what the run reached (``FEATURES``: a preemption, a spill,
    a hit on a later turn's own prefix, a stop at the bound on events, the horizon inside an iteration).
    ``tier`` "" (the default: every fast path) or "general"."""
    before = os.environ.get("SERQ_SIM_TIER")
    if tier:
        os.environ["SERQ_SIM_TIER"] = tier
    else:
        os.environ.pop("SERQ_SIM_TIER", None)
    try:
        sim = Simulation(prog, registries(), seed=None, horizon=bounds.get("horizon"), warmup=bounds.get("warmup"),
                         arrivals=None, check_invariants=False, progress=False, trace_path=None,
                         max_events=bounds.get("max_events"))
        engines = [s for s in sim.stages if isinstance(s, StepStage)]
        try:
            r = sim.run()
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            out = ("error", type(e).__name__, str(e))
        else:
            obs = {name: tuple((getattr(o, f).dtype.str, getattr(o, f).tobytes())
                               for f in ("values", "times", "sessions", "turns"))
                   for name, o in r.observes.items()}
            recs = {}
            for name in sorted(r.result.records or {}):
                cols = r.records(name, kind="numpy")
                recs[name] = {c: (v.dtype.str, v.tobytes()) for c, v in sorted(cols.items())}
            gaps = getattr(sim, "token_gaps", None)
            gaps = None if gaps is None else (gaps.values.tobytes(), gaps.weights.tobytes())
            out = ("report", encode_json(r), obs, recs, gaps)
            pools = r.result.pools
            hit = r.observes.get("hit")
            feats = {"served": any(s.iterations for s in engines), "preempted": any(p.preemptions for p in pools), "spilled": any(p.spills for p in pools),
                     "hit": hit is not None and bool(((hit.values > 0) & (hit.turns > 1)).any()),
                     "max_events": r.result.partial == "max-events",
                     "cut": r.result.partial is None and any(s.iter is not None for s in engines)}
    finally:
        if before is None:
            os.environ.pop("SERQ_SIM_TIER", None)
        else:
            os.environ["SERQ_SIM_TIER"] = before
    counters = {c: sum(getattr(s, c) for s in engines) for c in COUNTERS}
    if out[0] == "report":
        counters.update(feats)
    return out, counters


def first_difference(a, b) -> str:
    if a[0] != b[0] or a[0] == "error":
        return f"default: {a[:3]!r}\ngeneral: {b[:3]!r}"
    if a[1] != b[1]:
        for k, (x, y) in enumerate(zip(a[1], b[1])):
            if x != y:
                lo, hi = max(0, k - 300), k + 200
                return f"JSON reports differ at character {k}:\ndefault: …{a[1][lo:hi]}\ngeneral: …{b[1][lo:hi]}"
        return "JSON reports differ in length"
    for name in a[2]:
        if a[2][name] != b[2].get(name):
            return f"observe {name} differs"
    if a[3] != b[3]:
        return "records differ"
    return "token gaps differ"


def compare(i: int, family: bool | None = None, stretch: bool = False, offloaded: bool = False,
            two: bool = False):
    """``(compiled, differs, error, counters, text)`` for program ``i`` (offload program ``i`` with
    ``offloaded``, :func:`second`'s with ``two``) on the two plannings."""
    if offloaded:
        src, bounds = offload(i)
    elif two:
        src, bounds = second(i)
    else:
        src, bounds = program(i, family=family, stretch=stretch)
    try:
        prog = serq_frontend.compile(source=src, sets={}, defs={})
    except serq_frontend.CompileError as e:
        return False, False, False, {}, str(e)
    got, counters = outcome(prog, "", **bounds)
    ref, ref_counters = outcome(prog, "general", **bounds)
    assert not any(ref_counters[c] for c in COUNTERS), (i, ref_counters)  # the reference plans every job
    differs = got != ref
    return True, differs, ref[0] == "error", counters, first_difference(got, ref) if differs else ""


if __name__ == "__main__":
    stretch = "--stretch" in sys.argv
    offloaded = "--offload" in sys.argv
    two = "--second" in sys.argv
    argv = [a for a in sys.argv if a not in ("--stretch", "--offload", "--second")]
    if len(argv) == 2:
        k = int(argv[1])
        src, bounds = offload(k) if offloaded else second(k) if two else program(k, stretch=stretch)
        print(src, bounds)
    else:
        lo, hi = int(argv[1]), int(argv[2])
        fails = bad = errs = 0
        took = dict.fromkeys(COUNTERS + FEATURES, 0)
        for i in range(lo, hi):
            ok, differs, err, counters, text = compare(i, stretch=stretch, offloaded=offloaded, two=two)
            if not ok:
                bad += 1
                print("COMPILE", i, text.splitlines()[0][:300])
                continue
            errs += err
            for c in COUNTERS + FEATURES:
                took[c] += counters.get(c, 0) > 0
            if differs:
                fails += 1
                print("DIFFER", i, text[:1500])
        print(f"programs {hi - lo}: compile errors {bad}, run errors {errs}, differ {fails}, took {took}")
