"""``serq plot --log x`` of a curve with a swept value of inf (drawn as a dashed level across the axes, the knob's
"off": docs/sweep.md) draws the finite points on a log x and the level across them: the level's x data are the
axes' ends in the axes' own coordinates, 0 and 1, which ``--log`` took for values of x and refused (``error:
--log x: C holds 0, which a log axis cannot show``, status 1, though the table held no 0), and which the ticks
of a log x of swept values took for a swept value 1 (a tick labelled 1 among 256, 1024)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from serq_sweep import plots  # noqa: E402

pytestmark = pytest.mark.timeout(180)

SERQ = str(Path(sys.executable).parent / "serq")


def _runs() -> pd.DataFrame:
    """A runs table over C = 256, 1024, inf, two seeds each: y 1 and 3 at every C."""
    return pd.DataFrame([{"point": i, "C": c, "seed": seed, "status": "ok", "message": "", "warnings": "",
                          "key": f"k{i}{seed}", "observes.t.p99": y}
                         for i, c in enumerate((256.0, 1024.0, math.inf)) for seed, y in ((1, 1.0), (2, 3.0))])


def test_a_log_x_keeps_the_level_and_ticks_only_the_swept_values():
    figure = plots.plot(_runs(), x="C", y="observes.t.p99", log="x")
    ax = figure.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    (line,) = [ln for ln in ax.get_lines() if ln.get_linestyle() != "--"]
    assert list(line.get_xdata()) == [256.0, 1024.0]
    (level,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert list(level.get_ydata()) == [2.0, 2.0] and level.get_label() == "C = inf"
    # the ticks are the two swept values, 4 times apart (_ticks_at_points), not the level's end at 1
    assert list(ax.xaxis.get_major_locator().tick_values(256, 1024)) == [256.0, 1024.0]


def test_a_log_y_of_the_level_still_reads_its_values():
    frame = _runs()
    frame.loc[frame["C"] == math.inf, "observes.t.p99"] = [-1.0, -3.0]  # the level at -2
    with pytest.raises(Exception, match=r"--log y: observes.t.p99 holds -2, which a log axis cannot show"):
        plots.plot(frame, x="C", y="observes.t.p99", log="y")


def test_the_cli(tmp_path):
    _runs().to_csv(tmp_path / "t.csv", index=False)
    for log in ("x", "xy"):
        r = subprocess.run([SERQ, "plot", "t.csv", "--x", "C", "--y", "observes.t.p99", "--log", log, "-o", f"{log}.svg"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=150, stdin=subprocess.DEVNULL)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert (tmp_path / f"{log}.svg").read_text().lstrip().startswith("<?xml")
