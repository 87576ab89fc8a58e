"""A swept name is a column of its own in every table a sweep writes, so a name that is a column there
already is refused before any run, and a table whose header names a column twice is refused where it is
read, at the second name.

* The sweep's table has a column for each of the report's own figures of one name (``events``,
  ``arrivals``, ``end``, ``turns``: serq_ir.report.Result's top level) and its points table a column
  ``runs``. A let of such a name swept (``let events = 1;``, ``--set events=1,2``) made a table of two
  columns ``events``, the figure's value written into the swept one: both points said ``events`` 153 (the
  run's count of events), and ``serq plot --x events`` said the column holds no numbers.
* Each record table of ``--records`` has the swept names as columns after ``point``: a let swept that is
  named as a record's column (``session``, ``turn``, ``time``, or one its ``record`` declares) made two
  columns of that name, and ``serq plot --cdf wait --hue wait`` of the file was a traceback of pandas
  (``unhashable type: 'list'``).
* A table written so (by an earlier serq, or by hand) was read into rows of cells by name, the later
  column's cell silently in place of the earlier's: a resume took the figure for the point's value.

``serq compare`` writes no swept name into its table, and takes such names as it did.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let events = 1;
let wait = 1;
let lam = 1;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (0.1 * events + 0.01 * wait); record req { sent = t0; wait = now - t0; } end; }
run { horizon 5; seed 1; }
"""


