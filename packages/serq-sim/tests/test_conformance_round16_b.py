"""Conformance against an independent model: one step engine admitting vLLM's shape of request through a
pool of request slots, its memory in blocks under `preempt lifo` or `preempt by (KEYS) requeue head|tail`,
served in admission order or by `serve by` keys, with a chunk cap and the header's `budget_left`. The model
below is written from the spec's words alone (not from the simulator's code), and the simulator must give
its admission and end times, its preemptions and its iterations on random small programs, on the tier
serQ picks and on SERQ_SIM_TIER=general (conform.run: the same bytes).

The program (cost 1, so iteration k runs over [k, k + 1]):

    pool reqs { cap R; admit via E; }
    pool kv { cap C; block b; preempt …; }
    stage E : step { budget B; chunk K; cost 1; memory kv; [serve by (…);] }
    workload { arrive batch(n); }
    session {
      hold reqs (1), kv (min(P, budget_left(E))) { prefill (P) growing kv; decode (D) growing kv; }
    }

The rules the model implements, with where the spec says them:

* an iteration serves the residents in the serving order (admission order, or ascending `serve by` keys
  read before the iteration, ties in admission order: §3 Stages); one token to a decoder, up to the chunk
  to a prefill, until the budget is spent (§3);
* a growing job first grows its hold to the position it will reach, rounded up to blocks; a growth that
  does not fit preempts (§3, pool-reference `preempt`): the candidates are the residents (the stage's
  memory), the victim the last admitted (`lifo`) or the one with the least keys (`decoding` 1 for a
  decoder, `position` the position computed before this iteration, `admission` its place in the
  candidates' admission order, `serial`), ties to the last admitted;
  the victim releases its hold (both pools) and re-enters reqs' queue (its hold's first pool) at the head
  (`lifo`, `requeue head`) or last (`requeue tail` in a fifo queue); a victim already served this
  iteration gives its tokens back to the budget (docs/simulator.md, Engine statistics); a grower that is
  its own victim gets nothing, and under `lifo`, or keys led by `-admission`, which order the
  candidates as it does, the residents after it get nothing either (docs/language.md, "A grower that
  preempts itself");
* then, unless the iteration preempted, the stage admits from reqs' queue while budget is left: the head
  is admitted when reqs and kv have room for `1` and `min(P, budget_left)` rounded up to blocks, and takes
  up to the chunk of what is left; a head that does not fit stops the admissions (§3, pool-reference
  `queue`); the head is the latest victim re-queued at the head, else, under `queue by` (the third case),
  the least keys read at that attempt (`waited` the time since the hold joined the queue, started again
  for a victim re-queued at the tail; `serial`), ties in the order they joined (§3 Waiting selection,
  pool-reference `preempt`);
* an iteration that serves no token and preempted nothing is not one (§3); tokens are applied at its end,
  where a finished prefill turns into its decode and a finished decode ends the hold, releasing both pools.

Power: the model with one rule changed disagrees with the simulator on some of the 240 cases of the two
seeds: victim ties to the first admitted (30 cases), `serve by` ties to the last admitted (16), admissions
in an iteration that preempted (111), a header reading the whole budget rather than `budget_left` (38), a
self-victim never stopping the serving under `lifo` (9: 3 and 6 a seed), always stopping it (34), a
victim's tokens not given back to the budget (2: 1 a seed); on the 120 with queue keys, `waited` not
started again for a victim re-queued at the tail (50 of 1 000 in a trial), victims re-queued at the head
in the order they were preempted (17 of 1 000); on the 120 with victims by `admission` (the fourth case),
keys led by `-admission` not stopping the serving as `lifo` does (14).
"""

from __future__ import annotations

import random

import pytest
from conform import pool, run, stage
from engine_model16 import BY_ADMISSION, ORDERS, POLICIES, Stuck, choose, keys_of, ternary, up

pytestmark = pytest.mark.timeout(120)


def queue_keys(names, entry, t):
    s, joined, _ = entry
    out = []
    for k in names or ():
        sign = -1 if k.startswith("-") else 1
        out.append(sign * (t - joined if k.lstrip("-") == "waited" else s))
    return tuple(out)


