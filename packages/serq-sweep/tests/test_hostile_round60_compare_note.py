"""``serq compare``'s note under a block paired over fewer seeds than the comparison's said every run without a
value was one that failed (``a run that failed having none``), where the value missing was an infinity (an
observe whose samples were all inf in that run) or NaN (a percentile of too few samples): it now says each
cause the block's rows had, and says the failed runs' words only of runs that failed."""

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
INF, NAN = math.inf, math.nan
TAIL = ("; diff = b - a and its CIs are over those, a and b each over its arm's own values, n_a and n_b of them)")


@pytest.fixture
def plan(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    return pairing.arms_plan([str(tmp_path / "p.sq")], sets={"a": [1, 2]}, seeds="1..3")


def _note(plan, failed=(), **figures):
    """The note of the block of the runs given: each figure NAME=(the base arm's values, the other's) by seed;
    ``failed``, the (arm, seed index) of runs that failed (their rows an error's)."""
    columns = ["point", *plan.names, "seed", "status", "message", "key", *figures]
    rows = []
    for k, p in enumerate(plan.points):
        for j, s in enumerate(plan.seeds):
            bad = (k, j) in failed
            rows.append({"point": p.index, "a": p.index + 1, "seed": s, "status": "error" if bad else "ok",
                         "message": "boom" if bad else "", "key": f"k{k}{j}",
                         **({} if bad else {f: vals[k][j] for f, vals in figures.items()})})
    got, same = pairing.comparisons(plan, columns, rows)
    lines = pairing.render(got, same, 3).splitlines()
    notes = [line.strip() for line in lines if line.strip().startswith("(n:")]
    assert len(notes) == 1, lines
    return got, notes[0]


def test_an_infinite_value_is_said_as_such(plan):
    rows, note = _note(plan, x=([1.0, INF, 3.0], [2.0, 3.0, 5.0]))
    assert (rows[0]["n"], rows[0]["n_a"], rows[0]["n_b"]) == (2, 2, 3)
    assert rows[0]["diff"] == pytest.approx(1.5)  # (seeds 1 and 3: 2 - 1, 5 - 3)
    assert note == ("(n: the seeds of the 3 where both arms have a finite value, a run whose value is infinite "
                    "(inf, -inf) having none" + TAIL)


def test_no_value_is_said_as_such(plan):
    _, note = _note(plan, x=([1.0, 2.0, 3.0], [NAN, 3.0, 5.0]))
    assert note == "(n: the seeds of the 3 where both arms have a value, a run of no value (NaN, a blank cell) having none" + TAIL


def test_a_failed_run_keeps_its_words(plan):
    _, note = _note(plan, failed={(1, 0)}, x=([1.0, 2.0, 3.0], [2.0, 3.0, 5.0]))
    assert note == "(n: the seeds of the 3 where both arms have a value, a run that failed having none" + TAIL


def test_each_cause_of_the_block_is_said(plan):
    _, note = _note(plan, failed={(0, 2)}, x=([1.0, 2.0, 3.0], [-INF, 3.0, 5.0]), y=([1.0, 2.0, 3.0], [2.0, NAN, 4.0]))
    assert note == ("(n: the seeds of the 3 where both arms have a finite value, a run that failed or whose value "
                    "is infinite (inf, -inf) or of no value (NaN, a blank cell) having none" + TAIL)


def test_a_block_of_rows_without_any_value_has_no_note(plan):
    """A row where neither arm has a finite value is NaN throughout (its own line says why): no note of
    seeds paired."""
    columns = ["point", *plan.names, "seed", "status", "message", "key", "x"]
    rows = [{"point": p.index, "a": p.index + 1, "seed": s, "status": "ok", "message": "", "key": f"k{p.index}{s}",
             "x": INF} for p in plan.points for s in plan.seeds]
    rows[0]["x"] = NAN
    got, same = pairing.comparisons(plan, columns, rows)
    text = pairing.render(got, same, 3)
    assert "(n:" not in text and "inf in 5 of 6 runs, no value in 1" in text