def serq(*args, cwd, here=None):
    """``python -m serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in
    the test's process, in that folder (for a test of what is said and written, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return tmp_path


@pytest.mark.parametrize("name", ["events", "arrivals", "end", "turns", "horizon", "requests", "runs"])
def test_a_swept_name_that_is_a_figure_column_is_refused_before_the_runs(folder, serq_in_process, name):
    (folder / "q.sq").write_text(PROGRAM.replace("let lam = 1;", f"let lam = 1;\nlet {name} = 1;"))
    r = serq("sweep", "q.sq", "--set", f"{name}=1,2", "-o", "t.csv", "--no-progress", "--workers", "0", cwd=folder,
             here=None if name == "events" else serq_in_process)  # (the first as a child process)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: {name}: a column of the table already, the report's {name} (the names so "
                               "taken: horizon, end, warmup, events, arrivals, ended, turns, mean_live, ")
    assert "give the let another name to sweep it" in r.stderr and "Traceback" not in r.stderr
    assert not (folder / "t.csv").exists() and not (folder / "t.csv.journal").exists()


@pytest.mark.parametrize("name", ["wait", "time", "session", "turn"])
def test_a_swept_name_that_is_a_record_column_is_refused_before_the_runs(folder, serq_in_process, name):
    # (each let read, so that its values make programs of their own: test_hostile_round47_unread_sets)
    (folder / "q.sq").write_text(PROGRAM.replace("let lam = 1;", "let lam = 1;\nlet time = 1;\nlet session = 1;\n"
                                                 "let turn = 1;").replace("0.01 * wait", "0.01 * wait + 0.001 * "
                                                                          "(time + session + turn)"))
    r = serq("sweep", "q.sq", "--set", f"{name}=1,2", "-o", "t.csv", "--records", "r.csv", "--no-progress",
             "--workers", "0", cwd=folder, here=None if name == "wait" else serq_in_process)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"error: --records: the swept name {name} is a column of the record table req (session, "
                        "turn, time, sent, wait); a swept name is a column of its own there: give the let another "
                        "name to sweep it\n")
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "q.sq"]


def test_the_api_refuses_them_too(folder):
    import serq_sweep
    from serq.errors import UsageError

    with pytest.raises(UsageError, match="^error: events: a column of the table already"):
        serq_sweep.sweep(str(folder / "p.sq"), sets={"events": [1, 2]}, workers=0, progress=False)
    with pytest.raises(UsageError, match="^error: records=: the swept name wait is a column of the record table"):
        serq_sweep.sweep(str(folder / "p.sq"), sets={"wait": [1, 2]}, records=True, workers=0, progress=False)


def test_a_name_of_no_column_sweeps_its_values(folder):
    # the swept column holds the values swept, the figure its own: lam 1 and 2 over 5 s
    import serq_sweep

    frame, recs = serq_sweep.sweep(str(folder / "p.sq"), sets={"lam": [1, 2]}, workers=0, progress=False,
                                   records=True)
    assert list(frame["lam"]) == [1, 2] and list(frame.columns).count("lam") == 1
    assert list(recs.columns) == ["point", "lam", "seed", "key", "session", "turn", "time", "sent", "wait"]


def test_compare_takes_such_a_name_its_table_has_no_column_of(folder):
    r = serq("compare", "p.sq", "--set", "events=1,2", "--seeds", "1..2", "--no-progress", "--workers", "0",
             cwd=folder)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("events=2 - events=1, paired over 2 seeds (95 % CIs):\n")


HEADER_TWICE = "point,events,seed,status,message,key,horizon,events\n0,1,1,ok,,abc,5.0,7\n"


def test_a_table_naming_a_column_twice_is_refused_at_the_second(folder, serq_in_process):
    (folder / "t.csv").write_text(HEADER_TWICE)
    r = serq("sweep", "p.sq", "--set", "lam=1", "-o", "t.csv", "--no-progress", "--workers", "0", cwd=folder,
             here=serq_in_process)
    assert r.returncode == 1
    col = HEADER_TWICE.index(",events\n") + 2  # the second `events`, from 1
    assert r.stderr == (f"t.csv:1:{col}: error: cannot read the table to resume from (the header gives the column "
                        "events twice, as fields 2 and 8: no column of a table is named twice); remove it or give "
                        "--fresh\n  " + HEADER_TWICE.splitlines()[0] + "\n  " + " " * (col - 1) + "^\n")
    assert (folder / "t.csv").read_text() == HEADER_TWICE


def test_plot_of_records_naming_a_column_twice_is_one_message(folder):
    pytest.importorskip("matplotlib")
    text = "point,wait,seed,key,session,turn,time,sent,wait\n0,1,1,abc,0,0,0.5,0.0,0.5\n0,2,1,abd,0,0,0.5,0.0,0.7\n"
    (folder / "r.csv").write_text(text)
    r = serq("plot", "r.csv", "--cdf", "wait", "--hue", "wait", "-o", "w.svg", cwd=folder)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("r.csv:1:")
    assert "(the header gives the column wait twice, as fields 2 and 9: no column of a table is named twice)" in r.stderr
    assert not (folder / "w.svg").exists()


@pytest.mark.parametrize("col", ["key", "seed", "point"])
def test_a_record_column_the_sweeps_records_table_has_is_refused_before_the_runs(folder, serq_in_process, col):
    # serq run --records writes such a column as it is; a sweep's records table has its own (the run's key,
    # its seed and point) before the record's: two columns of one name, which its resume then refused
    (folder / "k.sq").write_text(PROGRAM.replace("wait = now - t0;", f"wait = now - t0; {col} = 7;"))
    here = None if col == "key" else serq_in_process  # (the first as child processes)
    r = serq("sweep", "k.sq", "-o", "t.csv", "--records", "r.csv", "--no-progress", "--workers", "0", cwd=folder,
             here=here)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"error: --records: the record table req has a column {col}, which the sweep's records "
                        "table gives each row of its own (point, seed, key, with the swept names): give the column "
                        "another name to keep the records of a sweep\n")
    assert sorted(p.name for p in folder.iterdir()) == ["k.sq", "p.sq"]
    r = serq("run", "k.sq", "--records", "one.csv", cwd=folder, here=here)
    assert r.returncode == 0 and (folder / "one.csv").read_text().startswith(f"session,turn,time,sent,wait,{col}\n")
