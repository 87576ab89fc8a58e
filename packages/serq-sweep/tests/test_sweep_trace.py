"""``serq sweep --trace FILE`` (repeatable: an axis ``trace``) and ``serq compare --trace FILE`` (every arm's):
each run replays the trace as ``serq run --trace`` does, the table's row of a point and seed is that run's
report, the run's key holds the trace's bytes, and a bad trace is one error before any run (docs/sweep.md)."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys

import pytest
import serq_sweep
from serq.errors import UsageError, UserError
from serq_sim.errors import SimError
from serq_sweep import core
from serq_sweep.api import run_plan
from serq_sweep.figures import flatten

pytestmark = pytest.mark.timeout(60)

SERQ = [sys.executable, "-c", "from serq.cli import main; main()"]

# poisson arrivals; each session replays a session of the trace (drawn at random: not `ordered`), one request a
# turn, each turn's work its prompt's share plus an exponential draw
PROGRAM = """\
let N = 1;
let t_pre = 0.001;

stage gpu : fifo(N);

workload {
  arrive poisson(2);
  trace "own.csv";
  session {
    record arr { t = now; }
    turn;
    loop {
      request;
      branch (more) { turn; } else { end; }
    }
  }
}

server {
  set t0 = now;
  run gpu (t_pre * new + ~exp(0.2));
  observe response = now - t0;
}

run { horizon 1000; }
"""
HEAD = "session,turn,new,out,think,forced\n"
# every session of the week three turns, of the peak hour one
WEEK = HEAD + "1,1,200,20,0.5,0\n1,2,50,10,0.5,0\n1,3,80,5,0,0\n2,1,100,8,0.2,0\n2,2,40,4,0.1,0\n2,3,60,6,0,0\n"
PEAK = HEAD + "1,1,900,50,0,0\n2,1,700,40,0,0\n3,1,800,30,0,0\n"
TURNS = {"week.csv": 3, "peak.csv": 1}
ARRIVALS = 10  # --arrivals: exactly 10 sessions, then drain


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "q.sq").write_text(PROGRAM)
    (tmp_path / "own.csv").write_text(WEEK)
    (tmp_path / "week.csv").write_text(WEEK)
    (tmp_path / "peak.csv").write_text(PEAK)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def serq(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*SERQ, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def _cell(text: str, value) -> bool:
    """Whether the table's cell ``text`` is the report's ``value`` (null: an empty cell; a float as repr)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return text == ""
    if isinstance(value, bool):
        return text == str(value)
    return float(text) == float(value)


def test_each_row_is_serq_run_of_its_trace_point_and_seed(folder, serq_in_process):
    # (the axis trace zipped with N: the week on one server, the peak hour on two; the sweep and the runs in this
    # process, in the folder, serq_in_process: what is compared is the figures)
    r = serq_in_process("sweep", "q.sq", "--trace", "week.csv", "--trace", "peak.csv", "--set", "N=1,2", "--zip",
                        "trace,N", "--seeds", "1..2", "--arrivals", str(ARRIVALS), "--workers", "0")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(r.stdout.splitlines()))
    header = r.stdout.splitlines()[0].split(",")
    assert header[:8] == ["point", "trace", "N", "seed", "status", "message", "warnings", "key"]  # trace after program's place
    # each point's seeds in turn; each trace named as given
    assert [(x["trace"], x["N"], x["seed"]) for x in rows] == [
        (t, n, s) for t, n in (("week.csv", "1"), ("peak.csv", "2")) for s in ("1", "2")]
    for x in rows:
        one = serq_in_process("run", "q.sq", "--trace", x["trace"], "--set", f"N={x['N']}", "--seed", x["seed"],
                              "--arrivals", str(ARRIVALS), "--json", "--no-progress")
        assert one.returncode == 0, one.stderr
        figures = flatten(json.loads(one.stdout))
        assert list(figures) == header[8:]
        assert x["status"] == "ok"
        bad = [f for f, v in figures.items() if not _cell(x[f], v)]
        assert bad == [], (x["trace"], x["N"], x["seed"], bad[:3])
        # and each run replayed its own trace: every session of it as many turns as the trace gives it
        assert int(x["turns"]) == ARRIVALS * TURNS[x["trace"]]


