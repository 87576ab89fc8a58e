"""An independent model of one pool whose holders grow (test_conformance_round44_growth_model.py), written from
language.txt §3's and pool-reference.txt's words, not from the simulator's code: the rules pool_model32's
`model_grow` (`preempt lifo` alone) leaves out.

* language.txt §3, Configuration: "Commands take no time; they run whenever a session is ready, in the order
  sessions became ready … After every event the interpreter settles: it runs every ready session, then
  retries growers and admissions at every pool not served by a stage, until nothing changes"; events at one
  instant in the order they were scheduled (Ties).
* §3, Pools: "grow m (d) enlarges the innermost hold on m by d … If it does not fit: with preempt none the
  session waits and resumes where it was"; Ties: "A pool's growers: the order they stalled, the head blocking
  the rest", retried before the pool's admissions, and a growth that fits grows at once whether growers wait
  or not (docs/language.md).
* pool-reference.txt, `preempt`: "`by (k, …)` Preempt the candidate with the least keys, compared in order;
  ties go to the last admitted. `lifo` Shorthand for `by (-admission) requeue head` … If no stage names it
  as memory, candidates are holders with an active hold scope … the grower can be its own victim. The victim
  leaves its stage, releases its hold … It re-enters the hold's first pool's queue to execute the hold
  again … requeue head (the default) places it first, ahead of policy keys. requeue tail treats it as a
  newcomer: FIFO places it last, while queue by places it by its keys, with waited reset to 0"; several
  victims re-queued at the head: the latest first (vLLM's `prepend_request`).
* pool-reference.txt, `queue`: "by reevaluates keys for every waiting hold before each admission attempt,
  compares them lexicographically, and breaks ties by enqueue order … waited supplies seconds since the
  current hold entered the queue; it resets on re-entry … Only the selected hold is tried: failure to fit
  blocks the rest."
* pool-reference.txt, `reserve held`: "u_i = max(0, r_i − a_i), where a_i is allocated units and r_i is the
  larger of units and reserve, evaluated at admission … A new reservation r requires used + Σ u_i + r ≤ cap.
  Growth by d requires used + Σ_{i≠grower} u_i + d ≤ cap … Reservations end with the hold's scope, release
  or preemption"; without it "reserve is checked only at admission" (used + max(u, reserve) ≤ cap, §3).
* §3, Pools: "with it [cache], on admission the session consumes at most ρ units of its own cached prefix
  (cached := what it consumed); the rest of that entry stays in the cache as a dead entry with the same age
  … Other entries are evicted in the pool's order until allocations and cache fit … At the end of the body
  the units are released and min(ℓ, computed) units stay cached (computed is the allocation …)"; evict
  lru per entry, or by keys (`evict by (-size)`, `evict by (prio)`: "the keys and then release order"),
  "per block from the tail of the entry when the pool has block b" (each block ranked again);
  allocations, growths and what stays cached in whole blocks; the victim "releases its hold and caches its
  computed prefix", the position a hold with no growing run nor `load` has reached being the prefix it
  consumed (docs/language.md); a session has one prefix of its own, its latest (a release that caches
  nothing leaves it as it was); `release m` in the body gives the hold's allocation back there, caching per
  its clause, and the scope's end has nothing left (nor a lease to keep); `drop m` discards the session's
  own cached prefix; a hold's `reuse (ρ)` consumes at most ρ of it, rounded down to blocks (the rest dead
  with the entry's release time and order); `release m` outside any hold of m ends the session's lease
  (the one taken first); pool-reference.txt, `reserve held`: "Cached prefixes are evicted when units are
  allocated, not when reserved".
* §3, Pools: "A hold's lease m (t) keeps its allocation on m past the scope's end, neither evictable nor a
  preemption victim, until the session's release m, t seconds, or the session's end, and cache applies
  then"; pool-reference.txt: "Leases are not candidates … Reservations end with the hold's scope …; leases
  retain none"; a lease's time is an event scheduled at the scope's end (docs/language.md).
* §3, Statistics: "stuck: sessions preempted a second time without having advanced past the position of
  their previous preemption" (within one execution of the hold: the count starts again when it completes,
  into a release or a lease).

A session: `set prio = P; set dl = D; run d (A); set k = 0; loop { hold p (U) reserve (R) { observe a =
now; observe c = cached; run d (B); grow p (G); observe g = now; run d (C); } cache (L); set k = k + 1;
branch (k == 2) { observe e = now; end; } run d (A2); }`, its numbers per serial, with U + G and R at most
the cap in blocks (no rejection, no grower beyond the cap); in some programs the hold is `} cache (L) lease p
(T);` (and the session says `release p;` before its second hold's `run d (A2)` in some of those), in some
the hold says `reuse (RU)`, in some its body says `release p;` after `observe g`, in some the session says
`drop p;` before its second hold's `run d (A2)`.
"""

