"""serq fit's words for its fit: non-negative least squares (docs/step-costs.md: every coefficient is a
cost, at least 0), not plain least squares, which its --help and its output's first line still said, and
the batch kinds its error is given by: decode-only, prefill-only, mixed and idle (serq_sim.fit.KINDS)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from serq_sim.cli import fit_command
from serq_sim.fit import fit_steps, render

pytestmark = pytest.mark.timeout(60)


def test_the_help_says_non_negative_least_squares_and_every_kind():
    r = CliRunner().invoke(fit_command, ["--help"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "Prints the non-negative least-squares coefficients of" in text
    assert "(decode-only, prefill-only, mixed, idle)" in text


def test_the_output_names_the_fit_it_is():
    # (decoders, kv_decode, prefilled, attention, time): six steps, five terms, every kind
    steps = [(0, 0, 0, 0, 1.0), (1, 1, 0, 0, 2.0), (2, 3, 0, 0, 3.5), (0, 0, 4, 1, 2.0), (0, 0, 8, 5, 4.0),
             (1, 2, 3, 2, 5.0)]
    first = render(fit_steps(steps), "p").splitlines()[0]
    assert first.startswith("fit: 6 steps, non-negative least squares of time on "), first
