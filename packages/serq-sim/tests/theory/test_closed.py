"""Closed M/M/1//N (N users, exponential think time) against exact mean value analysis."""

from __future__ import annotations

from serq_ir import nodes
from theory_forms import mva
from theory_run import assert_matches, compile_program, constant, only_stage, program_path, run

# N users thinking Exp(Z) and served Exp(S): 4, 4 and 1 put the server near 70% busy.
SETS = {"N": 4, "Z": 4, "S": 1}


def test_closed_response_is_mva():
    program = compile_program(program_path("multi-turn/closed.sq", "closed.sq"), sets=SETS)
    arrive = program.workload.arrive
    assert isinstance(arrive, nodes.Closed)
    n, s, z = arrive.n, constant(program, "S"), constant(program, "Z")
    assert (n, s, z) == (4, 1.0, 4.0)
    # MVA with N = 4, S = 1, Z = 4: R(1..4) = 1, 1.2, 1.457, 1.803; X(4) = 0.6893 = the utilisation.
    r, x = mva(n, s, z)
    report = run(program, seed=1, horizon=1.5e5, warmup=1500)
    assert_matches(report, "response", r)
    # The server's completion rate is MVA's throughput X (no CI on it; 1% is several standard errors).
    server = only_stage(program, nodes.Fifo).name
    (st,) = [st for st in report.result.stages if st.name == server]
    assert abs(st.throughput - x) < 0.01 * x, (st.throughput, x)
