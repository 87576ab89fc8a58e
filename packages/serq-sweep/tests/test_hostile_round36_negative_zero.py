"""``--set z=0,-0`` sweeps two points (two IRs, two keys: ``1 / z`` is ``inf`` at one and ``-inf`` at the other),
and the table wrote both as ``z`` 0: a swept name whose every value is a whole number is an integer column, and
the integer of ``-0.0`` is 0. ``-0`` stays a float, ``-0.0``, as the table writes any float (``repr``), and 0 is
``0`` (a whole value is written as an integer whatever the others: test_known_defects_round36); a name of whole
numbers without ``-0`` (``-3``) is an integer column as before."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let z = 0;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
           "session {\n  set t0 = now;\n  run s (1);\n  observe w = now - t0 + (1 / z > 0 ? 1 : 0);\n  end;\n}\n"
           "run { horizon 20; seed 1; }\n")


def _table(tmp_path: Path, values: str) -> list[dict[str, str]]:
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "p.sq", "--set", f"z={values}", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=50, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


def test_zero_and_negative_zero_are_two_values_of_the_column(tmp_path):
    rows = _table(tmp_path, "0,-0")
    assert [r["z"] for r in rows] == ["0", "-0.0"]
    # (two programs: 1 / z is inf at 0 and -inf at -0, so w differs by 1 at every sample)
    assert float(rows[0]["observes.w.mean"]) == pytest.approx(float(rows[1]["observes.w.mean"]) + 1)
    assert rows[0]["key"] != rows[1]["key"]


def test_whole_numbers_stay_an_integer_column(tmp_path):
    assert [r["z"] for r in _table(tmp_path, "-3,2")] == ["-3", "2"]
    assert [r["z"] for r in _table(tmp_path, "-0")] == ["-0.0"]
