"""The records of a program of several tables are a set of files (``r.req.csv``, ``r.other.csv`` beside
``--records r.csv``), written one after the other: a write that failed part way (a full disk) left the
tables written before it beside an earlier run's (or sweep's) others, a mix of two runs' records, both
``serq run --records`` and ``serq sweep --records``. The set is now all or nothing, as a dump is
(serq.files.renamed_together): a failure leaves every table as it was. The disk is made full by a stand-in
for os.fsync that refuses the one file named."""

from __future__ import annotations

import errno
import os

import pytest

PROGRAM = ("let lam = 1;\nstage s : delay;\nworkload { arrive poisson(lam); }\n"
           "session { set t0 = now; run s (~exp(1)); record req { wait = now - t0; } record other { x = now; } end; }\n"
           "run { horizon 5; seed 1; }\n")


@pytest.fixture
def full_at(monkeypatch):
    """``full_at(name)``: the fsync of a file whose name is ``name`` (its temporary file) fails as a full
    disk's would."""
    real = os.fsync

    def arm(name):
        def fsync(fd):
            base = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
            if base.startswith(f".{name}.") and base.endswith(".tmp"):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd)

        monkeypatch.setattr(os, "fsync", fsync)

    return arm


def _tables(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.name.startswith("r.") and p.suffix == ".csv"}


@pytest.mark.parametrize("command", [["run", "p.sq", "--no-progress", "-o", "rep.txt"],
                                     ["sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.csv"]],
                         ids=["run", "sweep"])
def test_a_set_of_records_that_fails_part_way_leaves_the_earlier_set(tmp_path, monkeypatch, serq_in_process,
                                                                       full_at, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    first = serq_in_process(*command, "--records", "r.csv")
    assert first.returncode == 0, first.stderr
    before = _tables(tmp_path)
    assert sorted(before) == ["r.other.csv", "r.req.csv"]
    full_at("r.other.csv")  # (the second of the set: req, then other)
    again = ["--seed", "2"] if command[0] == "run" else ["--seeds", "2", "--fresh"]
    r = serq_in_process(*command, *again, "--records", "r.csv")
    assert r.returncode == 1
    assert "r.other.csv: No space left on device" in r.stderr
    assert _tables(tmp_path) == before  # (r.req.csv of the second run was written, and is gone with it)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    if command[0] == "sweep":  # (its runs' records kept in their journal, for the sweep's resume)
        assert (tmp_path / "r.csv.journal").stat().st_size > 0
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    r = serq_in_process(*command, *again, "--records", "r.csv")
    assert r.returncode == 0, r.stderr
    after = _tables(tmp_path)
    assert sorted(after) == sorted(before) and after["r.req.csv"] != before["r.req.csv"]  # (the other seed's)


def test_a_sweeps_table_and_points_table_are_one_set(tmp_path, monkeypatch, serq_in_process, full_at):
    """(The same of a sweep's table and its points table: a points table that could not be written left the
    new table beside the earlier sweep's points.)"""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    sweep = ["sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.csv"]
    assert serq_in_process(*sweep, "--seeds", "1").returncode == 0
    before = {n: (tmp_path / n).read_bytes() for n in ("t.csv", "t.points.csv")}
    full_at("t.points.csv")
    r = serq_in_process(*sweep, "--seeds", "2", "--fresh")
    assert r.returncode == 1 and "t.points.csv: No space left on device" in r.stderr
    assert {n: (tmp_path / n).read_bytes() for n in ("t.csv", "t.points.csv")} == before
    assert (tmp_path / "t.csv.journal").stat().st_size > 0  # (its run kept, for its resume)
