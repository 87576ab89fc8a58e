"""vLLM v1's scheduler and KV cache at the level of its blocks, in plain Python: a second reading of the source.

bench/vllm_peer.py and lib/vllm.sq both describe the cache by entries (a session's cached prefix, evicted
tail first); this module keeps what vLLM keeps, so the two descriptions can be checked against it:

* the block pool (``block_pool.py``): ``num_blocks`` blocks, block 0 the null block; a free queue of every
  block no request holds, front first; a block's hash, a map from hash to the blocks that carry it (the
  first is the one a lookup finds); taking blocks from the free queue's front drops their hashes (an
  eviction); ``touch`` takes a hit block out of the free queue; a freed block goes to the queue's back when
  it has a hash and to its front when it has none (0.33's ``free_blocks``);
* the KV cache manager (``kv_cache_manager.py``, ``single_type_kv_cache_manager.py``): a request's blocks,
  freed in reverse order (tail first); a lookup of the longest run of cached full blocks from the start, at
  most ``num_tokens - 1`` tokens; ``allocate_slots`` with the full-sequence gate of a waiting request (its hit
  blocks that sit in the free queue counted among the blocks it takes) and the hashing of every full block
  up to the tokens the step schedules (``cache_blocks``), at allocation, before they are computed;
* the scheduler (``sched/scheduler.py``): the running loop (tokens cut at the long-prefill threshold, which
  is 0 unless more than one request runs or waits at the step's start, then at the budget left; a failed
  allocation preempts ``running[-1]`` and a request that is its own victim ends the loop), the waiting loop
  (only in a step that preempted nothing; ``max_num_seqs``; the lookup; the first request that does not fit
  ends it), ``_preempt_request`` (blocks freed, computed tokens zeroed, the request at the waiting queue's
  front), the priority policy (waiting by priority, arrival and request id; the victim the lowest priority,
  latest arrival, first in running order; a victim served earlier in the step gives its tokens back; a
  request that is its own victim lets the loop go on), and the serving orders of ``serq vllm real``'s
  scheduler class (the running list sorted by a key before each step, the victim the last admitted, found
  anywhere in the list, a request that is its own victim ending the step's serving);
* the driver of ``serq_vllm.real`` (oracle/README.md's step clock): requests added before the step they
  arrive at, in index order; a turn's token ids the previous turn's prompt and output, then fresh ones;
  one sampled token for each request whose computed tokens reach its tokens; a request freed at the end of
  the step that samples its last token, in scheduling order.

``eager_hash`` (on by default, as vLLM does it) keeps the hashes of blocks a request was given in a step in
which it is then preempted: under a serving order or the priority policy the victim can be a request the
step had already served, and vLLM caches the blocks of the tokens it scheduled for it though they were
never computed. serQ does so on a pool that says `cache scheduled` (the vLLM programs' KV pools);
``eager_hash=False`` is the scheduler that caches a victim's computed prefix alone, serQ's `cache computed`
(the language's default).

:func:`run` returns the oracle's answer (``first``, ``done``, ``preempted``, ``cached``, ``preemptions``,
``steps``) of a scenario in the format of oracle/README.md.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class _Block:
    __slots__ = ("hash", "id", "ref")

    def __init__(self, i: int) -> None:
        self.id = i
        self.ref = 0
        self.hash: tuple | None = None


class _Request:
    __slots__ = ("arrival", "cached", "computed", "decoding", "i", "max_out", "outs", "preemptions", "priority",
                 "prompt", "stamp")

    def __init__(self, i: int, ids: list[int], out: int, priority: int, arrival: int) -> None:
        self.i = i
        self.prompt = ids
        self.outs: list[int] = []
        self.max_out = out
        self.computed = 0
        self.cached = -1  # num_cached_tokens: set at the first scheduling
        self.preemptions = 0
        self.priority = priority
        self.arrival = arrival
        self.stamp: int | None = None  # admission stamp of the serving orders' scheduler class
        self.decoding = False

    @property
    def num_tokens(self) -> int:
        return len(self.prompt) + len(self.outs)

    def tokens(self) -> list[int]:
        return self.prompt + self.outs


def _serve_key(serve: str | None):
    """The sort key (admission stamp, decoding) of a serving order, as ``serq_vllm.real`` reads it; None for
    vLLM's own order."""
    if serve is None or serve == "admission":
        return None
    if serve == "-admission":
        return lambda adm, dec: -adm
    if serve in ("decoding", "-decoding"):
        sign = -1 if serve.startswith("-") else 1
        return lambda adm, dec: sign * (1 if dec else 0)
    yes, no = (float(x) for x in serve.removeprefix("decoding ? ").split(" : "))
    return lambda adm, dec: yes if dec else no


