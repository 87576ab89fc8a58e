"""``serq_sim.run(program, progress=True)`` in a process without standard error (``sys.stderr`` is None: a
``pythonw`` program, a daemon started with descriptor 2 closed): the progress bar's check of a terminal
was ``sys.stderr.isatty()``, an ``AttributeError`` out of the run, on both tiers. Without a standard error
there is no terminal to draw on: the run shows no bar and its report is the one ``progress=False`` gives."""

from __future__ import annotations

import sys

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_sim.fast import tier

SOURCE = ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
          "session { set t0 = now; run s (~exp(2)); observe y = now - t0; }\nrun { horizon 50; seed 3; }\n")


@pytest.mark.parametrize("forced", [None, "general"])
def test_progress_without_stderr_runs_quietly(tmp_path, monkeypatch, forced):
    p = tmp_path / "p.sq"
    p.write_text(SOURCE)
    program = serq_frontend.compile(str(p))
    assert tier(program) == "fast"  # the default runs it on the fast tier; SERQ_SIM_TIER=general on the other
    if forced is not None:
        monkeypatch.setenv("SERQ_SIM_TIER", forced)
    want = encode_json(serq_sim.run(program, progress=False))
    monkeypatch.setattr(sys, "stderr", None)
    got = encode_json(serq_sim.run(program, progress=True))
    assert got == want
    assert b'"ended": ' in got and b'"y"' in got
