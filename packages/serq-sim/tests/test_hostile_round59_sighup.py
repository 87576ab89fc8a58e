"""SIGHUP (the terminal ``serq`` ran in was closed, its ssh connection dropped) is handled as SIGTERM: a run
ends with its partial report, marked ``sighup``, and the command with the line ``hung up`` and status 129
(128 + 1, as a shell reports it). It kept Python's default and killed the process where it stood: the
report was lost. Ignored when the command began (``nohup``), it stays ignored, and it is given back as it
was found (serq.signals)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest
import serq.cli
from serq import signals

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="a platform without SIGHUP")

PROGRAM = """stage s : fifo;
workload { arrive poisson(0.5); }
session { set t0 = now; run s (~exp(1)); observe response = now - t0; }
run { horizon 1e12; seed 4; }
"""

# the command called as a library function, SIGHUP sent to its process 0.3 s into the run itself (not its
# start-up, which a signal ends with one line and no report); the general engine (SERQ_SIM_TIER), whose
# Simulation.run is the run (the fast tier catches a signal as it does: Simulation.stopped)
CALLER = r"""
import os, signal, threading
# (a suite run under nohup ignores SIGHUP, and serq keeps an ignored SIGHUP ignored: the caller's terminal here)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
import serq_sim.engine
from serq.cli import main

run = serq_sim.engine.Simulation.run

def hung_up(self):
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGHUP)).start()
    return run(self)

serq_sim.engine.Simulation.run = hung_up
try:
    main(["run", "p.sq", "--no-progress", "--json", "-o", "r.json"])
except SystemExit as e:
    print("exit", e.code)
print("default", signal.getsignal(signal.SIGHUP) == signal.SIG_DFL)
"""


def test_sighup_in_a_run_writes_its_partial_report_and_exits_129(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-c", CALLER], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL, env={**os.environ, "SERQ_SIM_TIER": "general"})
    # (the caller's SIGHUP given back as it was, Python's default, once the command is done)
    assert r.stdout.splitlines() == ["exit 129", "default True"], (r.stdout, r.stderr[-2000:])
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["partial"] == "sighup" and doc["interrupted"] is True
    assert doc["observes"]["response"]["count"] > 0
    stopped = [n for n in doc["notes"] if n.startswith("note: hung up (SIGHUP)")]
    assert len(stopped) == 1 and stopped[0].endswith("; the figures cover what was simulated"), doc["notes"]
    t = stopped[0].split(" at t=")[1].split(";")[0]
    assert f"{doc['end']:g}" == t and doc["end"] > 0
    # (where the signal found a session's statement, the line names it: `at p.sq:3:42, session 47228 at t=…`)
    assert re.fullmatch(rf"serq: hung up \(SIGHUP\) at (p\.sq:\d+:\d+, session \d+ at )?t={re.escape(t)}: the "
                        r"report in r\.json is partial \(its figures cover what was simulated\)\n", r.stderr), r.stderr


def test_sighup_raises_hung_up_and_says_so(capsys):
    before = signal.getsignal(signal.SIGHUP)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        signals.install()
        try:
            assert signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL
            with pytest.raises(signals.HungUp) as e:
                os.kill(os.getpid(), signal.SIGHUP)
                for _ in range(10**7):  # (the handler runs at the next bytecode boundary)
                    pass
            assert isinstance(e.value, signals.Terminated) and e.value.reason == "sighup"
            assert signals.received() == signal.SIGHUP and signals.exit_status() == 129
            assert isinstance(signals.stop_requested(), signals.HungUp)
            assert signals.interrupted() == 129
            assert capsys.readouterr().err == "hung up\n"
        finally:
            signals.uninstall(own_process=False)
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)
    assert isinstance(signals.run_stopped("sighup"), signals.HungUp)


def test_sighup_ignored_when_the_command_began_stays_ignored():
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        signals.install()
        try:
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)  # (nohup's: nothing happens)
            assert signals.received() is None
        finally:
            signals.uninstall(own_process=False)
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        with pytest.raises(SystemExit) as e:
            serq.cli.main(["--version"])
        assert e.value.code == 0 and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


def test_a_partial_reports_status_and_note_for_sighup():
    from serq_sim.report import PARTIAL_EXIT, SIGNAL_NOTES

    assert PARTIAL_EXIT["sighup"] == 128 + int(signal.SIGHUP)
    assert SIGNAL_NOTES["sighup"] == "hung up (SIGHUP)"
