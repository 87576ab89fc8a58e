"""Two sweeps into one ``--records`` file, each with a table of its own (``-o a.csv --records r.csv`` and ``-o
b.csv --records r.csv``). Each wrote the records file whole at its end, the last over the first: the first
sweep's records were lost without a word, its table and its summary saying they were in ``r.csv``, and a
``--fresh`` second sweep removed the journal the first was appending to. The records' journal is now held
(``flock``) by one sweep at a time, as the table's is: a second sweep is refused before it reads or runs
anything, the journal and the first sweep's records left as they are."""

from __future__ import annotations

import csv
import os
import signal

import pytest
from sweepstop import SERQ, needs_proc, stopped_after

pytestmark = [pytest.mark.timeout(120), needs_proc]

PROG = ("let lam = 1;\nstage s : delay;\nworkload { arrive poisson(lam); }\n"
        "session { set t0 = now; run s (~exp(1)); record req { wait = now - t0; } end; }\n"
        "run { horizon 5; seed 1; }\n")


def _rows(path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.read_text().splitlines()))


def _sweep(*args: str) -> list[str]:
    return ["sweep", "p.sq", "--workers", "0", "--no-progress", *args]


def test_a_second_sweep_into_the_records_of_one_under_way_is_refused(tmp_path, monkeypatch, serq_in_process):
    import subprocess

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    first_args = _sweep("--seeds", "1..3", "-o", "a.csv", "--records", "r.csv")
    # what the first sweep writes when no other sweep is beside it
    alone = subprocess.run([SERQ, *_sweep("--seeds", "1..3", "-o", "alone.csv", "--records", "alone_r.csv")],
                           capture_output=True, text=True, timeout=60)
    assert alone.returncode == 0, alone.stderr
    first = stopped_after(1, first_args, tmp_path / "a.csv.journal")  # one run journaled, its records too
    try:
        journal = (tmp_path / "r.csv.journal").read_bytes()
        assert journal.count(b"\n") == 1
        for fresh in ((), ("--fresh",)):
            second = serq_in_process(*_sweep("--seeds", "4,5", "-o", "b.csv", "--records", "r.csv", *fresh))
            assert second.returncode == 1, second.stderr
            assert second.stderr == ("error: --records r.csv: another serq command (a run, a sweep or a comparison) is "
                                     "writing this file now (its journal r.csv.journal is locked); let it end, or give another --records\n")
            # nothing read, cleared or written: the first sweep's journal whole, no table, no journal of b.csv
            assert (tmp_path / "r.csv.journal").read_bytes() == journal
            assert not (tmp_path / "r.csv").exists()
            assert not (tmp_path / "b.csv").exists() and not (tmp_path / "b.csv.journal").exists()
    finally:
        os.kill(first.pid, signal.SIGCONT)
        _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err.decode()
    # the first sweep's records are what it writes alone, its three runs' rows (keyed as its table's rows)
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "alone_r.csv").read_bytes()
    rows = _rows(tmp_path / "r.csv")
    keys = {r["key"] for r in _rows(tmp_path / "a.csv")}
    assert {r["seed"] for r in rows} == {"1", "2", "3"} and {r["key"] for r in rows} == keys
    assert not (tmp_path / "r.csv.journal").exists()
    # the lock goes with the sweep that held it: the second sweep runs now, and says the first's records are
    # none of its runs before it writes its own
    second = serq_in_process(*_sweep("--seeds", "4,5", "-o", "b.csv", "--records", "r.csv"))
    assert second.returncode == 0, second.stderr
    assert "the records of 3 run(s) there (or in its journal) are of no point and seed of this sweep" in second.stderr
    assert {r["seed"] for r in _rows(tmp_path / "r.csv")} == {"4", "5"}


def test_the_records_journal_is_held_until_the_records_are_written(tmp_path, monkeypatch, serq_in_process):
    """The lock is taken before the journal is read and given back only once the records tables are
    written (a sweep that read the journal, or took the file over, between the first's last run and its
    write would race it): a journal held by another process refuses the sweep, and one no process holds
    is the sweep's."""
    import fcntl

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    held = os.open(tmp_path / "r.csv.journal", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        got = serq_in_process(*_sweep("--seeds", "1", "-o", "t.csv", "--records", "r.csv"))
        assert got.returncode == 1 and "another serq command (a run, a sweep or a comparison) is writing this file now" in got.stderr
        assert not (tmp_path / "t.csv").exists() and not (tmp_path / "r.csv").exists()
        assert (tmp_path / "r.csv.journal").read_bytes() == b""  # (left, the other process's)
    finally:
        os.close(held)
    got = serq_in_process(*_sweep("--seeds", "1", "-o", "t.csv", "--records", "r.csv"))
    assert got.returncode == 0, got.stderr
    assert [r["seed"] for r in _rows(tmp_path / "r.csv")][:1] == ["1"]
    assert not (tmp_path / "r.csv.journal").exists()
