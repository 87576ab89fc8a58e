"""The benchmark's plain-Python vLLM peer (bench/vllm_peer.py) does the work serQ's vLLM programs do.

Two kinds of truth: the real scheduler's answers on every oracle scenario the peer can express (served in
admission order), and serQ itself given the same requests (bench/vllm_preset.sq, the engine of
bench/vllm_single.sq and of examples/multi-turn/vllm.sq): request by request, the same first-token and
done times, prefix-cache hits and preemptions. A peer that skipped block growth, the prefix cache or
preemption would differ on the instances below, each built to need them (the test says which it saw).
"""

from __future__ import annotations

import importlib.util
import json
import math
import random
import sys
from pathlib import Path

import msgspec
import pytest

REPO = Path(__file__).resolve().parents[3]
ORACLE_DIRS = [REPO / "packages" / "serq-vllm" / "src" / "serq_vllm" / "oracle",
               REPO / "packages" / "serq-sim" / "tests" / "oracle"]


def _load_peer():
    spec = importlib.util.spec_from_file_location("vllm_peer", REPO / "bench" / "vllm_peer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vllm_peer"] = mod
    spec.loader.exec_module(mod)
    return mod


peer = _load_peer()


def _scenarios():
    out = []
    for d in ORACLE_DIRS:
        for path in sorted(d.rglob("*.json")):
            if path.name.endswith((".out.json", ".target.json")):
                continue
            ans = path.with_name(path.name[: -len(".json")] + ".out.json")
            if not ans.exists():
                continue
            sc = json.loads(path.read_text())
            if sc.get("serve", "admission") == "admission":
                out.append(pytest.param(path, ans, id=path.relative_to(REPO).as_posix()))
    return out


SCENARIOS = _scenarios()


def test_the_peer_expresses_the_oracle_scenarios():
    # every scenario without a serving order other than admission: 24 of them today
    assert len(SCENARIOS) >= 24


@pytest.mark.parametrize("path, answer", SCENARIOS)
def test_the_peer_matches_the_real_scheduler(path, answer):
    got = peer.run_scenario(json.loads(path.read_text()))
    want = json.loads(answer.read_text())
    for field in ("first", "done", "preempted", "cached"):
        if field in want:
            assert {k: got[field][k] for k in want[field]} == want[field], field
    assert got["preemptions"] == want["preemptions"]
    assert got["steps"] == want["steps"]


# --- the same requests through serQ and through the peer -------------------------------------------------

SINGLE = {"B": 512.0, "max_seqs": 64.0, "bs": 16.0, "blocks": 8000.0}
MULTI = {"B": 2048.0, "max_seqs": 256.0, "bs": 16.0, "blocks": 8010.0}


def _single_turn(n, seed, rate, prompt=1000.0, out=200.0):
    """Requests as bench/vllm_single.sq draws them (with Python's random): [(arrive, [(prompt, o, think)])]."""
    rng = random.Random(seed)
    t, sessions = 0.0, []
    for _ in range(n):
        t += rng.expovariate(rate)
        sessions.append((t, [(1 + math.floor(rng.expovariate(1 / prompt)), 1 + math.floor(rng.expovariate(1 / out)), 0.0)]))
    return sessions


def _multi_turn(n, seed, rate):
    """Sessions as examples/multi-turn/vllm.sq draws them: each turn extends the whole conversation."""
    rng = random.Random(seed)
    t, sessions = 0.0, []
    for _ in range(n):
        t += rng.expovariate(rate)
        turns, k = [], 0
        while True:
            new = 1 + math.floor(rng.expovariate(1 / 400))
            o = 1 + math.floor(rng.expovariate(1 / 200))
            turns.append((k + new, o, rng.expovariate(1 / 5)))
            k += new + o
            if rng.random() >= 0.8:
                break
        sessions.append((t, turns))
    return sessions


