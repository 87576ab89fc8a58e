"""A plot left with nothing to draw is refused: ``serq plot`` of a table, a dump or records whose values are
all NaN or infinite (NaN and inf are left out of a line) drew empty axes and wrote them, status 0, as if the
picture held a plot. Now one message naming the option and saying there is nothing to plot, status 1 (what
the source holds), and no picture. A line with one finite point among NaNs is still drawn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import plot

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).with_name("serq"))

TABLE = "x,seed,status,key,fig\n1,1,ok,k,nan\n2,1,ok,k,inf\n3,1,ok,k,-inf\n"


def _sources(folder: Path) -> None:
    (folder / "t.csv").write_text(TABLE)
    (folder / "d" / "gauge").mkdir(parents=True)
    (folder / "d" / "r.csv").write_text("time,session,turn,value\n1,0,0,nan\n2,1,0,inf\n")
    (folder / "d" / "e.csv").write_text("time,session,turn,value\n")  # no sample at all
    (folder / "d" / "gauge" / "g.csv").write_text("time,value\n0,nan\ninf,1\n")
    (folder / "rec.csv").write_text("sent,first_token\n1,nan\n2,inf\n")


@pytest.mark.parametrize("kw, said", [
    (dict(source="t.csv", x="x", y="fig"),
     "--y fig: nothing to plot: no point whose x and fig are both finite numbers (a NaN or infinite value is "
     "left out of a line)"),
    (dict(source="d", cdf_of=["r", "e"]),
     "--cdf r, e: nothing to plot: no sample that is a finite number (each is NaN or infinite, or there are none)"),
    (dict(source="d", gauge=["g"]),
     "--gauge g: nothing to plot: no change point whose time and value are finite numbers (each is NaN or "
     "infinite, or there are none)"),
    (dict(source="rec.csv", cdf_of=["ttft"]),
     "--cdf ttft: nothing to plot: no request has a value that is a finite number (each is NaN or infinite, or "
     "there are none)"),
])
def test_nothing_to_plot_is_refused(tmp_path, monkeypatch, kw, said):
    _sources(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as info:
        plot(out="f.svg", **kw)
    assert str(info.value) == f"error: {said}"
    assert not (tmp_path / "f.svg").exists()


def test_the_command_says_so_with_status_1(tmp_path):
    _sources(tmp_path)
    r = subprocess.run([SERQ, "plot", "d", "--cdf", "r", "-o", "f.svg"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("error: --cdf r: nothing to plot: ")
    assert not (tmp_path / "f.svg").exists()


def test_one_finite_point_is_drawn(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    _sources(tmp_path)
    (tmp_path / "t.csv").write_text(TABLE + "4,1,ok,k,2.5\n")
    monkeypatch.chdir(tmp_path)
    figure = plot("t.csv", "f.svg", x="x", y="fig")
    (line,) = figure.axes[0].get_lines()
    assert [(float(a), float(b)) for a, b in zip(*line.get_data()) if b == b and abs(b) != float("inf")] == [(4.0, 2.5)]
    assert (tmp_path / "f.svg").stat().st_size > 0
