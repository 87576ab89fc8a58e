"""``serq compare`` takes a flag figure (``interrupted``) as 0 and 1, as a sweep's points table, ``--show`` and
``--find`` take it (docs/sweep.md: "a bool figure, `interrupted`, averaged as 0 and 1"): it printed ``nan`` for
each arm, the mean of no value, and ``n`` 0, though every run of either arm had a value, and left such a
figure out without counting it among those equal in every run."""

from __future__ import annotations

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


def _table(plan, a, b):
    """The runs of the two arms, seeds 1..3, of one figure ``flag`` valued ``a`` and ``b`` by seed."""
    columns = ["point", *plan.names, "seed", "status", "message", "key", "flag"]
    rows = [{"point": p.index, "a": p.index + 1, "seed": s, "status": "ok", "message": "", "key": f"k{p.index}{s}",
             "flag": v} for p, vals in zip(plan.points, (a, b)) for s, v in zip(plan.seeds, vals)]
    return columns, rows


def test_a_flag_is_compared_as_0_and_1(plan):
    columns, table = _table(plan, [False, False, True], [True, True, True])
    rows, same = pairing.comparisons(plan, columns, table)
    assert same == 0 and len(rows) == 1
    r = rows[0]
    assert r["figure"] == "flag" and r["n"] == 3
    assert r["a"] == pytest.approx(1 / 3) and r["b"] == 1.0
    assert r["diff"] == pytest.approx(2 / 3)  # the differences 1, 1, 0
    # the paired half-width: t(2) = 4.303 times the standard error of 1, 1, 0 (sd 1/sqrt(3), over sqrt(3))
    assert r["ci_paired"] == pytest.approx(4.303 * (1 / math.sqrt(3)) / math.sqrt(3), rel=1e-3)


def test_a_flag_equal_in_every_run_is_counted_as_equal(plan):
    columns, table = _table(plan, [False] * 3, [False] * 3)
    assert pairing.comparisons(plan, columns, table) == ([], 1)
    rows, same = pairing.comparisons(plan, columns, table, ["flag"])  # asked for: its row, every figure 0
    assert same == 0
    assert (rows[0]["n"], rows[0]["a"], rows[0]["b"], rows[0]["diff"]) == (3, 0.0, 0.0, 0.0)


def test_a_word_is_still_no_value(plan):
    columns, table = _table(plan, ["max-events"] * 3, ["max-events"] * 3)
    rows, same = pairing.comparisons(plan, columns, table, ["flag"])
    assert rows[0]["n"] == 0 and math.isnan(rows[0]["a"]) and math.isnan(rows[0]["b"])