def _serq(sessions, sets):
    from serq_frontend import compile as compile_program
    from serq_ir import nodes as n
    from serq_sim import run

    program = compile_program(REPO / "bench" / "vllm_preset.sq", sets=sets, defs={})
    slot = {a.name: i for i, a in enumerate(program.attributes)}
    presets, index, idx = [], {}, 0
    for s, (at, turns) in enumerate(sessions):
        rows = []
        for k, (prompt, o, think) in enumerate(turns):
            more = k + 1 < len(turns)
            rows.append([n.SlotValue(slot=slot["idx"], value=float(idx)),
                         n.SlotValue(slot=slot["prompt"], value=float(prompt)),
                         n.SlotValue(slot=slot["o"], value=float(o)),
                         n.SlotValue(slot=slot["think_time"], value=float(think) if more else 0.0),
                         n.SlotValue(slot=slot["more"], value=1.0 if more else 0.0)])
            index[(s, k + 1)] = idx
            idx += 1
        presets.append(n.Preset(at=float(at), turns=rows))
    program = msgspec.structs.replace(program, workload=msgspec.structs.replace(program.workload, presets=presets))
    report = run(program)

    def per_request(name):
        ob = report.observe(name)
        return {index[(int(s), int(t))]: v for s, t, v in zip(ob.sessions.tolist(), ob.turns.tolist(), ob.values.tolist())}

    return {name: per_request(name) for name in ("first_token", "done", "hit", "preempted")}


def _peer(sessions, sets, chunk=math.inf):
    eng = peer.Engine(int(sets["B"]), int(sets["max_seqs"]), int(sets["bs"]), int(sets["blocks"]),
                      chunk=sets.get("C", chunk), cost=peer.A100)
    arrivals, idx, reqs = [], 0, []
    for s, (at, turns) in enumerate(sessions):
        prev = None
        for prompt, o, think in turns:
            r = peer.Req(idx, s, prompt, o, at)
            reqs.append(r)
            idx += 1
            if prev is None:
                arrivals.append((at, r))
            else:
                prev[0].nxt = (prev[1], r)
            prev = (r, think)
    done = peer.simulate(eng, arrivals)
    # what the program observes: hit at the first admission, first_token when the prefill first ends, done
    # and preempted when the request is done
    return {"first_token": {r.idx: r.first for r in reqs if r.first is not None},
            "done": {r.idx: r.done for r in done},
            "hit": {r.idx: float(r.hit_tokens) for r in reqs if r.hit_tokens >= 0},
            "preempted": {r.idx: float(r.runs - 1) for r in done}}, eng


CASES = {
    # name: (sessions, sets, what the instance must exercise)
    "single-turn": (_single_turn(400, 1, 6.0), SINGLE, ()),
    "single-turn, preemption-heavy (300 blocks)": (_single_turn(300, 2, 6.0), SINGLE | {"blocks": 300.0},
                                                   ("preempted", "hit")),
    "single-turn, chunk cap 96, 400 blocks": (_single_turn(300, 3, 6.0), SINGLE | {"blocks": 400.0, "C": 96.0},
                                              ("preempted",)),
    "multi-turn": (_multi_turn(40, 4, 0.3), MULTI, ("hit",)),
    "multi-turn, 600 blocks (evictions and preemptions)": (_multi_turn(40, 5, 0.5), MULTI | {"blocks": 600.0},
                                                           ("hit", "preempted")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_peer_does_what_serq_does(name):
    sessions, sets, needs = CASES[name]
    want = _serq(sessions, sets)
    got, eng = _peer(sessions, sets)
    nreq = sum(len(t) for _, t in sessions)
    # a request that can never fit is rejected (its session ends) on both sides: none here but one prompt
    # of over 4 800 tokens in the 300-block instance
    assert len(got["done"]) == nreq - len(eng.rejected) >= nreq - 1
    for field in ("hit", "preempted"):
        assert got[field] == want[field], field
    for field in ("first_token", "done"):
        # the same float operations in the same order: equal to the last bit, or within rounding
        assert got[field].keys() == want[field].keys()
        for k, v in want[field].items():
            assert got[field][k] == pytest.approx(v, rel=1e-12, abs=1e-12), (field, k)
    # the instance exercises what it was built for
    if "preempted" in needs:
        assert eng.preemptions > 0
    if "hit" in needs:  # a prefix-cache hit at some admission (a preempted request's own prefix counts)
        assert eng.hit_total > 0
    if "preempted" not in needs and "hit" not in needs:
        assert eng.preemptions == 0


def test_the_peer_answers_the_benchmark_scenario_as_serq_vllm_scenario_does():
    # bench/scenario_1000.json: 1 000 requests in 400 sessions of 1-5 turns, chunk cap, prefix caching,
    # 600 blocks: preemptions, evictions and partial hits
    from serq_vllm.scenarios import run_scenario

    sc = json.loads((REPO / "bench" / "scenario_1000.json").read_text())
    want = run_scenario(sc)
    got = peer.run_scenario(sc)
    assert want["preemptions"] > 100 and sum(want["cached"].values()) > 0
    for field in ("first", "done", "preempted", "cached", "preemptions", "steps"):
        assert got[field] == want[field], field
