"""An independent model of one pool and a delay stage (test_conformance_round32_pool_model.py), written from
language.txt §3's words, not from the simulator's code:

* Configuration: "Commands take no time; they run whenever a session is ready, in the order sessions became
  ready … After every event the interpreter settles: it runs every ready session, then retries … admissions
  at every pool …, until nothing changes" (the sessions the admissions make ready run after the admissions of
  that round, docs/language.md); `arrive batch(n)` makes every session ready at 0 in serial order; events at
  one instant in the order they were scheduled;
* Pools: "The head of a queue is admitted when every pool of its hold has room for its reserve units next
  to the allocated units (used + r ≤ cap, r = max(u, reserve); cached prefixes never block) … the first that
  does not fit blocks the rest"; "A request that can never fit — its units, or its reserve when that is
  larger, above the cap, as they evaluate when the session joins the queue — is rejected: the session ends";
  "on admission the session consumes at most ρ units of its own cached prefix (cached := what it consumed);
  the rest of that entry stays in the cache as a dead entry with the same age … Other entries are evicted in
  the pool's order until allocations and cache fit"; "At the end of the body the units are released and
  min(ℓ, computed) units stay cached, rounded down to blocks (computed is the allocation …)"; "Eviction is
  per entry, or per block from the tail of the entry when the pool has block b; evict lru orders by release
  time and then release order"; allocations round up to blocks (pool-reference.txt, block);
* Stages: "delay: every job on its own at rate 1"; "A run of zero work completes at once".

A session of `model`: `run d (A); hold m (U1) reserve (R1) { observe a1 = now; run d (S1); } [cache (L1)]; run d (G);
hold m (U2) reserve (R2) { observe a2 = now; observe k2 = cached; run d (S2); } cache (L2); observe e = now;`,
its numbers per serial. A session of `model_grow` (a pool of `preempt lifo`): `run d (A); hold m (U) {
observe a = now; run d (S1); grow m (D); observe g = now; run d (S2); } cache (L); observe e = now;`. A
session of `model_keys`: `run d (A); hold m (U) { observe a = now; run d (S); }` under `queue by (KEYS[k])`.
"""

from __future__ import annotations

import math
import random

FIELDS = ("A", "U1", "R1", "S1", "G", "U2", "R2", "S2", "L2")


def draw(rng: random.Random) -> tuple[int, int, list[dict]]:
    """A random pool (cap, block) and sessions: times on a grid of 0.5 so that events tie."""
    b = rng.choice([1, 1, 2, 3, 4])
    cap = rng.randint(4, 10)
    if rng.random() < 0.7:
        cap = max(b, cap - cap % b)
    with_l1 = rng.random() < 0.7
    sessions = []
    for _ in range(rng.randint(2, 5)):
        u1 = rng.randint(1, cap + (1 if rng.random() < 0.1 else 0))
        u2 = rng.randint(1, cap)
        sessions.append(dict(
            A=rng.choice([0, 0.5, 1, 1.5]), U1=u1, R1=rng.choice([0, 0, u1, min(cap + 1, u1 + rng.randint(0, 3))]),
            S1=rng.choice([0.5, 1, 2]), L1=rng.randint(0, u1 + 2) if with_l1 else None, G=rng.choice([0, 0.5, 1]),
            U2=u2, R2=rng.choice([0, u2, min(cap, u2 + rng.randint(0, 3))]), S2=rng.choice([0.5, 1, 2]),
            L2=rng.randint(0, u2 + 2)))
    return cap, b, sessions


def program(cap: int, b: int, sessions: list[dict], horizon: float, warmup: float = 0.0) -> str:
    def table(k):
        e = str(sessions[-1][k])
        for s in range(len(sessions) - 2, -1, -1):
            e = f"serial == {s} ? {sessions[s][k]} : ({e})"
        return e

    sets = "\n".join(f"  set {k} = {table(k)};" for k in FIELDS)
    c1 = f" cache ({table('L1')})" if sessions[0]["L1"] is not None else ""
    block = f" block {b};" if b > 1 else ""
    return (f"pool m {{ cap {cap};{block} }}\nstage d : delay;\nworkload {{ arrive batch({len(sessions)}); }}\n"
            f"session {{\n{sets}\n  run d (A);\n"
            f"  hold m (U1) reserve (R1) {{ observe a1 = now; run d (S1); }}{c1};\n"
            "  run d (G);\n"
            "  hold m (U2) reserve (R2) { observe a2 = now; observe k2 = cached; run d (S2); } cache (L2);\n"
            f"  observe e = now;\n}}\nrun {{ horizon {horizon};{f' warmup {warmup};' if warmup else ''} }}\n")


