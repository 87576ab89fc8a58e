"""A count of arrivals (``run { arrivals M; }``) given a workload that is not open (``arrive batch(N)``,
``arrive closed(n)``) is refused with advice that works: remove the count (the run then ends by its
horizon), or keep it and make the workload open (``arrive poisson(RATE);`` with a horizon). The advice of a
batch was "change its count", and no count of a batch is taken. The caret is under ``arrivals``; the
command line's ``--arrivals`` and an argument of ``serq_sim.run`` give the same advice; and each way out
the message names, written into the program, runs on both tiers (the report of the sessions by hand)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import run
from serq_sim.errors import SimError

BODY = "stage svc : delay;\n\nworkload {\n  arrive ARRIVE;\n}\n\nsession {\n  run svc (2);\n  end;\n}\n\n"
RUN_LINE = "run { horizon 10; arrivals 3; }"


def _source(arrive: str, run_line: str = RUN_LINE) -> str:
    return BODY.replace("ARRIVE", arrive) + run_line + "\n"


#: the advice after "`arrivals` needs an open workload (`arrive poisson` or `arrive renewal`)"
OPEN = ", or keep the count and make the workload open (`arrive poisson(RATE);` with a horizon)"
ADVICE = {
    "batch(5)": ("; `arrive batch(5)` starts its 5 sessions at time 0 and no more, so no count of arrivals "
                 "ends it: remove the count and bound the run by its horizon (`--horizon inf`, "
                 "`run { horizon inf; }`, runs the 5 to the end)" + OPEN),
    "batch(1)": ("; `arrive batch(1)` starts its 1 session at time 0 and no more, so no count of arrivals "
                 "ends it: remove the count and bound the run by its horizon (`--horizon inf`, "
                 "`run { horizon inf; }`, runs it to the end)" + OPEN),
    "closed(2)": ("; `arrive closed(2)` starts a session again as each one ends, so no count of arrivals ends "
                  "it: remove the count and bound the run by its horizon (`--horizon T`, `run { horizon T; }`), "
                  "or run M sessions, 2 at a time, as `arrive batch(M);` behind a pool of 2 slots "
                  "(`pool slots { cap 2; }`, the session inside `hold slots (1) { … }`; `--horizon inf` runs "
                  "them to the end)" + OPEN),
}


@pytest.mark.parametrize("arrive", sorted(ADVICE))
def test_the_run_block_is_refused_at_arrivals_with_advice_that_works(arrive, tmp_path):
    f = tmp_path / "p.sq"
    f.write_text(_source(arrive))
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(path=str(f))
    caret = " " * (2 + RUN_LINE.index("arrivals")) + "^"
    assert str(e.value) == (f"{f}:12:19: error: `arrivals` needs an open workload (`arrive poisson` or "
                            f"`arrive renewal`){ADVICE[arrive]}\n  {RUN_LINE}\n{caret}")
    assert "change its count" not in str(e.value)


@pytest.mark.parametrize("arrive", sorted(ADVICE))
def test_an_argument_of_run_gets_the_same_advice(arrive):
    program = serq_frontend.compile(source=_source(arrive, "run { horizon 10; }"), sets={}, defs={})
    with pytest.raises(SimError) as e:
        serq_sim.run(program, arrivals=3)
    assert str(e.value) == ("error: arrivals=3: needs an open workload (arrive poisson or renewal)"
                            + ADVICE[arrive])


def test_removing_the_count_runs_a_batch_to_the_end(monkeypatch):
    """batch(5) of sessions each 2 on a delay stage, horizon inf: the five end at 2, 5 completions."""
    report, _ = run(_source("batch(5)", "run { horizon inf; }"), monkeypatch)
    assert (report.result.arrivals, report.result.ended, report.result.end) == (5, 5, 2.0)


def test_removing_the_count_runs_a_closed_population_to_its_horizon(monkeypatch):
    """closed(2) of sessions each 2, horizon 10: each of the 2 places starts a session at 0, 2, 4, 6, 8 and 10
    (the horizon's instant is run): 12 arrivals, the 10 started before 10 ended."""
    report, _ = run(_source("closed(2)", "run { horizon 10; }"), monkeypatch)
    assert (report.result.arrivals, report.result.ended, report.result.end) == (12, 10, 10.0)


def test_keeping_the_count_with_an_open_workload_runs_it(monkeypatch):
    """The advice's open workload keeps `arrivals 3`: poisson(1000) (arrivals at 0 then about 0.001 apart),
    each session 2: 3 arrivals, all drained, the last ending 2 after the third arrival."""
    report, _ = run(_source("poisson(1000)"), monkeypatch)
    res = report.result
    assert (res.arrivals, res.ended) == (3, 3)
    assert 2.0 < res.end < 2.1
