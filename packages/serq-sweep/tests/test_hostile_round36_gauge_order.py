"""``serq plot DIR --gauge G`` draws a gauge's change points as a step function of time; a dump's file whose
times go down (rows swapped or files joined by hand) was drawn all the same, each step a line back in time to
its change point, a picture of no gauge. It is refused at the time that goes back, the line quoted; times
that are equal (two changes at one instant, as a run writes them) and NaN are drawn as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")


def _plot(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "plot", "d", "--gauge", "n", "-o", "g.svg"], capture_output=True, text=True,
                          cwd=folder, timeout=50, stdin=subprocess.DEVNULL)


@pytest.fixture
def folder(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "d" / "gauge").mkdir(parents=True)
    (tmp_path / "d" / "serq-dump.json").write_text('{"serq-dump": 1, "observes": [], "gauges": ["n"]}\n')
    return tmp_path


def _gauge(folder: Path, rows: list[str]) -> None:
    (folder / "d" / "gauge" / "n.csv").write_text("time,value\n" + "".join(f"{r}\n" for r in rows))


def test_a_time_that_goes_back_is_refused_at_it(folder):
    _gauge(folder, ["0.0,1.0", "2.5,2.0", "1.5,1.0", "3.0,0.0"])
    r = _plot(folder)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "d/gauge/n.csv:4:1: error: time 1.5 is before the change point above it (2.5); a gauge's change points "
        "are in time order, as --dump writes them",
        "  1.5,1.0",
        "  ^"]
    assert not (folder / "g.svg").exists()


def test_after_a_nan_time_too(folder):
    # (a NaN is left out of the line; the order is of the times around it)
    _gauge(folder, ["0.0,1.0", "2.0,2.0", "nan,5.0", "1.0,1.0"])
    r = _plot(folder)
    assert r.returncode == 1
    assert r.stderr.startswith("d/gauge/n.csv:5:1: error: time 1.0 is before the change point above it (2.0)")


def test_equal_times_and_a_nan_are_drawn(folder):
    _gauge(folder, ["0.0,1.0", "1.0,2.0", "1.0,3.0", "nan,4.0", "2.0,0.0"])
    r = _plot(folder)
    assert r.returncode == 0, r.stderr
    assert (folder / "g.svg").stat().st_size > 0


def test_a_run_s_dump_is_drawn(folder):
    (folder / "p.sq").write_text("stage s : fifo;\ngauge n = queue(s);\nworkload { arrive poisson(2); }\n"
                                 "session { run s (~exp(0.4)); end; }\nrun { horizon 200; seed 3; }\n")
    r = subprocess.run([SERQ, "run", "p.sq", "--dump", "e", "--no-progress"], capture_output=True, text=True,
                       cwd=folder, timeout=50, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    times = [float(line.split(",")[0]) for line in (folder / "e" / "gauge" / "n.csv").read_text().splitlines()[1:]]
    assert len(times) > 100 and times == sorted(times)
    r = subprocess.run([SERQ, "plot", "e", "--gauge", "n", "-o", "g.svg"], capture_output=True, text=True,
                       cwd=folder, timeout=50, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
