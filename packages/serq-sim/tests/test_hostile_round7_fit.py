"""``serq fit``: a step whose time is too short for an error relative to it (a denormal, 1e-320 s) said "the
fitted times are beyond the range of a float (values of too different magnitudes to fit)", though the fit
was finite: only that step's relative error overflowed. The message names the step, its time and the
fitted time beside it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sim.fit import fit_steps

SERQ = str(Path(sys.executable).parent / "serq")


def _steps(n: int = 40) -> list[dict]:
    rnd = random.Random(7)
    out = []
    for _ in range(n):
        d, p, kv, at = rnd.randint(0, 30), rnd.randint(0, 500), rnd.randint(0, 5000), rnd.randint(0, 100000)
        out.append({"decoders": d, "kv_decode": kv, "prefilled": p, "attention": at,
                    "time": 0.01 + 1e-4 * d + 5e-5 * p + 1e-7 * kv + rnd.random() * 1e-4})
    return out


@pytest.mark.parametrize(("index", "time"), [(0, 1e-320), (2, 5e-324), (11, 1e-310)])
def test_a_time_too_short_for_a_relative_error_is_named(tmp_path, index, time):
    steps = _steps()
    steps[index]["time"] = time
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    r = subprocess.run([SERQ, "fit", "s.jsonl"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stdout
    nth = {0: "1st", 2: "3rd", 11: "12th"}[index]
    assert r.stderr.startswith(f"s.jsonl: error: the {nth} step's time, {time!r} s, is too short for an error "
                               "relative to it (beside the fitted "), r.stderr
    assert r.stderr.endswith(" s, beyond the range of a float): a time is in seconds\n")
    assert "too different magnitudes" not in r.stderr


def test_the_fit_of_ordinary_times_is_as_it_was():
    steps = [tuple(float(s[k]) for k in ("decoders", "kv_decode", "prefilled", "attention", "time")) for s in _steps()]
    fit = fit_steps(steps, "x")
    assert abs(fit.coefficients["d"] - 1e-4) < 2e-5 and fit.steps == 40
    steps[0] = (*steps[0][:4], 1e-320)
    with pytest.raises(UserError, match="the 1st step's time, 1e-320 s"):
        fit_steps(steps, "x")
