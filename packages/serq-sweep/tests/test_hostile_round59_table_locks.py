"""Only a sweep's journal was locked (one sweep a table at a time): ``serq compare -o OUT`` and ``serq sweep
--find … -o OUT``, which keep no journal, ran every run while a sweep wrote OUT, or another comparison did,
and replaced its table, or were replaced, without a word (and a sweep that then ended complete removed its
journal, its finished runs gone). They now hold the same lock on ``OUT.journal`` from before their first run
until their table is written, made for it and removed after when empty (serq_sweep.api.table_held); a sweep
holds its points table's so (t.csv's sweep and t.points.csv's each wrote the other's table at their end);
the second command is refused before it runs anything, in the words a second sweep is refused in. The
lock is held here by the test, as the other command's process would hold it."""

from __future__ import annotations

import fcntl

import pytest

pytestmark = pytest.mark.skipif(not hasattr(fcntl, "flock"), reason="a file system with advisory locks")

PROGRAM = ("let a = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (a); }\n"
           "run { horizon 5; seed 1; }\n")
COMPARE = ["compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o", "t.csv"]
FIND = ["sweep", "p.sq", "--find", "mean_live <= 2", "--over", "a", "0.5:4", "--workers", "0", "--no-progress",
        "-o", "t.csv"]
REFUSED = ("error: t.csv: another serq command (a run, a sweep or a comparison) is writing this file now (its journal t.csv.journal is "
           "locked); let it end, or give another --out\n")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("args", [COMPARE, FIND], ids=["compare", "find"])
def test_a_table_another_command_holds_is_refused_before_any_run(folder, serq_in_process, args):
    (folder / "t.csv").write_text("the other command's table\n")
    with open(folder / "t.csv.journal", "a") as held:  # (another sweep's, or comparison's, lock)
        held.write("a line the other sweep wrote\n")
        held.flush()
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = serq_in_process(*args)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", REFUSED)
    assert (folder / "t.csv").read_text() == "the other command's table\n"
    assert (folder / "t.csv.journal").read_text() == "a line the other sweep wrote\n"
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "t.csv", "t.csv.journal"]


@pytest.mark.parametrize("args", [COMPARE, FIND], ids=["compare", "find"])
def test_the_lock_leaves_nothing_behind(folder, serq_in_process, args):
    r = serq_in_process(*args)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "t.csv"]  # (the journal made for the lock: gone)
    # an empty journal no command holds, which holds no run, goes, said (one a killed command left); one that
    # holds runs is an interrupted sweep's, which that sweep resumes: the command is refused, the journal and
    # the table left as they were (test_hostile_round60_table_locks; it wrote its table beside the journal,
    # and the sweep could no longer resume: the table there was no sweep's)
    (folder / "t.csv.journal").write_text("")
    r = serq_in_process(*args)
    assert r.returncode == 0 and "t.csv.journal: an empty journal no command holds" in r.stderr
    assert not (folder / "t.csv.journal").exists()
    entry = '{"key": "0123456789abcdef01234567", "status": "ok"}\n'
    (folder / "t.csv.journal").write_text(entry)
    table = (folder / "t.csv").read_bytes()
    r = serq_in_process(*args)
    assert (r.returncode, r.stderr) == (1, "error: t.csv: its journal t.csv.journal holds the runs of a sweep that "
                                           "did not end there (it was killed); run that sweep again to resume it, or "
                                           "remove the journal, or give another --out\n")
    assert (folder / "t.csv.journal").read_text() == entry and (folder / "t.csv").read_bytes() == table


def test_a_sweep_into_a_table_a_comparison_holds_is_refused(folder, serq_in_process):
    """The other way round: the comparison's lock is a sweep's, so a sweep into its table is refused too (it
    appended to a journal beside a table the comparison then replaced)."""
    from serq_sweep import api

    with api.table_held("t.csv"):
        r = serq_in_process("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv")
        assert (folder / "t.csv.journal").exists()
    assert (r.returncode, r.stderr) == (1, REFUSED)
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq"]


def test_a_sweep_holds_its_points_table_as_that_tables_sweep_would(folder, serq_in_process):
    """A sweep into t.points.csv while a sweep into t.csv runs (or the other way round) is refused: each wrote
    its table over the other's at its end. The lock is t.points.csv's journal's, which a sweep into t.csv makes
    and removes once its tables are written."""
    from serq_sweep import api

    with api.table_held("t.points.csv"):  # (as the sweep into t.csv holds it while it runs)
        r = serq_in_process("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o",
                            "t.points.csv")
    assert (r.returncode, r.stderr) == (1, REFUSED.replace("t.csv", "t.points.csv"))
    with open(folder / "t.points.csv.journal", "a") as held:  # (a sweep into t.points.csv, running)
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = serq_in_process("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv")
    assert (r.returncode, r.stderr) == (1, REFUSED.replace("t.csv", "t.points.csv"))
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "t.points.csv.journal"]  # (the other's, kept)
    (folder / "t.points.csv.journal").unlink()
    r = serq_in_process("sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv")
    assert r.returncode == 0 and sorted(p.name for p in folder.iterdir()) == ["p.sq", "t.csv", "t.points.csv"]
