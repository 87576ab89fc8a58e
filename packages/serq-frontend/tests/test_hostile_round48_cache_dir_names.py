"""The compile cache's warnings name its folder and its entries as every message names a file
(serq.errors.shown_path): a name of more than 240 characters cut around '…'.

Before, each was printed whole: SERQ_CACHE_DIR=a/a/…/ of 5 000 characters (relative: the caches off) gave a
warning of 5 198 characters, and a cache folder of a long name that others can write, or an entry of it
that is a folder serq cannot remove, was named in full in its warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import PATH_WIDTH, shown_path

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 10; }\n"


def _check(cwd: Path, value: str) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "SERQ_COMPILE_CACHE")},
           "SERQ_CACHE_DIR": value}
    return subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)


def _long(tmp_path: Path) -> Path:
    return tmp_path / ("c" * 200) / ("d" * 200)


def test_a_long_relative_serq_cache_dir_is_quoted_cut(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    value = "a/" * 2500
    r = _check(tmp_path, value)
    assert r.returncode == 0 and r.stdout.startswith("OK: "), r.stderr
    quoted = repr(value)
    shown = quoted[:PATH_WIDTH // 2] + "…" + quoted[-(PATH_WIDTH // 2 - 1):]
    assert r.stderr == (f"serq: warning: SERQ_CACHE_DIR is {shown}, not an absolute path: the caches are off (a "
                        "relative folder would be made in whatever folder serq runs in)\n"), r.stderr[:400]
    assert sorted(os.listdir(tmp_path)) == ["p.sq"]


@pytest.mark.skipif(os.name != "posix", reason="permission bits")
def test_a_long_cache_folder_others_can_write_is_named_cut(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = _long(tmp_path)
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    r = _check(tmp_path, str(folder))
    assert r.returncode == 0 and r.stdout.startswith("OK: "), r.stderr
    assert r.stderr == (f"serq: warning: not using the cache folder {shown_path(folder)}: it can be written by "
                        "other users (make it your own and not writable by others, or set SERQ_CACHE_DIR to "
                        "another folder)\n"), r.stderr[:400]
    assert str(folder) not in r.stderr
    assert os.listdir(folder) == []


@pytest.mark.skipif(os.name != "posix", reason="permission bits")
def test_an_entry_that_cannot_be_kept_in_a_long_folder_is_named_cut(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = _long(tmp_path)
    r = _check(tmp_path, str(folder))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    entries = [f for f in os.listdir(folder) if f.startswith("compile-")]
    assert len(entries) == 1
    entry = folder / entries[0]
    # the entry replaced by a folder that is not empty: the cache can neither read it nor remove it
    entry.unlink()
    entry.mkdir()
    (entry / "x").write_text("x")
    r = _check(tmp_path, str(folder))
    assert r.returncode == 0 and r.stdout.startswith("OK: "), r.stderr
    assert r.stderr == (f"serq: warning: the cache cannot keep {shown_path(entry)}: a folder that is not empty is "
                        "there and cannot be removed (Directory not empty); remove it, or what it would keep is "
                        "made again at every run\n"), r.stderr[:400]
    assert str(entry) not in r.stderr
