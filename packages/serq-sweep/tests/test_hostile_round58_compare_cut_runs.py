"""``serq compare --max-events N`` (or --max-wall, --max-samples) whose runs are all cut short by the bound:
the flag ``interrupted``, 1 in every run of both arms, was left out as a figure equal in both, so the table
``-o`` wrote gave no sign that its figures cover only the time simulated before the bound (the warning on
stderr alone said it). Its row is kept now whenever a run of either arm was cut; runs that ran to their end
leave it out as before."""

from __future__ import annotations

import csv
import io

import pytest

pytestmark = pytest.mark.timeout(60)

PROG = ("let lam = 0.5;\nstage s : fifo;\nworkload { arrive poisson(lam); }\n"
        "session { set t0 = now; run s (~exp(1)); observe w = now - t0; end; }\nrun { horizon 200; seed 1; }\n")
ARGS = ("compare", "p.sq", "--set", "lam=0.5,0.6", "--seeds", "1..3", "--workers", "0", "--no-progress")


def _rows(path) -> dict[str, dict[str, str]]:
    return {r["figure"]: r for r in csv.DictReader(io.StringIO(path.read_text()))}


def test_runs_cut_short_are_said_in_the_comparison_and_its_table(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    got = serq_in_process(*ARGS, "--max-events", "50", "-o", "c.csv")
    assert got.returncode == 0, got.stderr
    assert "warning: 6 of 6 run(s) were cut short by --max-events" in got.stderr
    # every run stopped at its 50th event: interrupted is 1 in each, a difference of 0 over the 3 seeds
    row = _rows(tmp_path / "c.csv")["interrupted"]
    assert {k: row[k] for k in ("n", "a", "b", "diff", "ci_paired", "ci_unpaired", "n_a", "n_b")} == {
        "n": "3", "a": "1.0", "b": "1.0", "diff": "0.0", "ci_paired": "0.0", "ci_unpaired": "0.0", "n_a": "3",
        "n_b": "3"}
    assert row["variance_reduction"] == ""  # (NaN: no variance to reduce)
    line = next(x for x in got.stdout.splitlines() if x.split()[:1] == ["interrupted"])
    assert line.split() == ["interrupted", "1", "1", "0", "0", "0", "nan"]
    assert "events" not in _rows(tmp_path / "c.csv")  # (the bound, 50, in every run: equal, left out)


def test_runs_that_ran_to_their_end_leave_interrupted_out(tmp_path, monkeypatch, serq_in_process):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROG)
    got = serq_in_process(*ARGS, "-o", "c.csv")
    assert got.returncode == 0, got.stderr
    assert "interrupted" not in _rows(tmp_path / "c.csv") and "interrupted" not in got.stdout
    assert "figure(s) equal in every run of both arms left out" in got.stdout
