"""A run at 100 % load (arrival rate = service rate of an M/M/1 or M/D/1 stage, rho = 1) is not steady: a queue at
rho >= 1 has no steady state (at rho = 1 its backlog grows as the square root of time), so it warns whatever its
backlog showed. The backlog's test (notes.steadiness) reads the climb through the run's bins, which at rho = 1 hides
in the scatter of a short run: an M/M/1 of rate 1 and mean 1 over 900 time units after a warm-up of 100 warned for
seeds 6 and 7 of 1 to 10 and said nothing of the rest. A load known by hand (notes.offered_load: Poisson arrivals,
one job of known mean on one fifo stage) of 1 or more warns where the backlog's test did not."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_sim import notes

TIERS = ["", "general"]


def _program(rate: str, work: str, servers: str = "1", run: str = "horizon 1000; warmup 100;") -> str:
    return f"""stage s : fifo({servers});
workload {{ arrive poisson({rate}); }}
session {{ set t0 = now; run s ({work}); observe response = now - t0; }}
run {{ {run} }}
"""


def _warnings(monkeypatch, tier: str, src: str, seed: int = 1) -> list[str]:
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(source=src), seed=seed)
    return [n for n in r.result.notes if n.startswith("warning: the run is not steady: ")]


def _said(name: str, rate: str, mean: str, servers: str, rho: str, grows: str) -> str:
    return (f"warning: the run is not steady: stage `{name}` is offered a load of rho = {rate} x {mean} / {servers} = "
            f"{rho} (arrivals poisson({rate}), a job of mean {mean}, {servers} server{'s' if servers != '1' else ''}): "
            f"a queue at rho >= 1 has no steady state, its backlog growing without bound ({grows} at this load), "
            "which this run's backlog did not show through its bins: the means depend on the horizon; lower the "
            "rate or add servers for a steady state")


# hand-computed loads of 1: rate x mean / servers
FULL = [
    ("1", "~exp(1)", "1", "1"),          # M/M/1: lambda = mu = 1
    ("0.5", "2", "1", "2"),              # M/D/1: lambda 0.5, a job of 2
    ("1.5", "~det(2)", "3", "2"),        # M/D/3: 1.5 x 2 / 3
    ("0.1", "~exp(10)", "1", "10"),      # 0.1 x 10: 1 in decimals (1.0000000000000002 or 0.9999999999999999)
    ("2", "~erlang(4, 0.5)", "1", "0.5"),
    ("4", "~uniform(0, 0.5)", "1", "0.25"),
]


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize(("rate", "work", "servers", "mean"), FULL)
def test_a_load_of_one_is_not_steady(monkeypatch, tier, rate, work, servers, mean):
    src = _program(rate, work, servers)
    load = notes.offered_load(serq_frontend.compile(source=src))
    assert load is not None and load[0] == "s" and abs(load[1] - 1) < 1e-12
    for seed in (1, 2, 3):
        said = _warnings(monkeypatch, tier, src, seed)
        assert len(said) == 1, said
        # one not-steady warning: the backlog's where it climbed, else the load's
        assert said[0].startswith("warning: the run is not steady: ")
        if "offered a load" in said[0]:
            assert said[0] == _said("s", rate, mean, servers, "1", "as the square root of time")


@pytest.mark.parametrize("tier", TIERS)
def test_the_seeds_whose_backlog_did_not_climb_are_told_the_load(monkeypatch, tier):
    # M/M/1 of rate 1 and mean 1: seed 1's backlog does not climb through its bins (no warning before)
    src = _program("1", "~exp(1)")
    assert _warnings(monkeypatch, tier, src, 1) == [_said("s", "1", "1", "1", "1", "as the square root of time")]


@pytest.mark.parametrize("tier", TIERS)
def test_past_one_the_load_is_said_to_grow_with_time(monkeypatch, tier):
    # 1.05 x 1 / 1, a short run whose backlog may not show it
    src = _program("1.05", "~exp(1)", run="horizon 200; warmup 20;")
    said = _warnings(monkeypatch, tier, src, 1)
    assert len(said) == 1
    if "offered a load" in said[0]:
        assert said[0] == _said("s", "1.05", "1", "1", "1.05", "in proportion to time")


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize(("rate", "work", "servers"), [("0.999", "~exp(1)", "1"), ("0.8", "~exp(1)", "1"),
                                                       ("2.9", "~det(1)", "3")])
def test_below_one_the_load_says_nothing(monkeypatch, tier, rate, work, servers):
    # rho 0.999, 0.8, 0.967: steady queues; the load adds no warning (the backlog's own test is as it was)
    src = _program(rate, work, servers, run="horizon 20000; warmup 2000;")
    load = notes.offered_load(serq_frontend.compile(source=src))
    assert load is not None and load[1] < 1
    assert not any("offered a load" in w for w in _warnings(monkeypatch, tier, src))


@pytest.mark.parametrize("src", [
    _program("1", "~exp(1)", run="horizon 1000; warmup 100; arrivals 500;"),  # arrivals N: it drains
    _program("1", "~exp(1)").replace("fifo(1)", "ps(1)"),                    # not a fifo stage
    _program("1", "~exp(1)").replace("arrive poisson(1)", "arrive renewal(1)"),  # not Poisson arrivals
    _program("1", "~exp(1)").replace("session {", "session { run s (~exp(1));"),  # two jobs a session
])
def test_a_load_not_known_by_hand_adds_nothing(src):
    assert notes.offered_load(serq_frontend.compile(source=src)) is None
