"""M/M/c (c = 3) against Erlang C."""

from __future__ import annotations

from serq_ir import nodes
from theory_forms import mmc_response
from theory_run import PROGRAMS, assert_matches, compile_program, constant, only_stage, poisson_rate, run


def test_mm3_response_is_erlang_c():
    program = compile_program(PROGRAMS / "mmc.sq")
    lam, s = poisson_rate(program), constant(program, "s")
    c = int(only_stage(program, nodes.Fifo).kind.servers)
    assert (c, lam / (c / s)) == (3, 2 / 3)
    # a = lam s = 2 Erlangs on 3 servers: C(3, 2) = 4/9, W = C / (c mu - lam) = 4/9, response 1 + 4/9.
    expected = mmc_response(lam, 1.0 / s, c)
    report = run(program, seed=1, horizon=6e4, warmup=600)
    assert_matches(report, "response", expected)
