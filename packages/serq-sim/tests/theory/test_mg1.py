"""M/G/1 FIFO against Pollaczek–Khinchine, for four service laws of mean 1."""

from __future__ import annotations

import pytest
from serq_ir import nodes
from theory_forms import law_expr, moments, pk_response
from theory_run import assert_matches, only_stage, program_path, run, with_rate

# law -> (arrival rate, horizon). The horizon is about 60k–250k customers: the batch-means half-width
# shrinks as 1/sqrt(n), and the H2 law (cv2 = 4) needs the most customers (its response has the most
# variance and the longest correlation), so it also runs at the lower load rho = 0.5.
CASES = {
    "exp": (0.6, 1.7e5),
    "det": (0.6, 1.0e5),
    "erlang": (0.6, 1.0e5),
    "h2": (0.5, 5.0e5),
}


@pytest.mark.parametrize("law", list(CASES))
def test_mg1_response_is_pollaczek_khinchine(law):
    lam, horizon = CASES[law]
    program = with_rate(program_path("single-turn/mg1.sq", "mg1.sq"), lam,
                        defs={"service": law_expr(law, 1.0)})
    svc = only_stage(program, nodes.Fifo)
    assert float(svc.kind.servers) == 1
    m1, m2 = moments(law, 1.0)
    # W = lam E[S^2] / (2 (1 - rho)), response = W + E[S]; e.g. exp at rho 0.6: 0.6*2/0.8 + 1 = 2.5.
    expected = pk_response(lam, m1, m2)
    report = run(program, seed=1, horizon=horizon, warmup=0.01 * horizon)
    assert_matches(report, "response", expected)
