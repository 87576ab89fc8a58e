"""M/M/1 at rho = 0.8 as a hand-written event loop on a binary heap: Poisson arrivals of rate 0.8, one
FIFO server, exponential service of mean 1; N customers; prints the mean response time.

    python bench/mm1_heapq.py [N] [SEED]
"""

import heapq
import random
import sys
from collections import deque

ARRIVE, DEPART = 0, 1


def main(n: int, seed: int) -> None:
    lam, mu = 0.8, 1.0
    rng = random.Random(seed)
    expo = rng.expovariate
    push, pop = heapq.heappush, heapq.heappop
    events = [(0.0, 0, ARRIVE)]  # (time, sequence number, kind): the sequence number breaks ties
    seq = 1
    waiting: deque[float] = deque()  # arrival times of the customers queued behind the one in service
    busy = False
    in_service = 0.0  # arrival time of the customer in service
    arrived = 0
    responses: list[float] = []
    record = responses.append
    while events:
        now, _, kind = pop(events)
        if kind == ARRIVE:
            arrived += 1
            if arrived < n:
                push(events, (now + expo(lam), seq, ARRIVE))
                seq += 1
            if busy:
                waiting.append(now)
            else:
                busy = True
                in_service = now
                push(events, (now + expo(mu), seq, DEPART))
                seq += 1
        else:
            record(now - in_service)
            if waiting:
                in_service = waiting.popleft()
                push(events, (now + expo(mu), seq, DEPART))
                seq += 1
            else:
                busy = False
    print(f"customers {len(responses)} mean response {sum(responses) / len(responses):.4f} (theory 5)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