def test_one_trace_is_still_the_column_trace(folder):
    frame = serq_sweep.sweep("q.sq", trace="peak.csv", seeds=[1, 2], arrivals=ARRIVALS, workers=0, progress=False)
    assert list(frame.columns[:3]) == ["point", "trace", "seed"]
    assert frame.attrs["axes"] == ["trace"]
    assert frame["trace"].tolist() == ["peak.csv", "peak.csv"]
    assert frame["turns"].tolist() == [ARRIVALS, ARRIVALS]  # the peak hour's one turn a session, not own.csv's 3


def test_a_seed_under_two_traces_draws_the_same_arrivals(folder):
    # common random numbers: the arrival times (what the trace does not fix) are one seed's under both traces
    frame, recs = serq_sweep.sweep("q.sq", trace=["week.csv", "peak.csv"], seeds=[1, 2], arrivals=ARRIVALS,
                                   workers=0, progress=False, records=True)
    times = {(t, s): recs[(recs.trace == t) & (recs.seed == s)].t.tolist()
             for t in ("week.csv", "peak.csv") for s in (1, 2)}
    assert all(len(v) == ARRIVALS for v in times.values())
    assert times["week.csv", 1] == times["peak.csv", 1]
    assert times["week.csv", 2] == times["peak.csv", 2]
    assert times["week.csv", 1] != times["week.csv", 2]  # (another seed, other arrivals)
    # while what the trace decides differs
    assert frame[frame.trace == "week.csv"].turns.tolist() != frame[frame.trace == "peak.csv"].turns.tolist()


def test_a_trace_changed_under_its_name_is_not_resumed_as_the_old_one(folder):
    def sweep():
        plan = core.plan(["q.sq"], trace=["week.csv"], seeds=[1, 2], arrivals=ARRIVALS)
        columns, table, complete, resumed = run_plan(plan, workers=0, out="r.csv", progress=False)
        assert complete
        return table, resumed

    first, resumed = sweep()
    assert resumed == 0 and [r["turns"] for r in first] == [3 * ARRIVALS] * 2
    again, resumed = sweep()
    assert resumed == 2 and [r["key"] for r in again] == [r["key"] for r in first]  # the same bytes: resumed
    (folder / "week.csv").write_text(PEAK)  # another trace under the same name
    changed, resumed = sweep()
    assert resumed == 0
    assert {r["key"] for r in changed}.isdisjoint(r["key"] for r in first)
    assert [r["turns"] for r in changed] == [ARRIVALS] * 2  # the new trace's one turn a session
    # and its rows are those of that trace under any other name
    fresh = serq_sweep.sweep("q.sq", trace="peak.csv", seeds=[1, 2], arrivals=ARRIVALS, workers=0, progress=False)
    assert [r["key"] for r in changed] == fresh["key"].tolist()
    assert [r["observes.response.mean"] for r in changed] == fresh["observes.response.mean"].tolist()


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo"])
def test_a_trace_that_is_no_file_is_refused_before_anything_runs(folder, kind):
    name = {"missing": "nope.csv", "folder": "sub", "fifo": "pipe.csv"}[kind]
    if kind == "folder":
        (folder / "sub").mkdir()
    elif kind == "fifo":
        os.mkfifo(folder / "pipe.csv")
    r = serq("sweep", "q.sq", "--trace", "week.csv", "--trace", name, "--seeds", "1..3", "-o", "r.csv",
             "--workers", "0", cwd=folder)
    # a folder is the option's type's refusal (a usage error, status 2); a missing file or a FIFO is a bad
    # input file, serq run --trace's error of it, status 1
    assert r.returncode == (2 if kind == "folder" else 1), r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert name in r.stderr and r.stderr.startswith("error: " if kind == "folder" else f"{name}: error: cannot read the trace: ")
    assert sorted(os.listdir(folder)) == sorted(["q.sq", "own.csv", "week.csv", "peak.csv", *(
        [name] if kind != "missing" else [])])  # nothing written, no journal


