"""``serq_sim.run`` of a program without a horizon runs until no event is left; one whose workload starts
sessions for ever (an open workload without a count of arrivals, a closed population) never gets there, and
is refused before anything is built unless a bound on events or wall time stops it (the call never returned)."""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim

BODY = "stage s : delay;\nsession { run s (1); end; }\n"


def program(tmp_path, workload: str, run: str = ""):
    p = tmp_path / "p.sq"
    p.write_text(f"workload {{ {workload} }}\n{BODY}{run}")
    return serq_frontend.compile(p)


@pytest.mark.parametrize("workload", ["arrive poisson(2);", "arrive renewal(0.5);", "arrive closed(3);"])
def test_an_endless_workload_without_a_horizon_is_refused(tmp_path, workload):
    p = program(tmp_path, workload)
    with pytest.raises(ValueError, match="gives no horizon .* never stops starting sessions: give horizon=T"):
        serq_sim.run(p)


@pytest.mark.parametrize("workload", ["arrive poisson(2);", "arrive closed(3);"])
def test_a_bound_on_events_or_wall_time_lets_it_run(tmp_path, workload):
    p = program(tmp_path, workload)
    r = serq_sim.run(p, max_events=200)
    assert r.partial == "max-events" and r.result.events == 200
    assert serq_sim.run(p, horizon=10).result.end == 10.0


def test_a_count_of_arrivals_ends_an_open_workload(tmp_path):
    # three sessions of one unit of work each, drained: the run ends at the last one's end
    p = program(tmp_path, "arrive poisson(2);")
    r = serq_sim.run(p, arrivals=3)
    assert r.partial is None and r.result.arrivals == 3 and r.result.ended == 3
    p2 = program(tmp_path, "arrive poisson(2);", "run { arrivals 3; }\n")
    r2 = serq_sim.run(p2)
    assert r2.partial is None and r2.result.arrivals == 3 and r2.result.end == r.result.end


def test_a_batch_runs_until_no_event_is_left(tmp_path):
    # arrive batch(4): four sessions at 0, each a delay of 1: the run ends at 1 with no horizon
    r = serq_sim.run(program(tmp_path, "arrive batch(4);"))
    assert r.partial is None and r.result.end == 1.0 and r.result.ended == 4
    assert math.isinf(r.result.horizon)
