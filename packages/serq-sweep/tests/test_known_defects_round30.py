"""Known defects, round 30 (serq-sweep).

A malformed trace named in the program's own `trace` clause failed every run of a sweep apart (`3 run(s) failed;
the first: …`, one error a point, the runs made first), where a bad `--trace FILE` is refused once before any run.
It is read once, before any run, and refused with the message its run gives (the trace loader's, at the file's
line and column; a file that cannot be read, at the clause), naming no point: it is the program's. So do
`serq compare` and a capacity search (`--find`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).with_name("serq"))

PROGRAM = """let x = 1;
stage d : delay;
workload {
  arrive batch(1);
  trace "t.csv" ordered;
}
session { loop { turn; run d (new * x); branch (more) { } else { end; } } }
run { horizon 100; }
"""

BAD = "session,turn,new,out,think,forced\n0,1,abc,1,0,0\n"


def _serq(*args: str, cwd: Path, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is said and written)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text(BAD)
    return tmp_path


@pytest.mark.parametrize("command", [
    ["sweep", "p.sq", "--set", "x=1,2,3", "--no-progress", "--out", "o.csv"],
    ["compare", "p.sq", "--set", "x=1,2", "--seeds", "1..2", "--no-progress"],
    ["sweep", "p.sq", "--find", "mean_live <= 10", "--over", "x", "1:5", "--no-progress"],
])
def test_a_malformed_trace_of_the_program_is_refused_once_before_any_run(folder, serq_in_process, command):
    here = None if command[:2] == ["sweep", "p.sq"] and "--set" in command else serq_in_process  # (the first
    # case's commands as child processes, the others' in the test's process)
    run = _serq("run", "p.sq", cwd=folder, here=here)
    assert run.returncode == 1
    said = run.stderr
    assert said == ("t.csv:2:5: error: column new: 'abc' is not a number\n"
                    "  0,1,abc,1,0,0\n"
                    "      ^\n")
    r = _serq(*command, cwd=folder, here=here)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", said)
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "t.csv"]  # (no table, no points file)
    # the same trace given as --trace is refused with the same words
    given = _serq(*command, "--trace", "t.csv", cwd=folder, here=here)
    assert (given.returncode, given.stderr) == (1, said)


def test_a_trace_file_the_clause_names_and_that_is_missing_is_said_once_at_the_clause(folder, serq_in_process):
    (folder / "t.csv").unlink()
    run = _serq("run", "p.sq", cwd=folder, here=serq_in_process)
    r = _serq("sweep", "p.sq", "--set", "x=1,2,3", "--no-progress", "--out", "o.csv", cwd=folder,
              here=serq_in_process)
    assert run.returncode == r.returncode == 1
    assert r.stderr == run.stderr and r.stderr.startswith("p.sq:5:3: error: cannot read the trace t.csv: "), r.stderr
    assert r.stderr.count("error:") == 1


def test_a_good_trace_of_the_program_sweeps_as_before(folder):
    (folder / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,2,1,0,0\n")
    r = _serq("sweep", "p.sq", "--set", "x=1,3", "--no-progress", "--out", "o.csv", "--show", "mean_live",
              cwd=folder)
    assert r.returncode == 0, r.stderr
    # one session, one turn of `new` 2: a delay of 2x over the horizon 100
    assert [line.split()[-1] for line in r.stdout.splitlines()[1:]] == ["0.02", "0.06"], r.stdout


# A point's label cut a trace's path (and a program's) at 120 characters, as a name of the program is quoted, beside
# the same path cut at serq.errors.PATH_WIDTH (240) in the message's own FILE:LINE:COL; a run's place, `(at the
# sweep's point …, seed N)`, was not cut at all. One rule: a file's name is shown by serq.errors.shown_path, a name
# or value of the program's by serq.errors.clipped (docs/sweep.md says why the two widths).

def test_a_point_label_shows_a_path_as_every_message_does_and_a_value_as_a_name(tmp_path):
    from serq.errors import PATH_WIDTH, QUOTED_WIDTH, clipped, shown_path
    from serq_sweep.core import Point, quoted_label, run_place

    path = "/" + "d" * 150 + "/" + "e" * 100 + "/t.csv"
    assert len(path) > PATH_WIDTH and len(shown_path(path)) == PATH_WIDTH
    body = "x + " * 60 + "1"
    params = {"program": path, "trace": path, "x": 0.5, "f": body}
    want = f"program={shown_path(path)}, trace={shown_path(path)}, x=0.5, f={clipped(body)}"
    assert len(clipped(body)) == QUOTED_WIDTH
    assert quoted_label(params) == want
    assert run_place(params, 3) == f"(at the sweep's point {want}, seed 3)"
    assert Point(0, params, "p.sq", b"", "").label == want
    # a line break in a trace's name is shown escaped, as in the message's FILE:LINE:COL
    assert quoted_label({"trace": "a\nb.csv"}) == "trace=a\\nb.csv"


def test_the_run_s_place_cuts_the_trace_as_its_note_does(tmp_path):
    deep = tmp_path / ("d" * 150) / ("e" * 100)
    deep.mkdir(parents=True)
    (deep / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,2,1,0,0\n")
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,2,1,0,0\n")
    (tmp_path / "p.sq").write_text(PROGRAM.replace("run d (new * x)", "run d (new * x - 10)"))
    trace = str(deep / "t.csv")
    r = _serq("sweep", "p.sq", "--trace", trace, "--set", "x=1", "--no-progress", "--out", "o.csv", cwd=tmp_path)
    assert r.returncode == 1
    from serq.errors import shown_path

    lines = r.stderr.splitlines()
    assert any(line.startswith(f"{shown_path(trace)}:2:1: note: session 0 replays") for line in lines), r.stderr
    assert lines[-1] == f"(at the sweep's point trace={shown_path(trace)}, x=1, seed 1)"


# A resumed table whose figure column was renamed by hand (observes.t.mean to t_mean) lost that column when no
# point of it ran again: the renamed one was left out as no figure, and the figure with it, since no run of the
# sweep ran to say its runs have it. A column that is no figure and stands among the figures is refused now,
# naming it, before any run and with the table untouched.

RESUMED = """let x = 1;
stage d : delay;
workload { arrive batch(2); }
session { set t0 = now; run d (x); observe t = now - t0; }
run { horizon 10; }
"""


def test_a_figure_column_renamed_by_hand_is_refused_and_resumes_once_named_back(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(RESUMED)
    sweep = ("sweep", "p.sq", "--set", "x=1,2", "--seeds", "1..2", "--no-progress", "--out", "r.csv")
    # (the sweep and its refusal in the test's process; the resume named back as a child process)
    assert _serq(*sweep, cwd=tmp_path, here=serq_in_process).returncode == 0
    whole = (tmp_path / "r.csv").read_text()
    header, rest = whole.split("\n", 1)
    assert ",observes.t.mean," in header
    edited = header.replace(",observes.t.mean,", ",t_mean,") + "\n" + rest
    (tmp_path / "r.csv").write_text(edited)
    r = _serq(*sweep, cwd=tmp_path, here=serq_in_process)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        "error: r.csv: the column(s) t_mean of the table there stand among its figures and are no figure a run "
        "reports (a figure's column renamed by hand, or a column added by hand): the table a resume writes has no "
        "such column, and a run resumed from this one would have no number under the figure it was; rename it "
        "back to the figure's name (its path in the report, `observes.NAME.mean`), move a column of your own "
        "aside, or give --fresh to run the sweep again\n")
    assert (tmp_path / "r.csv").read_text() == edited
    # named back, it resumes every run and writes the table the sweep wrote
    (tmp_path / "r.csv").write_text(whole)
    r = _serq(*sweep, cwd=tmp_path)
    assert r.returncode == 0 and "(0 run now, 4 resumed)" in r.stderr, r.stderr
    assert (tmp_path / "r.csv").read_text() == whole
