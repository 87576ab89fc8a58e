"""A sweep's ``--records`` journal of a run whose records are longer, as one JSON line, than the journal's
reader takes (serq.files.MAX_LINE, 16 MiB: some 300 000 records). The sweep wrote the line whole and its
resume refused it, ``r.csv.journal: line 1 is longer than 16 MiB, which no entry of a sweep's journal is;
remove the file or give --fresh``: a sweep of large runs stopped by Ctrl-C, a kill or a full disk could not be
resumed, its finished runs given up. Such a run's records are journaled in parts now, each line within the
bound, and joined back. The bound is made small here (both the writer's and the reader's), so that a run of a
few hundred records is such a run."""

from __future__ import annotations

import errno
import json

import pytest
import serq_sweep.core
import serq_sweep.records

pytestmark = pytest.mark.timeout(60)

LIMIT = 4096
PROG = ("let a = 1;\nstage s : delay;\nworkload { arrive poisson(50); }\n"
        "session { run s (a); record r { x = now; y = now * 3; } record q { z = a; } }\n"
        "run { horizon 10; seed 1; }\n")
ARGS = ("sweep", "p.sq", "--seeds", "1,2", "--workers", "0", "--no-progress")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    monkeypatch.setattr(serq_sweep.records, "MAX_LINE", LIMIT)  # what the journal's lines are held to
    monkeypatch.setattr(serq_sweep.core, "MAX_LINE", LIMIT)  # what its reader takes
    return tmp_path


def test_a_run_of_records_longer_than_a_line_resumes_from_its_journal(folder, monkeypatch, serq_in_process):
    alone = serq_in_process(*ARGS, "-o", "alone.csv", "--records", "ra.csv")
    assert alone.returncode == 0, alone.stderr
    reference = {n: (folder / f"ra.{n}.csv").read_bytes() for n in ("r", "q")}
    assert reference["r"].count(b"\n") > 800  # (some 500 records a run, of the table r)

    # a full disk as the records are written, after every run: both journals kept, no table written
    def full(plan, runs, path, inputs):
        raise OSError(errno.ENOSPC, "No space left on device", path)

    written = serq_sweep.records._write_tables
    monkeypatch.setattr(serq_sweep.records, "_write_tables", full)
    failed = serq_in_process(*ARGS, "-o", "t.csv", "--records", "r.csv")
    assert failed.returncode == 1 and "No space left on device" in failed.stderr
    assert not (folder / "t.csv").exists() and not (folder / "r.r.csv").exists()
    lines = (folder / "r.csv.journal").read_bytes().splitlines(keepends=True)
    assert max(len(line) for line in lines) <= LIMIT
    entries = [json.loads(line) for line in lines]
    # each run's table r in parts of its rows, in order, its table q (a few hundred bytes) whole
    for key in {e["key"] for e in entries}:
        mine = [e for e in entries if e["key"] == key]
        assert [e["part"] for e in mine] == [[i, len(mine)] for i in range(len(mine))] and len(mine) > 2
        assert sum(len(e["tables"].get("r", {}).get("x", [])) for e in mine) > 400
    monkeypatch.setattr(serq_sweep.records, "_write_tables", written)  # (the disk has room again)

    resumed = serq_in_process(*ARGS, "-o", "t.csv", "--records", "r.csv")
    assert resumed.returncode == 0, resumed.stderr
    assert "(0 run now, 2 resumed)" in resumed.stderr
    assert {n: (folder / f"r.{n}.csv").read_bytes() for n in ("r", "q")} == reference
    assert (folder / "t.csv").read_bytes() == (folder / "alone.csv").read_bytes()
    assert not (folder / "r.csv.journal").exists()


def test_parts_cut_short_by_a_kill_are_no_records_and_their_run_runs_again(folder, serq_in_process):
    from serq_sweep.records import journal_line

    assert serq_in_process(*ARGS, "-o", "alone.csv", "--records", "ra.csv").returncode == 0
    reference = (folder / "ra.r.csv").read_bytes()
    # the table's journal of both runs, the records' journal of one whole and of the other's first two parts
    # (the kill came as it wrote the rest): from the records of the sweep alone
    import numpy as np
    from serq_sweep.records import _read_csv

    runs: dict[str, dict] = {}
    for name in ("r", "q"):
        _, by_key = _read_csv(str(folder / f"ra.{name}.csv"))
        for key, cols in by_key.items():
            runs.setdefault(key, {})[name] = {c: np.asarray(v) for c, v in cols.items()}
    first, second = list(runs)
    cut = journal_line(second, runs[second]).splitlines(keepends=True)
    assert len(cut) > 3
    (folder / "r.csv.journal").write_text(journal_line(first, runs[first]) + "".join(cut[:2]))
    (folder / "alone.csv").rename(folder / "t.csv")
    got = serq_in_process(*ARGS, "-o", "t.csv", "--records", "r.csv")
    assert got.returncode == 0, got.stderr
    assert "(1 run now, 1 resumed)" in got.stderr
    assert (folder / "r.r.csv").read_bytes() == reference
