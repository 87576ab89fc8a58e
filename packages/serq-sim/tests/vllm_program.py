"""The vllm_request program (language.txt §7) built as IR for one oracle scenario.

Per request a session (a preset: arrives at ``arrive``, attributes ``prompt`` and ``o``; a multi-turn
session is one preset with turns, ``think`` a delay between turns) runs on one step engine ``E`` (budget
B, cost 1, chunk the long-prefill threshold while more than one request runs or waits, memory ``kv``,
serve by the scenario's key) with pools ``reqs {cap max_seqs; admit via E}`` and
``kv {cap (num_blocks - 1) * bs; block bs; evict lru; preempt lifo}``::

    set t0 = now;
    hold reqs (1), kv (min(known, hit + budget_left(E))) reserve (known) {
        set known = computed < prompt ? prompt : computed + 1;
        set c = cached;
        prefill (known - c) growing kv;
        observe first = now;
        decode (o - 1 - (known - prompt)) growing kv;
        observe done = now;
    } cache (prompt + o);                   -- only with prefix caching

with ``known`` and ``hit = min(cachedin(kv), floor((known - 1) / bs) * bs)`` substituted in the header.
"""

from __future__ import annotations

import json
from pathlib import Path

from irb import P, b, call, cond, ctx, neg, num, obs
from serq_ir import nodes as N

HERE = Path(__file__).parent / "oracle"


def serve_key(key: str) -> N.ServeBy:
    if key == "admission":
        return N.ServeBy(keys=[])
    if key == "-admission":
        return N.ServeBy(keys=[neg(ctx("admission"))])
    if key == "decoding ? 1 : 0":
        return N.ServeBy(keys=[cond(ctx("decoding"), 1, 0)])
    raise ValueError(key)


def program(sc: dict) -> N.Program:
    p = P()
    bs = sc["block_size"]
    caching = bool(sc.get("prefix_caching", False))
    chunk = sc.get("chunk") or 0
    reqs_i = len(p.pools)
    # FCFS, and among requests submitted at one instant the driver's order (the request index)
    reqs = p.pool("reqs", cap=float(sc["max_seqs"]), admit_via=0,
                  queue=N.QueueBy(keys=[p.ex("t0"), p.ex("idx")]))
    kv = p.pool("kv", cap=float((sc["num_blocks"] - 1) * bs), block=float(bs), evict=N.EvictLru(),
                preempt=N.PreemptBy(keys=[neg(ctx("admission"))], requeue="head"))
    assert reqs_i == 0
    chunk_e = None
    if chunk:
        chunk_e = cond(b(">", b("+", ctx("residents"), obs("queued", reqs)), 1), chunk, num("inf"))
    e = p.stage("E", N.Step(budget=num(sc["budget"]), cost=num(1), chunk=chunk_e,
                            serve=serve_key(sc.get("serve", "admission")), memory=1))
    think = p.stage("think", N.Delay())
    prompt, o, computed = p.ex("prompt"), p.ex("o"), p.ex("computed")
    known_e = cond(b("<", computed, prompt), prompt, b("+", computed, 1))
    hit_e = call("min", obs("cachedin", kv), b("*", call("floor", b("/", b("-", known_e, 1), bs)), bs))
    units = call("min", known_e, b("+", hit_e, obs("budget_left", e)))
    body = [
        p.set_("known", known_e),
        p.set_("c", "cached"),
        p.observe("cached", "c"),
        p.run(e, b("-", p.ex("known"), p.ex("c")), "prefill", growing=kv),
        p.observe("first", "now"),
        p.run(e, b("-", b("-", o, 1), b("-", p.ex("known"), prompt)), "decode", growing=kv),
        p.observe("done", "now"),
    ]
    request = [
        p.set_("t0", "now"),
        p.hold([(reqs, 1), (kv, units, known_e)], body,
               cache=b("+", prompt, o) if caching else None),
    ]
    reqs_list = sc["requests"]
    multi = any("session" in r for r in reqs_list)
    presets = []
    index = {}  # (session serial, turn number) -> request index
    if not multi:
        for i, r in enumerate(reqs_list):
            presets.append(N.Preset(at=float(r.get("arrive", 0)), attrs=[
                N.SlotValue(slot=p.slot("idx"), value=float(i)),
                N.SlotValue(slot=p.slot("prompt"), value=float(r["prompt"])),
                N.SlotValue(slot=p.slot("o"), value=float(r["out"]))]))
        # serials go in arrival order (presets arriving together: in preset order)
        order = sorted(range(len(presets)), key=lambda i: (presets[i].at, i))
        for serial, i in enumerate(order):
            index[(serial, 0)] = i
        session = request
    else:
        p.slot("more")
        sessions: dict[int, list[tuple[int, dict]]] = {}
        for i, r in enumerate(reqs_list):
            sessions.setdefault(r["session"], []).append((i, r))
        groups = sorted(sessions.values(), key=lambda ts: (float(min(r.get("arrive", 0) for _, r in ts)),
                                                          min(i for i, _ in ts)))
        for serial, turns in enumerate(groups):
            turns.sort(key=lambda ir: ir[1]["turn"])
            presets.append(N.Preset(at=float(turns[0][1].get("arrive", 0)), turns=[[
                N.SlotValue(slot=p.slot("idx"), value=float(i)),
                N.SlotValue(slot=p.slot("prompt"), value=float(r["prompt"])),
                N.SlotValue(slot=p.slot("o"), value=float(r["out"])),
                N.SlotValue(slot=p.slot("think"), value=float(r.get("think", 0)))] for i, r in turns]))
            for k, (i, _r) in enumerate(turns):
                index[(serial, k + 1)] = i
        session = [N.Turn(), N.Loop(body=[
            *request,
            p.branch("more", [N.Turn(), p.run(think, "think")], [N.End()]),
        ])]
    prog = p.build(session, presets=presets)
    return prog, index


def load(name: str, serve: bool = False) -> tuple[dict, dict]:
    d = HERE / "serve" if serve else HERE
    return json.loads((d / f"{name}.json").read_text()), json.loads((d / f"{name}.out.json").read_text())


def answers(report, index) -> dict:
    """``first``, ``done``, ``cached`` per request index, and the total preemptions."""
    out: dict = {"first": {}, "done": {}, "cached": {}}
    for name in ("first", "done", "cached"):
        o = report.observe(name)
        for v, s, t in zip(o.values, o.sessions, o.turns):
            i = index[(int(s), int(t))]
            if name == "done":
                out[name][str(i)] = int(v)  # the last sample
            elif str(i) not in out[name]:
                out[name][str(i)] = int(v)  # the first sample
    out["preemptions"] = sum(pl.preemptions for pl in report.result.pools)
    return out