from __future__ import annotations

import heapq
import itertools
import random

#: the `preempt` options drawn, and what the model reads of each: (victim rule, where the victim goes back)
PREEMPTS = {
    "": None,
    "preempt lifo;": ("lifo", "head"),
    "preempt by (prio) requeue head;": ("prio", "head"),
    "preempt by (prio) requeue tail;": ("prio", "tail"),
}

#: the `queue` options drawn, and their keys for (prio, dl, waited, serial)
QUEUES = {
    "": lambda p, dl, w, s: (),
    "queue by (prio, serial);": lambda p, dl, w, s: (p, s),
    "queue by (prio, -waited);": lambda p, dl, w, s: (p, -w),
    "queue by (waited >= 2 ? 0 : 1, prio);": lambda p, dl, w, s: (0 if w >= 2 else 1, p),
    "queue by (dl - waited);": lambda p, dl, w, s: (dl - w,),
    "queue by (-waited);": lambda p, dl, w, s: (-w,),
}

#: the `evict` options drawn, and the key of an entry [units, release time, release order, owner, prio]
EVICTS = {
    "": lambda e: (e[1], e[2]),
    "evict by (-size);": lambda e: (-e[0], e[2]),
    "evict by (prio);": lambda e: (e[4], e[2]),
}

FIELDS = ("prio", "dl", "A", "U", "R", "B", "G", "C", "L", "A2", "T", "RU")


