"""An output named under a file (``-o p.sq/x.csv``: the system's "Not a directory") is refused before any
work as an output in a folder that does not exist is, ``error: p.sq/x.csv: no folder p.sq to write it in``,
status 1, by every command and by serq.files.check_output: serq.files._stat passed the system's error on,
so ``serq run -o``, ``serq compare -o`` and ``serq plot -o`` said "p.sq/x.csv: Not a directory" where
``serq sweep -o`` (which looks for the folder first) said the words above."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.files import OutputError, check_output

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { set t0 = now; run s (a); observe y = now - t0; record r { x = now; } }
run { horizon 5; seed 1; }
"""


def _serq(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=folder, timeout=100,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text("point,a,seed,status,message,warnings,key,events,observes.y.mean\n"
                                    "0,1,1,ok,,,k1,4,1.0\n1,2,1,ok,,,k2,4,2.0\n")
    return tmp_path


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(("args", "output"), [
    (("run", "p.sq", "-o", "p.sq/x.txt"), "p.sq/x.txt"),
    (("run", "p.sq", "--records", "p.sq/x.csv"), "p.sq/x.csv"),
    (("run", "p.sq", "-o", "p.sq/deeper/x.txt"), "p.sq/deeper/x.txt"),
    (("sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "p.sq/x.csv"), "p.sq/x.csv"),
    (("compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "-o", "p.sq/x.csv"), "p.sq/x.csv"),
    (("plot", "t.csv", "--x", "a", "--y", "y.mean", "-o", "p.sq/x.svg"), "p.sq/x.svg"),
])
def test_an_output_under_a_file_is_refused_before_the_work(folder, args, output):
    if args[0] in ("sweep", "compare"):
        pytest.importorskip("serq_sweep")
    if args[0] == "plot":
        pytest.importorskip("matplotlib")
    before = _files(folder)
    r = _serq(folder, *args)
    folder_of = output.rsplit("/", 1)[0]
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert r.stderr == f"error: {output}: no folder {folder_of} to write it in\n"
    assert _files(folder) == before and (folder / "p.sq").read_text() == PROGRAM


def test_check_output_says_it_too(folder):
    with pytest.raises(OutputError) as info:
        check_output(str(folder / "p.sq" / "x.csv"))
    assert str(info.value) == f"error: {folder / 'p.sq' / 'x.csv'}: no folder {folder / 'p.sq'} to write it in"
