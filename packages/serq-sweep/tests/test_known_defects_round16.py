"""A trace edited while a sweep runs: the sweep keys its runs by the trace's bytes as it read them when it
planned them (serq_sweep.core.run_hash), and each run reads the file again when it starts. A file rewritten
between two runs gave the second run the new bytes under the old bytes' key, an ``ok`` row that a resume then
took for a run of the old trace. Now the run hashes the bytes it reads and, when they are not those of the
plan, is an error naming the file (serq_sim.trace.changed); the sweep goes on and exits 1 (docs/sweep.md).

Each trace has one session of one turn whose ``new`` is N, so every sample of ``x`` is N and its mean is N
exactly (docs/language.md: with a trace, ``new`` is the trace's column): a row of the rewritten trace would
say 7, one of the planned trace 5.
"""

from __future__ import annotations

import csv
import json

import pytest
from serq.cli import main
from serq_sweep import engines, worker

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let z = 1;
workload { arrive renewal(1); trace "t.csv" ordered; }
session { turn; observe x = new; end; }
run { horizon 5; warmup 0; }
"""
CHANGED = "the trace changed since the sweep started"


def _trace(path, new):
    path.write_text(f"session,turn,new,out,think,forced\n0,1,{new},1,0,0\n")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    _trace(tmp_path / "t.csv", 5)
    _trace(tmp_path / "w.csv", 5)
    return tmp_path


def _rewrite_before_run(monkeypatch, path, rewrites: dict[int, int], interrupt_at: int = -1) -> list[int]:
    """Make the in-process engine (``--workers 0``) rewrite the trace ``path`` just before its run number K
    (from 0) starts, for each K -> N of ``rewrites`` (N the new ``new``), and be interrupted (Ctrl-C) at run
    ``interrupt_at``; returns the list of runs started, which it appends to."""
    started: list[int] = []
    real = worker.run_task  # (the engine's own, not a wrapper an earlier call put there)

    def run_task(*args, **kw):
        if len(started) == interrupt_at:
            raise KeyboardInterrupt
        if len(started) in rewrites:
            _trace(path, rewrites[len(started)])
        started.append(len(started))
        return real(*args, **kw)

    monkeypatch.setattr(engines, "run_task", run_task)
    return started


def _sweep(*args: str, seeds: str = "1..3") -> int:
    with pytest.raises(SystemExit) as info:
        main(["sweep", "p.sq", "--seeds", seeds, "--workers", "0", "--no-progress", *args])
    return info.value.code


def _rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("given", [(), ("--trace", "w.csv")], ids=["trace-clause", "trace-option"])
def test_a_trace_rewritten_between_two_runs_fails_the_runs_after_it(folder, monkeypatch, capsys, given):
    name = "w.csv" if given else "t.csv"
    started = _rewrite_before_run(monkeypatch, folder / name, {1: 7})
    code = _sweep(*given, "-o", "r.csv")
    err = capsys.readouterr().err
    assert started == [0, 1, 2]  # the sweep went on after the failed run
    assert code == 1, err
    rows = _rows(folder / "r.csv")
    assert [r["seed"] for r in rows] == ["1", "2", "3"]
    # the first run read the planned bytes: its row is theirs; the two after the rewrite are errors, not 7s
    assert rows[0]["status"] == "ok" and float(rows[0]["observes.x.mean"]) == 5.0
    for r in rows[1:]:
        assert r["status"] == "error"
        assert r["message"].startswith(f"{name}: error: {CHANGED}")
        assert "the run is not kept" in r["message"]
        assert r["observes.x.mean"] == ""
    assert "7" not in {r["observes.x.mean"] for r in rows}
    assert CHANGED in err


def test_a_resume_after_a_rewrite_runs_every_run_of_the_new_trace_again(folder, monkeypatch, capsys):
    # the first sweep is interrupted after the rewritten run: its journal is there for a resume to read
    started = _rewrite_before_run(monkeypatch, folder / "t.csv", {1: 7}, interrupt_at=2)
    code = _sweep("-o", "r.csv")
    capsys.readouterr()
    assert code == 130 and started == [0, 1]
    journal = [json.loads(line) for line in (folder / "r.csv.journal").read_text().splitlines()]
    assert [e["status"] for e in journal] == ["ok", "error"]  # the run of the rewritten bytes is no ok row
    assert journal[0]["figures"]["observes.x.mean"] == 5.0
    assert CHANGED in journal[1]["message"]
    # the resume plans by the bytes there now (7): no run of the journal is one of its runs, so all three run
    started = _rewrite_before_run(monkeypatch, folder / "t.csv", {})
    code = _sweep("-o", "r.csv")
    err = capsys.readouterr().err
    assert code == 0, err
    assert started == [0, 1, 2]
    rows = _rows(folder / "r.csv")
    assert [(r["status"], float(r["observes.x.mean"])) for r in rows] == [("ok", 7.0)] * 3
    assert "2 run(s) of the table there (or its journal) are no point and seed of this sweep" in err


def test_a_resume_whose_trace_is_rewritten_during_it_keeps_no_run_of_the_new_bytes(folder, monkeypatch, capsys):
    assert _sweep("-o", "r.csv", seeds="1") == 0
    capsys.readouterr()
    # resumed over three seeds: seed 1's run is the table's; the rewrite lands before seed 3's run
    started = _rewrite_before_run(monkeypatch, folder / "t.csv", {1: 7})
    code = _sweep("-o", "r.csv")
    capsys.readouterr()
    assert code == 1 and started == [0, 1]
    rows = _rows(folder / "r.csv")
    assert [(r["seed"], r["status"]) for r in rows] == [("1", "ok"), ("2", "ok"), ("3", "error")]
    assert [float(r["observes.x.mean"]) for r in rows[:2]] == [5.0, 5.0]
    assert CHANGED in rows[2]["message"]



def test_compare_with_a_trace_rewritten_between_two_runs_keeps_no_run_of_the_new_bytes(folder, monkeypatch, capsys):
    # arms z=1 and z=2 over seeds 1 and 2: runs (z=1, 1), (z=1, 2), (z=2, 1), (z=2, 2); the rewrite before the
    # second leaves arm a one run of the planned bytes (5) and arm b none
    started = _rewrite_before_run(monkeypatch, folder / "w.csv", {1: 7})
    with pytest.raises(SystemExit) as info:
        main(["compare", "p.sq", "--set", "z=1,2", "--seeds", "1..2", "--trace", "w.csv", "--workers", "0",
              "--no-progress"])
    out, err = capsys.readouterr()
    assert info.value.code == 1 and started == [0, 1, 2, 3]
    row = next(line.split() for line in out.splitlines() if line.split()[:1] == ["observes.x.mean"])
    assert row[1:3] == ["5", "nan"] and row[-2:] == ["1", "0"]  # a over its one run, b over none
    assert "error: 3 run(s) failed; the first:\nw.csv: error: " + CHANGED in err


def test_find_with_a_trace_rewritten_between_two_runs_keeps_no_run_of_the_new_bytes(folder, monkeypatch, capsys):
    started = _rewrite_before_run(monkeypatch, folder / "w.csv", {1: 7})
    with pytest.raises(SystemExit) as info:
        main(["sweep", "p.sq", "--find", "x.mean <= 6", "--over", "z", "1:2", "--seeds", "1..2", "--trace",
              "w.csv", "--workers", "0", "--no-progress"])
    out, err = capsys.readouterr()
    # x.mean <= 6 holds at 5 (the planned trace) and fails at 7: the rewritten run is an error, not a judgement
    assert info.value.code == 1 and started == [0, 1, 2, 3]
    assert err.startswith(f"w.csv: error: {CHANGED}")
    assert "(at z=1 of the capacity search, trace=w.csv, seed 2)" in err
    assert out == ""  # (no table of a search judged on the rewritten bytes)


def test_a_run_the_rewrite_failed_runs_again_at_a_resume_once_the_trace_is_as_planned(folder, monkeypatch, capsys):
    # rewritten before seed 2's run and put back before seed 3's: seed 2's run alone read other bytes
    started = _rewrite_before_run(monkeypatch, folder / "t.csv", {1: 7, 2: 5})
    assert _sweep("-o", "r.csv") == 1 and started == [0, 1, 2]
    capsys.readouterr()
    assert [r["status"] for r in _rows(folder / "r.csv")] == ["ok", "error", "ok"]
    # its error is no result of the trace its key holds: the resume (the file as planned again) runs it again
    started = _rewrite_before_run(monkeypatch, folder / "t.csv", {})
    code = _sweep("-o", "r.csv")
    err = capsys.readouterr().err
    assert code == 0, err
    assert started == [0]  # seed 2's run alone; seeds 1 and 3 resumed
    rows = _rows(folder / "r.csv")
    assert [(r["seed"], r["status"], float(r["observes.x.mean"])) for r in rows] == [
        ("1", "ok", 5.0), ("2", "ok", 5.0), ("3", "ok", 5.0)]
