"""A Jackson tandem of two exponential FIFO stations: response sum 1 / (mu_i - lam)."""

from __future__ import annotations

from theory_forms import tandem_response
from theory_run import PROGRAMS, assert_matches, compile_program, constant, poisson_rate, run


def test_tandem_response_is_jackson():
    program = compile_program(PROGRAMS / "tandem.sq")
    lam = poisson_rate(program)
    mus = [constant(program, "mu1"), constant(program, "mu2")]
    # lam 0.6, mu 1 and 1.25 (rho 0.6, 0.48): 1/0.4 + 1/0.65 = 4.0385.
    expected = tandem_response(lam, mus)
    report = run(program, seed=1, horizon=2e5, warmup=2000)
    assert_matches(report, "response", expected)
