"""``serq sweep --find … --over NAME LO:HI`` bisects between LO and HI: it evaluates a few dozen values
however far apart they are. The range was read as a grid of step 1 first (to take its ends), so LO and HI
more than a million units apart (``--over B 1:4000000``, a token budget) were refused as "4000000 values,
more than 1000000"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let d = 1;\nstage s : fifo;\nworkload { arrive poisson(1); }\n"
           "session { set t0 = now; run s (1 / d); observe response = now - t0; end; }\nrun { horizon 200; }\n")


def _find(cwd: Path, over: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "sweep", "p.sq", "--find", "response.mean > 0.5", "--over", "d", over,
                           "--workers", "0", "--no-progress"], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_a_wide_bisection_range_is_searched(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _find(tmp_path, "1:4000000")
    assert r.returncode == 0, r.stderr
    assert "found" in r.stdout and "values, more than" not in r.stderr


@pytest.mark.parametrize("over, message", [
    ("5:1", "error: --over d 5:1: LO must be below HI, both finite\n"),
    ("0:inf", "error: --over d 0:inf: LO must be below HI, both finite\n"),
    ("nan:1", "error: --over d: NaN is not a value to sweep\n"),
    ("x:1", "error: --over d: 'x' is not a number\n"),
    ("1:2:3:4", "error: --over d 1:2:3:4: a range LO:HI or LO:HI:STEP\n"),
    ("1:4000000:1", "error: --over d: '1:4000000:1': 4000000 values, more than 1000000\n"),  # a grid is bounded
])
def test_a_bad_range_is_one_message(tmp_path, over, message):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _find(tmp_path, over)
    assert r.returncode == 2 and r.stdout == "" and r.stderr == message, r.stderr  # a usage error
