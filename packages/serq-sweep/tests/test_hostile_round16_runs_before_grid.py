"""More runs than a sweep holds (points times seeds above ``MAX_POINTS``) are refused before the grid of
points is made, by ``serq sweep`` and ``serq compare`` (core.plan) and by a capacity search (``--find``).

The count of points was checked before the grid was made, but the count of runs only after: ``--set
a=1:1000000 --seeds 1..2`` made a million points (5 s, 600 MB) to be refused. A capacity search did not
check the runs at all: each of its evaluations runs every seed of every point at once, and a million
points times two seeds was searched (tasks held by the million, 700 MB and climbing before a run ended).
"""

from __future__ import annotations

import itertools

import pytest
from serq.errors import UserError
from serq_sweep import axes, core, search

PROGRAM = """let a = 1;
let b = 1;
stage s : fifo;
workload { arrive poisson(1); }
session { run s (0.1 * a + 0.01 * b); end; }
run { horizon 5; seed 1; }
"""


def _no_grid(monkeypatch) -> None:
    def product(*args, **kwargs):
        raise AssertionError("the grid of points was made")

    monkeypatch.setattr(itertools, "product", product)


@pytest.mark.timeout(60)
def test_a_million_points_times_two_seeds_is_refused_before_the_grid():
    a = axes.Axis("a", "set", tuple(float(v) for v in range(1, 1_000_001)))
    with pytest.MonkeyPatch.context() as mp:
        _no_grid(mp)
        with pytest.raises(UserError, match=r"the sweep has 1000000 point\(s\) times 2 seed\(s\), 2000000 runs, "
                           r"more than 1000000$"):
            axes.points([a], seeds=2)


@pytest.mark.timeout(60)
def test_a_sweep_of_more_runs_than_it_holds_is_refused_before_the_grid(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.setattr(axes, "MAX_POINTS", 10)
    _no_grid(monkeypatch)
    # 6 points times 2 seeds: 12 runs, above 10 (each count alone is below it)
    with pytest.raises(UserError, match=r"6 point\(s\) times 2 seed\(s\), 12 runs, more than 10$"):
        core.plan([str(tmp_path / "p.sq")], sets={"a": "1:6"}, seeds="1..2")


@pytest.mark.timeout(60)
def test_a_capacity_search_of_more_runs_than_a_sweep_holds_is_refused(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.setattr(axes, "MAX_POINTS", 10)

    def compiled(*args, **kwargs):
        raise AssertionError("a point was compiled")

    monkeypatch.setattr(core, "compile_point", compiled)
    with pytest.raises(UserError, match=r"6 point\(s\) times 2 seed\(s\), 12 runs, more than 10$"):
        search.find(str(tmp_path / "p.sq"), "s.utilisation < 0.5", ("b", "0:10"), sets={"a": "1:6"},
                    seeds="1..2", workers=0, progress=False)


@pytest.mark.timeout(60)
def test_as_many_runs_as_a_sweep_holds_are_searched(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.setattr(axes, "MAX_POINTS", 10)
    # 5 points times 2 seeds: 10 runs, the most, searched (a utilisation, at most 1, is below 2 at both ends)
    columns, rows = search.find(str(tmp_path / "p.sq"), "s.utilisation < 2", ("b", "0:10"),
                                sets={"a": "1:5"}, seeds="1..2", workers=0, progress=False)
    assert [r["a"] for r in rows] == [1, 2, 3, 4, 5]
    assert {r["outcome"] for r in rows} == {"holds_everywhere"}
