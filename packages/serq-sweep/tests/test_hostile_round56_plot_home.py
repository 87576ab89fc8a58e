"""`serq plot` under a home that is unusable: matplotlib made `~/.config/matplotlib` and `~/.cache/matplotlib` with
every folder above them, so `HOME=/nonexistent` (a system user's home, which must never exist) was made by a
command run as root, and a home it could not use was a warning of its temporary cache on stderr. serQ makes no
folder the user did not name: there matplotlib is given a temporary folder (MPLCONFIGDIR), removed when the
command ends, and says nothing; a usable home's folders are matplotlib's own, left to it (docs/sweep.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import serq_sweep

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
PNG = b"\x89PNG\r\n\x1a\n"


def _plot(tmp_path, home, out):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MPL"))}
    env |= {"HOME": str(home), "TMPDIR": str(tmp_path / "tmp")}
    return subprocess.run([sys.executable, "-m", "serq", "plot", "t.csv", "--x", "rate", "--y", "y.mean", "-o", out],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    serq_sweep.sweep(str(tmp_path / "p.sq"), sets={"rate": [1, 1.5]}, seeds=[1, 2], workers=0, progress=False,
                     out=str(tmp_path / "t.csv"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "a file").write_text("")
    return tmp_path


@pytest.mark.parametrize("home", ["missing/home", "a file"])
def test_an_unusable_home_is_not_made_and_nothing_is_said(folder, home):
    before = sorted(os.listdir(folder))
    r = _plot(folder, folder / home, "f.png")
    assert (r.returncode, r.stderr, r.stdout) == (0, "", "")
    assert (folder / "f.png").read_bytes().startswith(PNG)
    assert sorted(os.listdir(folder)) == sorted([*before, "f.png"])  # no home made, nothing beside
    assert os.listdir(folder / "tmp") == []  # the temporary folder removed


def test_the_system_users_home_is_not_made(folder):
    if os.path.lexists("/nonexistent"):  # (the case is that name's not existing)
        pytest.fail("/nonexistent exists on this machine")
    try:
        r = _plot(folder, "/nonexistent", "g.png")
        assert (r.returncode, r.stderr) == (0, "")
        assert not os.path.lexists("/nonexistent")
    finally:
        if os.path.isdir("/nonexistent") and os.getuid() == 0:
            import shutil

            shutil.rmtree("/nonexistent")  # (what a failure made: not left on the machine)
    assert os.listdir(folder / "tmp") == []


def test_a_usable_home_keeps_matplotlibs_own_folders(folder):
    (folder / "home").mkdir()
    r = _plot(folder, folder / "home", "h.png")
    assert (r.returncode, r.stderr) == (0, "")
    assert (folder / "home" / ".cache" / "matplotlib").is_dir()  # matplotlib's cache, where it keeps it
    assert os.listdir(folder / "tmp") == []
