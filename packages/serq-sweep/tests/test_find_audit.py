"""An audit of the capacity search (``serq sweep --find … --over …``, ``serq_sweep.find``) against answers
known in closed form: a figure that is an exact function of the knob (every run gives it without noise, so
the bracket and the number of evaluations are exact), M/M/1 and M/D/1 queues whose knee follows from
1/(mu - lambda) and Pollaczek-Khinchine, several conditions, other swept names beside the knob, a figure
with no samples, and the tables the search writes and prints."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import find

SERQ = str(Path(sys.executable).parent / "serq")

#: y = k * lam * lam in every run, exactly; z only where lam > 2 (an observe with no samples below)
EXACT = """let lam = 1;
let k = 1;
stage s : delay;
workload { arrive renewal(1); }
session {
  observe y = k * lam * lam;
  branch (lam > 2) { observe z = lam; }
  end;
}
run { horizon 5; seed 1; }
"""

#: one server, Poisson arrivals at lam, service ~exp(1/mu) (M/M/1) or 1/mu exactly (M/D/1, service())
QUEUE = """def service() = ~exp(1 / mu);
let lam = 0.5;
let mu = 1;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (service()); observe response = now - t0; end; }
run { horizon 4000; warmup 200; seed 1; }
"""


@pytest.fixture
def exact(tmp_path):
    path = tmp_path / "exact.sq"
    path.write_text(EXACT)
    return str(path)


def _one(program, cond, over, **kw):
    cols, rows = find(program, cond, over, workers=0, progress=False, **kw)
    (row,) = rows
    return cols, row


@pytest.mark.timeout(60)
@pytest.mark.parametrize("spec, knee", [("0.1:0.7", 0.37), ("0.6:1.15", 0.9), ("7.9:8.51", 8.2)])
def test_the_default_tolerance_is_six_halvings_on_a_range_of_decimals(exact, spec, knee):
    # y = lam^2 <= knee^2: the knee exactly. The default tolerance (HI - LO) / 64 is reached by six
    # halvings: both ends and six midpoints, 8 evaluations (a seventh halving was made when the bracket's
    # width in floats came out an ulp above the tolerance: 9 on these three ranges)
    lo, hi = map(float, spec.split(":"))
    _, r = _one(exact, f"y.mean <= {knee * knee!r}", ("lam", spec))
    assert r["outcome"] == "found" and r["evaluations"] == 8, r
    assert r["holds"] <= knee < r["fails"]
    assert r["fails"] - r["holds"] == pytest.approx((hi - lo) / 64, rel=1e-9)


@pytest.mark.timeout(60)
def test_a_tolerance_given_is_reached_by_the_fewest_halvings(exact):
    # 0.1:1.1 is 1 wide: --tol 0.25 takes two halvings (4 evaluations), --tol 0.125 three (5); the knee
    # 0.45 (y = lam^2 <= 0.2025) took one more of each (the width in floats, 1.0000000000000002, over 4 or 8)
    for tol, evaluations in ((0.25, 4), (0.125, 5)):
        _, r = _one(exact, "y.mean <= 0.2025", ("lam", "0.1:1.1"), tol=tol)
        assert (r["outcome"], r["evaluations"]) == ("found", evaluations), (tol, r)
        assert r["holds"] <= 0.45 < r["fails"] and r["fails"] - r["holds"] == pytest.approx(tol, rel=1e-9)
    # the tutorial's: 2:10 with --tol 0.5 is four halvings, 6 evaluations
    _, r = _one(exact, "y.mean <= 49", ("lam", "2:10"), tol=0.5)
    assert (r["evaluations"], r["holds"], r["fails"]) == (6, 7.0, 7.5), r


@pytest.mark.timeout(60)
def test_a_bracket_of_neighbouring_floats_is_found(exact):
    # a tolerance below the floats' spacing ends at two neighbouring floats around sqrt(2), outcome found
    # (the search stopped when the midpoint was one of the ends and said outcome 'bisect')
    _, r = _one(exact, "y.mean <= 2", ("lam", "0:4"), tol=1e-300)
    assert r["outcome"] == "found", r
    assert r["holds"] * r["holds"] <= 2 < r["fails"] * r["fails"]
    assert r["fails"] == math.nextafter(r["holds"], math.inf)
    assert r["evaluations"] <= 62


@pytest.mark.timeout(60)
def test_a_figure_with_no_samples_meets_no_condition(exact):
    # z has no sample for lam <= 2: its mean is NaN, which holds no condition, != included (`!=` held on
    # NaN: 'holds_everywhere' on runs that had no value of z at all)
    for cond in ("z.mean != 100", "z.mean <= 100", "z.mean >= 0"):
        _, r = _one(exact, cond, ("lam", "0:1"))
        assert (r["outcome"], r["evaluations"]) == ("fails_everywhere", 2), (cond, r)
        assert math.isnan(r["holds"]) and r["fails"] == 0
    # z = lam for lam > 2: z.mean != 100 fails at 0 (NaN) and holds at 4, so the smallest lam that holds is
    # sought (it was 'not monotone'): 2 fails (no sample), 3, 2.5, 2.25, 2.125, 2.0625 hold
    _, r = _one(exact, "z.mean != 100", ("lam", "0:4"))
    assert (r["outcome"], r["holds"], r["fails"], r["evaluations"]) == ("found_smallest", 2.0625, 2, 8), r


@pytest.mark.timeout(60)
def test_two_conditions_on_one_figure_give_one_column(exact, tmp_path):
    # y.mean <= 2 and y.mean < 3 on y = lam^2: the first binds (knee sqrt 2). One column of the figure's
    # mean: two of one name were a Parquet writer's traceback after the whole search
    out = tmp_path / "found.parquet"
    cols, r = _one(exact, ["y.mean <= 2", "observes.y.mean < 3"], ("lam", "0:4"), out=out)
    assert cols == ["lam", "outcome", "holds", "fails", "evaluations", "observes.y.mean:mean"]
    assert (r["holds"], r["fails"]) == (1.375, 1.4375) and r["observes.y.mean:mean"] == 1.375 ** 2
    import pandas as pd

    back = pd.read_parquet(out)
    assert list(back.columns) == cols and back["holds"].tolist() == [1.375]


@pytest.mark.timeout(60)
def test_one_answer_per_point_of_the_other_names_whole_numbers_as_integers(exact, tmp_path):
    # y = k lam^2 <= 2: lam = sqrt(2 / k), per k. The --set column of whole numbers is an integer column
    # in the search's table as in the sweep's (it was written 1.0, 2.0)
    out = tmp_path / "found.csv"
    cols, rows = find(exact, "y.mean <= 2", ("lam", "0:4"), sets={"k": "1,2,8"}, workers=0, progress=False,
                      out=out)
    assert [r["k"] for r in rows] == [1, 2, 8] and all(type(r["k"]) is int for r in rows)
    for r in rows:
        knee = math.sqrt(2 / r["k"])
        assert r["outcome"] == "found" and r["holds"] <= knee < r["fails"] and r["evaluations"] == 8, r
    lines = out.read_text().splitlines()
    assert lines[0] == "k,lam,outcome,holds,fails,evaluations,observes.y.mean:mean"
    assert [line.split(",")[0] for line in lines[1:]] == ["1", "2", "8"]
    assert lines[3].split(",")[1:5] == ["0.5", "found", "0.5", "0.5625"]


@pytest.mark.timeout(60)
def test_the_printed_bracket_shows_its_ends_exactly(exact):
    # with --tol 1e-9 the two ends differ in the tenth digit: six digits printed them alike (1.41421)
    r = subprocess.run([SERQ, "sweep", exact, "--find", "y.mean <= 2", "--over", "lam", "0:4", "--tol", "1e-9",
                        "--workers", "0", "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    head, row = (line.split() for line in r.stdout.splitlines())
    assert head == ["lam", "outcome", "holds", "fails", "evaluations", "observes.y.mean:mean"]
    lam, outcome, holds, fails, evaluations, y = row
    assert outcome == "found" and lam == holds and holds != fails
    assert float(holds) ** 2 <= 2 < float(fails) ** 2 and 0 < float(fails) - float(holds) <= 1e-9
    assert evaluations == str(2 + math.ceil(math.log2(4 / 1e-9)))
    assert y == "2"  # y = lam^2 at the value found, 2 to six digits (the condition's mean, printed as --show's)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("service, bound, knee", [
    # M/M/1, mu = 1: E[T] = 1 / (1 - lam) <= 4 up to lam = 0.75
    ("~exp(1 / mu)", 4, 0.75),
    # M/D/1, service 1: E[T] = 1 + lam / (2 (1 - lam)) <= 2 up to lam = 2/3
    ("1 / mu", 2, 2 / 3),
])
def test_the_knee_of_a_queue_in_closed_form(tmp_path, service, bound, knee):
    path = tmp_path / "q.sq"
    path.write_text(QUEUE.replace("~exp(1 / mu)", service))
    _, r = _one(str(path), f"response.mean <= {bound}", ("lam", "0.1:0.95"), seeds="1..3", tol=0.02)
    assert r["outcome"] == "found" and r["fails"] - r["holds"] <= 0.02, r
    # three seeds of 4 000 time units: the mean is within about 10 % of E[T] near the knee, which moves
    # the crossing by at most 0.03 of lam on either side
    assert r["holds"] - 0.03 <= knee <= r["fails"] + 0.03, r


@pytest.mark.timeout(60)
def test_a_zip_group_beside_the_knob_moves_together(tmp_path):
    # y = k lam^2 + j <= 2 with (k, j) zipped: (1, 0) and (2, 1), two searches, knees sqrt 2 and sqrt(1/2).
    # --zip was dropped by the search, which ran the grid's four points
    path = tmp_path / "kj.sq"
    path.write_text(EXACT.replace("let k = 1;", "let k = 1;\nlet j = 0;").replace("k * lam * lam", "k * lam * lam + j"))
    r = subprocess.run([SERQ, "sweep", str(path), "--find", "y.mean <= 2", "--over", "lam", "0:4", "--set", "k=1,2",
                        "--set", "j=0,1", "--zip", "k,j", "--workers", "0", "--no-progress"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()]
    # y at the value found: 1.375^2 = 1.890625 and 2 * 0.6875^2 + 1 = 1.9453125, to six digits
    assert rows == [["k", "j", "lam", "outcome", "holds", "fails", "evaluations", "observes.y.mean:mean"],
                    ["1", "0", "1.375", "found", "1.375", "1.4375", "8", "1.89062"],
                    ["2", "1", "0.6875", "found", "0.6875", "0.75", "8", "1.94531"]]
    _, found = find(str(path), "y.mean <= 2", ("lam", "0:4"), sets={"k": "1,2", "j": "0,1"}, zip=[["k", "j"]],
                    workers=0, progress=False)
    assert [(f["k"], f["j"], f["holds"]) for f in found] == [(1, 0, 1.375), (2, 1, 0.6875)]
    # serq compare has no use for a zip group (its arms are the values of one name): refused, not ignored
    r = subprocess.run([SERQ, "compare", str(path), "--set", "k=1,2", "--zip", "k,j", "--seeds", "1,2",
                        "--horizon", "5"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--zip is not for serq compare" in r.stderr, r.stderr


@pytest.mark.timeout(60)
def test_a_swept_name_that_is_a_column_of_the_search_is_refused(tmp_path):
    # a let named as one of the search's columns, swept beside the knob or as it, wrote over that column (a
    # CSV of two `evaluations` columns; a Parquet --out a traceback after the search); a name given by --set
    # and --def both made two columns too. One message before any run, as a sweep's FIXED names
    path = tmp_path / "c.sq"
    path.write_text(EXACT.replace("let k = 1;", "let evaluations = 1;").replace("k * lam", "evaluations * lam"))
    r = subprocess.run([SERQ, "sweep", str(path), "--find", "y.mean <= 2", "--over", "lam", "0:4", "--set",
                        "evaluations=1,2", "--workers", "0", "--no-progress", "--out", str(tmp_path / "f.parquet")],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (2, "error: --set evaluations: evaluations is a column of the search's "
                                           "table already (outcome, holds, fails, evaluations); a swept name is a "
                                           "column of its own: give the let another name to sweep it\n")
    assert not (tmp_path / "f.parquet").exists()
    with pytest.raises(Exception, match="^error: over=\\('evaluations', '0:4'\\): the name of a column of the search's table"):
        find(str(path), "y.mean <= 2", ("evaluations", "0:4"), workers=0, progress=False)
    with pytest.raises(Exception, match=r"^error: sets\['k'\] and defs\['k'\]: k is swept twice"):
        find(str(path), "y.mean <= 2", ("lam", "0:4"),
             sets={"k": "1,2"}, defs={"k": "3"}, workers=0, progress=False)
