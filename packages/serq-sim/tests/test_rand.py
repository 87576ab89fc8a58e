"""The seed sequence computed without numpy gives numpy's SeedSequence states, word for word."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from serq_sim.rand import STREAMS, seed_state, streams

EDGE_SEEDS = [0, 1, 2, 3, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**63, 2**64 - 2, 2**64 - 1]


def _numpy_children(seed: int) -> list[list[int]]:
    root = np.random.SeedSequence(seed % 2**64)
    return [child.generate_state(4, np.uint32).tolist() for child in root.spawn(len(STREAMS))]


def _random_seeds(count: int) -> list[int]:
    r = random.Random(20261201)
    return [r.getrandbits(r.choice([8, 31, 32, 33, 48, 63, 64])) for _ in range(count)]


@pytest.mark.parametrize("seed", EDGE_SEEDS + [-1, -2, -(2**32), -(2**63), -(2**64), -(2**64) - 5, 2**64, 2**70 + 3])
def test_edge_seeds_give_numpys_states(seed):
    root = seed % 2**64
    assert [seed_state(root, (i,)) for i in range(len(STREAMS))] == _numpy_children(seed)


def test_random_seeds_give_numpys_states():
    for seed in _random_seeds(400):
        assert [seed_state(seed, (i,)) for i in range(len(STREAMS))] == _numpy_children(seed), seed


def test_streams_are_seeded_with_the_childrens_128_bits():
    for seed in EDGE_SEEDS + [-7] + _random_seeds(50):
        ours = streams(seed)
        for name, state in zip(STREAMS, _numpy_children(seed)):
            expected = random.Random(int.from_bytes(np.array(state, np.uint32).tobytes(), "little"))
            assert ours[name].getstate() == expected.getstate(), (seed, name)


def test_the_general_sequence_beyond_the_runs_use():
    # entropy longer than the pool, spawn keys of several (and wide) words, other lengths of state
    r = random.Random(5)
    for _ in range(300):
        seed = r.getrandbits(r.choice([1, 32, 64, 65, 128, 129, 300]))
        key = tuple(r.getrandbits(r.choice([1, 16, 32, 33, 64])) for _ in range(r.randrange(0, 5)))
        words = r.randrange(1, 10)
        expected = np.random.SeedSequence(seed, spawn_key=key).generate_state(words, np.uint32).tolist()
        assert seed_state(seed, key, words) == expected, (seed, key, words)


def test_negative_entropy_is_refused():
    with pytest.raises(ValueError):
        seed_state(-1)


def test_seeding_does_not_import_numpy():
    code = "import sys; from serq_sim.rand import streams; streams(1); print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
