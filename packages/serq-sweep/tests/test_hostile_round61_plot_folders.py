"""`serq plot` where matplotlib's configuration or cache folder cannot be made or written, under a home (or an
``XDG_…_HOME``) that looks usable: an ``XDG_CACHE_HOME`` or ``XDG_CONFIG_HOME`` naming a file, a folder under which
no folder is made (``HOME=/proc``, ``/sys``), one this user may not write. matplotlib said so on stderr, two lines of
its own (``mkdir -p failed for path /etc/passwd/matplotlib: [Errno 20] Not a directory`` and ``Matplotlib created a
temporary cache directory at /tmp/matplotlib-… it is highly recommended to set the MPLCONFIGDIR …``), where an
unusable home (round 56) was already given a temporary folder and nothing said. The folders matplotlib would use are
now made here as it makes them (``mkdir -p``), and one that cannot be is a temporary folder's, removed at the end.
Truth: matplotlib's own rule of its folders (``$XDG_CONFIG_HOME/matplotlib`` or ``~/.config/matplotlib``, and the
cache's likewise), the files here made by hand."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import serq_sweep
from serq_sweep import plots

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
PNG = b"\x89PNG\r\n\x1a\n"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="matplotlib's XDG folders are Linux's")


@pytest.fixture
def unplotted(monkeypatch, tmp_path):
    """``plots._matplotlib_folder`` as before matplotlib's first import, in an environment of the test's: no
    ``MPLCONFIGDIR`` or XDG folder given, ``HOME`` a usable folder of the test's."""
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)  # (restored after the test)
    for name in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, "")  # (so that what the call sets is undone after the test too)
        monkeypatch.delenv(name)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "a file").write_text("mine\n")
    return tmp_path


def _temporary(folder: str | None) -> bool:
    return folder is not None and os.path.basename(folder).startswith("serq-matplotlib-") and os.path.isdir(folder)


@linux
@pytest.mark.parametrize("name", ["XDG_CACHE_HOME", "XDG_CONFIG_HOME"])
def test_a_base_that_is_a_file_gets_a_temporary_folder(unplotted, monkeypatch, name):
    monkeypatch.setenv(name, str(unplotted / "a file"))
    plots._matplotlib_folder()
    assert _temporary(os.environ.get("MPLCONFIGDIR"))
    assert (unplotted / "a file").read_text() == "mine\n"


@linux
def test_a_base_this_user_may_not_write_gets_a_temporary_folder(unplotted, monkeypatch):
    locked = unplotted / "locked"
    locked.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(locked))
    real_access = os.access
    # (root writes any folder: the folder matplotlib would make is said not writable, as it is to a user)
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p).startswith(str(locked)) else real_access(p, mode))
    plots._matplotlib_folder()
    assert _temporary(os.environ.get("MPLCONFIGDIR"))


@linux
def test_usable_folders_are_matplotlibs_own(unplotted, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(unplotted / "cache"))  # absolute, not there yet: made, as matplotlib would
    plots._matplotlib_folder()
    assert "MPLCONFIGDIR" not in os.environ
    assert (unplotted / "cache" / "matplotlib").is_dir()
    assert (unplotted / "home" / ".config" / "matplotlib").is_dir()


def test_a_plot_says_nothing_of_it(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    serq_sweep.sweep(str(tmp_path / "p.sq"), sets={"rate": [1, 1.5]}, seeds=[1, 2], workers=0, progress=False,
                     out=str(tmp_path / "t.csv"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "a file").write_text("mine\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MPL"))}
    env |= {"HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp"), "XDG_CACHE_HOME": str(tmp_path / "a file")}
    r = subprocess.run([sys.executable, "-m", "serq", "plot", "t.csv", "--x", "rate", "--y", "y.mean", "-o", "f.png"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", "")
    assert (tmp_path / "f.png").read_bytes().startswith(PNG)
    assert os.listdir(tmp_path / "tmp") == []  # the temporary folder removed
    assert (tmp_path / "a file").read_text() == "mine\n"
