"""A run's key covers what the run reads: its IR without spans and source, and the trace it replays.

A program's `trace "t.csv"` names its file relative to the program's folder, which the IR the key hashed
leaves out (no source), and the key held none of the trace's bytes. So two programs of one text in two
folders, each beside a trace of its own, had one key: the sweep ran the first and gave the second its
figures. And a trace edited between a sweep and its resume kept the runs of the old trace.

Each trace here has one session of one turn whose `new` is N, so every sample of `x` is N and its mean is
N exactly (docs/language.md: with a trace, `new` is the trace's column).
"""

from __future__ import annotations

import pytest
import serq_sweep

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let z = 1;
workload { arrive renewal(1); trace "t.csv" ordered; }
session { turn; observe x = new; end; }
run { horizon 5; warmup 0; }
"""


def _trace(path, new):
    path.write_text(f"session,turn,new,out,think,forced\n0,1,{new},1,0,0\n")


@pytest.fixture
def two(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for folder, new in (("a", 5), ("b", 500)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "p.sq").write_text(PROGRAM)
        _trace(tmp_path / folder / "t.csv", new)
    return tmp_path


def test_two_programs_of_one_text_beside_two_traces_run_each_its_own(two):
    frame = serq_sweep.sweep(["a/p.sq", "b/p.sq"], seeds=[1, 2], workers=0, progress=False)
    assert list(frame["program"]) == ["a/p.sq", "a/p.sq", "b/p.sq", "b/p.sq"]
    assert list(frame["observes.x.mean"]) == [5.0, 5.0, 500.0, 500.0]
    assert (frame["observes.x.count"] == 5).all()  # arrivals at 1, 2, 3, 4 and 5 (the horizon's own counts)
    assert frame["key"][0] != frame["key"][2]


def test_a_capacity_search_over_two_such_programs_judges_each_on_its_own_trace(two):
    cols, rows = serq_sweep.find(["a/p.sq", "b/p.sq"], "x.mean <= 100", ("z", "1:2:1"), seeds=[1], workers=0,
                                 progress=False)
    assert [(r["program"], r["outcome"]) for r in rows] == [("a/p.sq", "holds_everywhere"),
                                                          ("b/p.sq", "fails_everywhere")]
    assert rows[0]["observes.x.mean:mean"] == 5.0  # (at the value found; b has none)


def test_a_resumed_sweep_runs_again_the_runs_of_a_trace_edited_since(two):
    out = str(two / "r.csv")
    first = serq_sweep.sweep("b/p.sq", seeds=[1, 2], workers=0, progress=False, out=out)
    assert list(first["observes.x.mean"]) == [500.0, 500.0]
    _trace(two / "b" / "t.csv", 7)
    again = serq_sweep.sweep("b/p.sq", seeds=[1, 2], workers=0, progress=False, out=out)
    assert list(again["observes.x.mean"]) == [7.0, 7.0]
    _trace(two / "b" / "t.csv", 500)  # the trace as it was: its runs are the first sweep's again
    assert list(serq_sweep.sweep("b/p.sq", seeds=[1, 2], workers=0, progress=False, out=out)["key"]) == \
        list(first["key"])