def model(cap: int, b: int, sessions: list[dict], horizon: float, warmup: float = 0.0):
    """The observes ``{name: [(session, time, value), …]}`` in time then session order, and the pool's
    figures: time averages over [warmup, horizon], the counts of the events at or after the warm-up, the
    samples taken at or after it (§3: "observe x = e records a sample after warm-up"; docs/language.md: "a
    pool's admissions and wait the admissions at or after it, evicted_*, … and rejections the events at or
    after it", a sample at the warm-up's instant counts)."""
    up = lambda x: math.ceil(x / b) * b  # noqa: E731
    down = lambda x: math.floor(x / b) * b  # noqa: E731
    obs = {k: [] for k in ("a1", "a2", "k2", "e")}
    events = []  # (time, sequence, session)
    queue = []  # the waiting sessions, FIFO
    entries = []  # [units, release time, release order, owner or None (dead)]
    f = dict(used=0.0, area_used=0.0, area_cached=0.0, last=0.0, now=0.0, seq=0, order=0, admissions=0,
             evicted_entries=0, evicted_units=0.0, rejections=0)
    state = [dict(pc=0, consumed=0.0) for _ in sessions]

    def cached():
        return sum(e[0] for e in entries)

    def advance(t):
        span = max(0.0, t - max(f["last"], warmup))
        f["area_used"] += f["used"] * span
        f["area_cached"] += cached() * span
        f["last"] = t

    def count(name, n=1):
        if f["now"] >= warmup:
            f[name] += n

    def schedule(dt, s):
        events.append((f["now"] + dt, f["seq"], s))
        f["seq"] += 1

    def hold(s, which):
        p = sessions[s]
        return (p["U1"], p["R1"], p["L1"]) if which == 1 else (p["U2"], p["R2"], p["L2"])

    def run_session(s):
        # the program counter: 0 run A; 1 join hold 1; 2 admitted to it; 3 its run ended; 4 run G; 5 join
        # hold 2; 6 admitted; 7 its run ended; 8 the last observe
        x, p = state[s], sessions[s]
        while True:
            pc = x["pc"]
            if pc in (0, 4):
                x["pc"] = pc + 1
                work = p["A"] if pc == 0 else p["G"]
                if work > 0:
                    schedule(work, s)
                    return
            elif pc in (1, 5):
                u, r, _cache = hold(s, 1 if pc == 1 else 2)
                if up(max(u, r)) > cap:
                    count("rejections")
                    x["pc"] = 99
                    return
                queue.append(s)
                x["pc"] = pc + 1
                return
            elif pc in (2, 6):
                obs["a1" if pc == 2 else "a2"].append((s, f["now"], f["now"]))
                if pc == 6:
                    obs["k2"].append((s, f["now"], x["consumed"]))
                x["pc"] = pc + 1
                schedule(p["S1"] if pc == 2 else p["S2"], s)
                return
            elif pc in (3, 7):
                u, _r, keep = hold(s, 1 if pc == 3 else 2)
                f["used"] -= up(u)
                if keep is not None:
                    for e in entries:
                        if e[3] == s:
                            e[3] = None
                    kept = down(min(keep, up(u)))
                    if kept > 0:
                        entries.append([float(kept), f["now"], f["order"], s])
                        f["order"] += 1
                x["pc"] = pc + 1
            elif pc == 8:
                obs["e"].append((s, f["now"], f["now"]))
                x["pc"] = 100
                return
            else:
                return

    def admissions():
        admitted = []
        while queue:
            s = queue[0]
            u, r, keep = hold(s, 1 if state[s]["pc"] == 2 else 2)
            if f["used"] + up(max(u, r)) > cap:
                break
            queue.pop(0)
            consumed = 0.0
            own = [e for e in entries if e[3] == s]
            if keep is not None and own:
                e = own[0]
                consumed = min(e[0], up(u))
                e[0] -= consumed
                e[3] = None
                if e[0] == 0:
                    entries.remove(e)
            state[s]["consumed"] = consumed
            while f["used"] + up(u) + cached() > cap:
                e = min(entries, key=lambda e: (e[1], e[2]))
                take = b if b > 1 else e[0]
                e[0] -= take
                count("evicted_units", take)
                if e[0] <= 0:
                    entries.remove(e)
                    count("evicted_entries")
            f["used"] += up(u)
            count("admissions")
            admitted.append(s)
        return admitted

    def settle(ready):
        while ready:
            for s in ready:
                run_session(s)
            ready = admissions()

    settle(list(range(len(sessions))))
    while events:
        events.sort()
        t, _seq, s = events.pop(0)
        if t > horizon:
            break
        advance(t)
        f["now"] = t
        settle([s])
    advance(horizon)
    for k in obs:
        obs[k] = sorted((z for z in obs[k] if z[1] >= warmup), key=lambda z: (z[1], z[0]))
    span = horizon - warmup
    figures = dict(used=f["area_used"] / span, cached=f["area_cached"] / span, admissions=f["admissions"],
                   evicted_entries=f["evicted_entries"], evicted_units=f["evicted_units"],
                   rejections=f["rejections"])
    return obs, figures


