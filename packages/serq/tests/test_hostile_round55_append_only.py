"""An append-only file or folder (Linux's `chattr +a`) where a command writes. A file that may only be
appended to is writable, so it passed the checks before the work; but serq writes a file whole, as a new
file renamed over it, and the rename was refused after the work (`serq run -o` ran the program, `serq
compare -o` every arm), the error naming serq's temporary file (`.app.txt.1ab32eb9.tmp: Operation not
permitted`), a name the user never gave. In an append-only folder the file made there could be neither
renamed nor removed: each try left a temporary file behind, the compile cache's too. Both are now refused
before the work, naming the output, and nothing is made."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
# its run fails at t=0 (a negative work): an output refused before the run is said instead
FAILS = ("let x = 1;\nstage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (x - 1.5 + now); }\n"
         "run { horizon 5; }\n")
RUNS = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
FOLDER = ("cannot create a file in its folder d (the folder is append-only, chattr +a: a file made there can be "
          "neither renamed nor removed); serq writes a file whole or not at all, as a new file in its folder "
          "renamed over it")


def _chattr(flag: str, *paths: Path) -> bool:
    return subprocess.run(["chattr", flag, *map(str, paths)], capture_output=True, timeout=30).returncode == 0


def _can_append_only() -> bool:
    """Whether this user may set the flag on a file of the test's file system (root, on ext4 or xfs)."""
    if shutil.which("chattr") is None or not sys.platform.startswith("linux"):
        return False
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "f"
        f.write_text("x")
        ok = _chattr("+a", f)
        if ok:
            _chattr("-a", f)
        return ok


pytestmark = pytest.mark.skipif(not _can_append_only(), reason="chattr +a needs root and a file system with flags")


def _serq(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.mark.parametrize("args, name", [
    (["run", "f.sq", "--no-progress", "-o", "app.txt"], "app.txt"),
    (["compare", "f.sq", "--set", "x=1,2", "--workers", "0", "--no-progress", "-o", "app.csv"], "app.csv"),
])
def test_an_append_only_output_is_refused_before_the_work(tmp_path, args, name):
    (tmp_path / "f.sq").write_text(FAILS)
    (tmp_path / name).write_text("kept\n")
    assert _chattr("+a", tmp_path / name)
    try:
        r = _serq(tmp_path, *args)
    finally:
        _chattr("-a", tmp_path / name)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: {name}: the file is append-only (chattr +a), and serq writes a file whole, as a "
                        "new file renamed over it, which such a file refuses (clear the flag, or choose another "
                        "output)\n")
    assert (tmp_path / name).read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["f.sq", name])


def test_an_append_only_folder_takes_no_output_and_no_cache_entry(tmp_path):
    (tmp_path / "f.sq").write_text(FAILS)
    (tmp_path / "p.sq").write_text(RUNS)
    d = tmp_path / "d"
    d.mkdir(mode=0o700)
    assert _chattr("+a", d)
    try:
        r = _serq(tmp_path, "run", "f.sq", "--no-progress", "-o", "d/x.txt")
        c = _serq(tmp_path, "compare", "f.sq", "--set", "x=1,2", "--workers", "0", "--no-progress", "-o", "d/c.csv")
        env = {k: v for k, v in os.environ.items() if k != "SERQ_COMPILE_CACHE"}
        cached = _serq(tmp_path, "check", "p.sq", env={**env, "SERQ_CACHE_DIR": str(d)})
        left = sorted(os.listdir(d))
    finally:
        _chattr("-a", d)
    assert (r.returncode, r.stderr) == (1, f"error: d/x.txt: {FOLDER}\n")
    assert (c.returncode, c.stderr) == (1, f"error: d/c.csv: {FOLDER}\n")
    # the cache cannot keep an entry there: the compile goes on, and nothing is left in the folder
    assert (cached.returncode, cached.stderr) == (0, "")
    assert cached.stdout == "OK: 0 pool(s), 1 stage(s), 4 attribute(s), 1 block(s)\n"
    assert left == []
