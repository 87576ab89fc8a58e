"""Known defects, round 34, in serq-sim (run-time messages).

1. A run-time error in a ``--def`` body had no quoted line (``--def m:1:1: error: at t=0, session 0: …`` and
   nothing under it), where the compile's errors of the same body quote it: ``serq run`` now quotes the
   body it compiled, with the caret, as it quotes a file (serq.errors.texts_given, serq.loading.defs_quoted).
"""

from __future__ import annotations

import pytest

DEF_PROGRAM = """\
def m() = 1;

stage server : fifo;

workload { arrive poisson(1); }

session {
  run server (m());
  end;
}

run { horizon 10; warmup 0; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_run_time_error_in_a_def_body_quotes_the_body(serq, tmp_path, monkeypatch, tier):
    (tmp_path / "p.sq").write_text(DEF_PROGRAM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq("run", "p.sq", "--no-progress", "--def", "m=1 + ~exp(now - 1)")
    assert r.returncode == 1
    assert r.stderr.splitlines()[:3] == [
        "--def m:1:5: error: at t=0, session 0: ~exp(-1): the mean is negative",
        "  1 + ~exp(now - 1)",
        "      ^",
    ], r.stderr
    # the note at the use quotes the file as before
    assert "p.sq:8:15: note: in the expansion of `m`, used here\n    run server (m());\n" in r.stderr
    # the body is quoted only while its run runs: the same span read afterwards names no text
    from serq.errors import source_excerpt

    assert source_excerpt("--def m", 1, 5) == ""
