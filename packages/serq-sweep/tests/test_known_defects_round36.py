"""Known defects, round 36, in serq-sweep.

1. A sweep at a horizon of inf of a workload that never stops starting sessions, with no --max-events or
   --max-wall, warned that the run has no end and then ran its first point for ever; each run is refused by
   serq_sim.run now, so the plan refuses it, once, before any run (docs/language.md, "A run needs a horizon
   where it runs"), naming the options as the caller gave them.
"""

from __future__ import annotations

import math

import pytest
from serq.errors import UserError
from serq_sweep import core

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let lam = 0.5;
stage f : fifo;
workload { arrive poisson(lam); }
session { run f (1); }
run { horizon 10; }
"""


def test_a_sweep_with_no_end_that_nothing_bounds_is_refused(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    with pytest.raises(UserError) as info:
        core.plan([str(p)], sets={"lam": [0.5, 0.6]}, horizon=float("inf"))
    assert str(info.value) == (
        f"{p}: error: the run has no end: horizon inf and arrivals that never stop (`arrive poisson`), and no "
        "--max-events or --max-wall to stop it; give --arrivals N (or `arrivals N;` in the run block), a finite "
        "horizon, or --max-events N or --max-wall S (a partial report where it stops)")
    # bounded, it is planned (with the warning); a count of arrivals ends it
    assert core.plan([str(p)], sets={"lam": [0.5]}, horizon=float("inf"), max_wall=5).warnings
    assert not core.plan([str(p)], sets={"lam": [0.5]}, horizon=float("inf"), arrivals=5).warnings


def test_the_python_api_names_its_arguments(tmp_path):
    import serq_sweep
    from serq.loading import argument_given

    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    with pytest.raises(UserError, match=r"and no max_events or max_wall to stop it; give arrivals=N .* or "
                                        r"max_events=N or max_wall=S"):
        core.plan([str(p)], sets={"lam": [0.5]}, horizon=float("inf"), given=argument_given)
    with pytest.raises(UserError, match=r"no max_events or max_wall to stop it"):
        serq_sweep.sweep(str(p), sets={"lam": [0.5]}, horizon=float("inf"), workers=0)


# 9. A swept value's text depended on the other values of its name: a whole value was an integer only when every
#    value was (`--set B=16,32` wrote 16, `--set B=16,inf` 16.0, `16,16.5` 16.0). A whole value is written as an
#    integer whatever the others now (core.Plan.shown); -0 stays -0.0 (test_hostile_round36_negative_zero).

WHOLE = """let B = 4;
pool p { cap B; }
stage s : delay;
workload { arrive batch(2); }
session { hold p (1) { run s (1); } }
run { horizon 10; }
"""


@pytest.mark.parametrize("values, texts", [
    ([16, 32], ["16", "32"]),
    ([16, math.inf], ["16", "inf"]),  # (it wrote 16.0)
    ([16, 16.5], ["16", "16.5"]),  # (16.0)
    ([1, 1.5, 2], ["1", "1.5", "2"]),  # (1.0, 2.0)
])
def test_a_whole_value_is_written_alike_whatever_the_others(tmp_path, values, texts):
    import csv

    p = tmp_path / "p.sq"
    p.write_text(WHOLE)
    plan = core.plan([str(p)], sets={"B": values})
    rows = [plan.shown(point) for point in plan.points]
    table = core.encode_table(["B"], rows, "csv").decode()
    assert [r[0] for r in csv.reader(table.splitlines()[1:])] == texts
