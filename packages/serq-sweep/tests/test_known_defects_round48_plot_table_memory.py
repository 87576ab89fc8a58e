"""serq plot --x --y of a sweep's table in CSV reads the columns its curve draws (serq_sweep.plots.curve_columns:
every column that is no figure, and the figures --x and --y name), a column at a time: a table of a million
runs was read as a dict per row, every figure of it, 2.7 GB. The picture is the one the whole table draws."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import plots

SERQ = str(Path(sys.executable).parent / "serq")
FIGURES = ["horizon", "end", "warmup", "events", "arrivals", "ended", "turns", "mean_live", "interrupted", "partial",
           *(f"observes.response.{s}" for s in ("count", "mean", "ci", "cv2", "p50", "p90", "p95", "p99")),
           "stages.svc.present", "stages.svc.utilisation", "stages.svc.wait"]
HEADER = ["point", "lambda", "c", "seed", "status", "message", "warnings", "key", *FIGURES]


def _figures(rng: random.Random) -> list[str]:
    """The figures of one run, its random ones drawn from ``rng``."""
    return ["5000.0", "5000.0", "2000.0", "5041", "2522", "1504", "0", repr(rng.random()), "False", "",
            "1504", *(repr(rng.random() * 10) for _ in range(7)), "1", repr(rng.random()), repr(rng.random())]


def _table(path: Path, points: int, seeds: int, seed: int = 1, *, drawn_once: bool = False) -> None:
    """A runs table of ``points`` points (lambda, and c of two values) of ``seeds`` seeds each. ``drawn_once``:
    the figures of seed s are drawn once and are those of seed s at every point (a point's runs differ, the
    points' curves are one), for the table of a million runs: every cell is still its own text in the file,
    read into its column as before (the float columns hold 8 bytes a run whatever the value, the keys are
    each run's own), and the writing takes 1 s of CPU where a million rows' draws took 7 s."""
    rng = random.Random(seed)
    once = [_figures(rng) for _ in range(seeds)] if drawn_once else None
    with open(path, "w") as f:
        f.write(",".join(HEADER) + "\n")
        for p in range(points):
            lam, c = repr(0.5 + 0.01 * (p // 2)), str(1 + p % 2)
            for s in range(seeds):
                figures = once[s] if once is not None else _figures(rng)
                f.write(",".join([str(p), lam, c, str(s + 1), "ok", "", "", f"{p:08x}{s:08x}aaaaaaaa", *figures])
                        + "\n")


def test_a_curve_of_a_million_runs_is_drawn_in_little_memory(tmp_path, peak_memory):
    _table(tmp_path / "t.csv", 1000, 1000, drawn_once=True)
    with open(tmp_path / "err", "w") as err:
        code, peak = peak_memory([SERQ, "plot", "t.csv", "--x", "lambda", "--y", "response.mean", "--hue", "c", "-o",
                                  "c.svg"], timeout=280, cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=err)
    assert code == 0, (tmp_path / "err").read_text()
    assert "c = 2" in (tmp_path / "c.svg").read_text()
    # a dict per row: 2.0 GB; a column at a time, every column: about 1 GB; the curve's columns alone, the runs'
    # keys as pandas strings and compared only where their points and seeds repeat: about 450 MB
    assert peak < 600 * 2**20, peak


@pytest.mark.parametrize("args", [
    dict(x="lambda", y="response.mean", hue="c"),
    dict(x="lambda", y="stages.svc.utilisation", hue="c"),  # (a member's figure: its present column read too)
    dict(x="stages.svc.utilisation", y="response.p99", hue="c"),  # a figure against a figure
    dict(x="lambda", y="interrupted", where={"c": "2"}),  # flags, and the rows --where keeps
    dict(x="lambda", y="response.mean", hue="c", where={"events": "5041"}),  # (a figure given to --where: read)
])
def test_the_curve_of_the_columns_read_is_the_whole_tables(tmp_path, args):
    _table(tmp_path / "t.csv", 12, 4)
    path = str(tmp_path / "t.csv")
    plots.plot(path, str(tmp_path / "some.svg"), **args)
    # the same curve from the table read whole (every column, as a frame given to plot is drawn)
    whole = plots._read(path)
    assert list(whole.columns) == HEADER
    plots.plot(whole, str(tmp_path / "whole.svg"), **args)
    assert (tmp_path / "some.svg").read_bytes() == (tmp_path / "whole.svg").read_bytes()


def test_the_columns_a_curve_reads():
    assert plots.curve_columns(HEADER, "lambda", "response.mean") == [
        "point", "lambda", "c", "seed", "status", "key", "observes.response.mean"]
    assert plots.curve_columns(HEADER, "stages.svc.utilisation", "p99", "c", {"partial": 1}) == [
        "point", "lambda", "c", "seed", "status", "key", "partial", "observes.response.p99", "stages.svc.present",
        "stages.svc.utilisation"]
    # a points table: a figure's mean, CI and count
    points = ["point", "lambda", "runs", "events:mean", "events:ci", "events:n", "observes.w.mean:mean",
              "observes.w.mean:ci", "observes.w.mean:n"]
    assert plots.curve_columns(points, "lambda", "w.mean") == [
        "point", "lambda", "runs", "observes.w.mean:mean", "observes.w.mean:ci", "observes.w.mean:n"]
    # a figure no table has, and a table whose figures are not told by their names: every column
    assert plots.curve_columns(HEADER, "lambda", "nope") is None
    assert plots.curve_columns(["a", "b", "c"], "a", "b") is None


def test_a_message_lists_the_tables_columns(tmp_path):
    _table(tmp_path / "t.csv", 4, 2)
    r = subprocess.run([SERQ, "plot", "t.csv", "--x", "lambda", "--y", "response.mean", "--where", "lamda=0.5",
                        "-o", "c.svg"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    shown = ", ".join(HEADER)
    assert r.stderr == (f"error: --where lamda=0.5: the table has no column lamda (its columns: {shown[:197]}...) "
                        "(did you mean `lambda`?)\n"), r.stderr
