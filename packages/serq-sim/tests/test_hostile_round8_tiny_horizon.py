"""A run whose measured span is below the clock's precision ends with its report, not a traceback.

``serq run p.sq --horizon 5e-324 --warmup 0`` (the least double: a positive horizon, which the option takes)
ended in ``ZeroDivisionError`` in serq_sim.backlog: the backlog test's bins, 1/20480 of the span each,
all end at t = 0, and the mean over a bin of no width divided by zero. Such a bin's mean is the live
count at its instant (serq_sim.backlog.Backlog.means), on both tiers.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sim.backlog import Backlog

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """stage svc : fifo;
workload { arrive poisson(0.8); }
session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }
run { horizon 100; warmup 0; seed 1; }
"""


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize("horizon", ["5e-324", "1e-320"])
def test_a_horizon_below_the_clocks_precision_reports(tmp_path, tier, horizon):
    (tmp_path / "p.sq").write_text(PROGRAM)
    env = {**os.environ, "SERQ_SIM_TIER": tier}
    r = subprocess.run([SERQ, "run", "p.sq", "--horizon", horizon, "--no-progress"], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.stdout.startswith(f"run: horizon {float(horizon):g}  end {float(horizon):g}  warmup 0  seed 1  "
                               "events 1  arrivals 1"), r.stdout


def test_a_bin_of_no_width_has_the_live_count_as_its_mean():
    b = Backlog(0.0, 5e-324)
    b.cut(0.0, 1, 0.0, 0.0, 1)
    assert len(b.times) and b.means() == [1.0] * len(b.times)
    b = Backlog(0.0, 100.0)  # bins of some width: the live count's integral over each, as before
    b.cut(50.0, 2, 0.0, 0.0, 3)
    assert all(m == 2.0 for m in b.means()) and all(math.isfinite(m) for m in b.means())
