"""A sweep's own tables are read back whatever their width: a program may have 100 000 stage and pool members
(serq_ir.rules.MAX_MEMBERS), each a column per figure, and the table of a family of 60 000 stages has a
25 MB header line (its points table's, 85 MB), which its resume and serq plot refused under the bound on a
trace's lines (serq.files.MAX_LINE, 16 MiB: ``line 1 is longer than 16 MiB``). The tables and journals a
sweep reads are bounded by serq_sweep.core.TABLE_LINE (256 MiB), which still refuses a hostile line (a sparse
file of NUL bytes) once it runs past it. Naming a figure of such a table that is not there was quadratic in
its columns (figures._names: 49 s of CPU for 67 500 columns; hours for 900 000)."""

from __future__ import annotations

import os

import pytest
import serq_sweep.core as core
from serq.errors import UserError
from serq.files import MAX_LINE
from serq_ir.rules import MAX_MEMBERS
from serq_sweep import figures, sweep

pytestmark = pytest.mark.timeout(60)


def _program(k: int, name: str = "svc") -> str:
    return (f"stage {name}[{k}] : fifo;\nworkload {{ arrive poisson(1); }}\n"
            f"session {{ run {name}[0] (0.5); }}\nrun {{ horizon 2; seed 3; }}\n")


def _header(path) -> bytes:
    with open(path, "rb") as f:
        return f.readline()


def test_the_widest_tables_of_a_program_fit_the_bound(tmp_path, monkeypatch):
    """The header of a sweep of a family of K stages is some bytes a member: measured at K = 3 and K = 5,
    extrapolated to 60 000 (over MAX_LINE, the defect's case) and MAX_MEMBERS members of a 30-character name
    (each index then 5 digits, not 1): both the runs table and the points table fit TABLE_LINE."""
    monkeypatch.chdir(tmp_path)
    name = "s" * 30
    sizes = {}
    for k in (3, 5):
        (tmp_path / f"p{k}.sq").write_text(_program(k, name))
        sweep(f"p{k}.sq", out=f"t{k}.csv", workers=0, progress=False)
        runs, points = _header(f"t{k}.csv"), _header(f"t{k}.points.csv")
        sizes[k] = len(runs), len(points), runs.count(b"[0]."), points.count(b"[0].")
    (r3, p3, _, _), (r5, p5, per_runs, per_points) = sizes[3], sizes[5]
    assert per_runs >= 10 and per_points >= per_runs  # (a stage's figures, and their statistics)
    for members, above in ((60_000, MAX_LINE), (MAX_MEMBERS, None)):
        runs = r5 + (members - 5) * ((r5 - r3) / 2 + 4 * per_runs)
        points = p5 + (members - 5) * ((p5 - p3) / 2 + 4 * per_points)
        assert max(runs, points) <= core.TABLE_LINE, (members, runs, points)
        if above is not None:
            assert points > above  # (what the trace's bound refused)


def test_a_table_longer_than_the_trace_bound_resumes(tmp_path, monkeypatch):
    """The runs table and journal are read under TABLE_LINE, not MAX_LINE: with MAX_LINE below the table's
    header (as 16 MiB is below a family of 60 000 stages'), the resume reads its table back; it was refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(_program(40))
    sweep("p.sq", out="t.csv", workers=0, progress=False)
    header = _header("t.csv")
    want = (tmp_path / "t.csv").read_bytes()
    monkeypatch.setattr(core, "MAX_LINE", len(header) // 4)
    frame = sweep("p.sq", out="t.csv", workers=0, progress=False)  # every run resumed, none run again
    assert len(frame) == 1 and (tmp_path / "t.csv").read_bytes() == want
    columns, rows = core.read_table_columns("t.csv")
    assert len(rows) == 1 and columns == header.decode().rstrip("\r\n").split(",")


@pytest.mark.parametrize("name", ["t.csv", "t.csv.journal"])
def test_a_line_past_the_tables_bound_is_still_refused(tmp_path, monkeypatch, name):
    """A hostile line (a sparse file of NUL bytes, one line) is refused once it runs past TABLE_LINE (lowered
    here to 1 MiB, for the test's memory), with what to do, and the file left as it was."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(core, "TABLE_LINE", 2**20)
    (tmp_path / "p.sq").write_text(_program(2))
    with open(name, "wb") as f:
        f.truncate(2**20 + 4096)
    with pytest.raises(UserError) as e:
        sweep("p.sq", out="t.csv", workers=0, progress=False)
    assert "line 1 is longer than 1 MiB" in str(e.value) and "--fresh" not in str(e.value)
    assert "fresh=True" in str(e.value)
    assert os.path.getsize(name) == 2**20 + 4096


def test_an_unknown_figure_of_a_wide_table_is_said_at_once():
    columns = ["events"] + [f"stages.svc[{i}].{f}" for i in range(6000)
                            for f in ("present", "utilisation", "completions", "throughput", "wait", "service",
                                      "iterations", "requests", "tokens", "batch")]
    with pytest.raises(figures.UnknownFigure) as e:
        figures.resolve("evnts", columns)
    assert str(e.value) == "error: no figure 'evnts' in the results (did you mean `events`?)"


def test_serq_plot_of_a_wide_table_says_an_unknown_figure_at_once(tmp_path, serq_in_process, monkeypatch):
    """serq plot looks for a run given twice before it draws: pandas' DataFrame.duplicated walked every column
    of the table, each given a deep copy of the frame's attrs (the CSV's lines), minutes for 20 000 figures
    (core.repeated_run now compares its few columns alone)."""
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    n = 20_000
    head = ["point", "a", "seed", "status", "message", "warnings", "key", *(f"observes.o{i}.mean" for i in range(n))]
    rows = [[str(p), str(p + 1), "1", "ok", "", "", k * 24, *([f"{p + 1}.0"] * n)] for p, k in ((0, "a"), (1, "b"))]
    (tmp_path / "t.csv").write_text("\n".join(",".join(r) for r in (head, *rows)) + "\n")
    r = serq_in_process("plot", "t.csv", "--x", "a", "--y", "nosuch", "-o", "p.svg")
    assert (r.returncode, r.stderr) == (1, "error: --y nosuch: no figure 'nosuch' in the results\n")
    r = serq_in_process("plot", "t.csv", "--x", "a", "--y", "o7.mean", "-o", "p.svg")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.svg").read_text().startswith("<?xml")