def test_a_malformed_trace_is_serq_runs_error_once_before_any_run(folder):
    (folder / "bad.csv").write_text(HEAD + "1,1,200,20,0,0\n2,1,3x,5,0,0\n")
    r = serq("sweep", "q.sq", "--trace", "week.csv", "--trace", "bad.csv", "--set", "N=1,2", "--seeds", "1..3",
             "-o", "r.csv", "--workers", "0", cwd=folder)
    run = serq("run", "q.sq", "--trace", "bad.csv", "--no-progress", cwd=folder)
    assert run.returncode == 1 and run.stderr.startswith("bad.csv:3:5: error: column new: '3x' is not a number\n")
    assert r.returncode == 1 and r.stderr == run.stderr  # the same words, said once
    assert not (folder / "r.csv").exists() and not (folder / "r.csv.journal").exists()


def test_a_program_without_a_trace_clause_is_serq_runs_error_once(folder):
    (folder / "plain.sq").write_text(PROGRAM.replace('  trace "own.csv";\n', "").replace(
        "      branch (more) { turn; } else { end; }\n", "      end;\n").replace("t_pre * new", "t_pre"))
    run = serq("run", "plain.sq", "--trace", "week.csv", "--no-progress", cwd=folder)
    assert run.returncode == 1 and "the program's workload reads no trace" in run.stderr
    r = serq("sweep", "plain.sq", "--trace", "week.csv", "--trace", "peak.csv", "--seeds", "1..3", "--workers", "0",
             cwd=folder)
    assert r.returncode == 1 and r.stderr == run.stderr and r.stdout == ""


def test_trace_beside_a_swept_name_trace_is_a_usage_error(folder):
    r = serq("sweep", "q.sq", "--trace", "week.csv", "--set", "trace=1,2", "--workers", "0", cwd=folder)
    assert r.returncode == 2 and r.stderr == ("error: --set trace: the name of the axis --trace makes, a column "
                                              "of the table; give the swept name another\n"), r.stderr
    with pytest.raises(UsageError, match=r"^error: defs\['trace'\]: the name of the axis trace makes"):
        serq_sweep.sweep("q.sq", trace="week.csv", defs={"trace": ["1", "2"]}, workers=0)
    with pytest.raises(UsageError, match=r"^error: over=\('trace', '1:2:1'\): the name of the axis trace makes"):
        serq_sweep.find("q.sq", "turns >= 1", ("trace", "1:2:1"), trace="week.csv", workers=0)
    # a capacity search's swept name, as a sweep's: the column of its own table
    r = serq("sweep", "q.sq", "--trace", "week.csv", "--set", "trace=1,2", "--find", "turns >= 1", "--over", "N",
             "1:4:1", "--workers", "0", cwd=folder)
    assert r.returncode == 2 and r.stderr == ("error: --set trace: the name of the axis --trace makes, a column "
                                              "of the search's table; give the swept name another\n"), r.stderr


