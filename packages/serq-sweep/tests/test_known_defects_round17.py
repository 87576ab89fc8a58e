"""Known defects, round 17 (serq-sweep): a sweep's table says which runs' reports warned.

The report's warnings (`notes`: a run not steady, holds rejected as never fitting, too few samples, ...) are no
figures, and a sweep's table had nothing of them: a user scanning its rows could not tell which runs warned.
The table has a column `warnings` now, before `key`: the warnings' short codes (serq_sim.notes.WARNING_CODES),
each once, joined by `;`, empty when the report warned of nothing; in CSV and Parquet, kept by the journal and
by a resume (docs/sweep.md)."""

from __future__ import annotations

import csv
import io
import json

import pytest
import serq_frontend
import serq_sim
from serq_sim.notes import Note, warning_code, warning_codes
from serq_sweep import sweep

pytestmark = pytest.mark.timeout(60)

# u = 1 fits the pool (cap 4) and the report warns of nothing: the program observes nothing (no observe to
# have too few samples), one session at a time holds 1 of 4 (steady, nothing rejected). u = 6 can never fit:
# every session's hold is rejected as it joins the queue, the one warning `pool m rejected … hold(s) that can
# never fit` (code `rejected`). u = 2 fails at its first run (a negative work at t = 1): a run that failed has
# no report, so no warnings.
PROGRAM = """let u = 1;
pool m { cap 4; }
stage s : delay;
workload { arrive renewal(1); }
session {
  hold m (u) { run s (u == 2 ? serial - 5 : 0.5); }
}
run { horizon 100; warmup 0; seed 1; }
"""
EXPECTED = {(1, 1): "", (1, 2): "", (6, 1): "rejected", (6, 2): "rejected", (2, 1): "", (2, 2): ""}


def _csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _sweep(tmp_path, **kw):
    return sweep(str(tmp_path / "p.sq"), sets={"u": [1, 6, 2]}, seeds=[1, 2], workers=0, progress=False, **kw)


def test_the_table_has_each_runs_warnings(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    _sweep(tmp_path, out=str(out))
    rows = _csv(out)
    header = list(rows[0])
    assert header[:7] == ["point", "u", "seed", "status", "message", "warnings", "key"]
    assert {(int(r["u"]), int(r["seed"])): r["warnings"] for r in rows} == EXPECTED
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "ok", "error", "error"]
    # each row's codes are those of `serq run`'s report of that point and seed (the rejection's warning
    # itself, in its words)
    for u in (1, 6):
        for seed in (1, 2):
            report = serq_sim.run(serq_frontend.compile(source=PROGRAM, sets={"u": u}, defs={}), seed=seed)
            assert warning_codes(report.notes) == EXPECTED[(u, seed)]
            if u == 6:
                [w] = report.warnings
                assert w.startswith("warning: pool m rejected 100 hold(s) that can never fit its capacity 4")
    # the points table aggregates figures only: no column of the warnings
    with open(tmp_path / "t.points.csv", newline="") as f:
        assert not any("warnings" in c for c in next(csv.reader(f)))


def test_the_codes_of_the_reports_warnings():
    # one code a kind of warning, each once in the order it first comes; notes are no warnings; a warning that
    # carries no code (a plugin's text) is `plugin`, whatever its words (round 19: they were matched)
    notes = [Note("warning: the run is not steady: the live sessions climb", "not-steady"),
             "note: observe hit is constant 0",
             Note("warning: too few samples after the warm-up (t = 0) for a CI", "few-samples"),
             Note("warning: pool kv[1] rejected 2 hold(s)", "rejected"),
             Note("warning: pool kv[0] rejected 1 hold(s)", "rejected"),
             Note("warning: 3 sessions stuck in the run, preempted again", "stuck"),
             Note("warning: 4 sessions wait for ever at the end of the run", "waits-for-ever"),
             "warning: a plugin's own words", "warning: the run is not steady: a plugin's words"]
    assert warning_codes(notes) == "not-steady;few-samples;rejected;stuck;waits-for-ever;plugin"
    assert warning_code("note: the run stopped") is None
    assert warning_codes([]) == ""


def test_the_frame_carries_them(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    table = _sweep(tmp_path)
    got = {(int(u), int(s)): ("" if w != w else w) for u, s, w in zip(table["u"], table["seed"], table["warnings"])}
    assert got == EXPECTED


def test_a_resume_keeps_them_from_the_table(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    _sweep(tmp_path, out=str(out))
    # a cell edited by hand is written back as it reads: the resume took the row, it did not run it again
    text = out.read_text()
    rows = _csv(out)
    key = rows[2]["key"]
    assert rows[2]["warnings"] == "rejected"
    out.write_text(text.replace(f",rejected,{key},", f",edited,{key},"))
    _sweep(tmp_path, out=str(out))
    assert [r["warnings"] for r in _csv(out)] == ["", "", "edited", "rejected", "", ""]


def test_a_table_written_before_the_column_runs_again(tmp_path):
    # its rows say nothing of their warnings: they are run again (once), not written back as runs that warned
    # of nothing
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    _sweep(tmp_path, out=str(out))
    rows = _csv(out)
    buf = io.StringIO()
    w = csv.DictWriter(buf, [c for c in rows[0] if c != "warnings"], lineterminator="\n")
    w.writeheader()
    for r in rows:
        r.pop("warnings")
        r["end"] = "7.0" if r["status"] == "ok" else r["end"]  # (a figure the rerun gives back as 100.0)
        w.writerow(r)
    out.write_text(buf.getvalue())
    _sweep(tmp_path, out=str(out))
    again = _csv(out)
    assert {(int(r["u"]), int(r["seed"])): r["warnings"] for r in again} == EXPECTED
    assert [r["end"] for r in again if r["status"] == "ok"] == ["100.0"] * 4


def test_the_journal_keeps_them_and_a_resume_reads_them_there(tmp_path):
    # an entry journaled by a sweep that was stopped: its warnings are in the entry, and the resume takes them
    # from it (an entry edited by hand is written back as it reads); an entry journaled before runs kept their
    # warnings has none, and its run runs again
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    _sweep(tmp_path, out=str(out))
    rows = _csv(out)
    journal = tmp_path / "t.csv.journal"
    entries = []
    for r in rows[:4]:  # the ok runs, as a sweep journals them
        figures = {k: float(v) for k, v in r.items() if k not in ("point", "u", "seed", "status", "message",
                                                                    "warnings", "key") and v not in ("", "False",
                                                                                                     "True")}
        entries.append({"key": r["key"], "status": "ok", "message": "", "warnings": r["warnings"],
                        "figures": figures})
    entries[2]["warnings"] = "from-the-journal"
    del entries[0]["warnings"]
    entries[0]["figures"]["end"] = 7.0
    out.unlink()
    (tmp_path / "t.points.csv").unlink()
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
    _sweep(tmp_path, out=str(out))
    again = _csv(out)
    assert [r["warnings"] for r in again] == ["", "", "from-the-journal", "rejected", "", ""]
    assert again[0]["end"] == "100.0"  # (run again: the entry had no warnings)
    assert not journal.exists()  # (the complete table removes it)
    # a journal entry whose warnings are not text is no entry a sweep writes: one error at its line
    entries[0]["warnings"] = 3
    out.unlink()
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
    with pytest.raises(Exception) as e:
        _sweep(tmp_path, out=str(out))
    assert "t.csv.journal:1" in str(e.value) and "warnings" in str(e.value)
