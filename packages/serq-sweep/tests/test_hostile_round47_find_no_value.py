"""``--find`` on a figure that no run gave a value says so: the condition failed for want of a value.

A condition on a figure a run gives no number (``stages.svc.iterations`` of a fifo stage, a step stage's
figure, null in every report of it; an observe that took no sample) meets no condition (docs/sweep.md). When
some runs of a point had one, the search said its mean was over fewer runs; when none had one it said
nothing, so ``--find 'stages.svc.iterations < 1' --over lambda 0.1:0.9`` of a fifo stage answered
``fails_everywhere`` with the note that the range may cross where the conditions are not monotone, as if the
figure had been measured at both ends and found wanting. A figure of no value in any run of the search is now
said by name; one that some run gave a value is judged as before (a capacity search whose low end measures
nothing fails there, as it should), and each value evaluated at which none of its runs gave one is said
(test_peer_programs_round42_find_bare_point.py): a figure sampled only when something goes wrong fails where
nothing does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep.search import find

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lambda = 0.5;
let c = 1;

stage svc : fifo(c);

workload {
  arrive poisson(lambda);
}

session {
  set t0 = now;
  run svc (1);
  branch (c < 2) {
    observe response = now - t0;
  }
  end;
}

run { horizon 50; seed 1; }
"""

WORDS = ("(no sample of it, or a figure the program gives no number, as a step stage's figures of a fifo stage), so "
         "every condition on it failed for want of one at every value evaluated")


def test_a_figure_of_no_value_anywhere_is_said(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--find", "stages.svc.iterations < 1", "--over", "lambda", "0.1:0.9",
                        "--no-progress", "--workers", "0"], cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[1].split() == ["nan", "fails_everywhere", "nan", "0.1", "2", "nan"]
    first, note = r.stderr.splitlines()
    assert first == "warning: --find: no run of the search gave a value of stages.svc.iterations " + WORDS
    assert note.startswith("note: fails_everywhere: the conditions fail at both ends, lambda=0.1 and lambda=0.9")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]


def test_the_api_says_it_of_each_such_figure(tmp_path, capsys):
    # c = 2 and 3 observe nothing: response has no value at either end, iterations none anywhere
    (tmp_path / "p.sq").write_text(PROGRAM)
    cols, rows = find(str(tmp_path / "p.sq"), ["response.mean <= 100", "stages.svc.iterations >= 0",
                                               "stages.svc.completions >= 0"], ("c", "2:3:1"), workers=0)
    assert rows[0]["outcome"] == "fails_everywhere"
    assert capsys.readouterr().err.splitlines()[0] == (
        "warning: conditions: no run of the search gave a value of observes.response.mean or stages.svc.iterations "
        + WORDS)


def test_a_figure_with_a_value_at_one_end_is_judged_as_before_and_the_other_end_said(tmp_path, capsys):
    # one server observes every response (each 1 s of service and its wait, far below 100); two observe none:
    # the condition holds at c=1 and fails at c=2 for want of a value, the largest that holds is 1, as before;
    # c=2 is said, not the figure as one of no value anywhere
    (tmp_path / "p.sq").write_text(PROGRAM)
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 100", ("c", "1:2:1"), workers=0)
    assert (rows[0]["c"], rows[0]["outcome"]) == (1, "found")
    assert 1 <= rows[0]["observes.response.mean:mean"] <= 100
    assert capsys.readouterr().err == (
        "warning: conditions: a condition's figure had no value in any run at some values evaluated (no sample of "
        "it: an observe that took none, a request metric of a run that completed no request after the warm-up), "
        "so its conditions failed there for want of one, not on one: observes.response.mean at c=2 (1 run)\n")


def test_no_word_when_every_run_has_a_value(tmp_path, capsys):
    (tmp_path / "p.sq").write_text(PROGRAM)
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 100", ("lambda", "0.1:0.9"), workers=0)
    assert rows[0]["outcome"] == "holds_everywhere"
    assert "warning" not in capsys.readouterr().err