def test_compare_replays_its_one_trace_in_every_arm(folder, serq_in_process):
    # (the comparison whose table is checked in this process, in the folder: serq_in_process)
    r = serq_in_process("compare", "q.sq", "--set", "N=1,2", "--trace", "peak.csv", "--seeds", "1..3", "--arrivals",
                        str(ARRIVALS), "--figure", "observes.response.mean", "--figure", "turns", "-o", "c.csv",
                        "--workers", "0")
    assert r.returncode == 0, r.stderr
    got = {x["figure"]: x for x in csv.DictReader((folder / "c.csv").read_text().splitlines())}
    frame = serq_sweep.sweep("q.sq", trace="peak.csv", sets={"N": [1, 2]}, seeds="1..3", arrivals=ARRIVALS,
                             workers=0, progress=False)
    for arm, n in (("a", 1), ("b", 2)):
        want = frame[frame.N == n]["observes.response.mean"].mean()
        assert float(got["observes.response.mean"][arm]) == pytest.approx(want, rel=1e-12)
        assert float(got["turns"][arm]) == ARRIVALS  # the peak hour's one turn a session, in both arms
    # one trace for every arm: a second is a usage error, before anything runs (the command line's rule of an
    # option of one value), and so from Python
    r = serq("compare", "q.sq", "--set", "N=1,2", "--trace", "peak.csv", "--trace", "week.csv", "--workers", "0",
             cwd=folder)
    assert r.returncode == 2 and r.stderr.startswith("error: --trace is given twice (peak.csv and week.csv)"), r.stderr
    with pytest.raises(UsageError, match=r"^error: trace: a comparison's arms replay one trace, given once; here 2"):
        serq_sweep.compare("q.sq", sets={"N": [1, 2]}, trace=["peak.csv", "week.csv"], workers=0)


def test_find_searches_once_per_trace(folder, serq_in_process):
    cond, seeds = "observes.response.mean <= 1.2", "1..3"
    # (the search in this process, in the folder: serq_in_process)
    r = serq_in_process("sweep", "q.sq", "--trace", "week.csv", "--trace", "peak.csv", "--find", cond, "--over", "N",
                        "1:4:1", "--seeds", seeds, "--arrivals", str(ARRIVALS), "--workers", "0", "-o", "found.csv")
    assert r.returncode == 0, r.stderr
    found = list(csv.DictReader((folder / "found.csv").read_text().splitlines()))
    assert [x["trace"] for x in found] == ["week.csv", "peak.csv"]
    # the independent truth: the whole grid's means, the smallest N of each trace whose mean meets the bound
    grid = serq_sweep.sweep("q.sq", trace=["week.csv", "peak.csv"], sets={"N": "1:4:1"}, seeds=seeds,
                            arrivals=ARRIVALS, workers=0, progress=False)
    means = grid.groupby(["trace", "N"], sort=False)["observes.response.mean"].mean()
    for x in found:
        ok = [n for n in (1, 2, 3, 4) if means[x["trace"], n] <= 1.2]
        assert ok == list(range(ok[0], 5))  # (monotone here: the search's answer is the first that holds)
        assert (x["outcome"], int(x["N"])) == ("found_smallest", ok[0])
    assert found[0]["N"] != found[1]["N"]  # (week and peak need different fleets: one search would not do)


def test_from_python_a_trace_is_checked_by_the_same_rules(folder):
    with pytest.raises(SimError, match=r"^nope\.csv: error: cannot read the trace: No such file or directory$"):
        serq_sweep.sweep("q.sq", trace=["week.csv", "nope.csv"], workers=0)
    os.symlink("week.csv", folder / "link.csv")
    with pytest.raises(UsageError, match=r"^error: the traces of a sweep are given twice: week\.csv and link\.csv are "
                                         r"one file$"):
        serq_sweep.sweep("q.sq", trace=["week.csv", "link.csv"], workers=0)
    with pytest.raises(TypeError, match=r"^trace: a set has no order"):
        serq_sweep.sweep("q.sq", trace={"week.csv", "peak.csv"}, workers=0)
    # a trace the runs read is an input: never the table's output
    with pytest.raises(UserError, match=r"^error: peak\.csv: refusing to write over an input of this run$"):
        serq_sweep.sweep("q.sq", trace="peak.csv", out="peak.csv", workers=0)
    assert (folder / "peak.csv").read_text() == PEAK