def model(sessions, B, K, block, cap, R, policy, requeue, serve, qkeys=None):
    """``sessions``: [(P, D)]; ``policy``: "lifo" or a tuple of key names; ``serve``: None (admission
    order) or a tuple of key names; ``qkeys``: None (fifo) or reqs' `queue by` keys (`waited`,
    `serial`, signed). Returns admissions, ends, preemptions and iterations."""
    n = len(sessions)
    queue = [(s, 0, s) for s in range(n)]  # (session, when it joined, the order it joined in)
    front = []  # victims re-queued at the head, the latest first
    joins = n
    residents = []  # in admission order
    jobs = {}
    admits = {}
    done = {}
    preemptions = iterations = 0
    kv_used = 0
    t = 0
    while len(done) < n:
        if t > 500:
            raise Stuck
        left = B
        served = []
        preempted = stop = False
        order = list(residents)
        if serve is not None:
            order.sort(key=lambda c: keys_of(serve, c, jobs[c]))  # stable: ties in admission order
        for s in order:
            if stop:
                break
            if s not in residents:
                continue
            job = jobs[s]
            want = 1 if job["mode"] == "decode" else K
            tok = min(want, job["rem"], left)
            if tok <= 0:
                break
            target = up(job["pos"] + tok, block)
            own = False
            while target > job["alloc"]:
                if kv_used + target - job["alloc"] <= cap:
                    kv_used += target - job["alloc"]
                    job["alloc"] = target
                    break
                if policy == "lifo":
                    v = residents[-1]
                else:
                    best = None
                    for rank, c in enumerate(residents):
                        jobs[c]["adm"] = rank  # its place in the candidates' admission order
                        k = keys_of(policy, c, jobs[c])
                        if best is None or k <= best[0]:
                            best = (k, c)
                    v = best[1]
                preempted = True
                preemptions += 1
                kv_used -= jobs.pop(v)["alloc"]
                residents.remove(v)
                for i, (ss, tk) in enumerate(served):
                    if ss == v:
                        left += tk
                        del served[i]
                        break
                if policy == "lifo" or requeue == "head":
                    front.insert(0, v)
                else:  # a newcomer: waited starts again
                    queue.append((v, t, joins))
                    joins += 1
                if v == s:
                    own = True
                    break
            if own:
                # keys led by -admission order the candidates as lifo does, and stop as it does
                stop = policy == "lifo" or policy[0] == "-admission"
                continue
            left -= tok
            served.append((s, tok))
        if not preempted:
            while left > 0 and (front or queue):
                if front:
                    s = front[0]
                else:  # the least keys, read now, then the order they joined in
                    entry = min(queue, key=lambda e: (queue_keys(qkeys, e, t), e[2]))
                    s = entry[0]
                P, _ = sessions[s]
                units = up(min(P, left), block)
                if len(residents) + 1 > R or kv_used + units > cap:
                    break
                if front:
                    front.pop(0)
                else:
                    queue.remove(entry)
                kv_used += units
                jobs[s] = {"mode": "prefill", "rem": P, "pos": 0, "alloc": units}
                residents.append(s)
                admits.setdefault(s, []).append(float(t))
                tok = min(K, left, P)
                left -= tok
                served.append((s, tok))
        if not served and not preempted:
            raise Stuck
        iterations += 1
        t += 1
        for s, tok in served:
            job = jobs[s]
            job["pos"] += tok
            job["rem"] -= tok
            if job["rem"] <= 0:
                if job["mode"] == "prefill":
                    job["mode"], job["rem"] = "decode", sessions[s][1]
                else:
                    kv_used -= jobs.pop(s)["alloc"]
                    residents.remove(s)
                    done[s] = float(t)
    return admits, done, preemptions, iterations


def program(sessions, B, K, block, cap, R, policy, requeue, serve, qkeys=None):
    preempt = "preempt lifo;" if policy == "lifo" else f"preempt by ({choose(policy)}) requeue {requeue};"
    order = "" if serve is None else f"serve by ({choose(serve)});"
    return f"""
pool reqs {{ cap {R}; admit via E;{"" if not qkeys else f" queue by ({choose(qkeys)});"} }}
pool kv {{ cap {cap}; block {block}; {preempt} }}
stage E : step {{ budget {B}; chunk {K}; cost 1; memory kv; {order} }}
workload {{ arrive batch({len(sessions)}); }}
session {{
  set P = {ternary([p for p, _ in sessions])};
  set D = {ternary([d for _, d in sessions])};
  hold reqs (1), kv (min(P, budget_left(E))) {{
    observe a = now;
    run E prefill (P) growing kv;
    run E decode (D) growing kv;
  }}
  observe t = now;
}}
run {{ horizon 600; }}
"""


def cases(seed, count, policies=POLICIES):
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randint(2, 4)
        sessions = [(rng.randint(1, 9), rng.randint(1, 6)) for _ in range(n)]
        B = rng.randint(2, 8)
        K = rng.randint(1, B)
        block = rng.choice([1, 2, 4])
        cap = max(up(p + d, block) for p, d in sessions) + rng.randint(0, 8)
        R = rng.randint(1, 4)
        policy, requeue = rng.choice(policies)
        yield sessions, B, K, block, cap, R, policy, requeue, rng.choice(ORDERS)


QUEUE_KEYS = [("waited",), ("-waited",), ("serial",), ("-serial",), ("-waited", "serial")]


@pytest.mark.parametrize("seed, queued", [(16, False), (61, False), (7, True), (9, None)])
def test_one_engine_with_block_memory_victims_by_keys_and_serving_orders(monkeypatch, seed, queued):
    """120 random programs a case (the third with reqs' `queue by` keys drawn from QUEUE_KEYS, the fourth
    with victims by `admission`, BY_ADMISSION); the model's admissions, ends, preemptions and iterations, or, where the
    model's engine is stuck (a self-preemption livelock, a head that never fits), a run in which some
    session does not end by the horizon. Offline, seeds 1 … 5 gave 4 500 cases, all agreeing (163 of them
    stuck in both), 1 400 more with queue keys (50 stuck in both) and 1 086 by `admission` (87 stuck in
    both)."""
    agreed = stuck = 0
    keys = random.Random(seed)
    for case in cases(seed, 120, BY_ADMISSION if queued is None else POLICIES):
        qkeys = keys.choice(QUEUE_KEYS) if queued else None
        r, o = run(program(*case, qkeys=qkeys), monkeypatch)
        ends = {s: tm for s, tm, _ in o["t"]}
        try:
            admits, done, preemptions, iterations = model(*case, qkeys=qkeys)
        except Stuck:
            assert len(ends) < len(case[0]), case
            stuck += 1
            continue
        got = {}
        for s, tm, _ in o["a"]:
            got.setdefault(s, []).append(tm)
        assert (got, ends) == (admits, done), case
        assert pool(r, "kv").preemptions == preemptions, case
        assert stage(r, "E").iterations == iterations, case
        agreed += 1
    # the cases are not all the easy kind: most end, a few are stuck
    assert (agreed, stuck) == {16: (114, 6), 61: (118, 2), 7: (110, 10), 9: (112, 8)}[seed]
