"""Programs of an eighth round of users (peer_programs8/*.sq): large families of engines and replicas behind
routers. An llm-d-style router over 16 to 64 vLLM v1 engines (least queue, least KV used, prefix affinity
by session, power of two choices), checked by its invariants: every request served once, by the engine its
route named; the admissions of the slots are the requests plus the preemptions; each engine's tokens are
its requests' computed prefill and decode tokens, and its busy time the sum of its iterations' costs. A
family of twelve engines that routes everything to one gives that engine's figures request for request.
The requests find exactly their session's cached prefix on the engine they are routed to. Queueing families
with closed forms: twelve M/M/1 queues fed by a random split (Poisson splitting), round robin over ten
(E_10/M/1, GI/M/1's sigma), JSQ over three replicas of a family of twelve (its Markov chain, solved here),
twelve GPUs hunted in order without a queue (Erlang's loss formula, GPU by GPU), ten GPUs as ten queues
against one queue of ten (M/M/1 against Erlang C).

Every program runs three ways, which must agree byte for byte (reports and observes' samples): on the tier
serQ picks, on the general engine (SERQ_SIM_TIER=general), and with the settle's walk over every member of
a family at every settle (build._FEW_STEPS raised past the family's size) rather than only the members
marked as possibly idle. Statistical checks fix their seeds and assert a 95 % CI that covers the theory and
is narrow."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from conform import covers, gim1_sigma
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_report.json import encode_json
from serq_sim import build
from slotted_kind import Slotted

HERE = Path(__file__).resolve().parent / "peer_programs8"


def _samples(r) -> dict:
    return {n: tuple(getattr(o, f).tobytes() for f in ("values", "times", "sessions", "turns"))
            for n, o in r.observes.items()}


def three_ways(name: str, monkeypatch, sets=None, **kw):
    """The program run on the tier serQ picks, on the general engine (when the tier picked is another), and
    on the general engine with the walk over every member of a family at every settle: the same report and
    samples each time. Returns the first report."""
    prog = serq_frontend.compile(str(HERE / name), sets=sets or {}, defs={})

    def once(tier: str, walk_all: bool):
        monkeypatch.setattr(build, "_FEW_STEPS", 10**9 if walk_all else 8)
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        r = serq_sim.run(prog, **kw)
        return encode_json(r), _samples(r), r

    picked = once("", False)
    # (when the tier picked is the general engine, the second run would be the first again)
    outs = [picked, picked if picked[2].tier == "general" else once("general", False), once("general", True)]
    monkeypatch.setattr(build, "_FEW_STEPS", 8)
    assert outs[0][0] == outs[1][0], "the general engine's report differs"
    assert outs[0][1] == outs[1][1], "the general engine's samples differ"
    assert outs[0][0] == outs[2][0], "the walk over every member gives another report"
    assert outs[0][1] == outs[2][1], "the walk over every member gives other samples"
    return outs[0][2]


def members(r, kind: str, name: str) -> list:
    items = r.result.stages if kind == "stage" else r.result.pools
    found = [x for x in items if x.name == name]
    return sorted(found, key=lambda x: -1 if x.index is None else x.index)


def values(r, name: str) -> np.ndarray:
    return r.observes[name].values


# ---------------------------------------------------------------------------------------------------------
# llmd.sq: a router over a family of vLLM engines


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("policy", "n", "blocks"), [(0, 16, 40), (1, 16, 28), (2, 33, 28), (3, 64, 40)])
def test_a_router_over_a_family_of_vllm_engines_serves_every_request_once(monkeypatch, policy, n, blocks):
    r = three_ways("llmd.sq", monkeypatch, sets={"policy": policy, "N": n, "blocks": blocks})
    res = r.result
    # every session ends (300 arrivals, the run ends when the last leaves), and every request it sent was
    # served once: one row per (session, turn), as many as the turns the workload started
    assert res.arrivals == 300 and res.ended == 300
    rec = r.records(kind="numpy")
    rows = len(rec["session"])
    assert rows == res.turns == res.requests.completed
    assert len(set(zip(rec["session"].tolist(), rec["turn"].tolist()))) == rows
    # at most three turns a session, and a turn's prompt holds the previous sequence
    assert max(rec["turn"].tolist()) <= 3
    eng = members(r, "stage", "engine")
    reqs, kv = members(r, "pool", "reqs"), members(r, "pool", "kv")
    assert len(eng) == len(reqs) == len(kv) == n
    assert sum(p.rejections for p in kv) == 0  # (a whole conversation fits an engine's KV)
    # the route: each request served where the router sent it (the records' engine is the observe's)
    on = rec["engine"].astype(int)
    assert sorted(on.tolist()) == sorted(values(r, "served_on").astype(int).tolist())
    if policy in (0, 1):
        # the chosen engine was the least loaded (by its key) when the request was routed
        assert (values(r, "load_gap") == 0).all()
    if policy == 2:
        # prefix affinity: every turn of a session on the engine of its first
        home = {}
        for s, j in zip(rec["session"].tolist(), on.tolist()):
            assert home.setdefault(s, j) == j
    if policy == 3:
        # power of two choices: always one of the two drawn, and never more loaded than the other
        assert (values(r, "drawn") == 1).all()
    # the prefix cache: a turn finds the whole blocks of its session's latest sequence on the engine it is
    # routed to (its prompt extends that sequence; the last token never counts, kv_cache_manager's rule),
    # nothing on an engine the session has not used; exactly so on an engine that evicted and preempted
    # nothing, at most so elsewhere
    exact = {j for j in range(n) if kv[j].evicted_units == 0 and kv[j].preemptions == 0}
    last: dict = {}
    found = 0
    cols = ("session", "turn", "engine", "prompt", "output", "cached")
    for s, _t, e, pr, o, c in sorted(zip(*(rec[k].tolist() for k in cols))):
        want = last.get((s, e), 0)
        assert c == want if e in exact else c <= want, (s, _t, e, c, want)
        found += c > 0
        last[(s, e)] = (pr + o - 1) // 16 * 16
    assert found > (100 if policy == 2 else 5)  # (affinity finds many; the others a few)
    preempted = 0
    dur = res.end
    busy = 0.0
    for j in range(n):
        mine = on == j
        done = int(mine.sum())
        p_kv = kv[j].preemptions
        preempted += p_kv
        # a preempted request re-enters its own engine's queue: the slots admit its requests once, and once
        # more for each preemption (the records' count of them)
        assert reqs[j].admissions == done + p_kv == done + int(rec["preemptions"][mine].sum())
        assert eng[j].requests == done
        tokens = eng[j].tokens * eng[j].iterations if eng[j].iterations else 0.0
        computed = float((rec["prompt"][mine] - rec["cached"][mine] + rec["output"][mine] - 1).sum())
        if p_kv == 0:
            # conservation of tokens: the engine computed each request's uncached prompt and sampled its
            # outputs, one a decode iteration after the first (the prefill's last iteration samples it)
            assert math.isclose(tokens, computed, rel_tol=1e-9), (j, tokens, computed)
        else:
            assert tokens >= computed  # a preempted request recomputes what it had not cached in whole blocks
        # an iteration costs 0.004 + 0.00002 tokens: the engine's busy time is the sum of its iterations'
        b = eng[j].utilisation * dur
        assert math.isclose(b, 0.004 * eng[j].iterations + 0.00002 * tokens, rel_tol=1e-9, abs_tol=1e-12)
        busy += b
    # the members' busy times add up to the family's: every iteration is one member's
    total_it = sum(e.iterations for e in eng)
    total_tok = sum(e.tokens * e.iterations for e in eng if e.iterations)
    assert math.isclose(busy, 0.004 * total_it + 0.00002 * total_tok, rel_tol=1e-9)
    assert preempted == int(rec["preemptions"].sum())
    if blocks == 28:
        assert preempted > 0  # (the small KV preempts: the admissions' count is tested under preemption)
    assert len(set(on.tolist())) > (n // 2 if policy == 3 else 4)  # the family is used, not one member


@pytest.mark.timeout(120)
def test_a_family_that_routes_everything_to_one_engine_is_that_engine(monkeypatch):
    # llmd.sq's policy 4 over twelve engines, every request to the last, against the same program of one
    # engine, both with a long-prefill threshold (each member's chunk reads its own slots): the same
    # requests, the same times, the same preemptions; engine[11] and its pools have the single engine's
    # figures and the other eleven did nothing
    sets = {"policy": 4, "blocks": 28, "C": 24}
    family = three_ways("llmd.sq", monkeypatch, sets={**sets, "N": 12})
    single = three_ways("llmd.sq", monkeypatch, sets={**sets, "N": 1})
    a, b = family.records(kind="numpy"), single.records(kind="numpy")
    assert list(a) == list(b)
    assert (a["engine"] == 11).all() and (b["engine"] == 0).all()
    for col in a:
        if col != "engine":
            assert a[col].tobytes() == b[col].tobytes(), col
    assert int(a["preemptions"].sum()) > 0
    for name in ("hit", "ttft", "response", "preempted", "first_token", "done"):
        fo, so = family.observes[name], single.observes[name]
        for f in ("values", "times", "sessions", "turns"):
            assert getattr(fo, f).tobytes() == getattr(so, f).tobytes(), (name, f)
    fr, sr = family.result, single.result
    assert (fr.end, fr.turns, fr.requests.completed) == (sr.end, sr.turns, sr.requests.completed)
    fields = ("present", "utilisation", "completions", "iterations", "requests", "tokens", "batch", "wait",
              "service")
    engines = members(family, "stage", "engine")
    e1 = members(single, "stage", "engine")[0]
    for f in fields:
        assert getattr(engines[11], f) == getattr(e1, f), f
    for name in ("reqs", "kv"):
        p0, p1 = members(family, "pool", name)[11], members(single, "pool", name)[0]
        for f in ("used", "cached", "queue", "holders", "wait", "admissions", "evicted_units", "preemptions"):
            assert getattr(p0, f) == getattr(p1, f), (name, f)
    for e in engines[:11]:
        assert e.iterations == 0 and e.utilisation == 0 and e.completions == 0


# ---------------------------------------------------------------------------------------------------------
# queueing families with closed forms


@pytest.mark.timeout(120)
def test_a_random_split_over_twelve_replicas_is_twelve_mm1_queues(monkeypatch):
    # split_mm1.sq: lam 7.2 split over 12 at random, mu 1: each replica M/M/1 at rho 0.6: Wq = 0.6 / 0.4
    # = 1.5, W = 2.5; the GPUs busy 7.2 between them, each its own pool's holders
    r = three_ways("split_mm1.sq", monkeypatch, horizon=4000)
    covers(r.stats("wait"), 1.5, 0.08)
    covers(r.stats("response"), 2.5, 0.05)
    gpus, slots = members(r, "stage", "gpu"), members(r, "pool", "slot")
    assert len(gpus) == len(slots) == 12
    dur = r.result.end - r.result.warmup
    for g, s in zip(gpus, slots):
        assert math.isclose(g.utilisation, s.holders, rel_tol=1e-12)
        assert 0.5 < g.utilisation < 0.7
        # Little's law on each member's queue: its time average is its admissions' rate times their mean
        # wait (up to the requests waiting across the warm-up's end and the horizon)
        assert abs(s.queue - s.admissions / dur * s.wait) < 0.01 * s.queue
        # and on its GPU: the time busy is the completions' rate times their mean service
        assert abs(g.utilisation - g.throughput * g.service) < 0.01 * g.utilisation
    assert abs(sum(g.utilisation for g in gpus) - 7.2) < 0.15
    # Lq = rho^2 / (1 - rho) = 0.9 a replica; over twelve the mean is close
    assert abs(sum(s.queue for s in slots) / 12 - 0.9) < 0.1


@pytest.mark.timeout(120)
def test_round_robin_over_ten_replicas_is_ten_erlang_arrival_queues(monkeypatch):
    # round_robin.sq: lam 7 dealt in turn to ten replicas, mu 1: each sees Erlang(10) gaps of mean 10 / 7,
    # an E_10/M/1 queue: sigma = (7 / (7 + 1 - sigma))^10 = 0.504903, Wq = sigma / (1 - sigma) = 1.019804,
    # P(wait) = sigma (the random split's M/M/1 at the same rho 0.7: 2.3333 and 0.7)
    sigma = gim1_sigma(lambda x: (7 / (7 + x)) ** 10, 1.0)
    assert abs(sigma - 0.504903) < 1e-6
    r = three_ways("round_robin.sq", monkeypatch)
    covers(r.stats("waited"), sigma, 0.04)
    covers(r.stats("wait"), sigma / (1 - sigma), 0.12)
    gpus = members(r, "stage", "gpu")
    assert len(gpus) == 10 and all(0.65 < g.utilisation < 0.75 for g in gpus)
    assert abs(sum(g.utilisation for g in gpus) - 7) < 0.1


def jsq3_chain(lam: float, k: int) -> np.ndarray:
    """The stationary law of three exp(1) servers behind join-the-shortest-queue (ties to the lowest
    index), each queue truncated at k: p[n0, n1, n2]."""
    size = k + 1

    def at(s):
        return (s[0] * size + s[1]) * size + s[2]

    q = np.zeros((size ** 3, size ** 3))
    for s in itertools.product(range(size), repeat=3):
        i = at(s)
        t = min(range(3), key=lambda m: (s[m], m))
        if s[t] < k:
            u = list(s)
            u[t] += 1
            q[i, at(u)] += lam
        for m in range(3):
            if s[m]:
                u = list(s)
                u[m] -= 1
                q[i, at(u)] += 1
    np.fill_diagonal(q, -q.sum(axis=1))
    lhs = q.T.copy()
    lhs[-1] = 1  # p Q = 0 has one redundant equation: normalise instead
    rhs = np.zeros(size ** 3)
    rhs[-1] = 1
    return np.linalg.solve(lhs, rhs).reshape(size, size, size)


@pytest.mark.timeout(120)
def test_jsq_over_three_replicas_of_a_family_of_twelve_is_its_markov_chain(monkeypatch):
    # jsq3.sq: 1.8 requests/s, JSQ over replicas 0..2 of twelve. The chain (each queue truncated at 10,
    # where the mass is < 1e-5) gives L0 = 1.11625, L0 + L1 + L2 = 2.55187, W = 1.41771 (three M/M/1 at 0.6
    # by a coin: 2.5; M/M/3: 1.1453), P(all idle) = 0.13101 and the share of requests sent to replica 0.
    p = jsq3_chain(1.8, 10)
    assert p[-1].sum() + p[:, -1].sum() + p[:, :, -1].sum() < 1e-5
    n = np.arange(p.shape[0])
    lq = [float(p.sum(axis=(1, 2)) @ n), float(p.sum(axis=(0, 2)) @ n), float(p.sum(axis=(0, 1)) @ n)]
    w = sum(lq) / 1.8
    assert abs(w - 1.41771) < 1e-4 and abs(lq[0] - 1.11625) < 1e-4
    a, b, c = np.meshgrid(n, n, n, indexing="ij")
    to0 = float(p[(a <= b) & (a <= c)].sum())
    r = three_ways("jsq3.sq", monkeypatch, horizon=10000)
    covers(r.stats("response"), w, 0.05)
    covers(r.stats("to0"), to0, 0.02)
    g = r.result.gauges
    assert abs(g["n0"].mean - lq[0]) <= g["n0"].ci < 0.1 * lq[0]
    assert abs(g["all_idle"].mean - float(p[0, 0, 0])) <= g["all_idle"].ci < 0.1 * float(p[0, 0, 0])
    gpus = members(r, "stage", "gpu")
    assert abs(sum(x.utilisation for x in gpus) - 1.8) < 0.05
    assert all(x.completions == 0 for x in gpus[3:])  # the nine kept for later take nothing


@pytest.mark.timeout(120)
def test_an_ordered_hunt_over_twelve_gpus_loads_each_as_erlangs_loss_formula_says(monkeypatch):
    # ordered_hunt.sq: a = 8 offered to twelve GPUs, no queue, the idle GPU of lowest index taken (choose's
    # tie to the lowest index): B(12, 8) = 0.051406 lost; GPU k carries 8 (B(k - 1, 8) - B(k, 8)), from
    # 0.8889 for the first to 0.2391 for the last, 8 (1 - B(12, 8)) = 7.5887 in all
    b = [1.0]
    for k in range(1, 13):
        b.append(8 * b[-1] / (k + 8 * b[-1]))
    assert abs(b[12] - 0.051406) < 1e-6
    r = three_ways("ordered_hunt.sq", monkeypatch)
    covers(r.stats("lost"), b[12], 0.07)
    gpus = members(r, "stage", "gpu")
    assert len(gpus) == 12
    for k, g in enumerate(gpus, start=1):
        assert abs(g.utilisation - 8 * (b[k - 1] - b[k])) < 0.025, (k, g.utilisation, 8 * (b[k - 1] - b[k]))
    assert abs(sum(g.utilisation for g in gpus) - 8 * (1 - b[12])) < 0.06
    # the hunt's order shows: each GPU busier than the next
    assert all(x.utilisation > y.utilisation for x, y in zip(gpus, gpus[1:]))


def erlang_c(c: int, a: float) -> float:
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


@pytest.mark.timeout(120)
def test_ten_gpus_as_ten_queues_of_their_own_are_ten_mm1_queues(monkeypatch):
    # mmc_pools.sq, a = 7 on ten GPUs as ten queues of their own under a random split: M/M/1 at rho 0.7,
    # Wq = 0.7 / 0.3, P(wait) = 0.7; the GPUs hold 7 requests on average
    r = three_ways("mmc_pools.sq", monkeypatch, sets={"shared": 0})
    covers(r.stats("waited"), 0.7, 0.025)
    covers(r.stats("wait"), 0.7 / 0.3, 0.11)
    g = r.result.gauges["busy"]
    assert abs(g.mean - 7) <= g.ci < 0.02 * 7
    gpus = members(r, "stage", "gpu")
    assert abs(sum(x.utilisation for x in gpus) - g.mean) < 1e-9


@pytest.mark.timeout(120)
def test_ten_gpus_behind_one_queue_are_erlang_c(monkeypatch):
    # the same GPUs as one pool of ten: M/M/10 at a = 7, P(wait) = C(10, 7) = 0.2217, Wq = C / 3, far below
    # the ten queues' 2.33; the same 7 requests held on average
    c = erlang_c(10, 7)
    assert abs(c - 0.22174) < 1e-4
    r = three_ways("mmc_pools.sq", monkeypatch, sets={"shared": 1})
    covers(r.stats("waited"), c, 0.1)
    w = r.stats("wait")
    assert abs(w.mean - c / 3) <= w.ci < 0.35 * c / 3  # (a mean of mostly zeros: its CI is wide)
    g = r.result.gauges["busy"]
    assert abs(g.mean - 7) <= g.ci < 0.02 * 7
    assert all(x.completions == 0 for x in members(r, "stage", "gpu"))


# ---------------------------------------------------------------------------------------------------------
# what a routing example's header tells its user


def test_the_routing_examples_header_does_not_forbid_a_drawing_choose_key(monkeypatch):
    # examples/multi-turn/routing.sq's policy 3 draws its replica into r first and said why: "a choose key
    # may not draw". The language lets it (language.txt: choose is an argmin over keys, and keys may draw;
    # test_conformance_audit6.py draws them), so a user who believed the header wrote the detour for
    # nothing. The policy written with the key drawing compiles, and routes each request at random: over
    # four replicas each of them a quarter of the time.
    path = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "routing.sq"
    text = path.read_text()
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("//"))
    assert "may not draw" not in header
    src = """
