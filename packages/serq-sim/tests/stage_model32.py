"""An independent model of a fifo(c), ps(φ) or delay stage (test_conformance_round32_stage_model.py), written
from language.txt §3's words, not from the simulator's code: "fifo(c): c servers, jobs in arrival order at
rate 1. ps(φ): every job at once, each at φ(present)/present. delay: every job on its own at rate 1", and
Ties: "Events at one instant: the order they were scheduled". A session: `run d (A); run s (W); observe t =
now;`, sessions of `arrive batch(n)` started at 0 in serial order (a delay of 0 completes at once, so those
sessions reach s first, in serial order, then the others by the time their delay ends, ties in serial
order, the order their delays were scheduled).
"""

from __future__ import annotations

import math
import random


def draw(rng: random.Random) -> tuple[str, float | None, list[dict]]:
    kind = rng.choice(["fifo", "ps", "delay"])
    par = rng.choice([1, 2, 3]) if kind == "fifo" else rng.choice([0.5, 1, 2.5]) if kind == "ps" else None
    sessions = [dict(A=rng.choice([0, 0.5, 1, rng.uniform(0, 3)]), W=rng.choice([0.5, 1, rng.uniform(0.1, 3)]))
                for _ in range(rng.randint(2, 8))]
    return kind, par, sessions


def program(kind: str, par, sessions: list[dict]) -> str:
    def table(k):
        e = repr(sessions[-1][k])
        for s in range(len(sessions) - 2, -1, -1):
            e = f"serial == {s} ? {sessions[s][k]!r} : ({e})"
        return e

    stage = {"fifo": f"fifo({par})", "ps": f"ps({par})", "delay": "delay"}[kind]
    return (f"stage s : {stage};\nstage d : delay;\nworkload {{ arrive batch({len(sessions)}); }}\n"
            f"session {{\n  set A = {table('A')};\n  set W = {table('W')};\n  run d (A);\n  run s (W);\n"
            "  observe t = now;\n}\nrun { horizon 1000; }\n")


def model(kind: str, par, sessions: list[dict]) -> dict[int, float]:
    """Each session's end at s."""
    arrival = sorted(range(len(sessions)), key=lambda s: (sessions[s]["A"] > 0, sessions[s]["A"], s))
    done = {}
    if kind == "delay":
        return {s: p["A"] + p["W"] for s, p in enumerate(sessions)}
    if kind == "fifo":
        free = [0.0] * par
        for s in arrival:
            i = min(range(par), key=lambda i: free[i])  # the server free first
            free[i] = max(free[i], sessions[s]["A"]) + sessions[s]["W"]
            done[s] = free[i]
        return done
    t, left, pending = 0.0, {}, list(arrival)
    while pending or left:
        t_arrive = sessions[pending[0]]["A"] if pending else math.inf
        rate = par / len(left) if left else 0.0
        t_end = t + min(left.values()) / rate if left else math.inf
        step = min(t_arrive, t_end) - t
        for s in left:
            left[s] -= step * rate
        t += step
        if t_arrive <= t_end and pending:
            s = pending.pop(0)
            left[s] = sessions[s]["W"]
        else:
            for s in [s for s in left if left[s] <= 1e-12 * max(1.0, sessions[s]["W"])]:
                done[s] = t
                del left[s]
    return done


#: a step stage's serve clause and the key the model sorts the residents by (then admission order)
SERVES = [
    ("", lambda r: ()),
    ("serve decode first;", lambda r: (0 if r["decoding"] else 1,)),
    ("serve by (remaining);", lambda r: (r["rem"],)),
    ("serve by (-remaining);", lambda r: (-r["rem"],)),
    ("serve by (decoding, remaining);", lambda r: (1 if r["decoding"] else 0, r["rem"])),
    ("serve by (-admission);", lambda r: (-r["adm"],)),
]


def draw_step(rng: random.Random):
    """A step engine (budget, chunk or none, a slot pool it admits, a serve clause) and sessions that arrive
    on a grid of 0.5 with a prefill and a decode."""
    budget, chunk, slots = rng.randint(2, 10), rng.choice([None, None, rng.randint(1, 6)]), rng.randint(1, 5)
    sessions = [dict(A=rng.choice([0, 0, 0.5, 1, 2, 2.5, 4]), P=rng.randint(1, 12), D=rng.randint(0, 5))
                for _ in range(rng.randint(2, 6))]
    return budget, chunk, slots, rng.randrange(len(SERVES)), sessions


