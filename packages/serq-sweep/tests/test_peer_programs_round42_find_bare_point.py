"""``--find`` says a value it evaluated where no run gave a condition's figure a value (docs/sweep.md, capacity search).

A gateway that sheds every turn (examples/multi-turn/vllm_shedding.sq at qmax = 0) completes no request, so its
runs have no TTFT: `serq sweep vllm_shedding.sq --find 'requests.ttft.p99 <= 10' --over qmax 0:20:1` found 1 the
smallest qmax that holds, 0 failing, and said nothing of why 0 failed: its condition was judged on a mean of no
value, which meets no condition. A mean over some of the runs was said (`… over 2 of 3 runs`), and a figure no run
of the whole search gave; a value at which none of its runs gave one was not. It is now said, by figure and value.
"""

from __future__ import annotations

import pytest
from serq_sweep.search import find

pytestmark = pytest.mark.timeout(60)

# every session is served 1 s alone (a delay), and observed only when k > 0: at k = 0 no run has a sample
PROGRAM = """let k = 0;
stage svc : delay;
workload { arrive poisson(0.5); }
session {
  set t0 = now;
  run svc (1 + k);
  branch (k > 0) {
    observe response = now - t0;
  }
  end;
}
run { horizon 50; seed 1; }
"""


def test_a_value_no_run_of_which_gave_the_figure_is_said(tmp_path, capsys):
    (tmp_path / "p.sq").write_text(PROGRAM)
    # a response of 1 + k seconds exactly: k = 1 and 2 hold `>= 1.5`, k = 0 has no sample and fails: the least
    # that holds is 1, found between the ends
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean >= 1.5", ("k", "0:2:1"), seeds="1..2", workers=0)
    assert (rows[0]["k"], rows[0]["outcome"], rows[0]["fails"], rows[0]["evaluations"]) == (1, "found_smallest", 0, 3)
    assert rows[0]["observes.response.mean:mean"] == 2
    assert capsys.readouterr().err == (
        "warning: conditions: a condition's figure had no value in any run at some values evaluated (no sample of "
        "it: an observe that took none, a request metric of a run that completed no request after the warm-up), "
        "so its conditions failed there for want of one, not on one: observes.response.mean at k=0 (2 runs)\n")


def test_no_word_when_every_value_evaluated_has_one(tmp_path, capsys):
    (tmp_path / "p.sq").write_text(PROGRAM)
    cols, rows = find(str(tmp_path / "p.sq"), "response.mean <= 2.5", ("k", "1:2:1"), seeds="1..2", workers=0)
    assert (rows[0]["k"], rows[0]["outcome"]) == (1, "found")
    assert capsys.readouterr().err == ""
