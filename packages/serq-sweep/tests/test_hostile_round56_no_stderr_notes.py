"""The notes and warnings of the Python API (``serq_sweep.sweep``'s resume of a table or records holding runs it
leaves out, ``serq_sweep.find``'s note of a condition that holds everywhere, ``serq_sweep.plot``'s) in a
process without standard error (``sys.stderr`` is None: a ``pythonw`` program, a daemon started with
descriptor 2 closed): they were ``print(…, file=sys.stderr)``, which writes to standard output when
``sys.stderr`` is None, so a note landed in the caller's output. They are said as the serq commands say
theirs (``click.echo(…, err=True)``), which drops a note where there is no standard error; with one, the note
is there as before."""

from __future__ import annotations

import sys

import serq_sweep

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; record r { w = now - t0; } }\nrun { horizon 20; seed 3; }\n")


def _resume(tmp_path, name):
    p = str(tmp_path / "p.sq")
    out, records = str(tmp_path / f"{name}.csv"), str(tmp_path / f"{name}.rec.csv")
    serq_sweep.sweep(p, seeds=[1, 2], workers=0, progress=False, out=out, records=records)
    return serq_sweep.sweep(p, seeds=[1], workers=0, progress=False, out=out, records=records)


def _find(tmp_path):
    return serq_sweep.find(str(tmp_path / "p.sq"), "y.mean >= 0", ("rate", "1:3:1"), workers=0, progress=False)


def test_the_api_notes_go_to_stderr_or_nowhere(tmp_path, monkeypatch, capsys):
    (tmp_path / "p.sq").write_text(PROGRAM)
    # with a standard error: the notes are there (what the case without one must not print)
    want = _resume(tmp_path, "a")
    want_find = _find(tmp_path)
    said = capsys.readouterr()
    assert said.out == ""
    assert "warning: " in said.err and "a.csv: 1 run(s) of the table there" in said.err, said.err
    assert "a.rec.csv" in said.err and "holds" in said.err, said.err
    # without one: the same results, nothing on standard output
    monkeypatch.setattr(sys, "stderr", None)
    got = _resume(tmp_path, "b")
    got_find = _find(tmp_path)
    monkeypatch.undo()
    assert capsys.readouterr().out == ""
    assert len(got) == len(want) == 2 and all(g.equals(w) for g, w in zip(got, want, strict=True))
    assert got_find == want_find