def program_step(budget, chunk, slots, serve, sessions) -> str:
    def table(k):
        e = repr(sessions[-1][k])
        for s in range(len(sessions) - 2, -1, -1):
            e = f"serial == {s} ? {sessions[s][k]!r} : ({e})"
        return e

    ch = f" chunk {chunk};" if chunk else ""
    return (f"pool q {{ cap {slots}; admit via E; }}\nstage E : step {{ budget {budget};{ch} cost 1; "
            f"{SERVES[serve][0]} }}\nstage d : delay;\nworkload {{ arrive batch({len(sessions)}); }}\n"
            f"session {{\n  set A = {table('A')};\n  set P = {table('P')};\n  set D = {table('D')};\n"
            "  run d (A);\n  hold q (1) { observe a = now; run E prefill (P); observe f = now; run E decode (D); }\n"
            "  observe e = now;\n}\nrun { horizon 1000; }\n")


def model_step(budget, chunk, slots, serve, sessions):
    """The admissions, prefill ends and ends of program_step's sessions: §3's step stage, "The residents are
    served the way serve names … (ties in admission order) … One token to a decoding job, up to chunk to a
    prefilling one, until the budget is spent; … then the stage admits from the queues it serves", "at the
    start of an iteration, after the residents have taken their tokens, while the iteration has budget
    left"; "The iteration advances the clock by C …; its tokens are applied when it ends. A run of zero work
    completes at once. An iteration that schedules no token is not an iteration"; an idle engine plans once
    every event of the instant is done (the arrivals at an iteration's end included)."""
    key, ch = SERVES[serve][1], chunk or math.inf
    arrivals = sorted(range(len(sessions)), key=lambda s: (sessions[s]["A"], s))
    queue, residents, served = [], [], {}
    obs = {"a": [], "f": [], "e": []}
    admitted = holders = nxt = 0
    t, busy_until = 0.0, None
    while True:
        t_arrive = sessions[arrivals[nxt]]["A"] if nxt < len(arrivals) else math.inf
        t_next = min(t_arrive, busy_until if busy_until is not None else math.inf)
        if t_next != math.inf:
            t = t_next
            while nxt < len(arrivals) and sessions[arrivals[nxt]]["A"] == t:
                queue.append(arrivals[nxt])
                nxt += 1
            if busy_until == t:
                busy_until = None
                for r in list(residents):
                    r["rem"] -= served.get(r["s"], 0)
                    if served.get(r["s"]) and r["rem"] == 0:
                        if not r["decoding"]:
                            obs["f"].append((r["s"], t, t))
                            if sessions[r["s"]]["D"] > 0:
                                r["decoding"], r["rem"] = True, sessions[r["s"]]["D"]
                                continue
                        obs["e"].append((r["s"], t, t))
                        residents.remove(r)
                        holders -= 1
        if busy_until is not None:
            continue
        left, served = budget, {}
        for r in sorted(residents, key=lambda r: (key(r), r["adm"])):
            if left <= 0:
                break
            served[r["s"]] = min(1 if r["decoding"] else min(r["rem"], ch), left)
            left -= served[r["s"]]
        while queue and left > 0 and holders < slots:
            s = queue.pop(0)
            residents.append(dict(s=s, decoding=False, rem=sessions[s]["P"], adm=admitted))
            admitted, holders = admitted + 1, holders + 1
            obs["a"].append((s, t, t))
            served[s] = min(sessions[s]["P"], ch, left)
            left -= served[s]
        if served:
            busy_until = t + 1
        elif nxt >= len(arrivals):
            break
    for k in obs:
        obs[k].sort(key=lambda z: (z[1], z[0]))
    return obs


def draw_kv(rng: random.Random):
    """A step engine whose memory is a KV pool of blocks under `preempt lifo` (its cap at least one
    session's prompt and output, up to three blocks more), and sessions on a grid of 0.5."""
    bs = rng.choice([1, 2, 4])
    budget, chunk, slots = rng.randint(2, 10), rng.choice([None, None, rng.randint(1, 6)]), rng.randint(1, 5)
    ss = [dict(A=rng.choice([0, 0, 0.5, 1, 2, 2.5, 4]), P=rng.randint(1, 10), D=rng.randint(0, 6))
          for _ in range(rng.randint(2, 5))]
    up = lambda x: math.ceil(x / bs) * bs  # noqa: E731
    cap = up(max(s["P"] + s["D"] for s in ss)) + bs * rng.randint(0, 3)
    return bs, cap, budget, chunk, slots, rng.randrange(len(SERVES)), ss


