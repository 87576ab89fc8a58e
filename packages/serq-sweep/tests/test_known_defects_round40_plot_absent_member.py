"""``serq plot`` of a figure of a stage member that exists only at some points of a sweep (``stages.gpu[2].
utilisation`` of a sweep over a family's size R, R=1 and R=2 having no ``gpu[2]``): its warning gave as the
reason "no sample of it: an observe that took none, …", which those runs are not; it now says the figure is
absent from those points' runs, the program there having no such member (its ``present`` blank)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let R = 2;

pool slot[R] { cap 1; }
stage gpu[R] : delay;

workload {
  arrive poisson(0.5);
}

session {
  set t0 = now;
  choose j in R by (holders(slot[j]) + queued(slot[j]), j);
  hold slot[j] (1) {
    run gpu[j] (~exp(1));
  }
  observe response = now - t0;
}

run { horizon 40; warmup 0; seed 1; }
"""

ABSENT = ("some points' runs had no value of it (the figure is absent from those points' runs: the program there "
          "has no such stage or pool member), and each such mean is drawn over the others': ")


def _serq(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=150,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("t")
    (d / "k.sq").write_text(PROGRAM)
    r = _serq(["fmt", "--check", "k.sq"], d)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _serq(["sweep", "k.sq", "--set", "R=1,2,3", "--seeds", "1,2", "--out", "t.csv", "--workers", "0"], d)
    assert r.returncode == 0, r.stderr
    return d / "t.csv"


def _plot(table: Path, x: str, y: str) -> str:
    r = _serq(["plot", table.name, "--x", x, "--y", y, "-o", "p.svg"], table.parent)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_member_absent_at_two_points(table):
    said = _plot(table, "R", "stages.gpu[2].utilisation")
    assert said == (f"warning: --y stages.gpu[2].utilisation: {ABSENT}R=1 no value in its 2 runs (left out of its "
                    "line), absent from them; R=2 no value in its 2 runs (left out of its line), absent from them\n")
    assert "no sample" not in said


def test_member_absent_at_one_point_against_a_figure(table):
    said = _plot(table, "observes.response.mean", "stages.gpu[1].utilisation")
    assert said == (f"warning: --y stages.gpu[1].utilisation: {ABSENT}R=1 no value in its 2 runs (left out of its "
                    "line), absent from them\n")


def test_member_of_every_point_warns_of_nothing(table):
    assert _plot(table, "R", "stages.gpu[0].utilisation") == ""