class Engine:
    """One engine: the block pool, the KV cache manager and the scheduler of a scenario's settings."""

    def __init__(self, sc: dict[str, Any], *, priority: bool = False, eager_hash: bool = True) -> None:
        self.budget = int(sc["budget"])
        self.max_seqs = int(sc["max_seqs"])
        self.bs = int(sc["block_size"])
        self.threshold = int(sc.get("chunk") or 0)
        self.caching = bool(sc.get("prefix_caching"))
        self.key = _serve_key(sc.get("serve"))
        self.priority = priority
        self.eager_hash = eager_hash
        blocks = [_Block(i) for i in range(int(sc["num_blocks"]))]
        self.free = blocks[1:]  # the free queue, front first (block 0 is the null block)
        self.by_hash: dict[tuple, list[_Block]] = {}
        self.held: dict[int, list[_Block]] = {}  # a request's blocks, in order
        self.hashed: dict[int, int] = {}  # how many of them carry a hash
        self.running: list[_Request] = []
        self.waiting: deque[_Request] = deque()
        self.stamps = 0

    # ---------------------------------------------------------------- block pool
    def _hash(self, r: _Request, j: int) -> tuple:
        # the chained hash of block j stands for every token up to its end
        return tuple(r.tokens()[: (j + 1) * self.bs])

    def _take(self, n: int) -> list[_Block]:
        got = []
        for _ in range(n):
            b = self.free.pop(0)
            if b.hash is not None:  # evicted
                same = self.by_hash[b.hash]
                same.remove(b)
                if not same:
                    del self.by_hash[b.hash]
                b.hash = None
            b.ref = 1
            got.append(b)
        return got

    def _touch(self, blocks: list[_Block]) -> None:
        for b in blocks:
            if b.ref == 0:
                self.free.remove(b)
            b.ref += 1

    def _give_back(self, ordered: list[_Block]) -> None:
        front, back = [], []
        for b in ordered:
            b.ref -= 1
            if b.ref == 0:
                (back if b.hash is not None else front).append(b)
        self.free = front + self.free + back

    # ---------------------------------------------------------------- KV cache manager
    def _lookup(self, r: _Request) -> tuple[list[_Block], int]:
        if not self.caching:
            return [], 0
        got: list[_Block] = []
        while (len(got) + 1) * self.bs <= r.num_tokens - 1:
            same = self.by_hash.get(self._hash(r, len(got)))
            if not same:
                break
            got.append(same[0])
        return got, len(got) * self.bs

    def _needed(self, r: _Request, tokens: int, hit: list[_Block]) -> int:
        new = cdiv(tokens, self.bs) - len(hit) - len(self.held.get(r.i, ()))
        return max(0, new) + sum(1 for b in hit if b.ref == 0)

    def _allocate(self, r: _Request, n: int, hit_tokens: int = 0, hit: list[_Block] | None = None,
                  whole: bool = False) -> bool:
        hit = hit or []
        if whole and self._needed(r, r.num_tokens, hit) > len(self.free):
            return False
        total = r.computed + hit_tokens + n
        if self._needed(r, total, hit) > len(self.free):
            return False
        have = self.held.setdefault(r.i, [])
        if hit:
            self._touch(hit)
            have.extend(hit)
            self.hashed[r.i] = len(have)
        more = cdiv(total, self.bs) - len(have)
        if more > 0:
            have.extend(self._take(more))
        if self.caching:
            upto = min(total, r.num_tokens) // self.bs
            k = self.hashed.get(r.i, 0)
            for j in range(k, upto):
                h = self._hash(r, j)
                have[j].hash = h
                self.by_hash.setdefault(h, []).append(have[j])
            self.hashed[r.i] = max(k, upto)
        return True

    def _free(self, r: _Request) -> None:
        self.hashed.pop(r.i, None)
        self._give_back(list(reversed(self.held.pop(r.i, []))))

    # ---------------------------------------------------------------- scheduler
    def _queue(self, r: _Request, front: bool) -> None:
        if self.priority:
            self.waiting.append(r)
            self.waiting = deque(sorted(self.waiting, key=lambda q: (q.priority, q.arrival, str(q.i))))
        elif front:
            self.waiting.appendleft(r)
        else:
            self.waiting.append(r)

    def _preempt(self, r: _Request) -> None:
        if not self.eager_hash:
            # drop the hashes of blocks whose tokens the request never computed
            have = self.held.get(r.i, [])
            keep = r.computed // self.bs
            for b in have[keep : self.hashed.get(r.i, 0)]:
                same = self.by_hash[b.hash]
                same.remove(b)
                if not same:
                    del self.by_hash[b.hash]
                b.hash = None
            self.hashed[r.i] = min(self.hashed.get(r.i, 0), keep)
        r.stamp = None
        self._free(r)
        r.computed = 0
        r.preemptions += 1
        self._queue(r, front=True)

    def _stamp(self) -> None:
        for r in self.running:
            if r.stamp is None:
                r.stamp = self.stamps
                self.stamps += 1

    def schedule(self) -> tuple[dict[int, int], list[_Request]]:
        """One ``schedule()`` call: the tokens each request is given (in scheduling order) and the victims."""
        budget = self.budget
        given: dict[int, int] = {}
        victims: list[_Request] = []
        threshold = self.threshold if len(self.running) + len(self.waiting) > 1 else 0
        key = self.key
        if key is not None:
            self._stamp()
            self.running.sort(key=lambda q: (key(q.stamp, q.decoding), q.stamp))
        held_back: list[_Request] = []
        k = 0
        while k < len(self.running) and budget > 0:
            r = self.running[k]
            n = r.num_tokens - r.computed
            if 0 < threshold < n:
                n = threshold
            n = min(n, budget)
            ok = False
            while True:
                ok = self._allocate(r, n)
                if ok:
                    break
                if self.priority:
                    v = max(self.running, key=lambda q: (q.priority, q.arrival))
                elif key is not None:
                    v = max(self.running, key=lambda q: q.stamp)
                else:
                    v = self.running[-1]
                self.running.remove(v)
                if v.i in given:  # served earlier in this step: its tokens go back to the budget
                    budget += given.pop(v.i)
                    k -= 1
                if v is r and key is not None and not self.priority:
                    held_back = self.running[k:]
                    del self.running[k:]
                self._preempt(v)
                victims.append(v)
                if v is r:
                    break
            if not ok:
                if self.priority:
                    continue
                break
            given[r.i] = n
            budget -= n
            k += 1
        if not victims:
            while self.waiting and budget > 0 and len(self.running) < self.max_seqs:
                r = self.waiting[0]
                hit, hit_tokens = self._lookup(r) if r.computed == 0 else ([], 0)
                n = r.num_tokens - hit_tokens
                if 0 < threshold < n:
                    n = threshold
                n = min(n, budget)
                if not self._allocate(r, n, hit_tokens, hit, whole=True):
                    break
                self.waiting.popleft()
                self.running.append(r)
                given[r.i] = n
                budget -= n
                r.computed = hit_tokens
                if r.cached < 0:
                    r.cached = hit_tokens
        self.running.extend(held_back)
        if key is not None:
            self._stamp()
        for i, n in given.items():
            r = self.requests[i]
            r.computed += n
            r.decoding = r.computed >= r.num_tokens
        return given, victims

    requests: dict[int, _Request]


