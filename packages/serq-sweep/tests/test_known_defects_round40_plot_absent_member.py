"""``serq plot`` of a figure of a stage member that exists only at some points of a sweep (``stages.gpu[2].
utilisation`` of a sweep over a family's size R, R=1 and R=2 having no ``gpu[2]``): its warning gave as the
reason "no sample of it: an observe that took none, …", which those runs are not; it now says the figure is
absent from those points' runs, the program there having no such member (its ``present`` blank)."""

from __future__ import annotations

from pathlib import Path

import pytest
from routed_sweep import serq, shared_table

pytestmark = pytest.mark.timeout(180)


ABSENT = ("some points' runs had no value of it (the figure is absent from those points' runs: the program there "
          "has no such stage or pool member), and each such mean is drawn over the others': ")


@pytest.fixture(scope="module")
def table(tmp_path_factory, once_per_run) -> Path:
    return shared_table(once_per_run, tmp_path_factory.mktemp("t"))


def _plot(table: Path, x: str, y: str, here=None) -> str:
    # (the first test's plot as a child process; the others' on serq.cli.main in the test's process, ``here``)
    r = serq(["plot", table.name, "--x", x, "--y", y, "-o", "p.svg"], table.parent, here)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_member_absent_at_two_points(table):
    said = _plot(table, "R", "stages.gpu[2].utilisation")
    assert said == (f"warning: --y stages.gpu[2].utilisation: {ABSENT}R=1 no value in its 2 runs (left out of its "
                    "line), absent from them; R=2 no value in its 2 runs (left out of its line), absent from them\n")
    assert "no sample" not in said


def test_member_absent_at_one_point_against_a_figure(table, serq_in_process):
    said = _plot(table, "observes.response.mean", "stages.gpu[1].utilisation", serq_in_process)
    assert said == (f"warning: --y stages.gpu[1].utilisation: {ABSENT}R=1 no value in its 2 runs (left out of its "
                    "line), absent from them\n")


def test_member_of_every_point_warns_of_nothing(table, serq_in_process):
    assert _plot(table, "R", "stages.gpu[0].utilisation", serq_in_process) == ""