def program_kv(bs, cap, budget, chunk, slots, serve, ss) -> str:
    def table(k):
        e = repr(ss[-1][k])
        for s in range(len(ss) - 2, -1, -1):
            e = f"serial == {s} ? {ss[s][k]!r} : ({e})"
        return e
    ch = f" chunk {chunk};" if chunk else ""
    chx = f"min(budget_left(E), {chunk})" if chunk else "budget_left(E)"
    return (f"pool q {{ cap {slots}; admit via E; }}\npool kv {{ cap {cap}; block {bs}; preempt lifo; }}\n"
            f"stage E : step {{ budget {budget};{ch} cost 1; {SERVES[serve][0]} memory kv; }}\nstage d : delay;\n"
            f"workload {{ arrive batch({len(ss)}); }}\n"
            f"session {{\n  set A = {table('A')};\n  set P = {table('P')};\n  set D = {table('D')};\n"
            f"  run d (A);\n  hold q (1), kv (min(P, {chx})) {{ observe a = now; run E prefill (P) growing kv; "
            "observe f = now; run E decode (D) growing kv; }\n"
            "  observe e = now;\n}\nrun { horizon 1000; }\n")


def model_kv(bs, cap, budget, chunk, slots, serve, ss):
    """model_step's engine with its memory: each session holds q (1), kv (its first chunk, min(P,
    budget_left, chunk) read at admission) and runs prefill (P) then decode (D) growing kv. §3: "a growing
    job first grows its hold to the position it will reach (block by block, preempting if needed)"; "with
    preempt lifo the holder that is a resident of the step stage the pool is the memory of and was admitted
    last … is preempted …: its job leaves its stage, its hold is released …, and it re-enters the head of the
    pool's queue with the hold statement to execute again. The grower itself can be the victim" (its tokens
    planned in the iteration go back to the budget; a grower its own victim ends the iteration's serving, as
    vLLM's running loop breaks); "not in an iteration that preempted"; an iteration that only preempted
    lasts C. Returns the observes and the number of preemptions."""
    up = lambda x: math.ceil(x / bs) * bs  # noqa: E731
    key, ch = SERVES[serve][1], chunk or math.inf
    arrivals = sorted(range(len(ss)), key=lambda s: (ss[s]["A"], s))
    queue, residents, served = [], [], {}
    obs = {"a": [], "f": [], "e": []}
    f = dict(adm=0, holders=0, used=0, pre=0)
    nxt = 0
    t, busy_until = 0.0, None
    guard = 0
    while True:
        guard += 1
        assert guard < 100000, "the model loops"
        t_arrive = ss[arrivals[nxt]]["A"] if nxt < len(arrivals) else math.inf
        t_next = min(t_arrive, busy_until if busy_until is not None else math.inf)
        if t_next != math.inf:
            t = t_next
            while nxt < len(arrivals) and ss[arrivals[nxt]]["A"] == t:
                queue.append(arrivals[nxt])
                nxt += 1
            if busy_until == t:
                busy_until = None
                for r in list(residents):
                    r["rem"] -= served.get(r["s"], 0)
                    if served.get(r["s"]) and r["rem"] == 0:
                        if not r["decoding"]:
                            obs["f"].append((r["s"], t, t))
                            if ss[r["s"]]["D"] > 0:
                                r["decoding"], r["rem"] = True, ss[r["s"]]["D"]
                                continue
                        obs["e"].append((r["s"], t, t))
                        residents.remove(r)
                        f["holders"] -= 1
                        f["used"] -= r["alloc"]
        if busy_until is not None:
            continue
        left, served, preempted = budget, {}, False
        for r in sorted(residents, key=lambda r: (key(r), r["adm"])):
            if left <= 0:
                break
            if r not in residents:
                continue  # preempted earlier in this planning
            take = min(1 if r["decoding"] else min(r["rem"], ch), left)
            need = up(r["pos"] + take) - r["alloc"]
            own_victim = False
            while need > 0 and f["used"] + need > cap:
                v = max(residents, key=lambda x: x["adm"])
                residents.remove(v)
                f["used"] -= v["alloc"]
                f["holders"] -= 1
                f["pre"] += 1
                preempted = True
                left += served.pop(v["s"], 0)
                queue.insert(0, v["s"])
                if v is r:
                    own_victim = True
                    break
            if own_victim:
                break
            take = min(take, left)
            r["alloc"] += max(need, 0)
            f["used"] += max(need, 0)
            r["pos"] += take
            served[r["s"]] = take
            left -= take
        while not preempted and queue and left > 0 and f["holders"] < slots:
            s = queue[0]
            units = min(ss[s]["P"], min(left, ch))
            if f["used"] + up(units) > cap:
                break
            queue.pop(0)
            r = dict(s=s, decoding=False, rem=ss[s]["P"], adm=f["adm"], alloc=up(units), pos=0)
            f["adm"] += 1
            f["holders"] += 1
            f["used"] += up(units)
            residents.append(r)
            obs["a"].append((s, t, t))
            take = min(ss[s]["P"], ch, left)
            r["pos"] = take
            served[s] = take
            left -= take
        if served or preempted:
            busy_until = t + 1
        elif nxt >= len(arrivals):
            break
    for k in obs:
        obs[k].sort(key=lambda z: (z[1], z[0]))
    return obs, f["pre"]


