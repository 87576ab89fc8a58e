"""A NaN parameter is no parameter of any law (docs/language.md, "The domains of the draws"): ``~det(NaN)``
is a run-time error at the draw, as ``~exp(NaN)`` is (it drew NaN without a word), and a constant one does
not link; ``~det`` of any other number, inf included, is that number. Both tiers."""

import math

import pytest
import serq_frontend
import serq_sim
from serq_ir.rules import draw_problem

SRC = """stage s : delay;
workload { arrive batch(2); }
session {
  set z = serial - serial;
  set x = ~DIST(ARGS);
  observe v = x;
  run s (1);
}
run { horizon 10; }
"""


def _program(tmp_path, dist, args):
    path = tmp_path / "d.sq"
    path.write_text(SRC.replace("DIST", dist).replace("ARGS", args))
    return path, serq_frontend.compile(path=str(path))


@pytest.mark.parametrize("dist, args", [("det", "z / z"), ("exp", "z / z"), ("uniform", "z / z, 1"),
                                        ("erlang", "2, z / z"), ("h2", "z / z, 2"), ("bernoulli", "z / z")])
@pytest.mark.parametrize("tier", ["", "general"])
def test_a_computed_nan_parameter_is_an_error_of_every_law(dist, args, tier, tmp_path, monkeypatch):
    path, prog = _program(tmp_path, dist, args)
    monkeypatch.setenv("SERQ_SIM_TIER", tier) if tier else monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{path}:5:11: error: at t=0, session 0: ~{dist}(")
    assert first.endswith("): a parameter is NaN")


def test_a_constant_nan_det_does_not_link(tmp_path):
    path = tmp_path / "d.sq"
    path.write_text(SRC.replace("DIST", "det").replace("ARGS", "0 / 0"))
    with pytest.raises(Exception) as e:
        serq_frontend.compile(path=str(path))
    assert str(e.value).splitlines()[0] == f"{path}:5:11: error: ~det(NaN): a parameter is NaN"


@pytest.mark.parametrize("args, value", [("z + 2.5", 2.5), ("z - 1 / z", -math.inf), ("z * 0 - 3", -3.0)])
@pytest.mark.parametrize("tier", ["", "general"])
def test_det_of_a_number_is_the_number(args, value, tier, tmp_path, monkeypatch):
    _, prog = _program(tmp_path, "det", args)
    monkeypatch.setenv("SERQ_SIM_TIER", tier) if tier else monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert serq_sim.run(prog).observe("v").values.tolist() == [value, value]


def test_the_rule_is_one_for_every_law():
    nan = float("nan")
    for dist, args in [("det", [nan]), ("exp", [nan]), ("uniform", [nan, 1.0]), ("erlang", [2.0, nan]),
                       ("h2", [nan, 2.0]), ("bernoulli", [nan])]:
        assert draw_problem(dist, args).endswith(": a parameter is NaN")
    assert draw_problem("det", [math.inf]) is None
