"""A trace a sweep read when it planned its runs, then made unreadable or unreplayable under a run (a symbolic
link out of the program's folder, a FIFO, a malformed rewrite, a removal) and put back: the run's error is no
result of the bytes its key holds, so it is the changed-trace error (serq_sim.trace.not_as_planned), which a
resume runs again (core.trace_changed). Before, the run's own error ('outside the program's folder', 'is a
FIFO', 'not a number') was kept by every resume, the file restored or not.

A trace unreadable or malformed when the sweep plans is refused then, once, before any run, with the error its run
gives (since round 30: it was one error a run, kept in the table's rows).

The trace has one session of one turn whose ``new`` is 5, so every sample of ``x`` is 5 (docs/language.md).
"""

from __future__ import annotations

import csv
import os

import pytest
from serq.cli import main
from serq_sweep import engines, worker

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let z = 1;
workload { arrive renewal(1); trace "t.csv" ordered; }
session { turn; observe x = new; end; }
run { horizon 5; warmup 0; }
"""
GOOD = "session,turn,new,out,think,forced\n0,1,5,1,0,0\n"
CHANGED = "the trace changed since the sweep started"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text(GOOD)
    (tmp_path / "outside").mkdir()
    return tmp_path


def _sweep(*args: str, seeds: str = "1..3") -> int:
    with pytest.raises(SystemExit) as info:
        main(["sweep", "p.sq", "--seeds", seeds, "--workers", "0", "--no-progress", *args])
    return info.value.code


def _rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _symlink_out(folder):
    # a file outside the program's folder (its parent) of other bytes
    target = folder.parent / f"{folder.name}-elsewhere.csv"
    target.write_text(GOOD.replace(",5,", ",7,"))
    os.symlink(target, folder / "t.csv")


def _fifo(folder):
    os.mkfifo(folder / "t.csv")


def _malformed(folder):
    (folder / "t.csv").write_text(GOOD.replace(",5,", ",x,"))


def _gone(folder):
    pass


@pytest.mark.parametrize("replace, why", [
    (_symlink_out, "is outside the program's folder"),
    (_fifo, "is a FIFO (a named pipe), not a file"),
    (_malformed, None),
    (_gone, "No such file or directory"),
])
def test_a_trace_made_unreadable_under_a_run_and_put_back_runs_again(folder, monkeypatch, capsys, replace, why):
    real = worker.run_task
    started: list[int] = []

    def run_task(*args, **kw):
        if len(started) == 1:  # before seed 2's run
            os.remove(folder / "t.csv")
            replace(folder)
        started.append(len(started))
        return real(*args, **kw)

    monkeypatch.setattr(engines, "run_task", run_task)
    assert _sweep("-o", "r.csv") == 1
    rows = _rows(folder / "r.csv")
    assert [r["status"] for r in rows] == ["ok", "error", "error"]
    for r in rows[1:]:
        assert r["message"].startswith(f"t.csv: error: {CHANGED}: "), r["message"]
        assert (why or "the run read other bytes") in r["message"], r["message"]
    assert "Traceback" not in capsys.readouterr().err
    # the trace put back as planned: the resume runs seeds 2 and 3 again, and all rows read 5
    monkeypatch.setattr(engines, "run_task", real)
    if os.path.lexists(folder / "t.csv"):
        os.remove(folder / "t.csv")
    (folder / "t.csv").write_text(GOOD)
    assert _sweep("-o", "r.csv") == 0
    assert "(2 run now, 1 resumed)" in capsys.readouterr().err
    rows = _rows(folder / "r.csv")
    assert [(r["status"], r["observes.x.mean"]) for r in rows] == [("ok", "5.0")] * 3


@pytest.mark.parametrize("make, said", [
    (_fifo, "cannot read the trace t.csv: is a FIFO (a named pipe), not a file"),
    (_malformed, "t.csv:2:5: error: column new: 'x' is not a number"),
])
def test_a_trace_unreadable_when_planned_is_refused_once_before_any_run(folder, capsys, make, said):
    os.remove(folder / "t.csv")
    make(folder)
    assert _sweep("-o", "r.csv", seeds="1..2") == 1
    err = capsys.readouterr().err
    assert said in err and err.count("error:") == 1 and CHANGED not in err, err
    assert not os.path.exists(folder / "r.csv")
