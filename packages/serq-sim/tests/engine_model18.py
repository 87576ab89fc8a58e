"""An independent model of a family of step engines behind a `choose` (test_conformance_round18_b.py):
N replicas, each vLLM's shape of engine (request slots, a KV pool of blocks with a prefix cache evicted in
LRU order, victims by `preempt lifo` or by keys), multi-turn sessions that go back to the replica their first
turn chose and there find their own cached prefix. Written from the spec's words (language.txt §3, pool-
reference.txt), not from the simulator's code; it uses engine_model16's key readings and orders.

Sessions arrive together at 0 and run in serial order; each first turn chooses the replica with the fewest
holders + queued (ties to the smallest index: §3 "choose: the keys, in order, then the smallest index"),
and its hold joins that replica's queue at once, so session s goes to s % N; later turns choose their home.
The replicas then share nothing: each is the one-engine model below on its own sessions, its own clock
(cost 1, so iteration k of a replica that has work from 0 runs over [k, k + 1]).
"""

from __future__ import annotations

import math

from engine_model16 import keys_of


def up(x, b):
    return math.ceil(x / b - 1e-12) * b


def down(x, b):
    return math.floor(x / b + 1e-12) * b


def replica(sessions, mine, B, K, block, cap, R, policy, requeue, serve, held=False, until=math.inf):
    """One engine serving the sessions ``mine`` (global serials, in serial order) of ``sessions`` (per
    session its turns ``[(P, D), (N, D2), …]``: a later turn's prompt is the last prompt and output plus N).
    Returns per session the admission times, the prefix each admission consumed, its holds' end times, and
    the times of the replica's preemptions and of its iterations' starts, for the iterations that start
    before ``until`` (a horizon). An engine with nothing to serve and no victim to take has nothing more to
    do (its queue's head cannot fit: no event will change that); one that preempts itself for ever runs
    until ``until``.

    The rules (§3 Stages, Pools; pool-reference `preempt`, `block`, `evict lru`): an iteration serves the
    residents in the serving order (admission order, or ascending `serve by` keys, ties in admission order),
    one token to a decoder and up to the chunk to a prefill until the budget is spent; a growing job first
    grows its hold to the position it will reach, rounded up to blocks, evicting cached blocks from the tail
    of the entry released first, and preempting when the allocations would pass the cap: the victim the
    last admitted (`lifo`) or the least keys (ties to the last admitted), which releases its hold, caches
    its position rounded down to blocks, gives back its tokens of the iteration and re-enters the queue at
    the head (`lifo`, `requeue head`) or last (`requeue tail`); a grower that is its own victim gets nothing,
    and under `lifo` the residents after it neither. Unless the iteration preempted, the stage admits from
    its queue while budget is left: the head fits when the slots and the pool have room for its units,
    min(known, hit + budget_left); it consumes its hit (the rest of its entry stays, dead, with its age),
    and takes up to the chunk. Tokens are applied at the iteration's end, where a finished prefill turns
    into its decode and a finished decode ends the hold: it caches min(P + D, position) rounded down, and
    the session's next turn joins the queue then, in the order the iteration served them.

    With ``held`` (`reserve held`, each hold reserving ``known`` rounded up to blocks: pool-reference
    `reserve held`), the unallocated part u_i of every live reservation counts: an admission of reservation
    r needs used + Σ u_i + r ≤ cap, a growth by d used + Σ_{i≠grower} u_i + d ≤ cap; a reservation ends with
    its hold or its preemption."""
    turn = {s: [0, sessions[s][0][0], sessions[s][0][1]] for s in mine}
    queue = list(mine)
    residents = []
    jobs = {}
    admits, hits, done = {}, {}, {}
    computed = dict.fromkeys(mine, 0)
    cache = []
    seq = 0
    preemptions, iterations = [], []
    used = 0
    finished = set()
    t = 0

    def evict():
        while used + sum(e["units"] for e in cache) > cap:
            e = min(cache, key=lambda e: (e["time"], e["order"]))
            e["units"] -= min(block, e["units"])
            if e["units"] <= 0:
                cache.remove(e)

    def put(owner, units):
        nonlocal seq
        if units > 0:
            seq += 1
            cache.append({"owner": owner, "units": units, "time": t, "order": seq})

    while len(finished) < len(mine) and t < until:
        left = B
        served = []
        preempted = stop = False
        order = list(residents)
        if serve is not None:
            order.sort(key=lambda c: keys_of(serve, c, jobs[c]))
        for s in order:
            if stop:
                break
            if s not in residents:
                continue
            job = jobs[s]
            tok = min(1 if job["mode"] == "decode" else K, job["rem"], left)
            if tok <= 0:
                break
            target = up(job["pos"] + tok, block)
            own = False
            while target > job["alloc"]:
                others = sum(max(0, j["res"] - j["alloc"]) for c, j in jobs.items() if c != s)
                if used + others + target - job["alloc"] <= cap:
                    used += target - job["alloc"]
                    job["alloc"] = target
                    evict()
                    break
                if policy == "lifo":
                    v = residents[-1]
                else:
                    best = None
                    for c in residents:
                        k = keys_of(policy, c, jobs[c])
                        if best is None or k <= best[0]:
                            best = (k, c)
                    v = best[1]
                preempted = True
                preemptions.append(float(t))
                jv = jobs.pop(v)
                residents.remove(v)
                used -= jv["alloc"]
                computed[v] = jv["pos"]
                _, P, D = turn[v]
                put(v, down(min(P + D, jv["pos"]), block))
                for i, (ss, tk) in enumerate(served):
                    if ss == v:
                        left += tk
                        del served[i]
                        break
                if policy == "lifo" or requeue == "head":
                    queue.insert(0, v)
                else:
                    queue.append(v)
                if v == s:
                    own = True
                    break
            if own:
                stop = policy == "lifo"
                continue
            left -= tok
            served.append((s, tok))
        if not preempted:
            while left > 0 and queue:
                s = queue[0]
                k, P, D = turn[s]
                known = max(P, computed[s])
                e = next((e for e in cache if e["owner"] == s), None)
                hit = min(e["units"] if e else 0, down(known - 1, block))
                units = up(min(known, hit + left), block)
                r = up(max(units, known), block) if held else units
                unallocated = sum(max(0, j["res"] - j["alloc"]) for j in jobs.values())
                if len(residents) + 1 > R or used + unallocated + r > cap:
                    break
                queue.pop(0)
                used += units
                if e is not None:
                    e["owner"] = None
                    e["units"] -= hit
                    if e["units"] <= 0:
                        cache.remove(e)
                evict()
                jobs[s] = {"mode": "prefill", "rem": known - hit, "pos": hit, "alloc": units,
                           "dec": D - (known - P), "res": r}
                residents.append(s)
                admits.setdefault(s, []).append(float(t))
                hits.setdefault(s, []).append(float(hit))
                tok = min(K, left, known - hit)
                left -= tok
                served.append((s, tok))
        if not served and not preempted:
            break
        iterations.append(float(t))
        t += 1
        for s, tok in served:
            job = jobs[s]
            job["pos"] += tok
            job["rem"] -= tok
            if job["rem"] > 0:
                continue
            if job["mode"] == "prefill":
                job["mode"], job["rem"] = "decode", job["dec"]
                continue
            jobs.pop(s)
            residents.remove(s)
            used -= job["alloc"]
            k, P, D = turn[s]
            computed[s] = 0
            put(s, down(min(P + D, job["pos"]), block))
            done.setdefault(s, []).append(float(t))
            if k + 1 < len(sessions[s]):
                N, D2 = sessions[s][k + 1]
                turn[s] = [k + 1, P + D + N, D2]
                queue.append(s)
            else:
                finished.add(s)
    return admits, hits, done, preemptions, iterations


def family(sessions, N, *engine, until=math.inf):
    """The N replicas: session s on replica s % N. Returns the sessions' admissions, hits and ends (merged),
    and per replica the times of its preemptions and of its iterations' starts."""
    admits, hits, done = {}, {}, {}
    per = []
    for j in range(N):
        mine = [s for s in range(len(sessions)) if s % N == j]
        a, h, d, p, it = replica(sessions, mine, *engine, until=until)
        admits.update(a)
        hits.update(h)
        done.update(d)
        per.append((p, it))
    return admits, hits, done, per
