"""A sweep's journal is a file serq names itself and writes in place (appended to, emptied by ``--fresh``),
not written whole and renamed over as every other output is. A hard link at its name, the user's own file under
a second name, was written through: ``--fresh`` emptied the user's file and filled it with the sweep's lines,
and a sweep appended its lines to an empty one. Such a file (of more than one name) is now refused as a
symbolic link there is, before anything is read, cleared or run (serq.files.open_own_append)."""

from __future__ import annotations

import os

import pytest

PROGRAM = ("let lam = 1;\nstage s : delay;\nworkload { arrive poisson(lam); }\n"
           "session { set t0 = now; run s (~exp(1)); record req { wait = now - t0; } end; }\n"
           "run { horizon 5; seed 1; }\n")
SWEEP = ["sweep", "p.sq", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o", "t.csv"]


@pytest.mark.parametrize("journal, args", [("t.csv.journal", ["--fresh"]), ("t.csv.journal", []),
                                           ("r.csv.journal", ["--records", "r.csv", "--fresh"])],
                         ids=["fresh", "resume", "records"])
@pytest.mark.parametrize("held", ["the user's notes\n", ""], ids=["notes", "empty"])
def test_a_journal_that_is_a_hard_link_is_refused(tmp_path, monkeypatch, serq_in_process, journal, args, held):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "notes.txt").write_text(held)
    os.link(tmp_path / "notes.txt", tmp_path / journal)
    r = serq_in_process(*SWEEP, *args)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: {journal}: is a hard link, one file with 2 names; serq names this file itself and "
                        "writes it in place only as a file of its own (remove it, or choose another output)\n")
    assert (tmp_path / "notes.txt").read_text() == held  # (neither emptied nor appended to)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["notes.txt", "p.sq", journal])
    os.unlink(tmp_path / journal)  # (the link gone, the sweep runs)
    r = serq_in_process(*SWEEP, *args)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "notes.txt").read_text() == held
