"""The cache folder is never made inside the folder serq runs in by a relative XDG_CACHE_HOME or HOME.

``XDG_CACHE_HOME=rel`` made ``./rel/serq`` (the XDG base directory specification says a relative value is
to be ignored), and ``HOME=relhome`` made ``./relhome/.cache/serq``: a folder of the cache, which decides
what later compiles read, in whatever folder serq ran in (a program's folder someone sent included).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _check(cwd: Path, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("SERQ_CACHE_DIR", "XDG_CACHE_HOME")}
    e.update(env)
    return subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=cwd, env=e, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("env", [{"XDG_CACHE_HOME": "rel"}, {"HOME": "relhome"}])
def test_a_relative_cache_home_makes_no_folder_here(tmp_path, env):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()  # (a home that does not exist is no cache's: test_hostile_round55_cache_home_missing)
    (work / "p.sq").write_text(PROGRAM)
    r = _check(work, **{"HOME": str(home), **env})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert sorted(os.listdir(work)) == ["p.sq"]
    if "XDG_CACHE_HOME" in env:  # ignored: the home's folder is used
        assert any(f.startswith("compile-") for f in os.listdir(home / ".cache" / "serq"))


def test_an_absolute_xdg_cache_home_is_used(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _check(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert r.returncode == 0, r.stderr
    assert any(f.startswith("compile-") for f in os.listdir(tmp_path / "xdg" / "serq"))
