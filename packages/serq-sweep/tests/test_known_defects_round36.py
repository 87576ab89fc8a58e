"""Known defects, round 36, in serq-sweep.

1. A sweep at a horizon of inf of a workload that never stops starting sessions, with no --max-events or
   --max-wall, warned that the run has no end and then ran its first point for ever; each run is refused by
   serq_sim.run now, so the plan refuses it, once, before any run (docs/language.md, "A run needs a horizon
   where it runs"), naming the options as the caller gave them.
"""

from __future__ import annotations

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
        f"error: {p}: the run has no end: horizon inf and arrivals that never stop (`arrive poisson`), and no "
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
