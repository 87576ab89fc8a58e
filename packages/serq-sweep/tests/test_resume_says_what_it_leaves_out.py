"""A sweep resumed from a table (``--out``) writes a table of its own runs alone: the rows there of runs it
does not run (a seed or value no longer swept, a program changed since) are left out. It did so without a
word; it says, before its first run, how many runs of the table and of its journal it leaves out and why."""

from __future__ import annotations

import json

import pytest
from serq_sweep import sweep

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); }
run { horizon 3; seed 1; }
"""


def _said(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]


@pytest.mark.timeout(60)
def test_a_narrower_resume_says_how_many_runs_it_leaves_out(tmp_path, capsys):
    prog, out = tmp_path / "p.sq", tmp_path / "o.csv"
    prog.write_text(PROGRAM)
    sweep(str(prog), seeds="1..3", out=str(out), workers=0, progress=False)
    assert _said(capsys) == []
    # seeds 1 and 2 resume, seed 3 is no run of this sweep; a journal entry of another run is one more
    (tmp_path / "o.csv.journal").write_text(json.dumps(
        {"key": "0" * 24, "status": "ok", "message": "", "figures": {}}) + "\n")
    frame = sweep(str(prog), seeds="1..2", out=str(out), workers=0, progress=False)
    said = _said(capsys)
    assert len(said) == 1 and said[0].startswith(f"warning: {out}: 2 run(s) of the table there (or its journal) "
                                                 "are no point and seed of this sweep"), said
    assert "leaves them out" in said[0]
    assert sorted(frame["seed"]) == [1, 2]
    # the same sweep again has nothing to leave out
    sweep(str(prog), seeds="1..2", out=str(out), workers=0, progress=False)
    assert _said(capsys) == []
