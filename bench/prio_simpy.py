"""Non-preemptive priority M/M/1 at rho = 0.8 in SimPy, the model of bench/prio_pool.sq: Poisson arrivals
of rate 0.8, each of class 0 (served first) with probability 1/2, one server (a PriorityResource of
capacity 1: the least priority first, then the earliest request), exponential service of mean 1; N
customers; prints the mean response time of each class (Cobham: 2.3333 and 7.6667).

    python bench/prio_simpy.py [N] [SEED]
"""

import random
import sys

import simpy


def main(n: int, seed: int) -> None:
    lam, mu = 0.8, 1.0
    rng = random.Random(seed)
    env = simpy.Environment()
    server = simpy.PriorityResource(env, capacity=1)
    responses: tuple[list[float], list[float]] = ([], [])

    def customer(env, prio):
        t0 = env.now
        with server.request(priority=prio) as req:
            yield req
            yield env.timeout(rng.expovariate(mu))
        responses[prio].append(env.now - t0)

    def source(env):
        for _ in range(n):
            env.process(customer(env, 0 if rng.random() < 0.5 else 1))
            yield env.timeout(rng.expovariate(lam))

    env.process(source(env))
    env.run()
    hi, lo = responses
    print(f"customers {len(hi) + len(lo)} mean response class 0 {sum(hi) / len(hi):.4f} (theory 2.3333) "
          f"class 1 {sum(lo) / len(lo):.4f} (theory 7.6667)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 80_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
