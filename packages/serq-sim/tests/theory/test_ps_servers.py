"""A processor-sharing stage of capacity min(present, 3) with exponential work: M/M/3's mean response."""

from __future__ import annotations

from theory_forms import mmc_response
from theory_run import PROGRAMS, assert_matches, compile_program, constant, poisson_rate, run


def test_ps_min_present_c_is_mmc():
    program = compile_program(PROGRAMS / "ps_servers.sq")
    lam, s, c = poisson_rate(program), constant(program, "s"), int(constant(program, "c"))
    # With n jobs present the stage completes work at min(n, c); exponential work makes the number
    # present the M/M/c birth-death chain (death rate min(n, c)/s), so by Little the mean response is
    # M/M/c's: 1 + C(3, 2) / (3 - 2) = 1.444 at lam 2, s 1. (Each job's own response differs from FIFO's
    # in law, not in mean.)
    expected = mmc_response(lam, 1.0 / s, c)
    report = run(program, seed=1, horizon=6e4, warmup=600)
    assert_matches(report, "response", expected)
