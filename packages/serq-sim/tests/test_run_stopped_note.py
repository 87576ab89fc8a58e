"""A run stopped before its end whose report goes to a file (``serq run -o FILE``) says so on stderr.

The report says why and when it stopped (its note and ``partial``), but with ``-o`` the terminal showed
nothing but the exit status (3, or 130 after Ctrl-C). One line now names the reason, the time and the file;
a report on stdout says it there as before, and nothing more is printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq_sim import run

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

# 50 events of a fifo stage: the arrivals and completions of exp(1) gaps and exp(0.5) services, seed 1
PROGRAM = """stage s : fifo(1);
workload { arrive poisson(1); }
session { run s (~exp(0.5)); }
run { horizon 1000; seed 1; }
"""


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "run", "p.sq", "--no-progress", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=100)


def test_a_report_written_to_a_file_says_on_stderr_that_it_is_partial(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "--max-events", "50", "-o", "r.json")
    assert r.returncode == 3, r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["partial"] == "max-events" and report["events"] == 50
    end = report["end"]
    assert report["notes"] == [f"note: stopped after 50 events (--max-events 50) at t={end:g}; the figures cover "
                               "what was simulated"]
    assert r.stderr == (f"serq: stopped after 50 events (--max-events 50) at t={end:g}: the report in r.json is "
                        "partial (its figures cover what was simulated)\n")
    assert r.stdout == ""


def test_a_report_on_stdout_says_it_there_alone(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, "--max-events", "50", "--json")
    assert r.returncode == 3
    assert json.loads(r.stdout)["partial"] == "max-events"
    assert r.stderr == ""


def test_a_run_to_its_end_says_nothing(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM.replace("horizon 1000", "horizon 10"))
    r = _serq(tmp_path, "-o", "r.json")
    assert r.returncode == 0 and r.stderr == "" and r.stdout == ""


def test_the_note_is_the_reports_own():
    program = serq_frontend.compile(source=PROGRAM, sets={}, defs={})
    stopped = run(program, max_events=50)
    assert stopped.stopped_note == stopped.notes[-1]
    assert stopped.stopped_note.startswith("note: stopped after 50 events (--max-events 50) at t=")
    assert run(program, horizon=10).stopped_note is None
