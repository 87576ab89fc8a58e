"""The random streams of a run.

One seed gives five independent streams, spawned from ``numpy.random.SeedSequence(seed)`` in this order:
``arrivals`` (Poisson and renewal gaps), ``workload`` (draws in ``init`` and ``turn``), ``session``
(draws in the session block, a hold's header, a stage's expressions), ``eviction`` (draws in eviction keys
and spill clauses) and ``trace`` (which trace session an arrival replays). Each child sequence seeds a
``random.Random`` (Mersenne Twister) with 128 bits of its state: a draw in the hot path is one call of a C
method, which is several times faster than a numpy scalar draw, and a stream is unaffected by how many
draws the others make.
"""

from __future__ import annotations

import math
import random

import numpy as np

STREAMS = ("arrivals", "workload", "session", "eviction", "trace")


def streams(seed: int) -> dict[str, random.Random]:
    """The five streams of ``seed`` (any integer; negative seeds are taken modulo 2**64)."""
    ss = np.random.SeedSequence(int(seed) % (1 << 64))
    out = {}
    for name, child in zip(STREAMS, ss.spawn(len(STREAMS))):
        state = child.generate_state(4, np.uint32)
        out[name] = random.Random(int.from_bytes(state.tobytes(), "little"))
    return out


_log = math.log


def d_exp(rnd, mean: float) -> float:
    return -mean * _log(1.0 - rnd())


def d_uniform(rnd, lo: float, hi: float) -> float:
    return lo + (hi - lo) * rnd()


def d_erlang(rnd, k: float, mean: float) -> float:
    n = max(int(k), 1)
    m = mean / n
    return sum(-m * _log(1.0 - rnd()) for _ in range(n))


def d_h2(rnd, mean: float, cv2: float) -> float:
    """Hyperexponential with balanced means: ``p/λ1 = (1-p)/λ2``; mean and cv² as given (cv² ≥ 1)."""
    cv2 = max(cv2, 1.0)
    p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
    q = p if rnd() < p else 1.0 - p  # the branch drawn: its rate is 2q / mean
    u = rnd()
    if mean == 0:  # both branches are the point 0 (as ~exp(0) is)
        return 0.0
    return -_log(1.0 - u) / (2.0 * q / mean)


def d_bernoulli(rnd, p: float) -> float:
    return 1.0 if rnd() < p else 0.0


def d_det(rnd, x: float) -> float:
    return x
