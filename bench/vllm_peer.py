"""vLLM v1's scheduler as a plain-Python continuous-batching loop: the peer of serQ's vLLM programs.

It does the work lib/vllm.sq's ``vllm_request`` does on a step engine (the scheduler of vLLM 0.33 as the
oracle scenarios record it), and nothing is left out for speed:

* an iteration has a token budget; the running requests are served in admission order (one token to a
  decoding request, up to the chunk cap and the budget left to a prefilling one), then, unless the
  iteration preempted, waiting requests are admitted first come first served while budget is left and
  fewer than ``max_seqs`` run; the first that does not fit ends admission (head-of-line blocking);
* chunked prefill with vLLM's long-prefill threshold ``C``, applied only while more than one request runs
  or waits (lib/vllm.sq's ``long_prefill``), to the running requests and to an admitted request's first
  chunk;
* KV memory in blocks of ``bs`` tokens, allocated as tokens are computed: an admission needs free blocks
  for every token the request has (``reserve (known)``, vLLM's full-prompt reservation) but allocates only
  the prefix-cache hit and its first chunk; a running request grows its blocks to the position its tokens
  reach, before it is served;
* an LRU prefix cache of full blocks: a request that leaves (done or preempted) caches the full blocks of
  what it computed, keyed by its session's token sequence (the turns of a session extend one sequence;
  nothing is shared across sessions); an admission takes the session's cached prefix (whole blocks, never
  the last token), the rest of the entry stays cached, dead; cached blocks never block an admission or a
  growth, they are evicted from the least recently released entry, tail block first, when the memory is
  needed;
* recompute preemption: when a growth does not fit, the last admitted running request is preempted (it
  frees its blocks, caching its computed prefix, and goes back to the head of the waiting queue; if it is
  the grower itself the iteration's serving stops); a preempted request keeps its sampled tokens and, when
  re-admitted, recomputes its prompt and those tokens; no admission in an iteration that preempted;
* an iteration's cost is the A100 fit ``c + d decoders + e kv_decode + a prefilled + b attention`` (the
  programs' step cost; kv_decode is the blocks the decoding requests hold, in tokens; attention is
  ``sum n (K + n/2)`` over the prefill chunks, K the position before the chunk), or 1 on the step clock.

Modes (each prints one line, or JSON for ``scenario``):

    python bench/vllm_peer.py single N [SEED] [--blocks K] [--rate R] ...   # bench/vllm_single.sq
    python bench/vllm_peer.py multiturn [SEED] [--horizon T] ...            # examples/multi-turn/vllm.sq
    python bench/vllm_peer.py decoders N [--out O]                         # bench/vllm_decoders.sq
    python bench/vllm_peer.py scenario FILE.json                           # serq vllm scenario FILE.json

``run_requests`` and ``run_scenario`` are the API the tests use (packages/serq-vllm/tests/test_bench_peer.py):
the peer reproduces every oracle scenario it can express (those served in admission order) and, given the
same requests, serQ's per-request first-token and done times on the benchmark's programs.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import OrderedDict, deque
from heapq import heappop, heappush

INF = math.inf


class Req:
    """One request (one turn of a session)."""

    __slots__ = ("idx", "sess", "prompt", "o", "t0", "known", "had", "pos", "blocks", "work", "decoding",
                 "computed", "hit_tokens", "runs", "first", "done", "nxt")

    def __init__(self, idx, sess, prompt, o, t0, nxt=None):
        self.idx = idx
        self.sess = sess
        self.prompt = prompt
        self.o = o
        self.t0 = t0
        self.known = prompt
        self.had = prompt
        self.pos = 0  # the tokens computed (the hold's position)
        self.blocks = 0  # KV blocks held
        self.work = 0  # tokens left in the current prefill, or decodes left
        self.decoding = False
        self.computed = 0  # the position at the latest preemption (0: never preempted)
        self.hit_tokens = -1  # the prefix-cache hit at the first admission
        self.runs = 0
        self.first = None
        self.done = None
        self.nxt = nxt  # what follows this request: (think, Req) of the session's next turn, or None


class Engine:
    """One vLLM engine. ``cost`` is (c, d, e, a, b) of the A100 fit, or None for the step clock (cost 1)."""

    def __init__(self, budget, max_seqs, bs, nblocks, chunk=INF, caching=True, cost=None):
        self.budget = budget
        self.max_seqs = max_seqs
        self.bs = bs
        self.nblocks = nblocks
        self.C = chunk if chunk > 0 else INF
        self.caching = caching
        self.cost = cost
        self.waiting: deque[Req] = deque()
        self.running: list[Req] = []
        self.used = 0  # blocks held by running requests
        self.cached = 0  # blocks in cache entries
        self.entries: OrderedDict[int, list] = OrderedDict()  # entry id -> [session, blocks], oldest first
        self.live: dict = {}  # session -> the id of its matchable entry
        self.next_entry = 0
        self.iterations = 0
        self.batch_sum = 0  # residents summed over iterations
        self.preemptions = 0
        self.rejected: list[Req] = []  # requests that can never fit (their sessions end)
        self.hit_total = 0  # tokens taken from the prefix cache, every admission (re-admissions too)

    # -- memory ----------------------------------------------------------------------------------------

    def _evict(self) -> None:
        """Evict cached blocks, least recently released entry first, tail block first, until the held and
        the cached blocks fit."""
        over = self.used + self.cached - self.nblocks
        entries = self.entries
        while over > 0:
            eid, ent = next(iter(entries.items()))
            take = ent[1] if ent[1] <= over else over
            ent[1] -= take
            self.cached -= take
            over -= take
            if ent[1] == 0:
                del entries[eid]
                if self.live.get(ent[0]) == eid:
                    del self.live[ent[0]]

    def _release(self, r: Req, cache_tokens: int) -> None:
        """``r`` leaves the memory: its blocks are freed and the full blocks of ``cache_tokens`` cached."""
        self.used -= r.blocks
        keep = min(cache_tokens, r.blocks * self.bs) // self.bs
        r.blocks = 0
        if keep > 0:
            eid = self.next_entry
            self.next_entry += 1
            self.entries[eid] = [r.sess, keep]
            self.cached += keep
            self.live[r.sess] = eid

    def _preempt(self, victim: Req) -> None:
        self.preemptions += 1
        self._release(victim, min(victim.prompt + victim.o, victim.pos))
        victim.computed = victim.pos
        victim.decoding = False
        if self.fits_ever(victim):
            self.waiting.appendleft(victim)
        else:
            self.rejected.append(victim)

    def fits_ever(self, r: Req) -> bool:
        """Whether ``r``'s reservation (every token it has) fits the pool at all: a request that can never
        be admitted is rejected when it joins the queue, its session ends (serQ's rule for a hold whose
        reserve reads only attributes and exceeds the cap)."""
        known = r.prompt if r.computed < r.prompt else r.computed + 1
        if r.had > known:
            known = r.had
        return -(-known // self.bs) <= self.nblocks

    # -- one iteration ---------------------------------------------------------------------------------

    def plan(self):
        """Plan one iteration: ``(planned, preempted)`` with planned a list of (request, tokens, K) in the
        order served, or None when nothing is scheduled and nothing preempted (no iteration)."""
        bs = self.bs
        running = self.running
        waiting = self.waiting
        chunk = self.C if len(running) + len(waiting) > 1 else INF
        left = self.budget
        planned = []
        preempted = False
        stopped = False
        i = 0
        while i < len(running) and left > 0:
            r = running[i]
            if r.decoding:
                t = 1
            else:
                t = r.work if r.work < chunk else chunk
                if t > left:
                    t = left
            need = -(-(r.pos + t) // bs) - r.blocks
            if need > 0:
                while self.nblocks - self.used < need:
                    victim = running.pop()
                    self._preempt(victim)
                    preempted = True
                    if victim is r:
                        stopped = True
                        break
                if stopped:  # the grower preempted itself: serving stops
                    break
                r.blocks += need
                self.used += need
                if self.used + self.cached > self.nblocks:
                    self._evict()
            planned.append((r, t, r.pos))
            r.pos += t
            left -= t
            i += 1
        if not preempted and not stopped:
            while waiting and left > 0 and len(running) < self.max_seqs:
                r = waiting[0]
                known = r.prompt if r.computed < r.prompt else r.computed + 1
                if r.had > known:
                    known = r.had
                hit = 0
                eid = self.live.get(r.sess)
                if self.caching and eid is not None:
                    x = known  # a request's own turns match its session's whole sequence (match = inf)
                    reuse = (x - 1) // bs * bs
                    have = self.entries[eid][1] * bs
                    hit = have if have < reuse else reuse
                lp = self.C if len(running) + len(waiting) > 1 else INF
                units = hit + (left if left < lp else lp)
                if units > known:
                    units = known
                if self.used + -(-known // bs) > self.nblocks:
                    break  # the head does not fit: no more admissions
                waiting.popleft()
                if eid is not None:  # the hold consumes its own prefix; the rest stays cached, dead
                    ent = self.entries[eid]
                    hb = hit // bs
                    ent[1] -= hb
                    self.cached -= hb
                    del self.live[r.sess]
                    if ent[1] == 0:
                        del self.entries[eid]
                alloc = -(-units // bs)
                r.blocks = alloc
                self.used += alloc
                if self.used + self.cached > self.nblocks:
                    self._evict()
                r.known = r.had = known
                r.runs += 1
                self.hit_total += hit
                if r.hit_tokens < 0:
                    r.hit_tokens = hit
                r.pos = hit
                r.work = known - hit
                r.decoding = False
                running.append(r)
                t = r.work if r.work < chunk else chunk
                if t > left:
                    t = left
                need = -(-(r.pos + t) // bs) - r.blocks
                if need > 0:  # not reached: the admission allocated the first chunk
                    if self.nblocks - self.used < need:
                        raise RuntimeError("a newcomer's first chunk does not fit")
                    r.blocks += need
                    self.used += need
                    if self.used + self.cached > self.nblocks:
                        self._evict()
                planned.append((r, t, r.pos))
                r.pos += t
                left -= t
        if not planned and not preempted:
            return None
        return planned

    def iteration_cost(self, planned) -> float:
        if self.cost is None:
            return 1.0
        c, d, e, a, b = self.cost
        dec = kvd = pre = attn = 0.0
        bs = self.bs
        for r, t, k in planned:
            if r.decoding:
                dec += 1
                kvd += r.blocks * bs
            else:
                pre += t
                attn += t * (k + t / 2.0)
        return c + d * dec + e * kvd + a * pre + b * attn

    def finish(self, planned, now: float, done_cb) -> None:
        """The iteration that ``plan`` returned ends at ``now``: apply its tokens; requests that are done
        leave (in the order they were served), and ``done_cb(r)`` is called for each."""
        self.iterations += 1
        self.batch_sum += len(self.running)
        gone = False
        for r, t, _ in planned:
            if r.decoding:
                r.work -= 1
                if r.work == 0:
                    self._done(r, now, done_cb)
                    gone = True
            else:
                r.work -= t
                if r.work == 0:
                    if r.known == r.prompt:
                        r.first = now
                    d = r.o - 1 - (r.known - r.prompt)
                    if d > 0:
                        r.decoding = True
                        r.work = d
                    else:
                        self._done(r, now, done_cb)
                        gone = True
        if gone:
            self.running = [r for r in self.running if r.done is None]

    def _done(self, r: Req, now: float, done_cb) -> None:
        r.done = now
        self._release(r, min(r.prompt + r.o, r.pos))
        done_cb(r)


def simulate(engine: Engine, arrivals, horizon: float = INF, warmup: float = 0.0) -> list[Req]:
    """Run ``engine`` on ``arrivals`` (an iterable of (time, Req) in time order; a request's ``nxt`` is
    (think, next turn's Req) and that turn joins ``think`` after it is done). Returns the requests done,
    in the order they finished. The run stops at ``horizon``."""
    it = iter(arrivals)
    heap: list = []  # (time, seq, Req) of turns that follow a tool call
    seq = 0
    pending = next(it, None)  # the next fresh arrival
    done: list[Req] = []
    waiting = engine.waiting

    def on_done(r: Req) -> None:
        nonlocal seq
        done.append(r)
        if r.nxt is not None:
            think, nr = r.nxt
            seq += 1
            heappush(heap, (r.done + think, seq, nr))

    now = 0.0
    while True:
        # every arrival up to now joins, in time order (fresh arrivals before follow-ups at a tie)
        joined = []
        while pending is not None and pending[0] <= now:
            joined.append((pending[0], 0, pending[1].idx, pending[1]))
            pending = next(it, None)
        while heap and heap[0][0] <= now:
            t, s, r = heappop(heap)
            joined.append((t, 1, r.idx, r))
        if joined:
            joined.sort(key=lambda j: (j[0], j[2]))
            for t, _, _, r in joined:
                r.t0 = t
                if engine.fits_ever(r):
                    waiting.append(r)
                else:
                    engine.rejected.append(r)
        planned = engine.plan()
        if planned is not None:
            end = now + engine.iteration_cost(planned)
            # arrivals during the iteration wait for its end
            if end > horizon:
                break
            engine.finish(planned, end, on_done)
            now = end
            continue
        # idle: the next arrival
        nxt = INF
        if pending is not None:
            nxt = pending[0]
        if heap and heap[0][0] < nxt:
            nxt = heap[0][0]
        if nxt == INF or nxt > horizon:
            break
        now = nxt
    return done


# ---------------------------------------------------------------------------------------------------------
# The oracle scenarios (serq vllm scenario's conventions)


def run_scenario(sc: dict) -> dict:
    """A scenario on the step clock, answered in the oracle's conventions. Only scenarios served in
    admission order (no ``serve`` key, or ``admission``) are expressed."""
    if sc.get("serve", "admission") != "admission":
        raise ValueError("the peer serves in admission order only")
    requests = sc["requests"]
    engine = Engine(int(sc["budget"]), int(sc["max_seqs"]), int(sc["block_size"]), int(sc["num_blocks"]) - 1,
                    chunk=float(sc.get("chunk") or 0) or INF, caching=bool(sc.get("prefix_caching")))
    reqs = {}
    sessions: dict = {}
    for i, r in enumerate(requests):
        key = ("s", r["session"]) if "session" in r else ("r", i)
        sessions.setdefault(key, []).append((r.get("turn", 0), i))
        reqs[i] = Req(i, key, int(r["prompt"]), int(r["out"]), 0.0)
    arrivals = []
    for turns in sessions.values():
        turns.sort()
        chain = [i for _, i in turns]
        for a, b in zip(chain, chain[1:]):
            reqs[a].nxt = (float(requests[b].get("think", 0) or 0), reqs[b])
        arrivals.append((float(requests[chain[0]].get("arrive", 0) or 0), reqs[chain[0]]))
    arrivals.sort(key=lambda ar: (ar[0], ar[1].idx))
    simulate(engine, arrivals)
    n = len(requests)
    missing = [i for i in range(n) if reqs[i].done is None]
    if missing:
        raise RuntimeError(f"requests {missing} did not finish")
    order = sorted(range(n), key=lambda i: (reqs[i].first, i))
    return {
        "first": {str(i): int(reqs[i].first) for i in order},
        "done": {str(i): int(reqs[i].done) for i in order},
        "preempted": {str(i): reqs[i].runs - 1 for i in range(n)},
        "cached": {str(i): reqs[i].hit_tokens for i in order},
        "preemptions": engine.preemptions,
        "steps": int(max(r.done for r in reqs.values())) + 1,
        # every setting that changes the schedule, as serq_vllm.real.config_out writes it
        "config": {"budget": sc["budget"], "max_seqs": sc["max_seqs"], "chunk": sc.get("chunk") or 0,
                   "block_size": sc["block_size"], "num_blocks": sc["num_blocks"],
                   "prefix_caching": bool(sc.get("prefix_caching")), "serve": "admission"},
    }


# ---------------------------------------------------------------------------------------------------------
# The benchmark's workloads

#: The programs' engine cost: Qwen3-8B on an A100 (examples/multi-turn/vllm.sq, bench/vllm_single.sq).
A100 = (0.013939, 0.00004105, 0.00000013786, 0.000051527, 0.0000000040196)


def single_arrivals(n: int, seed: int, rate: float, mean_prompt: float, mean_out: float):
    """bench/vllm_single.sq's workload, drawn with Python's random: Poisson arrivals, prompt
    1 + floor(exp(mean_prompt)), output 1 + floor(exp(mean_out)), each request its own session."""
    rng = random.Random(seed)
    expo = rng.expovariate
    t = 0.0
    for i in range(n):
        t += expo(rate)
        prompt = 1 + math.floor(expo(1.0 / mean_prompt))
        o = 1 + math.floor(expo(1.0 / mean_out))
        yield t, Req(i, i, prompt, o, t)


def multiturn_arrivals(seed: int, rate: float, horizon: float, e_n: float, e_o: float, p_more: float, z: float):
    """examples/multi-turn/vllm.sq's workload: Poisson sessions; each turn sends the whole conversation so
    far plus 1 + floor(exp(e_n)) new tokens and receives 1 + floor(exp(e_o)); another turn follows with
    probability p_more after a tool call of mean z."""
    rng = random.Random(seed)
    expo = rng.expovariate
    t = 0.0
    idx = 0
    s = 0
    while True:
        t += expo(rate)
        if t > horizon:
            return
        k = 0
        first = prev = None
        while True:
            n = 1 + math.floor(expo(1.0 / e_n))
            o = 1 + math.floor(expo(1.0 / e_o))
            r = Req(idx, s, k + n, o, t)
            idx += 1
            if prev is None:
                first = r
            else:
                prev.nxt = (expo(1.0 / z), r)
            prev = r
            k = k + n + o
            if rng.random() >= p_more:
                break
        s += 1
        yield t, first


def summary(engine: Engine, done: list[Req], warmup: float = 0.0) -> str:
    after = [r for r in done if r.done >= warmup]
    ttft = [r.first - r.t0 for r in after if r.first is not None and r.first >= warmup]
    pre = sum(r.runs - 1 for r in after)
    mean_ttft = sum(ttft) / len(ttft) if ttft else float("nan")
    mean_batch = engine.batch_sum / engine.iterations if engine.iterations else 0.0
    return (f"requests done {len(after)} mean ttft {mean_ttft:.4f} iterations {engine.iterations} "
            f"mean batch {mean_batch:.2f} preemptions {engine.preemptions} (of requests done {pre})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="vLLM v1's scheduler in plain Python (serQ's benchmark peer)")
    sub = ap.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("single", help="bench/vllm_single.sq's workload")
    p.add_argument("n", type=int)
    p.add_argument("seed", type=int, nargs="?", default=1)
    p.add_argument("--rate", type=float, default=6.0)
    p.add_argument("--prompt", type=float, default=1000.0)
    p.add_argument("--out", type=float, default=200.0)
    p.add_argument("--budget", type=int, default=512)
    p.add_argument("--max-seqs", type=int, default=64)
    p.add_argument("--blocks", type=int, default=8000)
    p.add_argument("--bs", type=int, default=16)
    p.add_argument("--chunk", type=float, default=INF)
    p = sub.add_parser("multiturn", help="examples/multi-turn/vllm.sq's workload")
    p.add_argument("seed", type=int, nargs="?", default=1)
    p.add_argument("--horizon", type=float, default=1800.0)
    p.add_argument("--warmup", type=float, default=180.0)
    p = sub.add_parser("decoders", help="bench/vllm_decoders.sq: N requests decoding together")
    p.add_argument("n", type=int)
    p.add_argument("--out", type=int, default=512)
    p.add_argument("--prompt", type=int, default=16)
    p = sub.add_parser("scenario", help="an oracle scenario, answered as serq vllm scenario answers")
    p.add_argument("file")
    args = ap.parse_args(argv)
    if args.mode == "single":
        eng = Engine(args.budget, args.max_seqs, args.bs, args.blocks, chunk=args.chunk, cost=A100)
        done = simulate(eng, single_arrivals(args.n, args.seed, args.rate, args.prompt, args.out))
        print(summary(eng, done))
    elif args.mode == "multiturn":
        eng = Engine(2048, 256, 16, 8010, cost=A100)
        arr = multiturn_arrivals(args.seed, 0.3, args.horizon, 400.0, 200.0, 0.8, 5.0)
        done = simulate(eng, arr, horizon=args.horizon)
        print(summary(eng, done, args.warmup))
    elif args.mode == "decoders":
        eng = Engine(max(2048, args.n), args.n, 16, args.n * (-(-(args.prompt + args.out) // 16) + 1), cost=A100)
        done = simulate(eng, ((0.0, Req(i, i, args.prompt, args.out, 0.0)) for i in range(args.n)))
        print(summary(eng, done))
    else:
        with open(args.file) as f:
            print(json.dumps(run_scenario(json.load(f))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
