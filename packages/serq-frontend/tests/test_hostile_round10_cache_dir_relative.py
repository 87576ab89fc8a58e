"""A relative ``SERQ_CACHE_DIR`` makes no cache folder in the folder serq runs in: the caches are off, said.

``SERQ_CACHE_DIR=rel`` made ``./rel`` in whatever folder serq ran in (a program's folder someone sent
included), a folder deciding what later compiles read, and ``SERQ_CACHE_DIR=~/cache`` set where no shell
expands ``~`` (a unit file, a ``.env`` file) a folder named ``~`` there, which a later ``rm -rf ~`` takes for
the home. A relative ``XDG_CACHE_HOME`` or ``HOME`` was already ignored (test_hostile_round3_cache_dir.py);
a relative ``SERQ_CACHE_DIR`` now turns both caches off with one warning (serq_frontend.cache).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _check(cwd: Path, value: str) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}, "SERQ_CACHE_DIR": value}
    return subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("value", ["rel", "~/cache", "./c/d"])
def test_a_relative_serq_cache_dir_makes_no_folder_here(tmp_path, value):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _check(tmp_path, value)
    assert r.returncode == 0 and r.stdout.startswith("OK: "), r.stderr
    assert r.stderr == (f"serq: warning: SERQ_CACHE_DIR is '{value}', not an absolute path: the caches are off (a "
                        "relative folder would be made in whatever folder serq runs in)\n")
    assert sorted(os.listdir(tmp_path)) == ["p.sq"]


@pytest.mark.timeout(120)
def test_an_absolute_serq_cache_dir_is_used(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _check(tmp_path, str(tmp_path / "cache"))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert any(f.startswith("compile-") for f in os.listdir(tmp_path / "cache"))
