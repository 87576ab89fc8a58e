"""Known defects, round 18 (serq-sweep): the table's `warnings` and a resume read codes, not words.

The column `warnings` was made by matching each warning's text against patterns (serq_sim.notes.WARNING_CODES),
and a resume knew a run whose trace changed under it by its message's words. Now each warning carries its code
from where it is made (serq_sim.notes.Note, `Report.notes`), and the error of a changed trace carries
`trace-changed` (SimError.code), which the row's `warnings` holds and the resume reads. The texts are as before.
"""

from __future__ import annotations

import csv

import pytest
import serq_frontend
import serq_sim
from serq.cli import main
from serq_sim import notes
from serq_sweep import engines, sweep, worker

pytestmark = pytest.mark.timeout(60)

# u = 6 never fits the pool (cap 4): every hold is rejected as it joins, the one warning (code `rejected`)
PROGRAM = """let u = 1;
pool m { cap 4; }
stage s : delay;
workload { arrive renewal(1); }
session {
  hold m (u) { run s (0.5); }
}
run { horizon 100; warmup 0; seed 1; }
"""


def _csv(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_warning_carries_its_code_and_its_text_is_unchanged():
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM, sets={"u": 6}, defs={}), seed=1)
    [w] = report.warnings
    assert w.code == "rejected"
    assert w.startswith("warning: pool m rejected 100 hold(s) that can never fit its capacity 4")
    # the report's notes are the text alone (the JSON report's), equal to the notes as made
    assert report.notes == report.result.notes and all(type(n) is str for n in report.result.notes)


@pytest.mark.parametrize("made, code", [
    (lambda: notes.stuck([("p", 2, 3, True)]), "stuck"),
    (lambda: notes.few_samples([("x", 3)], 0.0), "few-samples"),
    (lambda: notes.rejections([("p", 1, 1, 4.0, 0)]), "rejected"),
])
def test_each_kind_is_given_its_code_where_it_is_made(made, code):
    [w] = made()
    assert (w.code, notes.warning_code(w)) == (code, code)


def test_the_code_is_read_not_the_words():
    # a warning reworded keeps its kind; words alone (a plugin's text) are never read (round 19): `plugin`
    assert notes.warning_code(notes.Note("warning: the pool turned away holds", "rejected")) == "rejected"
    assert notes.warning_codes([notes.Note("warning: reworded", "stuck"), "warning: a plugin's own words"]) == \
        "stuck;plugin"


def test_the_sweep_table_takes_the_runs_codes(tmp_path, monkeypatch):
    # with no pattern left to match, the table still says `rejected`: the code came with the warning
    monkeypatch.setattr(notes, "WARNING_CODES", ())  # (no words anywhere: the code is all that is read)
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    sweep(str(tmp_path / "p.sq"), sets={"u": [1, 6]}, seeds=[1], workers=0, progress=False, out=str(out))
    assert [(r["u"], r["warnings"]) for r in _csv(out)] == [("1", ""), ("6", "rejected")]


# --- a trace changed under a run: its error's code -------------------------------------------------------

TRACED = """workload { arrive renewal(1); trace "t.csv" ordered; }
session { turn; observe x = new; end; }
run { horizon 5; warmup 0; }
"""


def _trace(path, new):
    path.write_text(f"session,turn,new,out,think,forced\n0,1,{new},1,0,0\n")


