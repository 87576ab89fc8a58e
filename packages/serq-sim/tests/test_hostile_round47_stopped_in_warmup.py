"""A run stopped before its warm-up's end says it measured nothing.

``serq run mg1.sq --warmup 50 --max-events 10`` stops at t = 4.8 with a partial report whose note said
``the figures cover what was simulated``: every figure was empty (0 samples, nan), the simulated time all
warm-up, and nothing said so. A note after the stop's now says it, on both tiers; a run stopped after its
warm-up's end, or one of no warm-up, has no such note.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """stage svc : fifo;

workload {
  arrive poisson(0.8);
}

session {
  set t0 = now;
  run svc (~exp(1));
  observe response = now - t0;
  end;
}

run { horizon 1000; warmup 50; seed 1; }
"""

NOTE = ("note: the run stopped before its warm-up's end (t=50), so it measured nothing: no sample, and every time "
        "average and rate of no time (nan)")


def test_a_run_stopped_in_its_warmup_says_so(monkeypatch):
    # 10 events are at most 10 arrivals of a rate of 0.8 a second, far before t = 50
    report = same_json(serq_frontend.compile(source=PROGRAM), monkeypatch, max_events=10)
    assert report["end"] < 50 and report["observes"]["response"]["count"] == 0
    assert report["notes"][-2].startswith("note: stopped after 10 events (--max-events 10) at t=")
    assert report["notes"][-1] == NOTE


@pytest.mark.parametrize("change", [
    {},                                   # stopped after its warm-up's end: t > 50 by the 200th event
    {"warmup 50;": "warmup 0;"},          # no warm-up
])
def test_no_such_note_otherwise(monkeypatch, change):
    src = PROGRAM
    for a, b in change.items():
        src = src.replace(a, b)
    report = same_json(serq_frontend.compile(source=src), monkeypatch, max_events=10 if change else 200)
    assert report["partial"] == "max-events"
    assert report["end"] > (50 if not change else 0)
    assert NOTE not in report["notes"]


def test_the_command_says_it_under_the_table(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "run", "p.sq", "--max-events", "10", "--no-progress"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=50)
    assert r.returncode == 3, r.stderr
    assert r.stdout.rstrip("\n").splitlines()[-1] == NOTE
