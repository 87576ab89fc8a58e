"""M/M/1 at rho = 0.8 in SimPy: Poisson arrivals of rate 0.8, one server (Resource, capacity 1),
exponential service of mean 1; N customers; prints the mean response time.

    python bench/mm1_simpy.py [N] [SEED]
"""

import random
import sys

import simpy


def main(n: int, seed: int) -> None:
    lam, mu = 0.8, 1.0
    rng = random.Random(seed)
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    responses: list[float] = []

    def customer(env):
        t0 = env.now
        with server.request() as req:
            yield req
            yield env.timeout(rng.expovariate(mu))
        responses.append(env.now - t0)

    def source(env):
        for _ in range(n):
            env.process(customer(env))
            yield env.timeout(rng.expovariate(lam))

    env.process(source(env))
    env.run()
    print(f"customers {len(responses)} mean response {sum(responses) / len(responses):.4f} (theory 5)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
