"""The summary of a resumed sweep of points that share their runs (a program and its copy: one IR, so each
seed's run is both points' and runs once). It counted the runs resumed by their keys and the runs run now as
the table's rows less those, so a resume that ran nothing said ``(2 run now, 2 resumed)`` of a table of 4
rows, all of them resumed; both are counted in rows now, as a sweep that runs everything counts them."""

from __future__ import annotations

import shutil

import pytest

pytestmark = pytest.mark.timeout(60)

PROG = ("stage s : delay;\nworkload { arrive poisson(1); }\n"
        "session { set t0 = now; run s (~exp(1)); observe w = now - t0; end; }\nrun { horizon 5; seed 1; }\n")


def test_a_resume_of_a_program_and_its_copy_counts_rows(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    shutil.copy(tmp_path / "p.sq", tmp_path / "q.sq")

    def sweep(seeds: str) -> str:
        got = serq_in_process("sweep", "p.sq", "q.sq", "--seeds", seeds, "--workers", "0", "--no-progress",
                              "-o", "t.csv")
        assert got.returncode == 0, got.stderr
        return got.stderr

    assert "4 run(s) of 2 point(s) x 2 seed(s) (4 run now, 0 resumed)" in sweep("1,2")
    written = (tmp_path / "t.csv").read_bytes()
    assert "4 run(s) of 2 point(s) x 2 seed(s) (0 run now, 4 resumed)" in sweep("1,2")
    assert (tmp_path / "t.csv").read_bytes() == written
    # a seed more: its run is both points' rows, the two seeds before resumed in four
    assert "6 run(s) of 2 point(s) x 3 seed(s) (2 run now, 4 resumed)" in sweep("1,2,3")
    # of a sweep whose points share no run the count is as it was
    got = serq_in_process("sweep", "p.sq", "--seeds", "1,2,3", "--workers", "0", "--no-progress", "-o", "u.csv")
    again = serq_in_process("sweep", "p.sq", "--seeds", "1..4", "--workers", "0", "--no-progress", "-o", "u.csv")
    assert got.returncode == again.returncode == 0
    assert "4 run(s) of 1 point(s) x 4 seed(s) (1 run now, 3 resumed)" in again.stderr
