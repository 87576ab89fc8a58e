"""``serq plot``'s warning of thin means tells the points whose runs lack the figure's stage or pool member by
a flag kept beside each point's entry, not by finding ", absent from " in the entry's words: a hue (or any
value drawn in the entry) that held those words made every point seem absent, and the warning gave as the
reason "the figure is absent from those points' runs: the program there has no such stage or pool member"
of runs that merely had no value."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from routed_sweep import serq, shared_table

pytestmark = pytest.mark.timeout(180)


NO_SAMPLE = "no sample of it: an observe that took none, a request metric of a run that completed no request after the warm-up"
GONE = "absent from those points' runs: the program there has no such stage or pool member"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, once_per_run) -> Path:
    return shared_table(once_per_run, tmp_path_factory.mktemp("t"))


def _tagged(runs: Path, name: str, column: str) -> Path:
    """The runs table with a column ``tag`` of words that hold ", absent from ", and ``column`` of the run R=2,
    seed 1 left without a value (a run that had none, its member present)."""
    t = pd.read_csv(runs)
    t.loc[(t["R"] == 2) & (t["seed"] == 1), column] = float("nan")
    t = pd.concat([t.iloc[:, :2], pd.DataFrame({"tag": ["x, absent from y"] * len(t)}), t.iloc[:, 2:]], axis=1)
    out = runs.parent / name
    t.to_csv(out, index=False)
    return out


def _plot(table: Path, *args: str, here=None) -> str:
    # (the first test's plot as a child process; the others' on serq.cli.main in the test's process, ``here``)
    r = serq(["plot", table.name, *args, "-o", "p.svg"], table.parent, here)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_words_of_a_hue_are_no_absent_member(runs):
    table = _tagged(runs, "m.csv", "stages.gpu[0].utilisation")
    said = _plot(table, "--x", "R", "--y", "stages.gpu[0].utilisation", "--hue", "tag")
    assert said == (f"warning: --y stages.gpu[0].utilisation: some points' runs had no value of it ({NO_SAMPLE}), "
                    "and each such mean is drawn over the others': tag=x, absent from y, R=2 over 1 of 2 runs\n")


def test_an_absent_member_beside_such_words_is_said_where_it_is(runs, serq_in_process):
    table = _tagged(runs, "m2.csv", "stages.gpu[1].utilisation")
    said = _plot(table, "--x", "R", "--y", "stages.gpu[1].utilisation", "--hue", "tag", here=serq_in_process)
    # R=1 has no gpu[1]: absent from its runs; R=2's seed 1 merely has no value
    assert said == (f"warning: --y stages.gpu[1].utilisation: some points' runs had no value of it ({NO_SAMPLE}; "
                    f"or, where said, {GONE}), and each such mean is drawn over the others': tag=x, absent from "
                    "y, R=1 no value in its 2 runs (left out of its line), absent from them; tag=x, absent from y, "
                    "R=2 over 1 of 2 runs\n")


def test_absent_at_every_such_point_against_a_figure(runs, serq_in_process):
    """(the swept names drawn in each entry, ``tag`` among them, and R=2's seed 1 without a value of gpu[0]
    alone: every point said is one of absent runs)"""
    table = _tagged(runs, "m3.csv", "stages.gpu[0].utilisation")
    said = _plot(table, "--x", "observes.response.mean", "--y", "stages.gpu[2].utilisation", "--hue", "tag",
                 here=serq_in_process)
    assert said == (f"warning: --y stages.gpu[2].utilisation: some points' runs had no value of it (the figure is "
                    f"{GONE}), and each such mean is drawn over the others': R=1, tag=x, absent from y no value in "
                    "its 2 runs (left out of its line), absent from them; R=2, tag=x, absent from y no value in its "
                    "2 runs (left out of its line), absent from them\n")
