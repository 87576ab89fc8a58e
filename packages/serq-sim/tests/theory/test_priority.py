"""A non-preemptive two-class priority queue (a pool of capacity 1 with queue by (prio, …) around a delay
stage) against Cobham's formula per class."""

from __future__ import annotations

from theory_forms import cobham_responses, moments
from theory_run import PROGRAMS, assert_matches, compile_program, constant, poisson_rate, run


def test_priority_responses_are_cobham():
    program = compile_program(PROGRAMS / "priority.sq")
    lam_hi, lam_lo, s = constant(program, "lam_hi"), constant(program, "lam_lo"), constant(program, "s")
    assert poisson_rate(program) == lam_hi + lam_lo
    m1, m2 = moments("exp", s)
    # W0 = sum lam_i E[S^2] / 2 = 0.6; W_hi = W0 / (1 - 0.3) = 0.857, W_lo = W0 / (0.7 * 0.4) = 2.143;
    # responses add E[S] = 1: 1.857 and 3.143 (their lam-weighted mean is M/M/1's 2.5: conservation).
    hi, lo = cobham_responses([lam_hi, lam_lo], [m1, m1], [m2, m2])
    report = run(program, seed=1, horizon=3e5, warmup=3000)
    assert_matches(report, "response_hi", hi)
    assert_matches(report, "response_lo", lo)
