"""Join the shortest queue over R single-server replicas in SimPy, the peer of bench/jsq.sq: Poisson
arrivals of rate 0.8 R, R Resources of capacity 1, each request sent to the replica with the fewest
requests holding or waiting (ties to the lowest index), exponential service of mean 1; N customers;
prints the mean response time.

    python bench/jsq_simpy.py [N] [R] [SEED]
"""

import random
import sys

import simpy
from mm1_simpy import run_poisson


def main(n: int, r: int, seed: int) -> None:
    lam, mu = 0.8 * r, 1.0
    rng = random.Random(seed)
    env = simpy.Environment()
    gpus = [simpy.Resource(env, capacity=1) for _ in range(r)]
    responses: list[float] = []

    def customer(env):
        t0 = env.now
        best = 0
        bk = None
        for j, g in enumerate(gpus):
            k = g.count + len(g.queue)
            if bk is None or k < bk:
                best, bk = j, k
        with gpus[best].request() as req:
            yield req
            yield env.timeout(rng.expovariate(mu))
        responses.append(env.now - t0)

    run_poisson(env, rng, n, lam, customer)
    print(f"customers {len(responses)} mean response {sum(responses) / len(responses):.4f}")


if __name__ == "__main__":
    argv = sys.argv[1:]
    main(int(argv[0]) if argv else 50_000, int(argv[1]) if len(argv) > 1 else 64, int(argv[2]) if len(argv) > 2 else 1)