def draw(rng: random.Random) -> dict:
    """A random pool and its sessions: times on a grid of 0.5 (``grid``) so that events tie, or not."""
    n = rng.randint(2, 5)
    b = rng.choice([1, 1, 2, 3])
    cap = rng.choice([6, 8, 10, 12])
    cap += -cap % b
    grid = rng.random() < 0.5
    def dur():
        return rng.choice([0.5, 1.0, 1.5, 2.0]) if grid else round(rng.uniform(0.1, 3.0), 3)
    sessions = []
    for _ in range(n):
        u = rng.randint(1, cap // 2)
        g = rng.randint(0, cap - -(-u // b) * b)
        sessions.append(dict(prio=rng.randint(0, 2), dl=round(rng.uniform(0, 5), 2), A=dur(), U=u,
                             R=rng.choice([0, 0, u + g, rng.randint(0, cap)]), B=dur(), G=g, C=dur(),
                             L=rng.randint(0, u + g + 1), A2=dur(),
                             T=rng.choice([0, dur(), dur(), 100]), RU=rng.randint(0, u + g)))
    return dict(cap=cap, block=b, evict=rng.choice(list(EVICTS)), rel=rng.random() < 0.3,
                drop=rng.random() < 0.3, held=rng.random() < 0.5, lease=rng.random() < 0.6,
                reuse=rng.random() < 0.4, unlease=rng.random() < 0.4,
                preempt=rng.choice(list(PREEMPTS)), queue=rng.choice(list(QUEUES)), sessions=sessions)


def _table(vals) -> str:
    """``serial == 0 ? v0 : (serial == 1 ? v1 : (…))``."""
    text = str(vals[-1])
    for i in range(len(vals) - 2, -1, -1):
        text = f"serial == {i} ? {vals[i]} : ({text})"
    return text


def program(c: dict, horizon: float) -> str:
    block = f"block {c['block']};" if c["block"] > 1 else ""
    opts = " ".join(o for o in (f"cap {c['cap']};", block, c["evict"], c["preempt"], c["queue"],
                                "reserve held;" if c["held"] else "") if o)
    col = {f: _table([s[f] for s in c["sessions"]]) for f in FIELDS}
    return f"""
pool p {{ {opts} }}
stage d : delay;
workload {{ arrive batch({len(c['sessions'])}); }}
session {{
  set prio = {col['prio']};
  set dl = {col['dl']};
  run d ({col['A']});
  set k = 0;
  loop {{
    hold p ({col['U']}) reserve ({col['R']}){" reuse (" + col['RU'] + ")" if c.get("reuse") else ""} {{
      observe a = now;
      observe c = cached;
      run d ({col['B']});
      grow p ({col['G']});
      observe g = now;{" release p;" if c["rel"] else ""}
      run d ({col['C']});
    }} cache ({col['L']}){" lease p (" + col['T'] + ")" if c.get("lease") else ""};
    set k = k + 1;
    branch (k == 2) {{ observe e = now; end; }}{" drop p;" if c["drop"] else ""}{" release p;" if c.get("unlease") and c["lease"] else ""}
    run d ({col['A2']});
  }}
}}
run {{ horizon {horizon}; }}
"""


def model(c: dict, horizon: float):
    """``({observe: [(session, time), …] in time then session order; c: (session, time, value)}, {pool
    figure: value})``."""
    cap, held, ss, b = c["cap"], c["held"], c["sessions"], c["block"]
    evkey = EVICTS[c["evict"]]

    def up(x):
        return -(-x // b) * b

    def down(x):
        return x // b * b

    policy, keys = PREEMPTS[c["preempt"]], QUEUES[c["queue"]]
    n = len(ss)
    now = 0.0
    events = []
    seq = itertools.count()
    joins = itertools.count()
    admits = itertools.count()
    orders = itertools.count()
    obs = {"a": [], "c": [], "g": [], "e": []}
    fig = {"admissions": 0, "preemptions": 0, "rejections": 0, "evicted_entries": 0, "evicted_units": 0.0}
    st = [dict(pc="start", alloc=0, r=0, adm=-1, job=None, consumed=0, prevpos=None, k=0) for _ in range(n)]
    leases = []  # [session, units, timer job]
    lease_on = bool(c.get("lease"))
    front, queue, holders, growers, ready = [], [], [], [], []
    entries = []  # [units, release time, release order, owner or None]
    stuck = set()
    area = [0.0, 0.0, 0, 0.0]  # used integral, last t, used, cached integral

    def cached():
        return sum(e[0] for e in entries)


    def tick():
        area[0] += area[2] * (now - area[1])
        area[3] += cached() * (now - area[1])
        area[1] = now

    def set_used(v):
        tick()
        area[2] = v

    def unallocated(but=None):
        return sum(max(0, st[h]["r"] - st[h]["alloc"]) for h in holders if h != but) if held else 0

    def evict_for(extra):
        while area[2] + extra + cached() > cap:
            e = min(entries, key=evkey)
            tick()
            gone = e[0] if b == 1 else min(b, e[0])
            e[0] -= gone
            fig["evicted_units"] += gone
            if e[0] <= 0:
                entries.remove(e)
                fig["evicted_entries"] += 1

    def cache_entry(s, units):
        if units <= 0:
            return  # a release that caches nothing leaves the session's prefix as it was
        tick()
        for e in list(entries):
            if e[3] == s:
                entries.remove(e)  # replaced: the session's one prefix is its latest
        entries.append([units, now, next(orders), s, ss[s]["prio"]])

    def start(s, work, pc):
        st[s]["job"] = next(seq)
        st[s]["pc"] = pc
        heapq.heappush(events, (now + work, st[s]["job"], s))

    def release(s, keep):
        holders.remove(s)
        set_used(area[2] - st[s]["alloc"])
        st[s]["alloc"] = st[s]["r"] = 0
        cache_entry(s, keep)

    def end_lease(le):
        leases.remove(le)
        set_used(area[2] - le[1])
        cache_entry(le[0], down(min(ss[le[0]]["L"], le[1])))

    def preempt(v):
        fig["preemptions"] += 1
        pos = st[v]["consumed"]
        if st[v]["prevpos"] is not None and pos <= st[v]["prevpos"]:
            stuck.add(v)
        st[v]["prevpos"] = pos
        st[v]["job"] = None
        release(v, down(min(ss[v]["L"], pos)))
        st[v]["pc"] = "queued"
        if policy[1] == "head":
            front.insert(0, v)
        else:
            queue.append((next(joins), v, now))

    def take(s, d):
        evict_for(d)
        st[s]["alloc"] += d
        set_used(area[2] + d)
        st[s]["pc"] = "grown"
        ready.append(s)

    def grow(s):
        d = up(ss[s]["G"])
        while True:
            if area[2] + unallocated(s) + d <= cap:
                take(s, d)
                return
            if policy is None:
                st[s]["pc"] = "growing"
                growers.append(s)
                return
            if policy[0] == "lifo":
                v = max(holders, key=lambda h: st[h]["adm"])
            else:
                v = min(holders, key=lambda h: (ss[h]["prio"], -st[h]["adm"]))
            preempt(v)
            if v == s:
                return

    def step(s):
        pc, x = st[s]["pc"], ss[s]
        if pc == "start":
            start(s, x["A"], "A")
        elif pc in ("A", "A2"):
            if up(max(x["U"], x["R"])) > cap:
                fig["rejections"] += 1
                st[s]["pc"] = "ended"
                return
            st[s]["pc"] = "queued"
            queue.append((next(joins), s, now))
        elif pc == "admitted":
            obs["a"].append((s, now))
            obs["c"].append((s, now, st[s]["consumed"]))
            start(s, x["B"], "B")
        elif pc == "B":
            grow(s)
        elif pc == "grown":
            obs["g"].append((s, now))
            if c["rel"]:
                release(s, down(min(x["L"], st[s]["alloc"])))
                st[s]["prevpos"] = None
            start(s, x["C"], "C")
        elif pc == "C":
            if c["rel"]:
                pass  # released in the body: the scope's end has nothing left, nor a lease to keep
            elif lease_on:
                holders.remove(s)
                le = [s, st[s]["alloc"], next(seq)]
                leases.append(le)
                heapq.heappush(events, (now + x["T"], le[2], -1 - len(lease_jobs)))  # a timer: session < 0
                lease_jobs.append(le)
                st[s]["alloc"] = st[s]["r"] = 0
            else:
                release(s, down(min(x["L"], st[s]["alloc"])))
            st[s]["prevpos"] = None
            st[s]["k"] += 1
            if st[s]["k"] == 2:
                obs["e"].append((s, now))
                st[s]["pc"] = "ended"
                for le in [le for le in leases if le[0] == s]:
                    end_lease(le)
            else:
                if c["drop"]:
                    tick()
                    for e in [e for e in entries if e[3] == s]:
                        entries.remove(e)
                if c.get("unlease") and lease_on:
                    mine = [le for le in leases if le[0] == s]
                    if mine:
                        end_lease(mine[0])
                start(s, x["A2"], "A2")

    def head():
        if front:
            return front[0]
        if not queue:
            return None
        return min(queue, key=lambda q: (keys(ss[q[1]]["prio"], ss[q[1]]["dl"], now - q[2], q[1]), q[0]))[1]

    def settle():
        while True:
            while ready:
                step(ready.pop(0))
            while growers and area[2] + unallocated(growers[0]) + up(ss[growers[0]]["G"]) <= cap:
                g = growers.pop(0)
                take(g, up(ss[g]["G"]))
            while (h := head()) is not None:
                u, r = up(ss[h]["U"]), up(max(ss[h]["U"], ss[h]["R"]))
                if area[2] + unallocated() + r > cap:
                    break
                if front and front[0] == h:
                    front.pop(0)
                else:
                    queue.remove(next(q for q in queue if q[1] == h))
                consumed = 0
                own = [e for e in entries if e[3] == h]
                if own:
                    e = own[0]
                    tick()
                    consumed = min(e[0], u, down(ss[h]["RU"])) if c.get("reuse") else min(e[0], u)
                    e[0] -= consumed
                    e[3] = None
                    if e[0] == 0:
                        entries.remove(e)
                evict_for(u)
                st[h].update(alloc=u, r=r, adm=next(admits), pc="admitted", consumed=consumed)
                holders.append(h)
                set_used(area[2] + u)
                fig["admissions"] += 1
                ready.append(h)
            if not ready:
                return

    lease_jobs = []
    ready.extend(range(n))
    settle()
    while events:
        t, job, s = heapq.heappop(events)
        if t > horizon:
            break
        if s < 0:
            le = lease_jobs[-1 - s]
            if le in leases:
                now = t
                end_lease(le)
                settle()
            continue
        if st[s]["job"] != job:
            continue
        now = t
        st[s]["job"] = None
        ready.append(s)
        settle()
    now = horizon
    tick()
    fig["used"] = area[0] / horizon
    fig["cached"] = area[3] / horizon
    fig["stuck"] = len(stuck)
    return {k: sorted(v, key=lambda r: (r[1], r[0])) for k, v in obs.items()}, fig
