"""Known defects, round 35, in serq-sweep.

3. A run-time error in a ``--def`` body quoted no line in ``serq sweep``, ``serq compare``, a capacity search
   or the Python API (``--def m:1:5: error: …`` and nothing under it), where ``serq run`` quotes the body: the
   runs are of IR, in workers, which keep no text. The process that compiled the point has the body, and the
   error comes back to it with its place: it quotes the line there (serq.errors.texts_quoted, each point's
   ``texts``), so the table's message, the journal's and the failure said are quoted alike.
6. A table resumed after rows that failed for a reason that was not their program's (an environment variable's
   value refused, ``SERQ_SIM_TIER=bogus``, before such a value was refused ahead of any run; a worker process
   that ended inside the run) kept those rows as failures until ``--fresh``. A resume runs them again
   (core.not_the_programs): by the code their ``warnings`` holds (``environment``, ``worker-ended``, as
   ``trace-changed``), and in a row written before the codes by its message's first words; a run's own error
   is kept as before.
"""

from __future__ import annotations

import pytest
from serq.cli import main

PROGRAM = """\
def m() = 1;
let c = 1;

stage server : fifo;

workload { arrive poisson(1); }

session {
  run server (m() * c);
  end;
}

run { horizon 10; warmup 0; seed 1; }
"""

BODY = "1 + ~exp(now - 1)"

QUOTED = [
    "--def m:1:5: error: at t=0, session 0: ~exp(-1): the mean is negative",
    "  1 + ~exp(now - 1)",
    "      ^",
    "p.sq:9:15: note: in the expansion of `m`, used here",
    "    run server (m() * c);",
    "                ^",
]


