"""``serq compare`` said nothing of a figure with no finite value in any run of either arm: an observe whose
every sample is infinite (its mean inf in every run) was left out without a word, nor counted among the
figures equal in every run, while a figure one arm lacks has its row (``nan`` beside the other arm's mean,
``n`` 0). Such a figure now has its row, ``n``, ``n_a`` and ``n_b`` 0 and NaN, and the printed block says
what the runs held (``inf in 5 of 6 runs, no value in 1``); the same infinity at every seed of both arms (a
horizon of inf) is a figure equal in every run; a figure that no run has a value of (NaN, a blank cell: a
percentile of too few samples, a figure of a stage kind the program's stage is not) is still left out, and
the comparison says how many and which (docs/sweep.md, "serq compare A.sq B.sq")."""

from __future__ import annotations

import csv
import math

import pytest
from serq_sweep import pairing

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); }
run { horizon 5; seed 1; }
"""


@pytest.fixture
def plan(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return pairing.arms_plan([str(tmp_path / "p.sq")], sets={"a": [1, 2]}, seeds="1..3")


def _table(plan, **figures):
    """The runs of the two arms, seeds 1..3: each figure NAME=(the base arm's values, the other's) by seed."""
    columns = ["point", *plan.names, "seed", "status", "message", "key", *figures]
    rows = [{"point": p.index, "a": p.index + 1, "seed": s, "status": "ok", "message": "", "key": f"k{p.index}{s}",
             **{f: vals[k][j] for f, vals in figures.items()}}
            for k, p in enumerate(plan.points) for j, s in enumerate(plan.seeds)]
    return columns, rows


INF, NAN = math.inf, math.nan


def test_a_figure_infinite_in_both_arms_has_its_row_and_says_so(plan):
    columns, table = _table(plan, m=([INF] * 3, [NAN, INF, INF]), w=([INF, NAN, INF], [-INF, INF, INF]),
                            x=([1.0, 2.0, 3.0], [2.0, 3.0, 5.0]), only=([NAN] * 3, [1.0, 2.0, 4.0]),
                            horizon=([INF] * 3, [INF] * 3))
    left: list[str] = []
    rows, same = pairing.comparisons(plan, columns, table, left=left)
    # (the same infinity at every seed of both arms, a horizon of inf, is equal in every run)
    assert (same, left) == (1, [])
    by = {r["figure"]: r for r in rows}
    assert list(by) == ["m", "w", "x", "only"]
    for f in ("m", "w"):
        r = by[f]
        assert (r["n"], r["n_a"], r["n_b"]) == (0, 0, 0)
        assert all(math.isnan(r[k]) for k in ("a", "b", "diff", "ci_paired", "ci_unpaired"))
    assert by["m"][pairing.UNVALUED] == "inf in 5 of 6 runs, no value in 1"
    assert by["w"][pairing.UNVALUED] == "inf in 4 of 6 runs, -inf in 1, no value in 1"
    # (as a figure one arm lacks has its row: the other arm's mean beside nan)
    assert (by["only"]["n"], by["only"]["n_a"], by["only"]["n_b"]) == (0, 0, 3)
    assert math.isnan(by["only"]["a"]) and by["only"]["b"] == pytest.approx(7 / 3)
    assert pairing.UNVALUED not in by["x"] and pairing.UNVALUED not in by["only"]
    text = pairing.render(rows, same, 3, left).splitlines()
    assert text[-2:] == ["  (no finite value in any run of either arm, so nan: m, inf in 5 of 6 runs, no value in 1; "
                         "w, inf in 4 of 6 runs, -inf in 1, no value in 1)",
                         "(1 figure(s) equal in every run of both arms left out)"]
    m = next(line.split() for line in text if line.split()[:1] == ["m"])
    assert m == ["m", "nan", "nan", "nan", "nan", "nan", "nan", "0", "0", "0"]


def test_a_figure_of_no_value_in_any_run_is_left_out_and_said(plan):
    columns, table = _table(plan, x=([1.0, 2.0, 3.0], [2.0, 3.0, 5.0]), p99=([NAN] * 3, [NAN] * 3),
                            q=([None] * 3, [NAN] * 3), same=([1.0] * 3, [1.0] * 3))
    left: list[str] = []
    rows, same = pairing.comparisons(plan, columns, table, left=left)
    assert [r["figure"] for r in rows] == ["x"] and same == 1 and left == ["p99", "q"]
    assert pairing.render(rows, same, 3, left).splitlines()[-2:] == [
        "(1 figure(s) equal in every run of both arms left out)",
        "(2 figure(s) with no value in any run of either arm left out: p99, q)"]
    # asked for, it has its row as before (n 0, nan), and says the runs had no value
    rows, _ = pairing.comparisons(plan, columns, table, ["p99"])
    assert rows[0]["n"] == 0 and rows[0][pairing.UNVALUED] == "no value in its 6 runs"


def test_serq_compare_prints_and_writes_the_infinite_figure(tmp_path, serq_in_process, monkeypatch):
    # (an observe of inf in every run of the first arm, of none at rate 1.5)
    (tmp_path / "p.sq").write_text("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
                                   "session { run s (0.5); branch (rate < 1.2) { observe big = 1e308 * 10; } }\n"
                                   "run { horizon 20; seed 3; }\n")
    monkeypatch.chdir(tmp_path)
    r = serq_in_process("compare", "p.sq", "--set", "rate=1,1.5", "--seeds", "1..2", "--workers", "0",
                        "--no-progress", "-o", "c.csv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "  (no finite value in any run of either arm, so nan: observes.big.mean, inf in 2 of 4 runs, no value in 2)" in lines
    assert lines[-1].startswith("(") and " figure(s) with no value in any run of either arm left out: " in lines[-1]
    with open("c.csv", newline="") as f:
        big = next(row for row in csv.DictReader(f) if row["figure"] == "observes.big.mean")
    assert (big["n"], big["n_a"], big["n_b"], big["a"], big["diff"]) == ("0", "0", "0", "", "")
    assert set(big) == set(pairing.COLUMNS)  # (what the runs held is the printed note's, not a column)