def _sweep(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(["sweep", "p.sq", "--seeds", "1..3", "--workers", "0", "--no-progress", "-o", "r.csv", *args])
    return info.value.code


def test_a_changed_trace_is_known_by_its_code(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(TRACED)
    _trace(tmp_path / "t.csv", 5)
    real = worker.run_task
    started: list[int] = []

    def run_task(*args, **kw):  # the trace rewritten to 7 before the second run, put back before the third
        if len(started) in (1, 2):
            _trace(tmp_path / "t.csv", 7 if len(started) == 1 else 5)
        started.append(len(started))
        return real(*args, **kw)

    monkeypatch.setattr(engines, "run_task", run_task)
    assert _sweep() == 1
    capsys.readouterr()
    rows = _csv(tmp_path / "r.csv")
    # (one sample of x a run: too few for a CI, the ok runs' warning)
    assert [(r["status"], r["warnings"]) for r in rows] == [("ok", "few-samples"), ("error", "trace-changed"),
                                                          ("ok", "few-samples")]
    assert rows[1]["message"].startswith("t.csv: error: the trace changed since the sweep started: ")
    # the resume runs the run of that code again, whatever its message says, and keeps an error of other
    # words as it is: the words of a changed trace in a message make no such run
    text = (tmp_path / "r.csv").read_text()
    msg = rows[1]["message"]
    assert text.count(msg) == 1
    edited = text.replace(msg, "edited by hand")
    key2 = rows[2]["key"]
    assert edited.count(f",ok,,few-samples,{key2},") == 1
    edited = edited.replace(f",ok,,few-samples,{key2},",
                            f',error,"t.csv: error: the trace changed since the sweep started: x",,{key2},')
    (tmp_path / "r.csv").write_text(edited)
    started.clear()
    monkeypatch.setattr(engines, "run_task", real)
    assert _sweep() == 1  # the run kept as an error fails the sweep again
    capsys.readouterr()
    rows = _csv(tmp_path / "r.csv")
    assert [(r["status"], r["warnings"]) for r in rows] == [("ok", "few-samples"), ("ok", "few-samples"),
                                                          ("error", "")]
    assert float(rows[1]["observes.x.mean"]) == 5.0


# --- the library API's default plugin manager follows sys.path ---------------------------------------------

PLUGGED = """stage s : @late18;
workload { arrive batch(2); }
session { run s (1); }
run { horizon inf; }
"""


def _plugin_folder(site):
    info = site / "serq_late18-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-late18\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nlate18 = late18_plugin\n")
    (site / "late18_plugin.py").write_text("from serq import hookimpl\nfrom serq_sim.stages import DelayStage\n\n\n"
                                           "@hookimpl\ndef serq_sim_register_stage_kinds(register):\n"
                                           "    register('late18', DelayStage)\n")


def test_a_plugin_folder_added_to_sys_path_after_the_first_call_is_there(tmp_path, monkeypatch):
    import sys

    from serq.plugins import installed_plugin_manager

    before = installed_plugin_manager()  # the first use, as a program's earlier call made it
    (tmp_path / "p.sq").write_text(PLUGGED)
    _plugin_folder(tmp_path / "site")
    with monkeypatch.context() as m:
        m.syspath_prepend(str(tmp_path / "site"))
        try:
            table = sweep(str(tmp_path / "p.sq"), seeds=[1], workers=0, progress=False)
            # two sessions of one unit of work each on the plugin's delay stage: both end at 1
            assert (list(table["status"]), list(table["ended"]), list(table["end"])) == (["ok"], [2], [1.0])
            assert installed_plugin_manager() is not before
        finally:
            sys.modules.pop("late18_plugin", None)
    # the folder gone from sys.path: the manager of the sys.path as it was before
    assert installed_plugin_manager() is before


# --- a plugin that cannot be loaded in a worker only ---------------------------------------------------------

ONLY_HERE = """import multiprocessing

from serq import hookimpl
from serq_sim.stages import DelayStage

if multiprocessing.parent_process() is not None:
    raise ImportError("no device in this process")


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("here18", DelayStage)
"""


def test_a_plugin_that_fails_to_load_in_a_worker_only_says_so(tmp_path):
    import os
    import re
    import subprocess
    import sys

    site = tmp_path / "site"
    info = site / "serq_here18-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-here18\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nhere18 = here18_plugin\n")
    (site / "here18_plugin.py").write_text(ONLY_HERE)
    (tmp_path / "p.sq").write_text(PLUGGED.replace("@late18", "@here18"))
    env = {**os.environ, "PYTHONPATH": str(site)}
    cmd = [sys.executable, "-c", "from serq.cli import main; main()", "sweep", "p.sq", "--seeds", "1,2", "--no-progress"]
    # in the sweep's own process the plugin loads and the runs are ok
    r = subprocess.run([*cmd, "--workers", "0"], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([*cmd, "--workers", "1"], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2 and lines[1] == "(run without it: SERQ_DISABLED_PLUGINS=here18, or uninstall serq-here18)"
    m = re.fullmatch(r"error: in a worker process of the sweep \(pid (\d+) on (\S+)\), which loads the installed "
                     r"plugins itself: plugin 'here18' \(from serq-here18 0\.1\.0\) cannot be loaded \(here18_plugin\): "
                     r"ImportError: no device in this process at (.+):7; the sweep's own process loaded it \(sweep "
                     r"with --workers 0, workers=0 in Python, to run every run in that process\)", lines[0])
    assert m is not None, lines[0]
    assert m.group(3) == str(site / "here18_plugin.py")


def test_the_table_and_its_points_fsync_their_folder_once(tmp_path, monkeypatch):
    import os
    import stat

    (tmp_path / "p.sq").write_text(PROGRAM)
    calls = []
    real = os.fsync

    def fsync(fd):
        calls.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        return real(fd)

    monkeypatch.setenv("SERQ_CACHE_DIR", "")  # (no compile cache written)
    monkeypatch.setattr(os, "fsync", fsync)
    sweep(str(tmp_path / "p.sq"), seeds=[1], workers=0, progress=False, out=str(tmp_path / "t.csv"))
    assert (tmp_path / "t.csv").exists() and (tmp_path / "t.points.csv").exists()
    # the journal's appends are its own (fsynced as it goes); the two tables: two file fsyncs and one folder's
    assert calls[-3:] == ["file", "file", "dir"] and calls.count("dir") == 1, calls
