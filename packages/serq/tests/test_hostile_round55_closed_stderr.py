"""A command started with standard error closed (`serq run p.sq 2>&-`): Python gives it no ``sys.stderr``
(None), and the run's check whether its progress bar has a terminal (``sys.stderr.isatty()``) was an
``AttributeError`` on None: `serq run p.sq 2>&-` printed no report and ended with status 1, its traceback
lost with standard error. The host now holds the null device at descriptor 2 and gives the command a
standard error that drops what is said there (as a full one does, ``serq.cli._Diagnostics``): the report and
the status are those of a command with a working stderr, a compile's warning and the cache folder's too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; end; }\nrun { horizon 20; seed 3; }\n")
# a statement after `end;` is a compile warning (docs/language.md: it never runs)
WARNED = PROGRAM.replace("end; }", "end; observe z = 1; }")


def _closed_stderr() -> None:
    os.close(2)


def _serq(cwd: Path, *args: str, closed: bool, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=None if closed else subprocess.PIPE, text=True, timeout=120,
                          preexec_fn=_closed_stderr if closed else None, env=env)


def test_a_run_with_stderr_closed_prints_its_report(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "w.sq").write_text(WARNED)
    want = _serq(tmp_path, "run", "p.sq", closed=False)
    assert want.returncode == 0 and want.stdout.startswith("run: horizon 20  end 20")
    # the progress bar asks whether standard error is a terminal
    r = _serq(tmp_path, "run", "p.sq", closed=True)
    assert (r.returncode, r.stdout) == (0, want.stdout)
    # a compile warning is said on standard error: dropped, the run goes on
    warned = _serq(tmp_path, "run", "w.sq", "--no-progress", closed=False)
    assert warned.returncode == 0 and "warning: this statement never runs" in warned.stderr
    r = _serq(tmp_path, "run", "w.sq", "--no-progress", closed=True)
    assert (r.returncode, r.stdout) == (0, warned.stdout)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "w.sq"]


def test_the_cache_folder_warning_and_errors_with_stderr_closed(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    env = dict(os.environ, SERQ_CACHE_DIR="relative")  # a relative folder: warned of, the caches off
    want = _serq(tmp_path, "check", "p.sq", closed=False, env=env)
    assert want.returncode == 0 and "warning: SERQ_CACHE_DIR is 'relative'" in want.stderr
    r = _serq(tmp_path, "check", "p.sq", closed=True, env=env)
    assert (r.returncode, r.stdout) == (0, want.stdout)
    # a mistake keeps its status, a usage error its own
    (tmp_path / "bad.sq").write_text("stage s : fifo\n")
    assert _serq(tmp_path, "run", "bad.sq", closed=True).returncode == 1
    assert _serq(tmp_path, "run", "p.sq", "--horizon", "x", closed=True).returncode == 2
    assert not (tmp_path / "relative").exists()
