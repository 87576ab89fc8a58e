"""The default cache folder, `~/.cache/serq`, under a home that does not exist or is not a folder: it was
made with every folder above it, the home included, so `HOME=/nonexistent` (a system user's home, which
must never exist) was made by a command run as root, `.cache/serq` in it. A home that is no folder is no
place for a cache: both caches are off, as with no absolute home, and the command is the same. An absolute
`XDG_CACHE_HOME` that does not exist is still made (the XDG base directory specification)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"


def _check(cwd: Path, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("SERQ_CACHE_DIR", "XDG_CACHE_HOME", "SERQ_COMPILE_CACHE")}
    e.update(env)
    return subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=cwd, env=e, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_home_that_is_no_folder_is_not_made(tmp_path, kind):
    (tmp_path / "p.sq").write_text(PROGRAM)
    home = tmp_path / "nonexistent"
    if kind == "file":
        home.write_text("x")
    r = _check(tmp_path, HOME=str(home))
    assert (r.returncode, r.stdout, r.stderr) == (0, "OK: 0 pool(s), 1 stage(s), 4 attribute(s), 1 block(s)\n", "")
    assert sorted(os.listdir(tmp_path)) == (["nonexistent", "p.sq"] if kind == "file" else ["p.sq"])
    if kind == "file":
        assert home.read_text() == "x"


def test_an_existing_home_and_a_missing_xdg_cache_home_are_used(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    home = tmp_path / "home"
    home.mkdir()
    assert _check(tmp_path, HOME=str(home)).returncode == 0
    assert any(f.startswith("compile-") for f in os.listdir(home / ".cache" / "serq"))
    xdg = tmp_path / "not" / "yet"
    assert _check(tmp_path, HOME=str(tmp_path / "nonexistent"), XDG_CACHE_HOME=str(xdg)).returncode == 0
    assert any(f.startswith("compile-") for f in os.listdir(xdg / "serq"))
    assert not (tmp_path / "nonexistent").exists()
