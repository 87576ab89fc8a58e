"""``~erlang(k, mean)`` has at most ``MAX_PHASES`` (100 000) phases (serq_ir.rules.draw_problem).

Each phase is an exponential draw of its own, so ``~erlang(1e9, 1)`` took minutes a draw: a run of a few
sessions seemed to hang on both tiers, and ``--max-wall`` could not stop it inside the draw. A constant
count beyond the bound does not link (at the draw); a computed one is a run-time error at the draw naming
the time and the session, as every draw outside its domain is. 100 000 phases is the mean within a
standard deviation of 1 / sqrt(100 000) = 0.32 % of it, where ``~det(mean)`` says what is meant.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_frontend.diagnostics import CompileError
from serq_ir.rules import MAX_PHASES, draw_problem

pytestmark = pytest.mark.timeout(60)

TOO_MANY = f"more than {MAX_PHASES} phases"


def _program(k: str) -> str:
    return f"""stage s : delay;
workload {{ arrive batch(3); }}
session {{ observe x = ~erlang({k}, 2); }}
run {{ horizon 10; seed 1; }}
"""


@pytest.mark.parametrize("k, ok", [(1.0, True), (MAX_PHASES, True), (MAX_PHASES + 1, False), (1e9, False),
                                   (2.0 ** 60, False)])
def test_the_bound(k, ok):
    why = draw_problem("erlang", [k, 1.0])
    assert (why is None) == ok, why
    if not ok:
        assert TOO_MANY in why


def test_a_constant_count_beyond_the_bound_does_not_link():
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=_program("1e9"))
    assert str(e.value).startswith(f"<source>:3:23: error: ~erlang(1000000000, 2): {TOO_MANY}"), str(e.value)


@pytest.mark.parametrize("tier", ["general", ""])
def test_a_computed_count_beyond_the_bound_is_an_error_at_the_draw(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=_program(f"{MAX_PHASES} * (serial + 1)")))
    # session 0 draws at the bound; session 1 asks for twice as many
    assert str(e.value).startswith(f"<source>:3:23: error: at t=0, session 1: ~erlang({2 * MAX_PHASES}, 2): "
                                   f"{TOO_MANY}"), str(e.value)


def test_a_draw_at_the_bound_is_its_mean_within_a_few_standard_deviations():
    r = serq_sim.run(serq_frontend.compile(source=_program(str(MAX_PHASES))))
    xs = r.observe("x").values
    assert len(xs) == 3
    sd = 2 / MAX_PHASES ** 0.5  # an Erlang of k phases and mean m: standard deviation m / sqrt(k)
    assert all(abs(x - 2) < 5 * sd for x in xs), list(xs)
