"""The table ``serq sweep --find`` prints shows each swept value as every label of a sweep shows it
(``core.show_value``, its shortest exact text): at six significant digits two searches at
``mu=1.0000001`` and ``mu=1.0000002`` printed as two rows of ``1``. A legend's hue value likewise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from serq_sweep.plots import _hue_value

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let lambda = 0.5;
let mu = 1;
stage s : fifo(1);
workload { arrive poisson(lambda); }
session { set t0 = now; run s (~exp(1 / mu)); observe response = now - t0; end; }
run { horizon 200; seed 1; }
"""


def test_the_find_table_shows_swept_values_exactly(tmp_path):
    (tmp_path / "m.sq").write_text(PROGRAM)
    r = subprocess.run([SERQ, "sweep", "m.sq", "--find", "response.mean <= 3", "--over", "lambda", "0.1:0.9",
                        "--set", "mu=1.0000001,1.0000002", "--workers", "0", "--tol", "0.2"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["mu", "lambda"], lines
    assert [line.split()[0] for line in lines[1:]] == ["1.0000001", "1.0000002"], lines
    # right-aligned columns, as wide as their widest cell
    assert len({len(line) for line in lines}) == 1, lines


def test_a_hue_value_is_shown_exactly():
    assert _hue_value(0.1000001) == "0.1000001" and _hue_value(0.1000002) == "0.1000002"
    assert _hue_value(np.float64(2.0)) == "2" and _hue_value(np.int64(3)) == "3" and _hue_value("a") == "a"
