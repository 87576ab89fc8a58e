"""Known defects, round 36, in serq-sim.

1. A horizon of inf bounds nothing: ``serq_sim.run(program, horizon=math.inf)`` of a workload that starts
   sessions for ever (an open one without a count of arrivals, a closed population) ran until the process was
   killed, where the same call without a horizon is refused (test_api_endless_runs). It is refused the same
   way, the horizon given to run() or in the run block; ``serq run --horizon inf`` of such a program warned
   that the run has no end and ran for ever: it is refused too unless --max-events or --max-wall bounds it
   (docs/simulator.md, docs/language.md "A run needs a horizon where it runs").
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim

# ---------------------------------------------------------------- 1. a horizon of inf is no bound

BODY = "stage s : delay;\nsession { run s (1); end; }\n"
ENDLESS = "and its workload never stops starting sessions: give horizon=T (math.inf with max_events or max_wall"


def _program(workload: str, run: str = ""):
    return serq_frontend.compile(source=f"workload {{ {workload} }}\n{BODY}{run}")


@pytest.mark.timeout(60)  # (before: the run never returned)
@pytest.mark.parametrize("workload", ["arrive poisson(2);", "arrive renewal(0.5);", "arrive closed(3);"])
def test_a_horizon_of_inf_given_to_run_is_no_bound(workload):
    with pytest.raises(ValueError) as info:
        serq_sim.run(_program(workload), horizon=math.inf)
    assert str(info.value) == f"run() was given horizon=inf, which is no bound, {ENDLESS}: until one of them stops it)"


@pytest.mark.timeout(60)
def test_a_horizon_of_inf_in_the_run_block_is_no_bound():
    with pytest.raises(ValueError, match="the program's run block gives horizon inf, which is no bound, and its "
                                         "workload never stops starting sessions"):
        serq_sim.run(_program("arrive poisson(2);", "run { horizon inf; }\n"))
    # a finite horizon given to run() bounds the run block's inf: the run ends there
    assert serq_sim.run(_program("arrive poisson(2);", "run { horizon inf; }\n"), horizon=4).result.end == 4.0


@pytest.mark.timeout(60)
def test_a_run_of_inf_that_something_ends_still_runs():
    p = _program("arrive poisson(2);")
    # a bound on its events: 50 events, partial
    r = serq_sim.run(p, horizon=math.inf, max_events=50)
    assert (r.partial, r.result.events) == ("max-events", 50)
    # a count of arrivals: three sessions of one unit each, drained, as without a horizon
    r = serq_sim.run(p, horizon=math.inf, arrivals=3)
    assert r.partial is None and (r.result.arrivals, r.result.ended) == (3, 3)
    assert r.result.end == serq_sim.run(p, arrivals=3).result.end
    # a batch ends when no event is left: four sessions of 1 at t = 0 end at 1
    r = serq_sim.run(_program("arrive batch(4);"), horizon=math.inf)
    assert (r.partial, r.result.end, r.result.ended) == (None, 1.0, 4)


CLI_PROGRAM = "stage f : fifo;\nworkload { arrive poisson(0.5); }\nsession { run f (1); }\nrun { horizon 10; }\n"
REFUSED = ("error: {file}: the run has no end: horizon inf and arrivals that never stop (`arrive poisson`), and no "
           "--max-events or --max-wall to stop it; give --arrivals N (or `arrivals N;` in the run block), a finite "
           "horizon, or --max-events N or --max-wall S (a partial report where it stops)\n")


def _serq(argv, capsys) -> tuple[int, str, str]:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("given", [["--horizon", "inf"], ["--set", "x=1"]])
def test_serq_run_refuses_a_run_with_no_end_that_nothing_bounds(tmp_path, capsys, given):
    p = tmp_path / "p.sq"
    text = CLI_PROGRAM if given[0] == "--horizon" else "let x = 1;\n" + CLI_PROGRAM.replace("horizon 10", "horizon inf")
    p.write_text(text)
    code, out, err = _serq(["run", str(p), "--no-progress", *given], capsys)
    assert (code, out, err) == (1, "", REFUSED.format(file=p)), err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bound", [["--max-events", "40"], ["--max-wall", "0.5"]])
def test_serq_run_with_a_bound_runs_and_warns(tmp_path, capsys, bound):
    p = tmp_path / "p.sq"
    p.write_text(CLI_PROGRAM)
    code, out, err = _serq(["run", str(p), "--no-progress", "--horizon", "inf", *bound], capsys)
    assert code == 3 and "run: PARTIAL" in out, (code, out, err)
    assert err.count("warning: the run has no end") == 1 and "error" not in err, err
