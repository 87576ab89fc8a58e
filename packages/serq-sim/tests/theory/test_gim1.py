"""GI/M/1 with hyperexponential interarrival times (renewal arrivals) against the embedded-chain root."""

from __future__ import annotations

from theory_forms import gim1_response, h2_laplace
from theory_run import PROGRAMS, assert_matches, compile_program, constant, run


def test_h2_m_1_response_is_gim1():
    program = compile_program(PROGRAMS / "gim1.sq")
    lam, s = constant(program, "lam"), constant(program, "s")
    # Gaps ~h2(1/lam, 4), service Exp(mean s): the root of x = A*(mu (1 - x)) is 0.6838 at lam 0.5, s 1,
    # and the mean response 1 / (mu (1 - x)) = 3.162 (M/M/1 at the same load: 2). At rho 0.6 the
    # correlation of the responses outlasts the 20 batches of this run length and the CI under-covers.
    expected = gim1_response(lambda z: h2_laplace(1.0 / lam, 4.0, z), 1.0 / s)
    report = run(program, seed=1, horizon=4e5, warmup=4000)
    assert_matches(report, "response", expected)
