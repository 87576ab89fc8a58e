"""A cache folder's entry that is not a regular file (a FIFO, a symbolic link): the read opened a FIFO
waiting for a writer, and the rebuilt entry was written through it (waiting for a reader), so every serq
command hung; a symbolic link was followed by the write, which replaced the file it named with the cache's
bytes. Such an entry is a miss, never waited for, and is replaced by a regular file of the cache's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and links (POSIX)")

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"


def _check(tmp_path: Path, folder: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SERQ_COMPILE_CACHE"}
    try:
        return subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                              env={**env, "SERQ_CACHE_DIR": str(folder)}, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail("serq check waited on an entry of its cache folder")


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_an_entry_that_is_not_a_regular_file_is_a_miss_and_is_replaced(tmp_path, kind):
    (tmp_path / "p.sq").write_text(PROGRAM)
    folder = tmp_path / "cache"
    assert _check(tmp_path, folder).returncode == 0
    entries = sorted(folder.iterdir())
    assert {e.name.split("-")[0] for e in entries} == {"lalr", "compile"}
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    for e in entries:
        e.unlink()
        if kind == "fifo":
            os.mkfifo(e)
        else:
            e.symlink_to(victim)
    r = _check(tmp_path, folder)
    assert r.returncode == 0 and r.stdout.startswith("OK:"), r.stderr
    assert victim.read_text() == "mine\n"
    for e in entries:
        assert e.is_file() and not e.is_symlink(), e
        assert (e.stat().st_mode & 0o777) == 0o600
    again = _check(tmp_path, folder)
    assert again.returncode == 0 and again.stdout == r.stdout
