"""A range whose step is fine beside its values sweeps the grid it names.

Each value of ``--set x=START:STOP:STEP`` was ``START + i·STEP`` rounded to 12 significant digits (so that
``0.1:0.3:0.1`` is 0.1, 0.2, 0.3): ``--set x=1e12:1000000000020:3`` rounded 1000000000003 to 1000000000000,
and the sweep was refused as "the point x=1000000000000 is given twice", which the user had not given;
``1:1.0000000001:1.5e-11`` swept 1, 1.00000000002, 1.00000000003, 1.00000000005, …, an uneven grid,
silently. A value is rounded only where that moves it by less than a millionth of the step
(serq_sweep.axes._short).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from serq_sweep.axes import parse_range

SERQ = str(Path(sys.executable).parent / "serq")


def _even(values: list[float], step: float) -> bool:
    return all(abs((b - a) - step) < step * 1e-3 for a, b in zip(values, values[1:]))


def test_a_fine_step_keeps_its_grid():
    big = parse_range("1000000000000:1000000000020:3", "--set x")
    assert big == [1e12 + 3 * i for i in range(7)]
    fine = parse_range("1:1.0000000001:1.5e-11", "--set x")
    assert len(fine) == 7 and _even(fine, 1.5e-11)


def test_a_step_of_ordinary_size_still_gives_short_decimals():
    assert parse_range("0.1:0.3:0.1", "x") == [0.1, 0.2, 0.3]
    assert parse_range("0:1:0.1", "x") == [round(0.1 * i, 1) for i in range(11)]
    assert parse_range("0.123456789:0.4:0.1", "x") == [0.123456789, 0.223456789, 0.323456789]
    assert parse_range("1e-300:1.2e-300:1e-301", "x") == [1e-300, 1.1e-300, 1.2e-300]


def test_the_command_sweeps_it(tmp_path):
    (tmp_path / "p.sq").write_text("let x = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
                                   "session { run s (1); observe y = x; end; }\nrun { horizon 5; seed 1; }\n")
    r = subprocess.run([SERQ, "sweep", "p.sq", "--set", "x=1000000000000:1000000000006:3", "--workers", "0",
                        "--no-progress", "--show", "observes.y.mean"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert [line.split()[0] for line in r.stdout.splitlines()[1:]] == ["1000000000000", "1000000000003",
                                                                       "1000000000006"], r.stdout
