"""The ITL statistics of many runs of gaps hold a few machine words a run, not a Python object.

A run of gaps is one ``(value, weight)`` pair of :class:`serq_sim.step.tokens.TokenGaps`; a family of engines at
low load adds one an iteration (256 replicas of examples/multi-turn/vllm_replicas.sq over 200 s: 4.7 million).
From NUMPY_FROM runs on, :meth:`TokenGaps.stats` listed the runs' products, their values and their sorted order
as Python lists (about 100 bytes a run beyond the arrays themselves): the run's peak memory went from 89 MB in
the simulation to 336 MB in its report at 100 s of that program. Now the products and the sorted values stay
numpy's arrays, searched as the lists were, and ``math.fsum`` reads them a chunk at a time: 183 MB, the same
report to the byte. The statistics themselves are held to the expanded gaps' by test_itl.py and to the
Python path's, bit for bit, by test_metrics_numpy_path.py."""

from __future__ import annotations

import random
import tracemalloc
from array import array

import numpy  # noqa: F401 - imported before the measure: its import is not the statistics' memory
from serq_sim.metrics import NUMPY_FROM
from serq_sim.step.tokens import TokenGaps


def test_the_statistics_of_many_runs_hold_a_few_words_a_run():
    n = 3 * NUMPY_FROM
    r = random.Random(7)
    g = TokenGaps()
    g.values = array("d", (r.random() for _ in range(n)))
    g.weights = array("q", (r.randrange(1, 4) for _ in range(n)))
    expected_count = sum(g.weights)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        stats = g.stats()
        extra = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert stats.count == expected_count
    assert 0.0 < stats.median < stats.p90 < stats.p99 < 1.0
    # a few numpy arrays of 8 bytes a run at once (about 36 bytes a run here); the lists took 135 and more
    assert extra < 48 * n, extra / n
