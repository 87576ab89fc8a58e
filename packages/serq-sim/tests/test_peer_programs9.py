"""Programs of a ninth round of users (peer_programs9/*.sq): a prefix cache under a chat workload checked
request by request against a model of the cache written here, apart from the simulator (three eviction
orders, caps that make sessions wait and holds that can never fit); a context-length guard that rejects
the long prompts before they queue, in front of an M/M/c queue (the thinned Poisson stream, Erlang C);
a closed-loop chat benchmark on one vLLM v1 engine (the interactive response-time law, every history
found); a router over replicas with CPU offload tiers (tokens, spills and reads accounted for on a
drained run); priority classes with aging sharing a GPU's memory, checked admission by admission against a
model of the queue written here; P/D disaggregation of the requests that miss the decoder's cache (every
token on both sides, every KV read, every admission accounted for). Each runs on the tier serQ picks and on the general engine, which must agree byte for byte
(conform.both_tiers); statistical checks fix their seeds and assert a 95 % CI that covers the theory and
is narrow."""

from __future__ import annotations

import heapq
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conform import both_tiers, covers

HERE = Path(__file__).resolve().parent / "peer_programs9"
SERQ = [sys.executable, "-m", "serq"]


def both(name: str, monkeypatch, *, sets=None, **kw):
    return both_tiers(HERE / name, monkeypatch, sets=sets, **kw)