def _serq(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return info.value.code or 0, capsys.readouterr().err


@pytest.fixture
def program(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("workers", ["0", "1"])
def test_a_sweep_quotes_a_def_body_in_a_runs_error(program, capsys, monkeypatch, tier, workers):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    status, err = _serq(capsys, "sweep", "p.sq", "--def", f"m={BODY}", "--seeds", "1", "--workers", workers,
                        "--out", "t.csv", "--no-progress")
    assert status == 1
    lines = err.splitlines()
    at = lines.index(QUOTED[0])
    assert lines[at: at + 7] == [*QUOTED, f"(at the sweep's point m={BODY}, seed 1)"], err
    # the table keeps the quoted message
    import csv

    with open(program / "t.csv", newline="") as f:
        assert next(csv.DictReader(f))["message"].splitlines() == QUOTED


def test_a_comparison_quotes_the_body_of_its_arm(program, capsys):
    status, err = _serq(capsys, "compare", "p.sq", "--def", f"m={BODY}", "--def", "m=1", "--seeds", "1..2",
                        "--workers", "0", "--no-progress")
    assert status == 1
    lines = err.splitlines()
    at = lines.index(QUOTED[0])
    assert lines[at: at + 6] == QUOTED, err


def test_a_capacity_search_quotes_the_body(program, capsys):
    status, err = _serq(capsys, "sweep", "p.sq", "--def", f"m={BODY}", "--find", "stages.server.utilisation<0.9",
                        "--over", "c", "1:4", "--seeds", "1", "--workers", "0", "--no-progress")
    assert status == 1
    lines = err.splitlines()
    at = lines.index(QUOTED[0])
    assert lines[at: at + 6] == QUOTED, err


def test_the_python_api_quotes_the_body_by_its_argument(program):
    import serq_sweep

    table = serq_sweep.sweep("p.sq", defs={"m": BODY}, seeds=[1], workers=0)
    assert table["message"][0].splitlines()[:3] == [
        "defs['m']:1:5: error: at t=0, session 0: ~exp(-1): the mean is negative",
        "  1 + ~exp(now - 1)",
        "      ^",
    ]


def test_a_place_quoted_already_or_in_no_text_given_is_left_as_it_is():
    from serq.errors import texts_quoted

    quoted = "\n".join(QUOTED)
    assert texts_quoted(quoted, {"--def m": BODY}) == quoted
    bare = "\n".join(QUOTED[i] for i in (0, 3, 4, 5))
    assert texts_quoted(bare, {"--def m": BODY}) == quoted
    assert texts_quoted(bare, {"--def m": None}) == bare  # (two names cut alike: neither quoted)
    assert texts_quoted(bare, {"--def n": BODY}) == bare


SWEPT = ("let lambda = 0.8;\nstage svc : fifo;\nworkload { arrive poisson(lambda); }\n"
         "session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }\n"
         "run { horizon 5; seed 1; }\n")
ENV_ERROR = ("error: the environment variable SERQ_SIM_TIER is 'bogus': it is 'general' (every run on the general "
             "engine) or unset, empty or 'fast' (the fast tier where a program allows it), either word in any case")
DIED = ("error: p.sq: the worker process running point 1, seed 1 ended without its result (killed by signal 9): "
        "something in the run (a plugin's code, a lack of memory) ended the process")
OWN = "p.sq:4:30: error: at t=0.5, session 0: a run's own error"


def _failed(path, rows: dict[int, tuple[str, str]]) -> None:
    """The table at ``path`` with the rows ``rows`` (row index -> message, warnings) made failures, as a sweep
    writes one: status error, no figures."""
    import csv

    with open(path, newline="") as f:
        reader = csv.reader(f)
        head = next(reader)
        table = list(reader)
    at = {name: i for i, name in enumerate(head)}
    for i, (message, code) in rows.items():
        row = table[i]
        for j in range(at["key"] + 1, len(row)):
            row[j] = ""
        row[at["status"]], row[at["message"]], row[at["warnings"]] = "error", message, code
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([head, *table])


@pytest.mark.parametrize("rows, rerun", [
    ({0: (ENV_ERROR, ""), 1: (ENV_ERROR, "")}, 2),                 # a table written before the code
    ({0: (ENV_ERROR, "environment"), 1: (OWN, "")}, 1),            # the code; a run's own error kept
    ({1: (DIED, "")}, 1),                                          # a worker that ended, before the code
    ({0: ("error: p.sq: the Dask worker running point 0, seed 1 ended without its result: …", "worker-ended")}, 1),
])
def test_a_resume_runs_again_the_rows_that_failed_for_no_fault_of_their_program(program, capsys, monkeypatch, rows,
                                                                                rerun):
    (program / "p.sq").write_text(SWEPT)
    args = ("sweep", "p.sq", "--set", "lambda=0.5,0.6", "--workers", "0", "-o", "t.csv", "--no-progress")
    assert _serq(capsys, *args)[0] == 0
    first = (program / "t.csv").read_text()
    (program / "t.csv.journal").unlink(missing_ok=True)
    _failed(program / "t.csv", rows)
    status, err = _serq(capsys, *args)
    assert f"({rerun} run now, {2 - rerun} resumed)" in err, err
    kept = [r for r in rows.values() if r[0] == OWN]
    assert status == (1 if kept else 0), err
    if not kept:  # every run again: the table the first sweep wrote
        assert (program / "t.csv").read_text() == first


def test_the_codes_are_the_errors(monkeypatch):
    from serq_sim.tier_env import ENVIRONMENT, forced_general
    from serq_sweep import engines
    from serq_sweep.core import WORKER_ENDED, not_the_programs

    monkeypatch.setenv("SERQ_SIM_TIER", "bogus")
    with pytest.raises(Exception) as info:
        forced_general()
    assert (str(info.value), info.value.code) == (ENV_ERROR, ENVIRONMENT)
    died = engines._died(((1, 1, "k"), b"", "h", "p.sq"), -9)
    assert (died["message"], died["warnings"]) == (DIED, WORKER_ENDED)
    assert not_the_programs(died) and not not_the_programs({"status": "error", "message": OWN, "warnings": ""})
    assert not not_the_programs({"status": "ok", "message": "", "warnings": "environment"})
