"""Known defects, round 26 (serq-report)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_report import render_text
from serq_report.text import told_apart

SERQ = str(Path(sys.executable).parent / "serq")


# 5. the run line's times are shown with the digits that tell them apart (text.told_apart)


@pytest.mark.parametrize("values, shown", [
    ((100.0, 100.0, 60.0), ["100", "100", "60"]),  # apart at 6 digits: as format_number writes them
    ((100.0, 100.0, 99.99999999999999), ["100", "100", "99.99999999999999"]),  # the next double below 100
    ((100.0, 99.9999999, 0.0), ["100", "99.9999999", "0"]),  # an end just before the horizon
    ((1800.0, 1800.0004, 180.0), ["1800", "1800.0004", "180"]),  # 8 digits tell them apart
    ((100.0, 100.0000001, 99.9999999), ["100", "100.0000001", "99.9999999"]),  # one number of digits for both
    ((float("inf"), 1309.62, 0.0), ["inf", "1309.62", "0"]),
    ((1234567.0, 1234567.0, 1234568.0), ["1234567", "1234567", "1234568"]),  # 1.23457e+06 all three at 6
    ((float("nan"), 5.0, 5.0), ["nan", "5", "5"]),
])
def test_told_apart(values, shown):
    assert told_apart(values) == shown


def test_the_run_line_of_a_warmup_a_hair_below_the_horizon(minimal_result):
    r = minimal_result
    r.horizon, r.end, r.warmup = 100.0, 100.0, 99.99999999999999
    assert render_text(r) == ("run: horizon 100  end 100  warmup 99.99999999999999  seed 0  events 0  arrivals 0  "
                              "ended 0  turns 0  mean live 0\n")
    r.warmup = 60.0000001  # told from nothing else: 6 digits, as before
    assert render_text(r).startswith("run: horizon 100  end 100  warmup 60  seed 0")


def test_serq_run_of_such_a_warmup(tmp_path):
    (tmp_path / "p.sq").write_text("let W = 10;\nstage s : delay;\nworkload { arrive poisson(1); }\n"
                                   "session { run s (1); }\nrun { horizon 100; warmup W; seed 1; }\n")
    r = subprocess.run([SERQ, "run", "p.sq", "--set", "W=99.99999999999999", "--no-progress"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("run: horizon 100  end 100  warmup 99.99999999999999  seed 1  ")
