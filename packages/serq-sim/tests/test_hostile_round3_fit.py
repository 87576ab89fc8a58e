"""serq fit on step traces with hostile values: one message or a fit, never a traceback nor LAPACK's words.

Values below 1e-154 (finite, not negative, so the file is valid) have squares that underflow: the column's
norm was 0, the scaled column infinite, and the fit ended in LAPACK's ``** On entry to DLASCL parameter
number 4 had an illegal value`` on stderr and a ``numpy.linalg.LinAlgError`` traceback (``SVD did not
converge``), after numpy's ``RuntimeWarning: divide by zero``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")


def _steps(n: int = 20, kv_unit: float = 1.0) -> list[dict]:
    rng = random.Random(2)
    out = []
    for _ in range(n):
        d, p, kv, at = rng.randint(0, 50), rng.randint(0, 2000), rng.randint(0, 10**5), rng.randint(0, 10**6)
        out.append({"decoders": d, "kv_decode": kv * kv_unit, "prefilled": p, "attention": at,
                    "time": 0.01 + 0.001 * d + kv * 1e-7 + p * 1e-5 + at * 1e-9})
    return out


def _fit(tmp_path: Path, steps: list[dict]) -> subprocess.CompletedProcess:
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    return subprocess.run([SERQ, "fit", "s.jsonl"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_subnormal_values_fit_or_say_why(tmp_path):
    # the five steps of one row each: every value tiny or huge but finite
    steps = [{"decoders": 1e154, "kv_decode": 1e-320, "prefilled": 1e-300, "attention": 1e150, "time": 5e-324},
             {"decoders": 2e-320, "kv_decode": 1e-320, "prefilled": 3e-320, "attention": 1e-320, "time": 1e-320},
             {"decoders": 1e-320, "kv_decode": 5e-320, "prefilled": 1e-320, "attention": 1e-320, "time": 1e-320},
             {"decoders": 1e-320, "kv_decode": 1e-320, "prefilled": 1e-320, "attention": 7e-320, "time": 1e-320},
             {"decoders": 4e-320, "kv_decode": 1e-320, "prefilled": 1e-320, "attention": 1e-320, "time": 3e-320}]
    for some in (steps[1:], steps):
        r = _fit(tmp_path, some)
        assert "Traceback" not in r.stderr and "DLASCL" not in r.stderr and "Warning" not in r.stderr, r.stderr
        if r.returncode == 0:
            assert r.stdout.startswith("fit: ") and r.stderr == ""
        else:
            assert r.returncode == 1 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr


def test_a_term_too_small_beside_the_times_is_one_message(tmp_path):
    r = _fit(tmp_path, _steps(kv_unit=1e-320))
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr == ("s.jsonl: error: the coefficient e of kv_decode is beyond the range of a float: the values of "
                        "kv_decode are too small beside the times to fit\n")


def test_tiny_but_fittable_values_fit(tmp_path):
    # values below 1e-154 whose coefficient is a float: fitted (the norm taken in units of the largest value)
    r = _fit(tmp_path, _steps(kv_unit=1e-160))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    e = float(next(line.split()[1] for line in r.stdout.splitlines() if line.startswith("e ")))
    assert e == pytest.approx(1e-7 / 1e-160, rel=1e-6)
