"""The capacity search upwards: a condition that fails at the low end of the range and holds at the high end
(servers, a budget) gives the smallest value that holds, outcome ``found_smallest``, by the mirrored
bisection; the ends decide the direction per point. Every answer is computed by hand: deterministic
arrivals and service (no one waits at c servers exactly when c >= service / gap), and a figure that is an
exact function of the knob (the bisection's every midpoint known in advance)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import find

SERQ = str(Path(sys.executable).parent / "serq")

#: c servers, one arrival every `gap`, each served for `service` exactly: wait = 0 for all iff c * gap >= service
SERVERS = """let c = 1;
let gap = 1;
let service = 3.5;
stage s : fifo(c);
workload { arrive renewal(gap); }
session { set t0 = now; run s (service); observe wait = now - t0 - service; end; }
run { horizon 60; seed 1; }
"""

#: y = k (lam^2 - 2): y <= 0 below sqrt 2 for k = 1, above it for k = -1, everywhere for k = 0; z only past 2
EXACT = """let lam = 1;
let k = 1;
stage s : delay;
workload { arrive renewal(1); }
session {
  observe y = k * (lam * lam - 2);
  branch (lam > 2) { observe z = lam; }
  end;
}
run { horizon 5; seed 1; }
"""


@pytest.fixture
def servers(tmp_path):
    path = tmp_path / "servers.sq"
    path.write_text(SERVERS)
    return str(path)


@pytest.fixture
def exact(tmp_path):
    path = tmp_path / "exact.sq"
    path.write_text(EXACT)
    return str(path)


def _one(program, cond, over, **kw):
    _, rows = find(program, cond, over, workers=0, progress=False, **kw)
    (row,) = rows
    return row


@pytest.mark.timeout(60)
@pytest.mark.parametrize("service, gap, grid, smallest", [
    (3.5, 1, "1:10:1", 4),     # ceil(3.5 / 1)
    (7, 2, "1:40:1", 4),       # ceil(7 / 2)
    (9.5, 0.5, "2:30:1", 19),  # 9.5 / 0.5 exactly: a server is freed at the instant the next job comes
    (3.5, 1, "2:20:2", 4),     # the even counts: 4 the first that suffices
])
def test_the_smallest_number_of_servers_no_one_waits_at(servers, service, gap, grid, smallest):
    sets = {"service": str(service), "gap": str(gap)}
    r = _one(servers, "wait.mean <= 0", ("c", grid), sets=sets)
    step = float(grid.split(":")[2])
    assert (r["outcome"], r["c"], r["holds"], r["fails"]) == ("found_smallest", smallest, smallest,
                                                               smallest - step), r
    assert r["observes.wait.mean:mean"] == 0
    # the same knee the other way round: the largest c at which someone waits (the search as it was)
    r = _one(servers, "wait.mean > 0", ("c", grid), sets=sets)
    assert (r["outcome"], r["holds"], r["fails"]) == ("found", smallest - step, smallest), r


@pytest.mark.timeout(60)
def test_the_mirrored_bisection_on_a_grid_and_its_evaluations(servers, exact):
    # grid 1..10 (indices 0..9): ends (1 fails, 10 holds), then 5 holds, 3 fails, 4 holds: neighbours
    r = _one(servers, "wait.mean <= 0", ("c", "1:10:1"))
    assert (r["outcome"], r["holds"], r["fails"], r["evaluations"]) == ("found_smallest", 4, 3, 5), r
    # lam^2 >= 2 on 0, 0.25, ..., 4: ends, then 2 holds, 1 fails, 1.5 holds, 1.25 fails
    r = _one(exact, "y.mean <= 0", ("lam", "0:4:0.25"), sets={"k": "-1"})
    assert (r["outcome"], r["holds"], r["fails"], r["evaluations"]) == ("found_smallest", 1.5, 1.25, 6), r
    assert r["observes.y.mean:mean"] == -0.25


@pytest.mark.timeout(60)
def test_a_real_knob_gives_the_smallest_value_within_the_tolerance(exact, servers):
    # 2 - lam^2 <= 0 from sqrt 2 on: over 0:4, 2 holds, 1 fails, 1.5 holds, 1.25 and 1.375 fail, 1.4375
    # holds: six halvings (the default tolerance 4 / 64), 8 evaluations, the bracket [1.375, 1.4375]
    r = _one(exact, "y.mean <= 0", ("lam", "0:4"), sets={"k": "-1"})
    assert (r["outcome"], r["lam"], r["holds"], r["fails"], r["evaluations"]) == (
        "found_smallest", 1.4375, 1.4375, 1.375, 8), r
    assert r["observes.y.mean:mean"] == 2 - 1.4375 ** 2
    r = _one(exact, "y.mean <= 0", ("lam", "0:4"), sets={"k": "-1"}, tol=1e-9)
    assert r["fails"] < math.sqrt(2) <= r["holds"] and r["holds"] - r["fails"] <= 1e-9, r
    # one server of service 2.5: no one waits from a gap of 2.5 on. Over 1:4 the first midpoint is 2.5
    # (holds), then 1.75, 2.125, 2.3125, 2.40625, 2.453125 fail: the answer is 2.5 exactly
    r = _one(servers, "wait.mean <= 0", ("gap", "1:4"), sets={"service": "2.5"})
    assert (r["outcome"], r["holds"], r["fails"], r["evaluations"]) == ("found_smallest", 2.5, 2.453125, 8), r


@pytest.mark.timeout(60)
def test_several_conditions_hold_together(exact):
    # 2 - lam^2 <= 0 and z (a sample only past lam 2) at least 0: z binds. 2 fails (no sample of z), 3, 2.5,
    # 2.25, 2.125, 2.0625 hold
    r = _one(exact, ["y.mean <= 0", "z.mean >= 0"], ("lam", "0:4"), sets={"k": "-1"})
    assert (r["outcome"], r["holds"], r["fails"], r["evaluations"]) == ("found_smallest", 2.0625, 2, 8), r
    assert (r["observes.y.mean:mean"], r["observes.z.mean:mean"]) == (2 - 2.0625 ** 2, 2.0625)
    # 2 - lam^2 <= 0 and <= -2 (lam >= 2): the second binds, on a grid of quarters: 2 exactly
    r = _one(exact, ["y.mean <= 0", "y.mean <= -2"], ("lam", "0:4:0.25"), sets={"k": "-1"})
    assert (r["outcome"], r["holds"], r["fails"]) == ("found_smallest", 2, 1.75), r
    # holds only inside the range (-2 <= y <= 0 on [sqrt 2, 2]): the ends fail, reported as before
    r = _one(exact, ["y.mean <= 0", "y.mean >= -2"], ("lam", "0:4"), sets={"k": "-1"})
    assert (r["outcome"], r["fails"], r["evaluations"]) == ("fails_everywhere", 0, 2), r
    assert math.isnan(r["holds"])


@pytest.mark.timeout(60)
def test_each_point_takes_the_direction_of_its_ends(exact, tmp_path):
    # k = 1: y <= 0 below sqrt 2 (the largest, as it always was); k = -1: above it (the smallest); k = 0:
    # everywhere. The printed table and --out say the outcome per point
    out = tmp_path / "f.csv"
    r = subprocess.run([SERQ, "sweep", exact, "--find", "y.mean <= 0", "--over", "lam", "0:4", "--set", "k=1,-1,0",
                        "--workers", "0", "--no-progress", "--out", str(out)], capture_output=True, text=True,
                       timeout=60)
    # (the point that holds at both ends is said to report the top of the range: docs/sweep.md)
    assert r.returncode == 0 and r.stderr == (
        "note: holds_everywhere at k=0: the conditions hold at both ends, lam=0 and lam=4: the value reported is "
        "the top, lam=4, the largest that holds; the smallest that holds is lam=0 or below (for the fewest, give "
        "a LO at which the conditions fail); no crossing in the range, or an even number of them, where the "
        "conditions are not monotone in lam: the search evaluated the ends alone, so they may fail between them\n"
    ), r.stderr
    # (as --out writes it; then the condition's mean at the value found, to six digits)
    assert r.stdout == (" k     lam           outcome   holds   fails  evaluations  observes.y.mean:mean\n"
                        " 1   1.375             found   1.375  1.4375            8             -0.109375\n"
                        "-1  1.4375    found_smallest  1.4375   1.375            8            -0.0664062\n"
                        " 0     4.0  holds_everywhere     4.0     nan            2                     0\n")
    assert out.read_text() == ("k,lam,outcome,holds,fails,evaluations,observes.y.mean:mean\n"
                               "1,1.375,found,1.375,1.4375,8,-0.109375\n"
                               "-1,1.4375,found_smallest,1.4375,1.375,8,-0.06640625\n"
                               "0,4.0,holds_everywhere,4.0,,2,0.0\n")


@pytest.mark.timeout(60)
def test_the_search_downwards_prints_what_it_printed(exact):
    # the case of test_find_audit's zip test, k = 1: the largest lam with lam^2 <= 2, byte for byte
    r = subprocess.run([SERQ, "sweep", exact, "--find", "y.mean <= 0", "--over", "lam", "0:4", "--set", "k=1",
                        "--workers", "0", "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout == ("k    lam  outcome  holds   fails  evaluations  observes.y.mean:mean\n"
                        "1  1.375    found  1.375  1.4375            8             -0.109375\n")


@pytest.mark.timeout(60)
def test_a_count_at_a_midpoint_is_said_with_the_grid_to_give(servers):
    # fifo(c) takes whole numbers; LO:HI bisects through 5.5: one message naming the value and the grid
    r = subprocess.run([SERQ, "sweep", servers, "--find", "wait.mean <= 0", "--over", "c", "1:10", "--workers",
                        "0", "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "a fifo has a whole number of servers" in r.stderr
    assert r.stderr.rstrip().endswith("(at c=5.5 of the capacity search; a knob of whole numbers is searched on "
                                      "a grid, --over c 1:10:1)"), r.stderr
