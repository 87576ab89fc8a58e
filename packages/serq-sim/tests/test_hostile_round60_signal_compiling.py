"""A signal while the fast tier makes the program into Python (serq_sim.fast.build, compile, exec: seconds for
a large program), before the run's first event. It gave no report at all (`serq run` said `terminated` and
printed nothing), where the same signal one instant later, in the run, gives the partial report. It now stops
the run as a signal in the general engine's start or in the reading of a trace does: the partial report,
nothing simulated, its note naming the set-up, the signal's status."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import serq_frontend
import serq_sim
from serq.signals import Terminated
from serq_sim import fast

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 1000; seed 3; }\n")


def _stopped_in(monkeypatch, where, exc):
    real = getattr(fast, where)

    def stopping(*args, **kw):
        raise exc

    monkeypatch.setattr(fast, where, stopping)
    return real


@pytest.mark.parametrize("where", ["build", "compile"])
@pytest.mark.parametrize("exc, partial, said", [(KeyboardInterrupt(), "interrupted", "interrupted"),
                                                (Terminated(), "sigterm", "terminated (SIGTERM)")])
def test_a_stop_while_compiling_is_the_partial_report(tmp_path, monkeypatch, where, exc, partial, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    program = serq_frontend.compile(tmp_path / "p.sq")
    assert fast.exclusion(program) is None  # (the fast tier's program)
    if where == "compile":  # (the builtin compile the module calls, as the module sees it)
        monkeypatch.setattr(fast, "compile", lambda *a: (_ for _ in ()).throw(exc), raising=False)
    else:
        _stopped_in(monkeypatch, where, exc)
    report = serq_sim.run(program)
    assert report.partial == partial and report.interrupted
    assert (report.result.events, report.result.arrivals, report.result.end) == (0, 0, 0)
    assert report.notes == [f"note: {said} at set-up, compiling the program, before the run began at t=0; the "
                            "figures cover what was simulated"]
    assert len(report.observe("y")) == 0


def test_the_same_program_unstopped_runs_in_the_fast_tier(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    report = serq_sim.run(serq_frontend.compile(tmp_path / "p.sq"))
    assert report.tier == "fast" and not report.interrupted and report.result.end == 1000
    assert len(report.observe("y")) > 900  # (about 1 000 arrivals at rate 1 over 1 000)


DRIVE = """import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL)  # (a suite run under nohup ignores it, and serq keeps it so)
from serq_sim import fast
build = fast.build
def _build(*args):
    os.kill(os.getpid(), signal.{sig})
    return build(*args)
fast.build = _build
from serq.cli import main
main(["run", "p.sq", "--no-progress", "--json"])
"""


@pytest.mark.parametrize("sig, status, said, partial", [("SIGTERM", 143, "terminated (SIGTERM)", "sigterm"),
                                                         ("SIGHUP", 129, "hung up (SIGHUP)", "sighup")])
def test_serq_run_signalled_while_compiling(tmp_path, sig, status, said, partial):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-c", DRIVE.format(sig=sig)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == status, r.stderr
    assert r.stderr == ""
    report = json.loads(r.stdout)
    assert report["partial"] == partial and (report["events"], report["arrivals"], report["end"]) == (0, 0, 0)
    assert report["notes"] == [f"note: {said} at set-up, compiling the program, before the run began at t=0; the "
                               "figures cover what was simulated"]


def test_the_api_nested_run_keeps_the_stop_its_callers(tmp_path, monkeypatch):
    """A run inside a run (a plugin's code calls serq_sim.run): a Ctrl-C while the inner one compiles is the
    outer run's, raised on (the inner one makes no report of its own)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    program = serq_frontend.compile(tmp_path / "p.sq")
    _stopped_in(monkeypatch, "build", KeyboardInterrupt())
    from serq_sim.engine import runs_here

    runs = runs_here()
    runs.append(object())
    try:
        with pytest.raises(KeyboardInterrupt):
            serq_sim.run(program)
    finally:
        runs.pop()


# After the fast tier's run, what it holds is read back into the simulation (fast._write_back: seconds for a
# run of many sessions waiting) before the report is made: a signal then ended serq run with `terminated` and
# no report at all. It is now held until the report is made, as while the report is written: the run's whole
# report (the run was over), then the signal's status.
AFTER = """import os, signal, sys
from serq_sim import fast
write_back = fast._write_back
def _write_back(*args, **kw):
    os.kill(os.getpid(), signal.SIGTERM)
    return write_back(*args, **kw)
fast._write_back = _write_back
from serq.cli import main
main(["run", "p.sq", "--no-progress", "--json"])
"""


def test_a_signal_as_the_run_is_read_back_is_held_until_the_report_is_made(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    alone = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--no-progress", "--json"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert alone.returncode == 0, alone.stderr
    r = subprocess.run([sys.executable, "-c", AFTER], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stderr) == (143, "")
    assert r.stdout == alone.stdout  # (the whole run's report: it was over)
