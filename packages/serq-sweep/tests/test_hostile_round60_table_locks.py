"""The outputs that were not held as a sweep's table is (the lock on ``OUT.journal``, serq_sweep.api.table_held):
each table's own file of a sweep's ``--records`` for a program of several tables (``r.req.csv`` beside
``--records r.csv``), which a sweep or comparison writing that file as its table (``-o r.req.csv``) and the
records' sweep each wrote whole at their end, the last over the first; and the Python API's ``find(out=)``,
which ``serq sweep --find -o`` holds. And the journals: none that holds a run is ever removed (an empty one was
looked at by its name, one of them after its lock was given up), and an empty one a killed command left is
said when a command finds it (it went without a word). The other command's lock is held here by the test, as
its process would hold it."""

from __future__ import annotations

import os

import pytest
from serq.errors import UserError
from serq_sweep import api

PROGRAM = ("let lam = 1;\nstage s : delay;\nworkload { arrive poisson(lam); }\n"
           "session { set t0 = now; run s (~exp(1)); record req { wait = now - t0; } record other { x = 1; } end; }\n"
           "run { horizon 5; seed 1; }\n")
SWEEP = ["sweep", "p.sq", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o", "t.csv", "--records", "r.csv"]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_records_table_another_command_writes_is_refused(folder, serq_in_process):
    with api.table_held("r.req.csv"):  # (a sweep or comparison with -o r.req.csv, under way)
        r = serq_in_process(*SWEEP)
        assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "r.req.csv.journal"]  # (the other's lock)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("error: r.req.csv: another serq command (a run, a sweep or a comparison) is writing this file now (its journal "
                        "r.req.csv.journal is locked); let it end, or give another --records\n")
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq"]  # nothing run, nothing left
    r = serq_in_process(*SWEEP)
    assert r.returncode == 0, r.stderr
    # the two tables' files, and no journal left of the locks
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "r.other.csv", "r.req.csv", "t.csv", "t.points.csv"]


def test_a_records_sweep_under_way_holds_its_tables_files(folder, serq_in_process):
    """The other way round: a sweep whose table is one of those files, while the records' sweep runs (its
    Records opened, as run_plan opens them), is refused in the words a second sweep of one table is."""
    import serq_sweep

    plan = serq_sweep.core.plan("p.sq", seeds="1..2")
    records = api.Records("r.csv")
    records.check(plan, "t.csv", [])
    records.open(fresh=False)
    try:
        r = serq_in_process("sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "r.other.csv")
    finally:
        records.close(failed=True)
    assert (r.returncode, r.stderr) == (1, "error: r.other.csv: another serq command (a run, a sweep or a comparison) is writing "
                                           "this file now (its journal r.other.csv.journal is locked); let it end, or give "
                                           "another --out\n")
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq"]


def test_the_apis_find_holds_its_table(folder):
    import serq_sweep

    args = ("p.sq", "mean_live <= 2", ("lam", "0.5:4"))
    with api.table_held("f.csv"), pytest.raises(UserError) as e:
        serq_sweep.find(*args, workers=0, out="f.csv", tol=1)
    assert str(e.value) == ("error: f.csv: another serq command (a run, a sweep or a comparison) is writing this file now (its journal "
                            "f.csv.journal is locked); let it end, or give out= another name")
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq"]
    columns, rows = serq_sweep.find(*args, workers=0, out="f.csv", tol=1)
    assert len(rows) == 1 and "lam" in columns
    assert sorted(p.name for p in folder.iterdir()) == ["f.csv", "p.sq"]


def test_a_journal_is_removed_only_empty_and_still_the_one_held(folder):
    path = folder / "t.csv.journal"
    with open(path, "a") as held:
        assert api._drop_if_empty(str(path), held) and not path.exists()  # (empty, the one held)
    with open(path, "a") as held:
        with open(path, "a") as other:  # (a run appended by another: never removed)
            other.write('{"key": "k"}\n')
        assert not api._drop_if_empty(str(path), held) and path.read_text() == '{"key": "k"}\n'
    os.unlink(path)
    with open(path, "a") as held:
        os.replace(folder / "p.sq", path)  # (the name now another file's, with content)
        assert not api._drop_if_empty(str(path), held) and path.read_text() == PROGRAM
        path.write_text("")  # (another file, empty: not the one held either)
        assert not api._drop_if_empty(str(path), held) and path.exists()


def test_an_empty_journal_left_by_a_killed_command_is_said(folder, serq_in_process):
    (folder / "t.csv.journal").write_text("")  # (a sweep killed before its first run ended: kill -9)
    r = serq_in_process(*SWEEP[:-2])
    assert r.returncode == 0
    assert r.stderr.splitlines()[0] == ("serq: t.csv.journal: an empty journal no command holds (a command killed "
                                        "there left it: a sweep or a comparison before its first run ended, a run as "
                                        "it wrote this file); it holds no run, and this sweep journals its runs there")
    assert sorted(p.name for p in folder.iterdir()) == ["p.sq", "t.csv", "t.points.csv"]


def test_a_finished_sweep_removes_its_own_journal_only(folder):
    """A sweep that ended complete removed the file at its journal's name, whatever it was then (one moved
    there since, another sweep's runs): now only the very journal it holds."""
    path = folder / "t.csv.journal"
    with open(path, "a") as held:
        held.write('{"key": "k"}\n')
        held.flush()
        api._drop_held(str(path), held)
        assert not path.exists()
    with open(path, "a") as held:
        other = folder / "other.journal"
        other.write_text('{"key": "theirs"}\n')
        os.replace(other, path)  # (another sweep's journal, put at the name)
        api._drop_held(str(path), held)
        assert path.read_text() == '{"key": "theirs"}\n'
