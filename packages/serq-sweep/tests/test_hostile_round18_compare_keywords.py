"""``serq_sweep.compare``'s keywords beyond its own are the run options it passes to the plan of its arms
(``zip``, ``horizon``, ``warmup``, ``arrivals``, ``max_wall``, ``max_events``, ``max_samples``, ``slo``); any
other is a TypeError naming ``compare()``, before anything is compiled. It was the plan's: ``nope=1`` and
``out="c.csv"`` (``serq compare -o`` has no API keyword) said "plan() got an unexpected keyword argument",
a function the caller did not call, and ``repeat=False`` "plan() got multiple values for keyword argument
'repeat'"; ``program_labels=`` reached the plan, the plan's own."""

from __future__ import annotations

import pytest
import serq_sweep
from serq_sweep import core, pairing

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let lam = 1;
stage s : fifo;
workload { arrive poisson(lam); }
session { run s (0.1); end; }
run { horizon 5; seed 1; }
"""


@pytest.fixture
def prog(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return str(tmp_path / "p.sq")


@pytest.mark.parametrize("kw", [{"nope": 1}, {"out": "c.csv"}, {"repeat": False}, {"program_labels": ["a", "b"]},
                                {"records": True}])
def test_a_keyword_compare_does_not_take_is_its_type_error(prog, kw, monkeypatch):
    def compiled(*args, **kwargs):
        raise AssertionError("a point was compiled")

    monkeypatch.setattr(core, "compile_point", compiled)
    name = next(iter(kw))
    with pytest.raises(TypeError) as info:
        serq_sweep.compare(prog, sets={"lam": [1, 2]}, seeds="1..2", workers=0, progress=False, **kw)
    assert str(info.value).startswith(f"compare() got an unexpected keyword argument {name!r} (it takes the run "
                                      "options arrivals, horizon, max_events, max_samples, max_wall, ")


def test_the_run_options_are_the_plans_own_but_its_internals():
    assert pairing.plan_options() >= {"zip", "horizon", "warmup", "arrivals", "max_wall", "max_events", "max_samples"}
    assert not pairing.plan_options() & {"files", "sets", "defs", "seeds", "pm", "program_labels", "repeat"}


def test_a_run_option_is_taken(prog):
    # the same seeds run to 2 and to 5: each run's events up to 2 are among its events up to 5, and at rate 1
    # and 2 more happen between, so the arm's mean count is larger at 5
    def events(horizon):
        frame = serq_sweep.compare(prog, sets={"lam": [1, 2]}, seeds="1..2", workers=0, progress=False,
                                   horizon=horizon, figures=["events"])
        (a,) = frame["a"]
        return a

    assert events(2) < events(5)
