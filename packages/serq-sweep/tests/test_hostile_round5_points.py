"""A value given twice to a sweep (``--set B=512,512``, ``--set B=512 --set B=512``, a list and a range that
meet, a ``--def`` body given twice) is refused, naming the point, as a seed given twice and a program given
twice are.

It made two points of one run: two rows of one key in the table, which ``serq plot --x B`` took for two
seeds at that value (its CI narrowed by a factor of about 1.4 with nothing new measured), and ``--show``
printed the point twice. So did one program by two paths (``serq sweep p.sq ./p.sq``, a link). Points that
differ in a zipped name are no such pair, ``-0`` and ``0`` are two
constants (1/x tells them apart), and ``serq compare``'s arms may repeat: ``--set x=0,0`` is an A/A
comparison (test_audit_stats.py), every difference exactly 0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep.axes import Axis, points

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lam = 0.5;
let k = 1;
def svc() = ~exp(1);
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (k * svc()); observe response = now - t0; }
run { horizon 20; seed 1; }
"""


def _serq(tmp_path: Path, *args: str, here=None) -> subprocess.CompletedProcess:
    """``serq ARGS --workers 0 --no-progress`` in ``tmp_path``, as a child process; given ``here``
    (serq_in_process), serq.cli.main in the test's process, in that folder, for a test of what is said."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args, "--workers", "0", "--no-progress")
    return subprocess.run([SERQ, *args, "--workers", "0", "--no-progress"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, label", [
    (["--set", "lam=0.3,0.30"], "lam=0.3"),
    (["--set", "lam=0.3", "--set", "lam=0.3"], "lam=0.3"),
    (["--set", "lam=0.1:0.3:0.1", "--set", "lam=0.2"], "lam=0.2"),
    (["--def", "svc=~exp(2)", "--def", "svc=~exp(2)"], "svc=~exp(2)"),
    (["--set", "lam=0.3,0.4", "--set", "k=1,2,1"], "lam=0.3, k=1"),
])
def test_a_point_given_twice_is_refused_before_any_run(tmp_path, serq_in_process, args, label):
    here = None if args == ["--set", "lam=0.3,0.30"] else serq_in_process  # (the first case as a child process)
    for command in (["sweep", "p.sq", "-o", "t.csv"], ["sweep", "p.sq", "--show", "response.mean"]):
        r = _serq(tmp_path, *command, *args, here=here)
        assert r.returncode == 2, r.stderr  # a usage error
        assert r.stderr == (f"error: the point {label} is given twice (a value given twice runs the same runs "
                            "twice); give each value once\n")
        assert r.stdout == "" and not (tmp_path / "t.csv").exists()


def test_compare_may_compare_an_arm_with_itself(tmp_path):
    r = _serq(tmp_path, "compare", "p.sq", "--seeds", "1..3", "--set", "lam=0.3,0.3", "--figure", "response.mean")
    assert r.returncode == 0, r.stderr
    assert "lam=0.3 - lam=0.3, paired over 3 seeds" in r.stdout


def test_values_that_differ_still_sweep(tmp_path):
    r = _serq(tmp_path, "sweep", "p.sq", "--set", "lam=0.1:0.3:0.1", "--set", "lam=0.4", "--zip", "lam,k",
              "--set", "k=1,1,2,2", "--def", "svc=~exp(1)", "--def", "svc=~exp(2)")
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()[1:]
    assert [row.split(",")[1:4] for row in rows] == [
        ["0.1", "1", "~exp(1)"], ["0.1", "1", "~exp(2)"], ["0.2", "1", "~exp(1)"], ["0.2", "1", "~exp(2)"],
        ["0.3", "2", "~exp(1)"], ["0.3", "2", "~exp(2)"], ["0.4", "2", "~exp(1)"], ["0.4", "2", "~exp(2)"]]
    assert len({row.split(",")[8] for row in rows}) == len(rows)  # a key a row


def test_the_rule_is_on_the_points():
    with pytest.raises(UserError, match="the point x=1 is given twice"):
        points([Axis("x", "set", (1.0, 2.0, 1.0))])
    assert points([Axis("x", "set", (-0.0, 0.0))]) == [{"x": -0.0}, {"x": 0.0}]
    assert points([Axis("x", "set", (1.0, 1.0))], repeat=True) == [{"x": 1.0}, {"x": 1.0}]
    assert points([Axis("x", "set", (1.0, 1.0)), Axis("y", "set", (1.0, 2.0))], [["x", "y"]]) == [
        {"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 2.0}]


def test_one_program_by_two_paths_is_given_twice(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "q.sq").symlink_to("p.sq")
    for other in ("./p.sq", "q.sq"):
        r = _serq(tmp_path, "sweep", "p.sq", other, here=serq_in_process)
        assert r.returncode == 2, r.stderr  # a usage error
        assert r.stderr == f"error: the programs of a sweep are given twice: p.sq and {other} are one file\n"
    r = _serq(tmp_path, "compare", "p.sq", "./p.sq", "--seeds", "1..2")  # an A/A comparison
    assert r.returncode == 0, r.stderr