def program_exclusive(budget, chunk, slots, sessions) -> str:
    """program_step's engine under `serve exclusive prefill`."""
    return program_step(budget, chunk, slots, 0, sessions).replace("cost 1;  }", "cost 1; serve exclusive prefill; }")


def model_exclusive(budget, chunk, slots, sessions):
    """The admissions, prefill ends and ends of program_exclusive's sessions: §3, "serve exclusive prefill
    selects either one prefill alone or a decode-only batch. A resident prefill takes precedence. Otherwise
    resident decodes are tentative: while budget is left, a waiting prefill that fits can replace them and
    use the full budget … Once a prefill is selected, no further waiting request is admitted in that
    iteration"; the first resident prefill in admission order goes alone, capped by the chunk; a waiting one
    is tried only while the tentative decodes leave budget (pool-reference.txt: "The usual fit,
    budget-exhaustion and preemption gates still apply")."""
    ch = chunk or math.inf
    arrivals = sorted(range(len(sessions)), key=lambda s: (sessions[s]["A"], s))
    queue, residents, served = [], [], {}
    obs = {"a": [], "f": [], "e": []}
    admitted = holders = nxt = 0
    t, busy_until = 0.0, None
    while True:
        t_arrive = sessions[arrivals[nxt]]["A"] if nxt < len(arrivals) else math.inf
        t_next = min(t_arrive, busy_until if busy_until is not None else math.inf)
        if t_next != math.inf:
            t = t_next
            while nxt < len(arrivals) and sessions[arrivals[nxt]]["A"] == t:
                queue.append(arrivals[nxt])
                nxt += 1
            if busy_until == t:
                busy_until = None
                for r in list(residents):
                    r["rem"] -= served.get(r["s"], 0)
                    if served.get(r["s"]) and r["rem"] == 0:
                        if not r["decoding"]:
                            obs["f"].append((r["s"], t, t))
                            if sessions[r["s"]]["D"] > 0:
                                r["decoding"], r["rem"] = True, sessions[r["s"]]["D"]
                                continue
                        obs["e"].append((r["s"], t, t))
                        residents.remove(r)
                        holders -= 1
        if busy_until is not None:
            continue
        served = {}
        prefills = [r for r in sorted(residents, key=lambda r: r["adm"]) if not r["decoding"]]
        if prefills:
            served[prefills[0]["s"]] = min(prefills[0]["rem"], ch, budget)
        else:
            left = budget
            for r in sorted(residents, key=lambda r: r["adm"]):
                if left <= 0:
                    break
                served[r["s"]] = 1
                left -= 1
            if queue and holders < slots and left > 0:
                s = queue.pop(0)
                residents.append(dict(s=s, decoding=False, rem=sessions[s]["P"], adm=admitted))
                admitted, holders = admitted + 1, holders + 1
                obs["a"].append((s, t, t))
                served = {s: min(sessions[s]["P"], ch, budget)}
        if served:
            busy_until = t + 1
        elif nxt >= len(arrivals):
            break
    for k in obs:
        obs[k].sort(key=lambda z: (z[1], z[0]))
    return obs


