"""serq compare says over how many seeds a difference is paired when a run failed on some seed.

A run of one arm that failed (``run { arrivals N; }`` not reached on one seed) leaves that seed without a
pair: every figure's ``B - A`` and CIs are over the other seeds, while ``A`` and ``B`` are each arm's mean
over its own runs. The block still said "paired over 3 seeds", and its ``B - A`` was not the difference of
the ``A`` and ``B`` beside it (``-40.73`` under ``81.96`` and ``45.28``), with nothing to say why. A block
with such a row now gives each row's pairs and says what they are (serq_sweep.pairing.render).
"""

from __future__ import annotations

import math

import pytest
from serq_sweep.pairing import render
from serq_sweep.stats import paired


def _row(figure, a, b):
    return {"arm": "2", "base": "1", "figure": figure, **paired(a, b)}


@pytest.mark.timeout(30)
def test_a_row_paired_over_fewer_seeds_shows_its_pairs():
    # seed 3 of arm B failed: pairs (1, 2) and (3, 5), so B - A = ((2 - 1) + (5 - 3)) / 2 = 1.5 over 2 seeds,
    # while A is (1 + 3 + 8) / 3 = 4 and B (2 + 5) / 2 = 3.5
    rows = [_row("x", [1.0, 3.0, 8.0], [2.0, 5.0, math.nan]), _row("y", [1.0, 2.0, 3.0], [2.0, 4.0, 6.0])]
    lines = render(rows, 0, 3).splitlines()
    assert lines[0] == "2 - 1, paired over 3 seeds (95 % CIs):"
    # the pairs, and the values A and B are each over (3 and 2 for x: they were not said)
    assert lines[1].split()[-3:] == ["n", "n_a", "n_b"]
    x, y = lines[2].split(), lines[3].split()
    assert x[0] == "x" and x[1:4] == ["4", "3.5", "1.5"] and x[-3:] == ["2", "3", "2"]
    assert y[0] == "y" and y[1:4] == ["2", "4", "2"] and y[-3:] == ["3", "3", "3"]
    assert lines[4].strip().startswith("(n: the seeds of the 3 where both arms have a value")


@pytest.mark.timeout(30)
def test_a_block_of_whole_pairs_is_as_before():
    lines = render([_row("y", [1.0, 2.0, 3.0], [2.0, 4.0, 6.0])], 0, 3).splitlines()
    assert len(lines) == 3 and "n_a" not in "\n".join(lines)
    assert lines[2].split()[:4] == ["y", "2", "4", "2"]
