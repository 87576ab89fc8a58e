"""What test_conformance_round16_b.py, test_conformance_round16_c.py and engine_model18.py share: the engine
models' key readings, their victim and serving orders, the program text they write, and the model of one
step engine with a prefix cache (:func:`prefix_engine`) that round 16_c checks the simulator against and
round 18_b's family runs one a replica (a helper module, not a test module: one test module importing
another is refused by packages/serq/tests/test_suite_layout.py)."""

from __future__ import annotations

import math


def up(x, b):
    return math.ceil(x / b - 1e-12) * b


class Stuck(Exception):
    """The model's engine cannot go on (a livelock of self-preemption, or a head that never fits)."""


def keys_of(names, s, job):
    out = []
    for k in names:
        sign = -1 if k.startswith("-") else 1
        name = k.lstrip("-")
        if name == "decoding":
            x = 1 if job["mode"] == "decode" else 0
        elif name == "position":
            x = job["pos"]
        elif name == "remaining":
            x = job["rem"]
        elif name == "admission":
            x = job["adm"]
        else:  # serial
            x = s
        out.append(sign * x)
    return tuple(out)


def choose(names):
    return ", ".join(names)


def ternary(values):
    e = str(values[-1])
    for i in range(len(values) - 2, -1, -1):
        e = f"serial == {i} ? {values[i]} : ({e})"
    return e


POLICIES = [("lifo", None), (("decoding", "-position"), "head"), (("decoding", "-position"), "tail"),
            (("position",), "tail"), (("-position",), "head"), (("-decoding", "position"), "tail"),
            (("serial",), "tail")]


#: victim orders reading `admission` (the fourth case)
BY_ADMISSION = [(("admission",), "tail"), (("admission",), "head"), (("decoding", "admission"), "tail"),
                (("-admission", "position"), "tail"), (("-admission", "serial"), "head")]


ORDERS = [None, ("remaining",), ("-remaining",), ("decoding",), ("-decoding",), ("-serial",),
          ("decoding", "-remaining")]


def down(x, b):
    return math.floor(x / b + 1e-12) * b


def prefix_engine(sessions, B, K, block, cap, R, policy, requeue, serve, held=False, *, mine=None,
                  until=math.inf, stuck_after=None):
    """One step engine with a prefix cache (test_conformance_round16_c.py states its rules, written from the
    spec's words; engine_model18.py runs one a replica of a family), serving the sessions ``mine`` (their
    serials in ``sessions``, in serial order; None: all). ``sessions``: per session its turns, ``[(P, D)]``
    or ``[(P, D), (N, D2)]``, a turn's third element, when there is one, true for a forced miss (`reuse
    (0)`): a later turn's prompt is the last prompt and output plus N. ``held``: each hold reserves
    ``known`` under `reserve held`. Returns per session the admission times, the prefix each admission
    consumed and the end times of its holds, and the times of the preemptions and of the iterations'
    starts (cost 1: iteration k runs over [k, k + 1]), for the iterations that start before ``until``.

    An engine that cannot go on (nothing to serve and no victim to take: its queue's head can never fit)
    raises :class:`Stuck` with ``stuck_after`` given, as does one still running past that time (a livelock
    of self-preemption); without, it returns what it did (one that preempts itself for ever runs until
    ``until``)."""
    mine = list(range(len(sessions))) if mine is None else mine
    turn = {s: [0, sessions[s][0][0], sessions[s][0][1]] for s in mine}  # turn index, P, D
    queue = list(mine)
    residents = []
    jobs = {}
    admits, hits, done = {}, {}, {}
    computed = dict.fromkeys(mine, 0)
    cache = []  # entries: owner (None: dead), units, release time, release order
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

    def own(s):
        return next((e for e in cache if e["owner"] == s), None)

    while len(finished) < len(mine) and t < until:
        if stuck_after is not None and t > stuck_after:
            raise Stuck
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
            victim_self = False
            while target > job["alloc"]:
                # under reserve held the others' unallocated reservations count against the growth
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
                    victim_self = True
                    break
            if victim_self:
                stop = policy == "lifo"
                continue
            left -= tok
            served.append((s, tok))
        if not preempted:
            while left > 0 and queue:
                s = queue[0]
                k, P, D = turn[s]
                known = max(P, computed[s])
                e = own(s)
                forced = len(sessions[s][k]) > 2 and sessions[s][k][2]
                hit = 0 if forced else min(e["units"] if e else 0, down(known - 1, block))
                units = up(min(known, hit + left), block)
                r = up(max(units, known), block) if held else units
                unallocated = sum(max(0, j["res"] - j["alloc"]) for j in jobs.values())
                if len(residents) + 1 > R or used + unallocated + r > cap:
                    break
                queue.pop(0)
                used += units
                if e is not None:  # consumed: the rest stays, dead, with its age
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
            if stuck_after is not None:
                raise Stuck
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
                N, D2 = sessions[s][k + 1][:2]
                turn[s] = [k + 1, P + D + N, D2]
                queue.append(s)
            else:
                finished.add(s)
    return admits, hits, done, preemptions, iterations
