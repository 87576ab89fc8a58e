"""M/G/1 processor sharing: the mean response E[S] / (1 - rho) whatever the service law."""

from __future__ import annotations

import pytest
from serq_ir import nodes
from theory_forms import law_expr, ps_response
from theory_run import assert_matches, only_stage, program_path, run, with_rate

# law -> (arrival rate, horizon); the H2 law (cv2 = 4) runs at rho = 0.5 and longer, as for M/G/1.
CASES = {
    "exp": (0.6, 2.0e5),
    "h2": (0.5, 4.0e5),
}


@pytest.mark.parametrize("law", list(CASES))
def test_ps_response_is_insensitive(law):
    lam, horizon = CASES[law]
    program = with_rate(program_path("single-turn/ps.sq", "ps.sq"), lam,
                        defs={"service": law_expr(law, 1.0)})
    only_stage(program, nodes.Ps)
    # E[T | S = x] = x / (1 - rho), so E[T] = E[S] / (1 - rho): 2.5 at rho 0.6, 2 at rho 0.5.
    expected = ps_response(lam, 1.0)
    report = run(program, seed=1, horizon=horizon, warmup=0.01 * horizon)
    assert_matches(report, "response", expected)
