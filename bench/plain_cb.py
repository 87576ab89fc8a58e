"""Continuous batching in plain Python: the model bench/cb.sq writes in serQ.

One engine runs iterations. Each iteration has a token budget: the residents, in admission order, take
one token each when decoding and as much of their remaining prompt as the budget leaves when prefilling
(chunked prefill); then the waiting requests are admitted first come first served while budget is left,
at most MAX_SEQS residents, each reserving KV blocks for its prompt and output at admission; the head
that does not fit blocks the rest (head-of-line blocking). An iteration costs a constant time, and its
tokens count when it ends: a request's first token comes with its last prefill chunk, then it decodes
out - 1 tokens, one per iteration, and frees its blocks. Requests arrive as a Poisson process; prompt and
output lengths are drawn from fixed laws. Prints the iterations, the mean batch and the mean TTFT.

    python bench/plain_cb.py [REQUESTS] [SEED]
"""

import math
import random
import sys
from collections import deque

RATE = 2.8  # requests per second (the engine saturates near 2.9: the mean batch is about 15)
BUDGET = 512  # tokens per iteration
MAX_SEQS = 16
BLOCK = 16  # tokens per KV block
BLOCKS = 1024
COST = 0.02  # seconds per iteration


def main(n: int, seed: int) -> None:
    rng = random.Random(seed)
    arrivals = []  # (time, prompt, out), the workload drawn up front
    t = 0.0
    for _ in range(n):
        prompt = math.floor(rng.uniform(128, 1024))
        out = math.floor(rng.uniform(32, 512))
        arrivals.append((t, prompt, out))
        t += rng.expovariate(RATE)

    now = 0.0
    nxt = 0  # next arrival
    waiting: deque[list] = deque()
    running: list[list] = []  # [arrival, prefill left, decode left, blocks], in admission order
    free = BLOCKS
    iterations = 0
    batch_sum = 0
    ttfts: list[float] = []
    done = 0
    while done < n:
        if not running and not waiting:
            now = max(now, arrivals[nxt][0])
        while nxt < n and arrivals[nxt][0] <= now:
            a, prompt, out = arrivals[nxt]
            waiting.append([a, prompt, out - 1, math.ceil((prompt + out) / BLOCK)])
            nxt += 1
        budget = BUDGET
        scheduled = []  # (request, tokens)
        for r in running:
            if budget == 0:
                break
            take = min(r[1], budget) if r[1] > 0 else 1
            budget -= take
            scheduled.append((r, take))
        while waiting and budget > 0 and len(running) < MAX_SEQS and waiting[0][3] <= free:
            r = waiting.popleft()
            free -= r[3]
            running.append(r)
            take = min(r[1], budget)
            budget -= take
            scheduled.append((r, take))
        iterations += 1
        batch_sum += len(running)
        now += COST
        for r, take in scheduled:
            if r[1] > 0:
                r[1] -= take
                if r[1] == 0:
                    ttfts.append(now - r[0])
            else:
                r[2] -= 1
        for r in [r for r in running if r[1] == 0 and r[2] == 0]:
            running.remove(r)
            free += r[3]
            done += 1
    print(f"requests {n} iterations {iterations} mean batch {batch_sum / iterations:.2f} "
          f"mean ttft {sum(ttfts) / len(ttfts):.4f} end {now:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