def _previous_turns(reqs: list[dict[str, Any]]) -> dict[int, int]:
    sessions: dict[Any, list[int]] = {}
    for i, r in enumerate(reqs):
        if "session" in r:
            sessions.setdefault(r["session"], []).append(i)
    prev: dict[int, int] = {}
    for idxs in sessions.values():
        idxs.sort(key=lambda i: (reqs[i].get("turn", 0), i))
        for a, b in zip(idxs, idxs[1:]):
            prev[b] = a
    return prev


def run(sc: dict[str, Any], *, eager_hash: bool = True, history: str = "sequence",
        max_steps: int = 100_000) -> dict[str, Any]:
    """The oracle's answer of scenario ``sc`` (oracle/README.md); ``"policy": "priority"`` puts the engine under
    vLLM's priority policy, and so does a request with a ``priority`` in a scenario that names no policy (the
    scenarios of peer_programs2/priority_vllm.json, taken before scenarios had the key). A later turn's token ids begin with the previous turn's prompt and
    output (``history`` "sequence", the oracle's driver) or with its prompt alone ("prompt", the replayed
    trace of oracle/README.md's ../traces/). ``RuntimeError`` when the requests do not finish in
    ``max_steps``."""
    reqs = sc["requests"]
    n = len(reqs)
    policy = sc.get("policy", "priority" if any("priority" in r for r in reqs) else "fcfs")
    engine = Engine(sc, priority=policy == "priority", eager_hash=eager_hash)
    engine.requests = {}
    prev = _previous_turns(reqs)
    fresh = iter(range(1000, 1 << 62))
    due = {i: math.ceil(r.get("arrive", 0) or 0) for i, r in enumerate(reqs) if i not in prev}
    sent: set[int] = set()
    first: dict[int, int] = {}
    done: dict[int, int] = {}
    step = 0
    while len(done) < n:
        if step >= max_steps:
            raise RuntimeError(f"requests {sorted(set(range(n)) - set(done))} did not finish in {max_steps} steps")
        for i in sorted(i for i, a in due.items() if a <= step and i not in sent):
            r = reqs[i]
            ids: list[int] = []
            if i in prev:
                before = engine.requests[prev[i]]
                ids = (before.tokens() if history == "sequence" else list(before.prompt))[: r["prompt"]]
            ids = ids + [next(fresh) for _ in range(r["prompt"] - len(ids))]
            q = _Request(i, ids, int(r["out"]), int(r.get("priority", 0)), step)
            engine.requests[i] = q
            sent.add(i)
            engine._queue(q, front=False)
        given, _ = engine.schedule()
        finished = []
        for i in given:
            q = engine.requests[i]
            if q.computed >= q.num_tokens:
                q.outs.append(next(fresh))
                first.setdefault(i, step + 1)
                if len(q.outs) >= q.max_out:
                    done[i] = step + 1
                    finished.append(q)
        for q in finished:
            engine.running.remove(q)
            engine._free(q)
            for j, p in prev.items():
                if p == q.i:
                    r = reqs[j]
                    due[j] = math.ceil(max(done[q.i] + (r.get("think", 0) or 0), r.get("arrive", 0) or 0))
        step += 1
    pre = {str(i): engine.requests[i].preemptions for i in range(n)}
    return {
        "first": {str(i): first[i] for i in range(n)},
        "done": {str(i): done[i] for i in range(n)},
        "preempted": pre,
        "cached": {str(i): engine.requests[i].cached for i in range(n)},
        "preemptions": sum(pre.values()),
        "steps": max(done.values()) + 1,
    }