stage svc[4] : delay;
workload { arrive renewal(1); }
session {
  choose j in 4 by (~uniform(0, 1));
  observe on3 = j == 3;
  run svc[j] (0.5);
}
run { horizon 2000; seed 4; }
"""
    r = serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))
    on3 = r.stats("on3")
    assert on3.count == 2000 and abs(on3.mean - 0.25) <= 3.5 * math.sqrt(0.25 * 0.75 / 2000)


# ---------------------------------------------------------------------------------------------------------
# a plugin's stage kind that starts work at the settle, in a family of twelve


SLOTTED = """
let R = 12;
stage s[R] : {kind};
workload {{ arrive poisson(6); }}
session {{
  set t0 = now;
  set j = min(R - 1, floor(~uniform(0, R)));
  run s[j] (1);
  observe wait = now - t0 - 1;
  end;
}}
run {{ horizon 3000; warmup 50; seed 5; }}
"""


@pytest.mark.timeout(120)
def test_a_plugins_starting_stage_kind_in_a_family_of_twelve_is_asked_at_every_settle(monkeypatch):
    # twelve single servers of service 1 behind a random split of 6 requests/s: M/D/1 at rho 0.5 each,
    # Wq = 0.5 / (2 (1 - 0.5)) = 0.5 (Pollaczek-Khinchine). The plugin's kind starts its jobs from the
    # settle's try_start, so it waits for the settle to ask it; among more than eight such stages the settle
    # asks a kind that does not mark itself at every settle. The same samples as twelve fifo stages, on
    # the marked settle and on the walk over every member.
    class Plugin:
        @hookimpl
        def serq_sim_register_stage_kinds(self, register):
            register("slotted", Slotted)

    pm = get_plugin_manager(plugins=[Plugin()])
    fifo = serq_sim.run(serq_frontend.compile(source=SLOTTED.format(kind="fifo"), sets={}, defs={}, pm=pm),
                        pm=pm)
    prog = serq_frontend.compile(source=SLOTTED.format(kind="@slotted"), sets={}, defs={}, pm=pm)
    runs = []
    for walk_all in (False, True):
        monkeypatch.setattr(build, "_FEW_STEPS", 10**9 if walk_all else 8)
        runs.append(serq_sim.run(prog, pm=pm))
    assert encode_json(runs[0]) == encode_json(runs[1])
    for r in runs:
        assert _samples(r) == _samples(fifo)
    w = runs[0].stats("wait")
    assert w.count > 15000 and abs(w.mean - 0.5) < 0.05 and w.ci < 0.1 * 0.5
    stages = members(runs[0], "stage", "s")
    assert len(stages) == 12 and all(abs(s.utilisation - 0.5) < 0.05 for s in stages)