GROW_FIELDS = ("A", "U", "S1", "D", "S2", "L")


def draw_grow(rng: random.Random) -> tuple[int, int, list[dict]]:
    """A random pool of `preempt lifo` and sessions that grow: times on a grid of 0.5."""
    b = rng.choice([1, 1, 2, 4])
    cap = rng.randint(4, 12)
    if rng.random() < 0.7:
        cap = max(b, cap - cap % b)
    ss = []
    for _ in range(rng.randint(2, 5)):
        u = rng.randint(1, max(1, cap // 2))
        ss.append(dict(A=rng.choice([0, 0.5, 1, 1.5]), U=u, S1=rng.choice([0.5, 1, 2]),
                       D=rng.randint(1, max(1, cap // 2)), S2=rng.choice([0.5, 1, 2]), L=rng.randint(0, cap)))
    return cap, b, ss


def program_grow(cap: int, b: int, ss: list[dict], horizon: float) -> str:
    def table(k):
        e = str(ss[-1][k])
        for s in range(len(ss) - 2, -1, -1):
            e = f"serial == {s} ? {ss[s][k]} : ({e})"
        return e
    sets = "\n".join(f"  set {k} = {table(k)};" for k in GROW_FIELDS)
    block = f" block {b};" if b > 1 else ""
    return (f"pool m {{ cap {cap};{block} preempt lifo; }}\nstage d : delay;\nworkload {{ arrive batch({len(ss)}); }}\n"
            f"session {{\n{sets}\n  run d (A);\n"
            "  hold m (U) { observe a = now; run d (S1); grow m (D); observe g = now; run d (S2); } cache (L);\n"
            f"  observe e = now;\n}}\nrun {{ horizon {horizon}; }}\n")


def model_grow(cap: int, b: int, ss: list[dict], horizon: float):
    """The observes and the pool's figures of program_grow's program: §3's "grow m (d) enlarges the innermost
    hold on m by d (rounded to blocks) … with preempt lifo the holder … was admitted last … (a pool that is no
    engine's memory preempts its most recently admitted holder): its job leaves its stage, its hold is
    released with its computed prefix cached, and it re-enters the head of the pool's queue with the hold
    statement to execute again. The grower itself can be the victim" (a hold that computed nothing caches
    nothing), victims taken from the last admitted until the growth fits, each put at the head. A grower its
    own victim whose units after the growth are above the cap is put back at the head all the same and
    executes its hold again, for as long as the run goes on (§3 Statistics: it "preempts itself and
    re-executes forever"); no grow here advances a position, so a session preempted a second time is
    `stuck` (once)."""
    up = lambda x: math.ceil(x / b) * b  # noqa: E731
    down = lambda x: math.floor(x / b) * b  # noqa: E731
    obs = {k: [] for k in ("a", "g", "e")}
    events = []
    queue = []
    entries = []
    holders = []  # in order of (latest) admission
    f = dict(used=0.0, au=0.0, ac=0.0, last=0.0, now=0.0, seq=0, order=0, adm=0, pre=0, rej=0, evu=0.0, stuck=0)
    st = [dict(pc=0, alloc=0, ev=None, pre=0) for _ in ss]

    def cached():
        return sum(e[0] for e in entries)

    def advance(t):
        f["au"] += f["used"] * (t - f["last"])
        f["ac"] += cached() * (t - f["last"])
        f["last"] = t

    def schedule(dt, s):
        ev = (f["now"] + dt, f["seq"], s)
        events.append(ev)
        st[s]["ev"] = ev
        f["seq"] += 1

    def evict_to_fit(extra):
        while f["used"] + extra + cached() > cap:
            e = min(entries, key=lambda e: (e[1], e[2]))
            take = b if b > 1 else e[0]
            e[0] -= take
            f["evu"] += take
            if e[0] <= 0:
                entries.remove(e)

    def preempt(v, grower):
        x = st[v]
        f["pre"] += 1
        f["used"] -= x["alloc"]
        x["alloc"] = 0
        holders.remove(v)
        if x["ev"] in events:
            events.remove(x["ev"])
        x["ev"] = None
        x["pre"] += 1
        if x["pre"] == 2:
            f["stuck"] += 1
        queue.insert(0, v)
        x["pc"] = 2

    def run_session(s):
        # the program counter: 0 run A; 1 join the hold; 2 admitted; 3 grow; 4 grown; 5 the hold's end; 6 the
        # last observe
        x, p = st[s], ss[s]
        while True:
            pc = x["pc"]
            if pc == 0:
                x["pc"] = 1
                if p["A"] > 0:
                    schedule(p["A"], s)
                    return
            elif pc == 1:
                if up(p["U"]) > cap:
                    f["rej"] += 1
                    x["pc"] = 99
                    return
                queue.append(s)
                x["pc"] = 2
                return
            elif pc == 2:
                obs["a"].append((s, f["now"], f["now"]))
                x["pc"] = 3
                schedule(p["S1"], s)
                return
            elif pc == 3:
                need = up(p["D"])
                while f["used"] + need > cap:
                    v = holders[-1]
                    preempt(v, s)
                    if v == s:
                        return
                evict_to_fit(need)
                f["used"] += need
                x["alloc"] += need
                x["pc"] = 4
            elif pc == 4:
                obs["g"].append((s, f["now"], f["now"]))
                x["pc"] = 5
                schedule(p["S2"], s)
                return
            elif pc == 5:
                f["used"] -= x["alloc"]
                holders.remove(s)
                for e in entries:
                    if e[3] == s:
                        e[3] = None
                kept = down(min(p["L"], x["alloc"]))
                x["alloc"] = 0
                if kept > 0:
                    entries.append([float(kept), f["now"], f["order"], s])
                    f["order"] += 1
                x["pc"] = 6
            elif pc == 6:
                obs["e"].append((s, f["now"], f["now"]))
                x["pc"] = 100
                return
            else:
                return

    def admissions():
        adm = []
        while queue:
            s = queue[0]
            u = up(ss[s]["U"])
            if f["used"] + u > cap:
                break
            queue.pop(0)
            # its own prefix: consumed (cache clause), the rest dead
            own = [e for e in entries if e[3] == s]
            if own:
                e = own[0]
                c = min(e[0], u)
                e[0] -= c
                e[3] = None
                if e[0] == 0:
                    entries.remove(e)
            evict_to_fit(u)
            f["used"] += u
            st[s]["alloc"] = u
            holders.append(s)
            f["adm"] += 1
            adm.append(s)
        return adm

    def settle(ready):
        while ready:
            for s in ready:
                run_session(s)
            ready = admissions()

    settle(list(range(len(ss))))
    while events:
        events.sort()
        t, _q, s = events.pop(0)
        if t > horizon:
            break
        advance(t)
        f["now"] = t
        settle([s])
    advance(horizon)
    for k in obs:
        obs[k].sort(key=lambda z: (z[1], z[0]))
    return obs, dict(used=f["au"] / horizon, cached=f["ac"] / horizon, admissions=f["adm"], preemptions=f["pre"],
                     rejections=f["rej"], evicted_units=f["evu"], stuck=f["stuck"])


def outgrows(cap: int, b: int, ss: list[dict]) -> bool:
    """Whether a session of program_grow's program grows its hold alone above the cap (its own victim there,
    it executes its hold again and again)."""
    up = lambda x: math.ceil(x / b) * b  # noqa: E731
    return any(up(s["U"]) + up(s["D"]) > cap for s in ss)


#: the keys as written and as the model computes them from (prio, dl, waited)
KEYS = [
    ("prio", lambda p, d, w: (p,)),
    ("waited", lambda p, d, w: (w,)),
    ("-waited", lambda p, d, w: (-w,)),
    ("prio, -waited", lambda p, d, w: (p, -w)),
    ("prio, waited", lambda p, d, w: (p, w)),
    ("waited >= 1.5 ? 0 : prio", lambda p, d, w: (0 if w >= 1.5 else p,)),
    ("dl - waited", lambda p, d, w: (d - w,)),
    ("prio * 2 - waited", lambda p, d, w: (p * 2 - w,)),
    ("-prio, dl - waited", lambda p, d, w: (-p, d - w)),
    ("waited * waited", lambda p, d, w: (w * w,)),
    ("waited > 2 ? 1 : 0, -waited", lambda p, d, w: (1 if w > 2 else 0, -w)),
    ("prio, dl - waited", lambda p, d, w: (p, d - w)),
    ("(dl - waited) / 3", lambda p, d, w: ((d - w) / 3,)),
    ("waited >= dl ? -1 : prio", lambda p, d, w: (-1 if w >= d else p,)),
]
KEY_FIELDS = ("A", "U", "S", "prio", "dl")


def draw_keys(rng: random.Random, exact: bool) -> tuple[int, int, list[dict]]:
    """A pool of 1 to 4 and sessions of one hold, its `queue by` keys one of KEYS: times on a grid of 0.5
    (``exact``, ties everywhere) or any doubles from a clock up to 3e9 (rounding)."""
    cap = rng.randint(1, 4)
    ss = []
    base = rng.choice([0, 1e6, 123456.789, 3e9]) if not exact else 0
    for _ in range(rng.randint(3, 7)):
        if not exact:
            ss.append(dict(A=base + rng.uniform(0, 3), U=rng.randint(1, cap), S=rng.uniform(0.1, 2),
                           prio=rng.randint(0, 3), dl=rng.uniform(0, 4)))
        else:
            ss.append(dict(A=rng.choice([0, 0.5, 1, 1.5, 2, 2.5, 3]), U=rng.randint(1, cap),
                           S=rng.choice([0.5, 1, 1.5, 2]), prio=rng.randint(0, 3), dl=rng.choice([0, 1, 2, 3, 4])))
    return cap, rng.randrange(len(KEYS)), ss


def program_keys(cap: int, k: int, ss: list[dict], horizon: float) -> str:
    def table(f):
        e = repr(ss[-1][f])
        for s in range(len(ss) - 2, -1, -1):
            e = f"serial == {s} ? {ss[s][f]!r} : ({e})"
        return e
    sets = "\n".join(f"  set {f} = {table(f)};" for f in KEY_FIELDS)
    return (f"pool m {{ cap {cap}; queue by ({KEYS[k][0]}); }}\nstage d : delay;\n"
            f"workload {{ arrive batch({len(ss)}); }}\nsession {{\n{sets}\n  run d (A);\n"
            f"  hold m (U) {{ observe a = now; run d (S); }}\n}}\nrun {{ horizon {horizon}; }}\n")


def model_keys(cap: int, k: int, ss: list[dict], horizon: float):
    """The admission times of program_keys's program: §3's Waiting selection, "queue by (k1, …) reevaluates
    pure keys for every waiting hold before each admission attempt. waited is elapsed simulation seconds since
    that hold entered the queue … Selection tries only the chosen request: a request that cannot fit blocks
    the rest", ties in join order (§3 Ties), read by a scan of the waiting holds at every attempt."""
    key = KEYS[k][1]
    events = []
    queue = []  # (join time, join order, s)
    f = dict(used=0, now=0.0, seq=0, jo=0)
    st = [dict(pc=0) for _ in ss]
    obs = []

    def schedule(dt, s):
        events.append((f["now"] + dt, f["seq"], s))
        f["seq"] += 1

    def run_session(s):
        x, p = st[s], ss[s]
        while True:
            if x["pc"] == 0:
                x["pc"] = 1
                if p["A"] > 0:
                    schedule(p["A"], s)
                    return
            elif x["pc"] == 1:
                queue.append((f["now"], f["jo"], s))
                f["jo"] += 1
                x["pc"] = 2
                return
            elif x["pc"] == 2:
                obs.append((s, f["now"], f["now"]))
                x["pc"] = 3
                schedule(p["S"], s)
                return
            elif x["pc"] == 3:
                f["used"] -= p["U"]
                x["pc"] = 4
                return
            else:
                return

    def admissions():
        adm = []
        while queue:
            best = None
            for q in queue:
                t, _o, s = q
                kk = key(ss[s]["prio"], ss[s]["dl"], f["now"] - t)
                if best is None or kk < best[0]:
                    best = (kk, q)
            q = best[1]
            s = q[2]
            if f["used"] + ss[s]["U"] > cap:
                break
            queue.remove(q)
            f["used"] += ss[s]["U"]
            adm.append(s)
        return adm

    def settle(ready):
        while ready:
            for s in ready:
                run_session(s)
            ready = admissions()

    settle(list(range(len(ss))))
    while events:
        events.sort()
        t, _q, s = events.pop(0)
        if t > horizon:
            break
        f["now"] = t
        settle([s])
    obs.sort(key=lambda z: (z[1], z[0]))
    return obs
