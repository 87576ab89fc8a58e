"""What ``serq compare --help`` and ``serq plot --help`` say of their exit statuses (they said none; ``serq run``
and ``serq sweep`` do) is what each command does: 0, 1 for an error in what it reads (a program's, a run's,
what a table holds, a file it cannot read), 2 for a usage error (a flag, a picture's suffix)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let a = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
           "session {\n  set t0 = now;\n  run s (a > 1.5 ? -1 : a);\n  observe w = now - t0;\n  end;\n}\n"
           "run { horizon 5; seed 1; }\n")


def _serq(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=folder, timeout=50,
                          stdin=subprocess.DEVNULL)


def _said(command: str) -> str:
    r = _serq(Path("."), command, "--help")
    assert r.returncode == 0
    return " ".join(r.stdout.split())


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return tmp_path


def test_compare(folder):
    assert ("Exit status: 0; 1 for an error in a program or its inputs, or when a run failed (the first failure "
            "is said); 2 for a usage error; 130 on Ctrl-C, 143 on SIGTERM and 129 on SIGHUP.") in _said("compare")
    base = ["compare", "p.sq", "--seeds", "1..2", "--workers", "0", "--no-progress"]
    assert _serq(folder, *base, "--set", "a=1,1.2").returncode == 0
    failed = _serq(folder, *base, "--set", "a=1,2")
    assert failed.returncode == 1 and "the work is negative" in failed.stderr
    assert _serq(folder, *base, "--set", "a=1,1.2", "--no-such-flag").returncode == 2
    assert _serq(folder, "compare", "p.sq", "nope.sq").returncode == 1  # (a program it cannot read: an input)


def test_plot(folder):
    pytest.importorskip("matplotlib")
    assert ("Exit status: 0; 1 for an error in what SOURCE holds (a name or figure it has not, a cell that is no "
            "number, nothing to draw) or a SOURCE that cannot be read (one that does not exist); 2 for a usage "
            "error (a flag, -o of no picture's suffix); 130 on Ctrl-C, 143 on SIGTERM and 129 on SIGHUP. Nothing is "
            "written but on success.") in _said("plot")
    r = _serq(folder, "sweep", "p.sq", "--set", "a=1,1.2", "--seeds", "1..2", "--workers", "0", "--no-progress",
              "-o", "t.csv")
    assert r.returncode == 0, r.stderr
    assert _serq(folder, "plot", "t.csv", "--x", "a", "--y", "w.mean", "-o", "ok.svg").returncode == 0
    for args in (["--x", "a", "--y", "nosuch.mean"], ["--x", "b", "--y", "w.mean"]):
        r = _serq(folder, "plot", "t.csv", *args, "-o", "no.svg")
        assert r.returncode == 1, r.stderr
    for source, out, status in (("nope.csv", "no.svg", 1), ("t.csv", "no.txt", 2)):
        r = _serq(folder, "plot", source, "--x", "a", "--y", "w.mean", "-o", out)
        assert r.returncode == status, r.stderr
    assert sorted(p.name for p in folder.iterdir() if p.suffix in (".svg", ".txt")) == ["ok.svg"]
