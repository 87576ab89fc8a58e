"""``serq plot TABLE --y FIGURE`` reads the table once: without ``--x`` it read it for its swept name
(plots.swept_x) and again for the curve, and ``--log`` once more for whether the x is swept. The messages are the
same, and one about the table names its file as the curve's read did (the frame keeps the file it came from)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from serq import UserError
from serq_sweep import core, plots

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let L = 1;

stage gpu : fifo;

workload {
  arrive poisson(L);
}

session {
  set t0 = now;
  run gpu (~exp(0.25));
  observe response = now - t0;
}

run { horizon 40; warmup 0; seed 1; }
"""


def serq(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=cwd, timeout=150,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def tables(tmp_path_factory, once_per_run):
    # the tables made once for the test run (the suite's once_per_run, not once in each worker that runs a test
    # here), copied into this module's folder
    d = tmp_path_factory.mktemp("reads_once")
    shutil.copytree(once_per_run("reads-once-tables", _tables), d, dirs_exist_ok=True)
    return d


def _tables(d: Path) -> None:
    (d / "k.sq").write_text(PROGRAM)
    for out in ("one.csv", "one.parquet"):
        r = serq(["sweep", "k.sq", "--set", "L=0.5,1", "--seeds", "1,2", "--out", out, "--workers", "0"], d)
        assert r.returncode == 0, r.stderr
    # records, a row per request (the columns every record has: session, turn, time)
    (d / "rec.csv").write_text("session,turn,time,ttft\n0,1,1.5,0.5\n1,1,2.5,0.25\n2,2,3.5,0.75\n")


@pytest.fixture
def reads(monkeypatch):
    """The reads of a table's file: a CSV's (plots._csv_frame) and a Parquet file's (core.read_parquet)."""
    got: list[str] = []
    csv_frame, read_parquet = plots._csv_frame, core.read_parquet

    def counted_csv(path, *a, **k):
        got.append(path)
        return csv_frame(path, *a, **k)

    def counted_parquet(path, *a, **k):
        got.append(path)
        return read_parquet(path, *a, **k)

    monkeypatch.setattr(plots, "_csv_frame", counted_csv)
    monkeypatch.setattr(core, "read_parquet", counted_parquet)
    return got


@pytest.mark.parametrize("table", ["one.csv", "one.points.csv", "one.parquet", "one.points.parquet"])
@pytest.mark.parametrize("kw", [{}, {"where": {"L": 1}}, {"log": "xy"}, {"x": "L"}, {"x": "L", "log": "x"},
                                {"where": {"L": 0.5}, "log": "y"}])
def test_the_table_is_read_once(tables, reads, table, kw):
    path = str(tables / table)
    fig = plots.plot(path, y="response.mean", **kw)
    assert reads == [path]
    assert fig.axes[0].get_xlabel() == "L"
    xs = [line.get_xdata().tolist() for line in fig.axes[0].lines]
    assert xs == ([[1.0]] if kw.get("where") == {"L": 1} else [[0.5]] if "where" in kw else [[0.5, 1.0]])


@pytest.mark.parametrize("y", ["nosuch", "response.mean2"])
def test_the_same_messages_with_x_or_without(tables, reads, y):
    path = str(tables / "one.csv")
    said = []
    for kw in ({}, {"x": "L"}):
        with pytest.raises(UserError) as e:
            plots.plot(path, y=y, **kw)
        said.append(str(e.value))
    assert said[0] == said[1]
    assert reads == [path, path]  # once a call


def test_a_message_about_the_table_names_its_file(tables, reads):
    # records given a curve: refused naming the file, read once, as the curve's own read named it; so it is
    # with --where, whose rows were handed on as a frame of no file
    path = str(tables / "rec.csv")
    for kw in ({}, {"where": {"turn": 1}}):
        reads.clear()
        with pytest.raises(UserError) as e:
            plots.plot(path, x="turn", y="ttft", **kw)
        assert str(e.value).startswith(f"error: {path}: --x turn --y ttft: these are records"), str(e.value)
        assert reads == [path]
