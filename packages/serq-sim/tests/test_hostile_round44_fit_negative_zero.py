"""``serq fit``: the least-squares solve gives a term the times do not depend on a coefficient of -0.0 where
the times are subnormal (1e-320 s and its multiples), and the fit printed it: ``-0.0 * prefilled`` in the
profile's definition and ``"a": -0.0`` in ``--json``, for a cost that is at least 0. Every coefficient
is now printed without the sign."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from serq_sim.fit import fit_steps

SERQ = str(Path(sys.executable).parent / "serq")


def _steps() -> list[dict]:
    # time = 1e-320 + 1e-320 * decoders: c = d = 1e-320, e = a = b = 0 exactly
    out = []
    for i in range(40):
        d, kv, p, at = i % 7 + 1, (i * 37) % 1000 + 1, (i * 13) % 101, (i * 53) % 5001
        out.append({"decoders": d, "kv_decode": kv, "prefilled": p, "attention": at, "time": 1e-320 * (1 + d)})
    return out


def test_no_coefficient_is_negative_zero():
    rows = [(s["decoders"], s["kv_decode"], s["prefilled"], s["attention"], s["time"]) for s in _steps()]
    fit = fit_steps(rows)
    for name, v in fit.coefficients.items():
        assert math.copysign(1.0, v) == 1.0, (name, v)
    assert fit.coefficients["e"] == fit.coefficients["a"] == fit.coefficients["b"] == 0.0
    # the two the times depend on, to the subnormal quantum (5e-324) of the times
    assert abs(fit.coefficients["c"] - 1e-320) <= 1e-322
    assert abs(fit.coefficients["d"] - 1e-320) <= 1e-322


def test_the_profile_and_the_json_print_no_negative_zero(tmp_path):
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in _steps()))
    r = subprocess.run([SERQ, "fit", "s.jsonl"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    definition = r.stdout.strip().splitlines()[-1]
    assert definition.startswith("def fitted() = ")
    assert "-0.0" not in r.stdout
    assert "0.0 * kv_decode + 0.0 * prefilled + 0.0 * attention;" in definition
    r = subprocess.run([SERQ, "fit", "s.jsonl", "--json"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    for name, v in doc["sum"].items():
        assert math.copysign(1.0, v) == 1.0, (name, v)
