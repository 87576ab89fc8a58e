"""``serq_sweep.sweep(..., progress=True)`` (and ``compare``) in a process without standard error
(``sys.stderr`` is None: a ``pythonw`` program, a daemon started with descriptor 2 closed): tqdm's bar was
made on ``sys.stderr`` and its first draw wrote to None, an ``AttributeError`` out of the sweep after its
first run. Without a standard error there is nothing to draw on: no bar, and the table is the one
``progress=False`` gives."""

from __future__ import annotations

import sys

import serq_sweep

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")


def test_a_sweep_and_a_comparison_without_stderr_draw_no_bar(tmp_path, monkeypatch):
    p = tmp_path / "p.sq"
    p.write_text(PROGRAM)
    want = serq_sweep.sweep(str(p), sets={"rate": [1, 1.5]}, seeds=[1, 2], workers=0, progress=False)
    pairs = serq_sweep.compare(str(p), sets={"rate": [1, 1.5]}, seeds=[1, 2], workers=0, progress=False)
    assert len(want) == 4 and list(want["rate"]) == [1, 1, 1.5, 1.5]
    monkeypatch.setattr(sys, "stderr", None)
    got = serq_sweep.sweep(str(p), sets={"rate": [1, 1.5]}, seeds=[1, 2], workers=0, progress=True)
    assert got.equals(want)
    assert serq_sweep.compare(str(p), sets={"rate": [1, 1.5]}, seeds=[1, 2], workers=0, progress=True).equals(pairs)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["p.sq"]
