"""M/M/c at rho = 0.8 in SimPy: Poisson arrivals of rate 0.8 c, c servers (one Resource of capacity c),
exponential service of mean 1; N customers; prints the mean response time. c = 1 (the default) is the
M/M/1 of bench/mm1.sq and bench/mm1_pool.sq, c = 4 the M/M/4 of bench/mm4_pool.sq.

    python bench/mm1_simpy.py [N] [SEED] [C]
"""

import random
import sys

import simpy

#: mean response in theory (Erlang C), by c
THEORY = {1: 5.0, 4: 1.7455}


def run_poisson(env, rng, n: int, lam: float, customer) -> None:
    """Start ``customer(env)`` for ``n`` Poisson arrivals of rate ``lam`` and run ``env`` to its end (the
    source of this script and of bench/jsq_simpy.py)."""

    def source(env):
        for _ in range(n):
            env.process(customer(env))
            yield env.timeout(rng.expovariate(lam))

    env.process(source(env))
    env.run()


def main(n: int, seed: int, c: int) -> None:
    lam, mu = 0.8 * c, 1.0
    rng = random.Random(seed)
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=c)
    responses: list[float] = []

    def customer(env):
        t0 = env.now
        with server.request() as req:
            yield req
            yield env.timeout(rng.expovariate(mu))
        responses.append(env.now - t0)

    run_poisson(env, rng, n, lam, customer)
    theory = THEORY.get(c)
    print(f"customers {len(responses)} mean response {sum(responses) / len(responses):.4f}"
          + (f" (theory {theory})" if theory else ""))


if __name__ == "__main__":
    argv = sys.argv[1:]
    main(int(argv[0]) if argv else 200_000, int(argv[1]) if len(argv) > 1 else 1, int(argv[2]) if len(argv) > 2 else 1)
