"""A command run in a current folder that no longer exists (removed, or renamed away, while a shell was in
it): every relative path made absolute (``os.path.abspath``, ``realpath``) asks for the current folder, and
that is an OSError naming no file. ``serq run ../p.sq -o ../r.json`` (an output checked by its absolute
path), ``--records``, ``--dump``, ``serq sweep -o``, ``serq plot -o``, a program whose workload replays a
trace or that uses a library each ended in a Python traceback. It is one message saying why and what to
do, status 1, and nothing written."""

from __future__ import annotations

import subprocess
import sys

import pytest
from host_helpers import BIN

pytestmark = pytest.mark.timeout(120)

PROGRAM = ("stage svc : fifo;\nworkload { arrive poisson(1); }\nsession { set t0 = now; run svc (1); "
           "observe r = now - t0; end; }\nrun { horizon 20; }\n")
MESSAGE = ("error: the current folder no longer exists (it was removed or renamed while in use); cd to a folder "
           "that exists: without it a relative path cannot be resolved, nor worker processes started")


def _in_removed_folder(tmp_path, *args: str, module: bool = False) -> subprocess.CompletedProcess:
    """``serq ARGS`` (``python -m serq ARGS`` with ``module``) run in ``tmp_path/gone``, removed before
    serq starts (its paths relative to it)."""
    (tmp_path / "gone").mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    command = [sys.executable, "-m", "serq"] if module else [str(BIN / "serq")]
    return subprocess.run(["sh", "-c", script, "sh", str(tmp_path / "gone"), *command, *args],
                          capture_output=True, text=True, timeout=100)


@pytest.mark.parametrize("output", [("-o", "../r.json"), ("--dump", "../out")])
def test_an_output_by_a_relative_path_is_one_message(tmp_path, output):
    (tmp_path / "p.sq").write_text(PROGRAM)
    if output[0] == "--dump":
        (tmp_path / "out").mkdir()
    r = _in_removed_folder(tmp_path, "run", "../p.sq", "--no-progress", *output)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 1
    assert r.stderr.splitlines() == [MESSAGE]
    assert not (tmp_path / "r.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["p.sq"] + (["out"] if output[0] == "--dump" else []))


def test_a_program_given_in_full_runs_there(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _in_removed_folder(tmp_path, "run", str(tmp_path / "p.sq"), "--no-progress", "-o", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.json").read_text().startswith("{")


def test_python_m_serq_starts_there(tmp_path):
    # python -m serq took its first sys.path entry off by comparing it with os.getcwd(): a traceback
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _in_removed_folder(tmp_path, "run", "../p.sq", "--no-progress", "-o", str(tmp_path / "r.json"), module=True)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.json").read_text().startswith("{")
