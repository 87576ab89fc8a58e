"""``serq plot --log x|y|xy`` (``plot(..., log=...)``) draws those axes on a log scale: a curve's, a CDF's of
records; a point at or below 0 on a log axis is refused naming the axis and the value (matplotlib left it
out with a warning), a CI band reaching below 0 is clipped, its line drawn whole."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from delay_programs import delay_program
from serq.errors import UserError
from serq_sweep import plot, sweep

pytest.importorskip("matplotlib")

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = delay_program(horizon=50)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("log")
    (tmp / "p.sq").write_text(PROGRAM)
    sweep(str(tmp / "p.sq"), sets={"a": [1, 10]}, workers=0, out=str(tmp / "t.csv"), records=str(tmp / "r.csv"),
          progress=False)
    return tmp


@pytest.mark.parametrize("log, xs, ys", [("x", "log", "linear"), ("y", "linear", "log"), ("xy", "log", "log")])
def test_the_axes_named_are_on_a_log_scale(made, log, xs, ys):
    ax = plot(str(made / "t.csv"), x="a", y="w.mean", log=log).axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == (xs, ys)
    # the line is the table's: a run of a delay a has w = a for every sample
    assert [float(v) for v in ax.get_lines()[0].get_ydata()] == [1.0, 10.0]


def test_without_log_the_axes_are_linear(made):
    ax = plot(str(made / "t.csv"), x="a", y="w.mean").axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("linear", "linear")


def test_a_cdf_of_records_on_a_log_x(made):
    ax = plot(str(made / "r.csv"), cdf_of=["wait"], log="x").axes[0]
    assert ax.get_xscale() == "log"


def test_a_value_at_or_below_0_on_a_log_axis_is_refused(made):
    # the warm-up of every run is 0
    with pytest.raises(UserError, match=r"--log y: warmup holds 0, which a log axis cannot show"):
        plot(str(made / "t.csv"), x="a", y="warmup", log="y")
    plot(str(made / "t.csv"), x="a", y="warmup", log="x")  # its x (a = 1, 10) is above 0


def test_a_band_below_0_is_clipped_and_its_line_drawn(made):
    # two seeds of w.mean 0.1 and 10: mean 5.05, its 95 % CI (t with 1 degree of freedom) reaches far below 0
    f = pd.read_csv(made / "t.csv")
    g = pd.concat([f, f])
    g["seed"] = [1, 1, 2, 2]
    g["key"] = ["k1", "k2", "k3", "k4"]
    g["observes.w.mean"] = [0.1, 0.1, 10.0, 10.0]
    fig = plot(g, x="a", y="w.mean", log="y")
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and list(ax.get_lines()[0].get_ydata()) == [5.05, 5.05]
    # the band is the CI's, 5.05 -+ t(0.975, 1) * sd / sqrt(2) = 5.05 -+ 12.706 * 4.95, from below 0 to 67.9
    (band,) = ax.collections
    ys = [y for path in band.get_paths() for y in path.vertices[:, 1]]
    assert min(ys) == pytest.approx(5.05 - 12.706 * 4.95, abs=0.01)
    assert max(ys) == pytest.approx(5.05 + 12.706 * 4.95, abs=0.01)
    # clipped, not dropped: the axis starts above 0, below the line, and the figure is drawn
    low, high = ax.get_ylim()
    assert 0 < low < 5.05 and high > 67.9
    fig.savefig(io.BytesIO(), format="png")


def test_the_cli(made):
    r = subprocess.run([SERQ, "plot", "t.csv", "--x", "a", "--y", "warmup", "--log", "y", "-o", "w.svg"],
                       capture_output=True, text=True, cwd=made, timeout=120)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert not (made / "w.svg").exists()
    r = subprocess.run([SERQ, "plot", "t.csv", "--x", "a", "--y", "w.mean", "--log", "z", "-o", "w.svg"],
                       capture_output=True, text=True, cwd=made, timeout=120)
    assert r.returncode == 2 and "'z' is not one of 'x', 'y', 'xy'" in r.stderr, r.stderr
    r = subprocess.run([SERQ, "plot", "t.csv", "--x", "a", "--y", "w.mean", "--log", "xy", "-o", "w.svg"],
                       capture_output=True, text=True, cwd=made, timeout=120)
    assert r.returncode == 0 and (made / "w.svg").stat().st_size > 0, r.stderr


def test_a_bad_log_from_python_is_a_usage_error(made):
    with pytest.raises(UserError, match="x, y or xy"):
        plot(str(made / "t.csv"), x="a", y="w.mean", log="yx")