#: the stages a flow holds at once
ROUTES = [("a",), ("b",), ("c",), ("a", "b"), ("b", "c"), ("a", "c"), ("a", "b", "c")]


def draw_flows(rng: random.Random):
    """Three ps stages of constant capacity, a share policy, and sessions each running one route."""
    phi = {s: rng.choice([1, 2, 3, 0.5]) for s in "abc"}
    share = rng.choice(["maxmin", "bottleneck"])
    ss = [dict(A=rng.choice([0, 0, 0.5, 1, rng.uniform(0, 2)]), W=rng.choice([1, 2, rng.uniform(0.2, 3)]),
               R=rng.randrange(len(ROUTES))) for _ in range(rng.randint(2, 6))]
    return phi, share, ss


def program_flows(phi, share, ss) -> str:
    def table(k):
        e = repr(ss[-1][k])
        for s in range(len(ss) - 2, -1, -1):
            e = f"serial == {s} ? {ss[s][k]!r} : ({e})"
        return e
    routes = "\n".join(f"  branch (R == {i}) {{ run {', '.join(r)} (W); }}" for i, r in enumerate(ROUTES))
    return ("".join(f"stage {s} : ps({phi[s]});\n" for s in "abc") + f"stage d : delay;\nshare {share};\n"
            f"workload {{ arrive batch({len(ss)}); }}\nsession {{\n  set A = {table('A')};\n  set W = {table('W')};\n"
            f"  set R = {table('R')};\n  run d (A);\n{routes}\n  observe t = now;\n}}\nrun {{ horizon 1000; }}\n")


def rates(phi, share, active, ss):
    """§3: "share maxmin is max-min fair: every flow's rate rises together until a stage fills, the flows
    through it stop there, and the others go on. share bottleneck gives each flow its equal share at the
    tightest of its stages, min over s of φ_s / n_s"."""
    if share == "bottleneck":
        n = {s: sum(1 for f in active if s in ROUTES[ss[f]["R"]]) for s in "abc"}
        return {f: min(phi[s] / n[s] for s in ROUTES[ss[f]["R"]]) for f in active}
    rate = {f: 0.0 for f in active}
    frozen = set()
    cap = dict(phi)
    while len(frozen) < len(active):
        free = [f for f in active if f not in frozen]
        # the increment each free flow can take before some stage fills
        inc = math.inf
        for s in "abc":
            k = sum(1 for f in free if s in ROUTES[ss[f]["R"]])
            if k:
                inc = min(inc, (cap[s] - sum(rate[f] for f in active if s in ROUTES[ss[f]["R"]])) / k)
        for f in free:
            rate[f] += inc
        for s in "abc":
            used = sum(rate[f] for f in active if s in ROUTES[ss[f]["R"]])
            if used >= cap[s] - 1e-12 * max(1, cap[s]):
                for f in free:
                    if s in ROUTES[ss[f]["R"]]:
                        frozen.add(f)
    return rate


def model_flows(phi, share, ss):
    """Each session's end: every run on the three stages is a flow (each stage is held by some run with
    another, so "every job on it, a single-stage run included, is a flow of the policy"), its work going
    down at its rate, the rates computed again at every arrival and end."""
    arrivals = sorted(range(len(ss)), key=lambda s: (ss[s]["A"] > 0, ss[s]["A"], s))
    t, left, pending, done = 0.0, {}, list(arrivals), {}
    while pending or left:
        r = rates(phi, share, list(left), ss) if left else {}
        t_arr = ss[pending[0]]["A"] if pending else math.inf
        t_end = t + min(left[f] / r[f] for f in left) if left else math.inf
        step = min(t_arr, t_end) - t
        for f in left:
            left[f] -= step * r[f]
        t += step
        if pending and t_arr <= t_end:
            f = pending.pop(0)
            left[f] = ss[f]["W"]
        else:
            for f in [f for f in left if left[f] <= 1e-9 * max(1.0, ss[f]["W"])]:
                done[f] = t
                del left[f]
    return done