def serq(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SERQ_SIM_TIER"}
    return subprocess.run([*SERQ, *args], capture_output=True, text=True, timeout=300, env=env)


def pool(r, name, index=None):
    return next(p for p in r.result.pools if p.name == name and p.index == index)


def stage(r, name, index=None):
    return next(s for s in r.result.stages if s.name == name and s.index == index)


def erlang_c(c: int, a: float) -> float:
    """The chance that an arrival to M/M/c at offered load a waits (Erlang C), through Erlang B's
    recursion."""
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return c * b / (c - a * (1 - b))


# ---------------------------------------------------------------------------------------------------------
# lru_cache.sq: the prefix cache against a model of it


def cache_model(rows: list[dict], cap: float, bs: float, order: int):
    """The pool of lru_cache.sq replayed from its records' inputs (when each turn asked, how long it held,
    its sequence, its reuse bound, whether the session dropped its prefix on leaving), by the rules of
    language.txt §3 and pool-reference.txt alone: a FIFO admission queue whose head is admitted when its
    allocation (the sequence in whole blocks) fits beside the allocated units, cached units never blocking;
    on admission the session consumes its own entry up to the bound (the rest stays, dead, with the entry's
    age), then entries are evicted per block from the tail of the one the order picks (release time; the
    largest; the smallest; ties by release order) until the allocations and the cache fit; at release the
    sequence, rounded down to blocks, is cached as the session's entry, or dropped. Returns ({(session,
    turn): (cached, admitted)}, evicted units, entries evicted whole)."""
    heap: list = []
    serial = 0

    def push(t, kind, r):
        nonlocal serial
        serial += 1
        heapq.heappush(heap, (t, serial, kind, r))

    for r in rows:
        push(r["asked"], "join", r)
    queue: list = []
    entries: dict = {}
    own: dict = {}
    used = 0.0
    released = 0
    out = {}
    units = 0.0
    whole = 0

    def key(e):
        k = e["last"] if order == 0 else -e["size"] if order == 1 else e["size"]
        return (k, e["rel"])

    while heap:
        t, _, kind, r = heapq.heappop(heap)
        alloc = math.ceil(r["seq"] / bs) * bs
        if kind == "join":
            queue.append(r)
        else:
            used -= alloc
            released += 1
            keep = math.floor(min(r["seq"], alloc) / bs) * bs
            if not r["dropped"] and keep > 0:
                e = {"size": float(keep), "last": t, "rel": released, "owner": r["session"], "dead": False}
                entries[released] = e
                own[r["session"]] = released
        while queue and used + math.ceil(queue[0]["seq"] / bs) * bs <= cap:
            h = queue.pop(0)
            a = math.ceil(h["seq"] / bs) * bs
            mine = own.pop(h["session"], None)
            found = entries[mine]["size"] if mine is not None else 0.0
            hit = min(found, h["bound"], a)
            if mine is not None:
                if found - hit > 0:
                    entries[mine]["size"] = found - hit
                    entries[mine]["dead"] = True
                else:
                    del entries[mine]
            used += a
            cached = sum(e["size"] for e in entries.values())
            while used + cached > cap:
                vid = min(entries, key=lambda i: key(entries[i]))
                v = entries[vid]
                take = min(bs, v["size"])
                v["size"] -= take
                cached -= take
                units += take
                if v["size"] <= 0:
                    del entries[vid]
                    whole += 1
                    if not v["dead"]:
                        own.pop(v["owner"], None)
            out[(h["session"], h["turn"])] = (hit, t)
            push(t + (h["released"] - h["admitted"]), "release", h)
    return out, units, whole


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cap", [2048, 1024, 700])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_a_prefix_cache_under_chat_is_its_model_request_by_request(monkeypatch, order, cap):
    r = both("lru_cache.sq", monkeypatch, sets={"order": order, "cap": cap}, horizon=math.inf, arrivals=300)
    rec = r.records(kind="numpy")
    cols = ("session", "turn", "asked", "admitted", "released", "seq", "bound", "cached", "dropped")
    rows = [dict(zip(cols, vals)) for vals in zip(*(rec[c].tolist() for c in cols))]
    # (the model needs an order of events without ties: continuous draws give none)
    times = [x["asked"] for x in rows] + [x["released"] for x in rows]
    assert len(set(times)) == len(times)
    want, units, whole = cache_model(rows, cap, 16, order)
    assert len(want) == len(rows)
    for x in rows:
        hit, admitted = want[(x["session"], x["turn"])]
        assert x["cached"] == hit, (x, hit)
        assert abs(x["admitted"] - admitted) < 1e-9, (x, admitted)  # (its release times: up to rounding)
    kv = pool(r, "kv")
    assert kv.evicted_units == units and kv.evicted_entries == whole
    # every turn that asked was admitted or rejected (a sequence beyond the cap can never fit), and the
    # run drained: each admitted turn has its row
    assert r.result.turns == kv.admissions + kv.rejections and kv.admissions == len(rows)
    assert r.result.ended == r.result.arrivals == 300
    # the cases the model is held to happen: hits, partial hits, waits, drops, rejections at the small caps
    hits = np.array([x["cached"] for x in rows])
    bounds = np.array([x["bound"] for x in rows])
    assert (hits > 0).sum() > 10 and ((hits > 0) & (hits < bounds)).sum() > 0
    assert sum(x["admitted"] > x["asked"] for x in rows) > 10
    assert sum(x["dropped"] for x in rows) > 20
    assert kv.rejections >= 1
    assert ((hits >= 0) & (hits <= np.maximum(bounds, 0))).all()


# ---------------------------------------------------------------------------------------------------------
# maxlen_mmc.sq: a context-length guard in front of an M/M/c queue


@pytest.mark.timeout(120)
def test_a_context_length_guard_thins_the_arrivals_into_an_erlang_c_queue(monkeypatch):
    # prompts 1 + floor(X), X ~ exp(1000), refused beyond L = 1200 with probability exp(-1.2) = 0.301194;
    # the rest, Poisson at 3 (1 - 0.301194) = 2.096417, queue for three slots of mean service 1: Erlang C
    # 0.490595, Wq = C / (c - a) = 0.542944, the response 1.542944
    # (drained from an empty start: every session reaches the guard and is admitted or rejected there)
    r = both("maxlen_mmc.sq", monkeypatch, horizon=math.inf, warmup=0, arrivals=36000)
    p = math.exp(-1.2)
    a = 3 * (1 - p)
    wq = erlang_c(3, a) / (3 - a)
    assert abs(wq - 0.542944) < 1e-6
    covers(r.stats("long"), p, 0.03)
    covers(r.stats("wait"), wq, 0.2)
    covers(r.stats("response"), 1 + wq, 0.1)
    slots, ctx = pool(r, "slots"), pool(r, "ctx")
    # a rejected request never queued: every one that reached the guard after the warm-up was admitted or
    # rejected there, and its observe `long` says which (the session ends at the rejection)
    long = r.observes["long"].values
    assert len(long) == r.result.arrivals == r.result.ended == 36000
    assert ctx.rejections == int(long.sum())
    assert slots.admissions == ctx.admissions == int((long == 0).sum())
    assert slots.rejections == 0
    # Little's law on the report's own figures: the slots' mean queue is their admission rate times the
    # mean wait; the GPUs' mean number busy the completion rate times the mean service
    dur = r.result.end - r.result.warmup
    assert abs(slots.queue - slots.admissions / dur * slots.wait) < 0.02 * slots.queue
    gpu = stage(r, "gpu")
    assert abs(slots.holders - gpu.throughput * gpu.service) < 0.01 * slots.holders
    assert abs(slots.holders - a) < 0.05 * a


@pytest.mark.timeout(120)
def test_a_sweep_of_the_context_length_is_the_closed_forms_at_every_point(tmp_path):
    out = tmp_path / "t.csv"
    p = serq("sweep", str(HERE / "maxlen_mmc.sq"), "--set", "L=600,2400", "--seeds", "1..4", "--horizon", "inf",
             "--arrivals", "8000", "--warmup", "0", "--workers", "2", "--no-progress", "--out", str(out),
             "--show", "long.mean")
    assert p.returncode == 0, p.stderr
    import pandas as pd

    t = pd.read_csv(out)
    assert (t.status == "ok").all() and len(t) == 8
    pts = pd.read_csv(tmp_path / "t.points.csv")
    for L, m, ci in zip(pts.L, pts["observes.long.mean:mean"], pts["observes.long.mean:ci"]):
        assert abs(m - math.exp(-L / 1000)) <= ci and ci < 0.1 * math.exp(-L / 1000), (L, m, ci)
    # the rejections and admissions of every run add up to the sessions that reached the guard, and the
    # rejected share is the observe's mean (the same requests, counted two ways)
    rej, adm = t["pools.ctx.rejections"], t["pools.ctx.admissions"]
    assert np.allclose(rej / (rej + adm), t["observes.long.mean"], rtol=0, atol=1e-12)
    assert (rej + adm == t["observes.long.count"]).all()


# ---------------------------------------------------------------------------------------------------------
# closed_chat.sq: a closed-loop chat benchmark on one vLLM engine


@pytest.mark.timeout(120)
def test_a_closed_chat_benchmark_keeps_the_response_time_law_and_finds_every_history(monkeypatch):
    r = both("closed_chat.sq", monkeypatch, horizon=400)
    res = r.result
    rec = r.records(kind="numpy")
    n = len(rec["session"])
    window = res.end - res.warmup
    X = n / window
    R = float((rec["last_token"] - rec["sent"]).mean())
    Z = r.stats("think").mean
    # the interactive response-time law N = X (R + Z), up to the cycles in flight at the window's ends
    # (about N of them against the thousands completed)
    assert abs(X * (R + Z) - 12) < 12 * 0.02, (X, R, Z)
    # N is the users thinking, queued and held: the report's places add up to the population at every
    # instant, so their time averages do too
    assert math.isclose(res.mean_live, 12, rel_tol=1e-12)
    assert abs(stage(r, "user").present + pool(r, "reqs").holders + pool(r, "reqs").queue - 12) < 1e-9
    # every follow-up finds its whole history but the last token in whole blocks, a first turn nothing; the
    # report's prefix-cache hit rate is the records' cached tokens over their prompt tokens
    assert (r.observes["history_found"].values == 0).all()
    assert (rec["cached"][rec["turn"] == 1] == 0).all() and (rec["cached"][rec["turn"] > 1] > 0).any()
    rate = res.requests.prefix_cache_hit_rate
    assert 0 <= rate <= 1 and rate == rec["cached"].sum() / rec["prompt"].sum()
    assert pool(r, "kv").preemptions == 0 and (rec["preemptions"] == 0).all()


# ---------------------------------------------------------------------------------------------------------
# offload_router.sq: replicas with CPU offload tiers behind a router


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("policy", "bw"), [(0, 100000), (1, 100000), (1, 1e12)])
def test_replicas_with_offload_tiers_account_for_every_token_spill_and_read(monkeypatch, policy, bw):
    r = both("offload_router.sq", monkeypatch, sets={"policy": policy, "bw": bw}, arrivals=250)
    res = r.result
    assert res.arrivals == res.ended == 250
    rec = r.records(kind="numpy")
    assert len(rec["session"]) == res.turns
    assert len(set(zip(rec["session"].tolist(), rec["turn"].tolist()))) == res.turns
    eng = rec["engine"]
    assert len(set(eng.tolist())) == 3
    reus = np.where(rec["history"] > 0, (rec["history"] - 1) // 16 * 16, 0)
    got = rec["gpu"] + rec["cpu"]
    # the two tiers give at most the history but its last token, in whole blocks, and never more than
    # that on the GPU alone
    assert (got <= reus).all() and (rec["gpu"] % 16 == 0).all() and (rec["cpu"] % 16 == 0).all()
    full = (got == reus).mean()
    if policy == 1:
        # every history is on its own replica: all of it is found, but for a block whose write had not
        # landed when the turn read the tier (a write in flight; with a fast link, only one evicted at
        # the very instant of the turn's admission)
        assert full > (0.999 if bw > 1e6 else 0.99)
        assert (rec["cpu"] > 0).sum() > 100
    else:
        # least KV used scatters a conversation over the replicas, which do not share their caches
        assert full < 0.7
    for j in range(3):
        mine = eng == j
        e, kv, cpu, reqs, link = (stage(r, "E", j), pool(r, "kv", j), pool(r, "cpu", j), pool(r, "reqs", j),
                                  stage(r, "pcie", j))
        assert reqs.admissions == kv.admissions == cpu.admissions == int(mine.sum())
        assert kv.preemptions == 0 and e.requests == int(mine.sum())
        computed = float((rec["prompt"] - rec["gpu"] - rec["cpu"] + rec["output"] - 1)[mine].sum())
        assert math.isclose(e.tokens * e.iterations, computed, rel_tol=1e-12)
        # a spill is a block (the GPU's entries are evicted per block) written as a job of its own; a read
        # of more than nothing is one more job; a read of nothing takes no time and is no completion
        assert kv.spills * 16 == kv.evicted_units
        assert link.completions == kv.spills + int((rec["cpu"][mine] > 0).sum())
        # (a write's time on a fast link is below the clock's resolution at these times)
        if bw < 1e6:
            assert math.isclose(link.service * link.completions,
                                (kv.evicted_units + float(rec["cpu"][mine].sum())) / bw, rel_tol=1e-9)


# ---------------------------------------------------------------------------------------------------------
# prio_aging.sq: priority classes with aging, against a model of the queue


def queue_model(rows: list[dict], cap: float, age: float) -> dict:
    """The pool of prio_aging.sq replayed from its records' join times and service times, by
    pool-reference.txt's `queue`: at every join and every release, while the queue is not empty, the
    waiting hold of least keys (the key 0 once it has waited `age`, else its class; then the larger
    request first; ties by join order), read then, is admitted if it fits, and otherwise blocks the rest.
    Returns {session: admission time}."""
    heap: list = []
    n = 0
    for r in rows:
        n += 1
        heapq.heappush(heap, (r["asked"], n, "join", r))
    queue: list = []
    used = 0.0
    out = {}
    joined = 0
    while heap:
        t, _, kind, r = heapq.heappop(heap)
        if kind == "join":
            joined += 1
            queue.append((joined, r))
        else:
            used -= r["u"]
        while queue:
            j, h = min(queue, key=lambda x: (0 if t - x[1]["asked"] >= age else x[1]["cls"], -x[1]["u"], x[0]))
            if used + h["u"] > cap:
                break
            queue.remove((j, h))
            used += h["u"]
            out[h["session"]] = t
            n += 1
            heapq.heappush(heap, (t + h["released"] - h["admitted"], n, "release", h))
    return out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("age", [0, 1, 3, math.inf])
def test_priority_classes_with_aging_are_their_model_admission_by_admission(monkeypatch, age):
    r = both("prio_aging.sq", monkeypatch, sets={"A": age})
    rec = r.records(kind="numpy")
    cols = ("session", "asked", "admitted", "released", "cls", "u")
    rows = [dict(zip(cols, vals)) for vals in zip(*(rec[c].tolist() for c in cols))]
    assert len(rows) == 3000
    want = queue_model(rows, 16, age)
    # (the model's release times are its admission times plus the recorded durations: equal up to rounding)
    assert all(abs(x["admitted"] - want[x["session"]]) < 1e-9 for x in rows)
    waits = {c: np.mean([x["admitted"] - x["asked"] for x in rows if x["cls"] == c]) for c in (1, 2, 3)}
    if age == math.inf:  # strict priority: the classes wait in their order
        assert waits[1] < waits[2] < waits[3]
    mem = pool(r, "mem")
    assert mem.admissions == 3000 and mem.wait > 0


# ---------------------------------------------------------------------------------------------------------
# pd_split.sq: P/D disaggregation of the requests that miss the decoder's cache


@pytest.mark.timeout(120)
def test_pd_disaggregation_accounts_for_every_token_on_both_sides(monkeypatch):
    r = both("pd_split.sq", monkeypatch)
    res = r.result
    assert res.arrivals == res.ended == 150
    rec = r.records(kind="numpy")
    assert len(rec["session"]) == res.turns == res.requests.completed
    split = rec["split"] == 1
    assert 0 < int((~split).sum()) < int(split.sum())  # (both paths are taken)
    assert sum(p.preemptions for p in r.result.pools) == 0
    # the router split the requests of which more than 256 prompt tokens missed the decoder's cache when it
    # looked; by the admission an eviction may have taken some of what it saw, never added to it
    reusable = (rec["prompt"] - 1) // 16 * 16
    assert (split == (rec["prompt"] - rec["routed_hit"] > 256)).all()
    assert (rec["cached_d"][~split] <= rec["routed_hit"][~split]).all()
    assert (rec["cached_d"] <= reusable).all() and (rec["cached_p"] <= reusable).all()
    for i in range(2):
        mine = rec["prefiller"] == i
        e = stage(r, "P", i)
        # a prefiller computes the prompt it did not find cached, and samples nothing more
        assert math.isclose(e.tokens * e.iterations, float((rec["prompt"] - rec["cached_p"])[mine].sum()),
                            rel_tol=1e-12)
        assert pool(r, "P.reqs", i).admissions == int(mine.sum()) == e.requests
    for j in range(3):
        mine = rec["decoder"] == j
        sp, lo = mine & split, mine & ~split
        e = stage(r, "D", j)
        # a split request: one token of prefill (the last prompt token, never read) and its decode; a local
        # one: its uncached prompt and its decode but the first token
        want = rec["output"][sp].sum() + (rec["prompt"] - rec["cached_d"] + rec["output"] - 1)[lo].sum()
        assert math.isclose(e.tokens * e.iterations, float(want), rel_tol=1e-12)
        # the decoder's NIC read once for each split request; its slots took a split request twice (parked
        # for the read without a slot, then the slot) and a local one once; its KV admitted each once
        assert stage(r, "D.nic", j).completions == int(sp.sum())
        assert pool(r, "D.reqs", j).admissions == 2 * int(sp.sum()) + int(lo.sum())
        assert pool(r, "D.kv", j).admissions == int(mine.sum())
    # the request metrics are the records': TTFT from the send to the decoder's first token
    ttft = rec["first_token"] - rec["sent"]
    assert math.isclose(res.requests.ttft.mean, float(ttft.mean()), rel_tol=1e-12)
