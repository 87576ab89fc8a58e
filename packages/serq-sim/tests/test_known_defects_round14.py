"""Known defects of the simulator, round 14.

1. ``serq run`` of a program given ``--set`` whose run failed at run time named the statement and the value it
   computed, not that a value of the program came from the command line: ``run d (now + c);`` with
   ``--set c=-1`` said ``the run's work is negative (-1)`` under a source line that shows no -1. Each
   ``--set`` is noted after a run-time error (``note: `c` is -1, given by --set c``), as a compile error
   notes it at its ``let``."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)

NEGATIVE = """let c = 1;
let h = 10;
stage d : delay;
workload {
  arrive closed(1);
}
session {
  run d (now + c);
}
run { horizon h; }
"""


def test_a_run_time_error_notes_the_sets(serq, tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(NEGATIVE)
    assert serq("run", str(p), "--no-progress").returncode == 0  # the program as written runs
    r = serq("run", str(p), "--no-progress", "--set", "c=-1", "--set", "h=5")
    assert r.returncode == 1
    # at t=0 the first session's work is now + c = -1, at the run (line 8, column 3)
    assert r.stderr.splitlines() == [f"{p}:8:3: error: at t=0, session 0: the run's work is negative (-1)",
                                     "    run d (now + c);", "    ^",
                                     "note: `c` is -1, given by --set c", "note: `h` is 5, given by --set h"]


def test_a_run_time_error_without_sets_is_as_before(serq, tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(NEGATIVE.replace("let c = 1;", "let c = -1;"))
    r = serq("run", str(p), "--no-progress")
    assert r.returncode == 1
    assert "note" not in r.stderr
    assert r.stderr.splitlines()[0] == f"{p}:8:3: error: at t=0, session 0: the run's work is negative (-1)"


def test_a_link_error_of_serq_run_notes_the_set_at_its_let(serq, tmp_path):
    # c = -1 with no `now`: a constant work, refused at link time, noted at `let c` (1:5)
    p = tmp_path / "p.sq"
    p.write_text(NEGATIVE.replace("now + c", "c"))
    r = serq("run", str(p), "--no-progress", "--set", "c=-1")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"{p}:8:10: error: run d: the work is negative (-1)")
    assert lines[-3:] == [f"{p}:1:5: note: `c` is -1, given by --set c", "  let c = 1;", "      ^"]
