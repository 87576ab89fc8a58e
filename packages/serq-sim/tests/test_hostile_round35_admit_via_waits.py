"""Sessions queued at a pool a step stage admits to (`admit via`) wait for its admission, not for a release.

The end of a run named every session queued at such a pool, with no holder to release it, as waiting for
ever, "for pools that only they hold: a deadlock, or a demand beyond the capacity": with `budget now > 20 ?
8 : 0` and a horizon of 10.5 the ten requests queued at reqs were said to wait for ever, which a horizon of
40 serves (the report's warning, exit status 4 under --strict). Now such a session waits for ever only when
its stage never admits (its budget at most 0 in every state the run can reach: a budget of 0, whatever the
IR file's or the program's), and the warning says so in those words. Both tiers give the same bytes.
"""

from __future__ import annotations

import serq_frontend
from tiers import same_json

PROGRAM = """pool reqs { cap CAP; admit via E; }
stage E : step { budget BUDGET; cost 1; }
stage d : delay;
workload { arrive renewal(1); }
session {
  hold reqs (1) {
    run E prefill (2);
    run E decode (2);
    run d (WORK);
  }
}
run { horizon HORIZON; }
"""


def _report(monkeypatch, budget: str, horizon: str, cap: str = "4", work: str = "0") -> dict:
    src = (PROGRAM.replace("CAP", cap).replace("BUDGET", budget).replace("HORIZON", horizon)
           .replace("WORK", work))
    return same_json(serq_frontend.compile(source=src), monkeypatch)


def _forever(r: dict) -> list[str]:
    return [n for n in r["notes"] if "wait for ever" in n]


def test_requests_the_stage_admits_later_do_not_wait_for_ever(monkeypatch):
    early = _report(monkeypatch, "now > 20 ? 8 : 0", "10.5")
    # arrivals at t = 1, 2, ..., 10: the budget is 0 until t = 20, so none is admitted yet, none waits for ever
    assert (early["arrivals"], early["ended"]) == (10, 0)
    assert _forever(early) == []
    # the same program run longer serves them: they were waiting for the budget, which rises at t = 20
    late = _report(monkeypatch, "now > 20 ? 8 : 0", "40")
    assert late["ended"] >= 10 and _forever(late) == []


def test_requests_a_stage_of_no_budget_never_admits_are_told_so(monkeypatch):
    r = _report(monkeypatch, "0", "10.5")
    assert (r["arrivals"], r["ended"]) == (10, 0)
    assert _forever(r) == ["warning: 10 sessions wait for ever at the end of the run (each waits to be admitted by "
                           "step stage E (`admit via`), whose budget cannot rise above 0 as jobs arrive, so it "
                           "admits none): 10 queued at reqs (sessions 0, 1, 2, 3, 4, …)"]


def test_requests_behind_a_holder_that_never_releases_still_wait_for_it(monkeypatch):
    # reqs of one unit, held by session 0 for ever (its run of infinite work): the others do not fit, whatever
    # the stage admits, and wait for that holder, as before
    r = _report(monkeypatch, "8", "10.5", cap="1", work="inf")
    assert r["arrivals"] == 10
    assert _forever(r) == ["warning: 10 sessions wait for ever at the end of the run (each waits for pools that only "
                           "sessions that never release them hold: session 0, whose run of infinite work never "
                           "completes; or in a run of infinite work of its own, which never completes): 1 at stage "
                           "d, in a run of infinite work (session 0, in the run at <source>:9:5); 9 queued at reqs "
                           "(sessions 1, 2, 3, 4, 5, …)"]


# --- a step iteration of infinite cost --------------------------------------------------------------------
#
# An iteration whose cost is inf (`cost decoders > 0 ? 1 / 0 : 1`: the second iteration, of the two requests'
# decodes) never ends, so its residents never complete and the requests queued behind their holds never fit:
# the report said nothing of it (a fifo stage's run of infinite work was told, a step stage's iteration not).

INFINITE_COST = """pool reqs { cap 2; admit via E; }
stage E : step { budget 8; cost decoders > 0 ? 1 / 0 : 1; }
workload { arrive renewal(1); }
session {
  hold reqs (1) {
    run E prefill (2);
    run E decode (2);
  }
}
run { horizon 10.5; }
"""


def test_the_residents_of_an_iteration_of_infinite_cost_wait_for_ever(monkeypatch):
    r = same_json(serq_frontend.compile(source=INFINITE_COST), monkeypatch)
    # arrivals at t = 1, ..., 10; sessions 0 and 1 are admitted (reqs of 2); the iteration that starts at t = 2
    # with session 0 decoding (session 1 prefilling beside it) never ends
    assert (r["arrivals"], r["ended"]) == (10, 0)
    assert _forever(r) == [
        "warning: 10 sessions wait for ever at the end of the run (each waits at step stage E, whose iteration "
        "under way, of infinite cost, never ends; or for pools that only sessions that never release them hold: "
        "the residents of step stage E, whose iteration never ends): 2 at stage E, which will never complete "
        "them (sessions 0, 1, in the runs at <source>:7:5, <source>:6:5); 8 queued at reqs (sessions 2, 3, 4, 5, "
        "6, …)"]


def test_an_iteration_of_finite_cost_past_the_horizon_is_no_wait_for_ever(monkeypatch):
    r = same_json(serq_frontend.compile(source=INFINITE_COST.replace("1 / 0", "1e300")), monkeypatch)
    assert r["ended"] == 0 and _forever(r) == []
