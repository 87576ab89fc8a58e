"""``run { }`` with no horizon (and no ``--horizon``) is an error at the run block, its line quoted with a caret:
the empty block left no span in the IR (serq_ir's RunSpans holds one per setting given, and it gives none), so
serq.loading.no_horizon had nowhere to point and said ``p.sq: error: the run has no horizon: …`` at no line.
The linker now gives an empty block's own place, ``RunSpans.block``, an optional span omitted when absent: it is
given only for a block of no setting, so the IR of every other program is as it was (a block with a setting
has that setting's span; a program without a run block has no span at all), and the IR's version stays 2
(serq_ir.nodes.IR_VERSION: optional data about the source keeps it)."""

from __future__ import annotations

import json

import serq_frontend

HEAD = "stage d : delay;\nworkload { arrive batch(1); }\nsession { run d (1); }\n"


def _ir_run(serq_in_process, path) -> dict:
    r = serq_in_process("ir", str(path))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["run"]


def test_serq_run_points_at_the_empty_block(tmp_path, serq_in_process, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(HEAD + "run { }\n")
    r = serq_in_process("run", "p.sq")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("p.sq:4:1: error: the run block gives no horizon: write `horizon T;` in it, or give "
                        "--horizon T (`inf`: until no event is left)\n"
                        "  run { }\n"
                        "  ^\n")
    # the block across lines: at its `run`, line 5
    (tmp_path / "q.sq").write_text(HEAD + "\nrun {\n}\n")
    r = serq_in_process("run", "q.sq")
    assert r.stderr.startswith("q.sq:5:1: error: the run block gives no horizon"), r.stderr
    # given --horizon, it runs
    r = serq_in_process("run", "p.sq", "--horizon", "5", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["end"] == 5.0


def test_from_its_ir_file_too(tmp_path, serq_in_process, monkeypatch):
    """The IR written of it keeps the place, and a run of the IR file points there, quoting the source."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(HEAD + "run { }\n")
    run = _ir_run(serq_in_process, "p.sq")
    assert run == {"span": {"block": ["p.sq", 4, 1]}}
    r = serq_in_process("ir", "p.sq")
    assert r.returncode == 0, r.stderr
    (tmp_path / "p.ir.json").write_text(r.stdout)
    r = serq_in_process("run", "p.ir.json")
    assert r.returncode == 1
    assert r.stderr.startswith("p.sq:4:1: error: the run block gives no horizon"), r.stderr
    assert "  run { }\n  ^\n" in r.stderr


def test_other_run_blocks_have_no_block_span(tmp_path, serq_in_process):
    """A block with a setting: that setting's span alone (no ``block``: the IR as it was); no run block: no
    span; the API's program likewise."""
    (tmp_path / "a.sq").write_text(HEAD + "run { seed 3; }\n")
    assert _ir_run(serq_in_process, tmp_path / "a.sq") == {"seed": 3, "span": {"seed": [str(tmp_path / "a.sq"), 4, 7]}}
    (tmp_path / "b.sq").write_text(HEAD)
    assert _ir_run(serq_in_process, tmp_path / "b.sq") == {}
    assert serq_frontend.compile(source=HEAD + "run { horizon 2; }\n", sets={}, defs={}).run.span.block is None
    assert serq_frontend.compile(source=HEAD + "run { }\n", sets={}, defs={}).run.span.block == ("<source>", 4, 1)
