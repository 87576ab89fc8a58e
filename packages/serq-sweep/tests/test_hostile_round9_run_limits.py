"""A sweep's bounds of each run (``max_events``, ``max_samples``, ``max_wall``) are checked and made plain
numbers when it is planned, by ``serq_sim.run``'s own rule (serq_sim.api.run_limits).

They were taken as given: ``max_events=numpy.int64(5)`` compiled every point and then died in the JSON that
keys the runs (``TypeError: Object of type int64 is not JSON serializable``), and a wrong one (``"5"``, -1)
was ``serq_sim.run``'s ValueError at the first run, not the sweep's one message.
"""

from __future__ import annotations

import numpy as np
import pytest
from serq.errors import UserError
from serq_sweep.core import plan

PROGRAM = """stage s : fifo;
workload { arrive poisson(1); }
session { set t0 = now; run s (0.5); observe y = now - t0; }
run { horizon 100; warmup 0; seed 1; arrivals 20; }
"""


@pytest.mark.timeout(60)
def test_numpy_bounds_are_plain_numbers_and_key_the_runs_as_ints_do(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    p = plan([str(tmp_path / "p.sq")], max_events=np.int64(5), max_samples=np.uint16(900),
             max_wall=np.float32(30))
    assert p.limits == {"max_wall": 30.0, "max_events": 5, "max_samples": 900}
    assert [type(v) for v in p.limits.values()] == [float, int, int]
    same = plan([str(tmp_path / "p.sq")], max_events=5, max_samples=900, max_wall=30.0)
    # the same runs: a table written with ints resumes under numpy's integers, and the other way round
    assert p.key(p.points[0], 1) == same.key(same.points[0], 1)
    # a whole max_wall keys its runs as it did (an int), so an earlier table still resumes
    assert plan([str(tmp_path / "p.sq")], max_wall=30).limits == {"max_wall": 30}


@pytest.mark.timeout(60)
def test_a_numpy_max_events_bounds_each_run(tmp_path):
    from serq_sweep.api import sweep

    (tmp_path / "p.sq").write_text(PROGRAM)
    t = sweep(str(tmp_path / "p.sq"), max_events=np.int64(5), workers=0, progress=False)
    # 20 arrivals make 40 events; the run stops at the fifth, its row partial
    assert list(t["status"]) == ["partial"] and list(t["message"]) == ["max-events"]
    assert list(t["events"]) == [5]


@pytest.mark.parametrize("kw, said", [
    ({"max_events": "5"}, "max_events must be a positive integer, not '5'"),
    ({"max_events": True}, "max_events must be a positive integer, not True"),
    ({"max_samples": 0}, "max_samples must be a positive integer, not 0"),
    ({"max_wall": -1}, "max_wall must be a positive, finite number of seconds, not -1"),
    ({"max_wall": 10**400}, "max_wall must be a positive, finite number of seconds, not an integer of 1329 bits"),
])
def test_a_wrong_bound_is_one_message_before_any_point_compiles(tmp_path, kw, said):
    # the file does not exist: the bound is refused before the first point is compiled
    with pytest.raises(UserError) as info:
        plan([str(tmp_path / "missing.sq")], **kw)
    assert str(info.value) == f"error: {said}"


LONG = """let lam = 0.5;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (~exp(1)); observe y = now - t0; }
run { horizon 1e7; warmup 0; seed 1; }
"""


@pytest.mark.timeout(120)
def test_serq_sweep_compare_and_find_take_max_samples_as_serq_run_does(tmp_path):
    # --max-samples was serq run's and the Python API's (sweep, compare) alone: serq sweep, serq compare and
    # --find had no such option, and find() no such argument. A run of 10 million seconds at 0.5 arrivals a
    # second holds a sample a session: the bound of 1000 cuts it at the first check (20 000 events)
    import subprocess
    import sys
    from pathlib import Path

    from serq_sweep import find

    (tmp_path / "p.sq").write_text(LONG)
    serq = [str(Path(sys.executable).parent / "serq")]
    quiet = ["--workers", "0", "--no-progress", "--max-samples", "1000"]
    said = "run(s) were cut short by --max-samples (status partial: "
    r = subprocess.run([*serq, "sweep", "p.sq", "--seeds", "1..2", "-o", "t.csv", "--show", "y.mean", *quiet],
                       cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert r.returncode == 0 and f"2 of 2 {said}" in r.stderr, r.stderr
    rows = (tmp_path / "t.csv").read_text().splitlines()[1:]
    assert [row.split(",")[2:4] for row in rows] == [["partial", "max-samples"]] * 2
    r = subprocess.run([*serq, "compare", "p.sq", "--set", "lam=0.5,0.25", "--seeds", "1..2", "--figure", "y.mean",
                        *quiet], cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert r.returncode == 0 and f"4 of 4 {said}" in r.stderr, r.stderr
    r = subprocess.run([*serq, "sweep", "p.sq", "--find", "y.mean <= 1000", "--over", "lam", "0.25:0.5:0.25",
                        *quiet], cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert r.returncode == 0 and f"2 of 2 {said}" in r.stderr and "holds_everywhere" in r.stdout, r.stderr
    columns, found = find(str(tmp_path / "p.sq"), "y.mean <= 1000", ("lam", "0.25:0.5:0.25"), max_samples=1000,
                          workers=0, progress=False)
    assert found[0]["outcome"] == "holds_everywhere"
    r = subprocess.run([*serq, "sweep", "p.sq", "--workers", "0", "--max-samples", "0"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=100)
    assert r.returncode == 2 and "invalid value for '--max-samples': 0 is not a positive whole number" in r.stderr
