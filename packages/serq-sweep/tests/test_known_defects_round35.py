"""Known defects, round 35, in serq-sweep.

3. A run-time error in a ``--def`` body quoted no line in ``serq sweep``, ``serq compare``, a capacity search
   or the Python API (``--def m:1:5: error: …`` and nothing under it), where ``serq run`` quotes the body: the
   runs are of IR, in workers, which keep no text. The process that compiled the point has the body, and the
   error comes back to it with its place: it quotes the line there (serq.errors.texts_quoted, each point's
   ``texts``), so the table's message, the journal's and the failure said are quoted alike.
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
