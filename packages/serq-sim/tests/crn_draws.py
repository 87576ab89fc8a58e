"""What the random streams draw, computed again here from their definitions (docs/simulator.md, "Random
numbers"), for the tests of common random numbers (test_crn.py, test_crn_alignment.py)."""

from __future__ import annotations

import random

from serq_sim import rand


def per_turn(report, *names):
    obs = [report.observe(n) for n in names]
    keys = zip(obs[0].sessions.tolist(), obs[0].turns.tolist())
    return {k: tuple(o.values[i] for o in obs) for i, k in enumerate(keys)}


_M64 = (1 << 64) - 1


def _splitmix_out(z: int) -> int:
    # SplitMix64's output function, written out again from Steele, Lea and Flood (2014)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return z ^ (z >> 31)


def _session_word(seed: int, serial: int) -> int:
    # the places stream: child 5 of the seed sequence, as the other streams; one 64-bit word per serial
    state = rand.seed_state(seed, (5,))
    stream = random.Random(sum(w << (32 * j) for j, w in enumerate(state)))
    for _ in range(serial):
        stream.getrandbits(64)
    return stream.getrandbits(64)


def _uniform(seed, serial, turn, place, k=0):
    w = _session_word(seed, serial)
    if turn:
        w = _splitmix_out((w + turn * 0x9E3779B97F4A7C15) % 2**64)
    return (_splitmix_out((w + (place * 2**32 + k) * 0x9E3779B97F4A7C15) % 2**64) >> 11) / 2**53
