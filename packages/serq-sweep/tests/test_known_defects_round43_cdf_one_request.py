"""``serq plot RECORDS --cdf M --hue G`` where one value of ``G`` has a single request, and ``serq plot DUMP --cdf
OBS`` of an observe with a single sample: the curve is the step of one point, its rise from 0 to 1 at the value
(serq_sweep.plots._cdf_step). It was the point ``(v, 1)`` alone, a line of no length that matplotlib draws as
nothing: the legend named ``g = 2 (1 requests)`` and the plot showed no mark of it. Curves of two values or more
are as they were."""

from __future__ import annotations

import subprocess
import sys

from matplotlib.backends.backend_agg import FigureCanvasAgg
from serq_sweep import plots

HEAD = "session,turn,time,sent,first_token,g\n"


def _records(tmp_path, rows):
    path = tmp_path / "r.csv"
    path.write_text(HEAD + "".join(f"{i},0,{i + 1},0,{t},{h}\n" for i, (t, h) in enumerate(rows)))
    return path


def _lines(fig):
    return {line.get_label(): (line.get_xdata().tolist(), line.get_ydata().tolist()) for line in fig.axes[0].lines}


def test_a_group_of_one_request_rises_from_0_to_1(tmp_path):
    path = _records(tmp_path, [(1, "a"), (3, "a"), (2, "b")])
    fig = plots.plot(str(path), cdf_of=["first_token"], hue="g")
    lines = _lines(fig)
    assert lines["first_token, g = a (2 requests)"] == ([1.0, 3.0], [0.5, 1.0])  # as before
    assert lines["first_token, g = b (1 requests)"] == ([2.0, 2.0], [0.0, 1.0])
    # drawn: the line of one request has a length on the canvas (the point alone had none)
    FigureCanvasAgg(fig).draw()
    line = next(x for x in fig.axes[0].lines if x.get_label().startswith("first_token, g = b"))
    (x0, y0), (x1, y1) = line.get_transform().transform(line.get_xydata())
    assert x0 == x1 and y1 - y0 > 10  # a vertical rise, more than 10 pixels


def test_an_observe_of_one_sample_rises_from_0_to_1(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "w.csv").write_text("time,value\n1.5,0.25\n")
    fig = plots.plot(str(dump), cdf_of=["w"])
    assert _lines(fig) == {"w (1 samples)": ([0.25, 0.25], [0.0, 1.0])}


def test_the_command_draws_a_group_of_one(tmp_path):
    path = _records(tmp_path, [(1, "a"), (3, "a"), (2, "b")])
    r = subprocess.run([sys.executable, "-m", "serq", "plot", str(path), "--cdf", "first_token", "--hue", "g", "-o",
                        "f.svg"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr  # no warning: every line of the legend is drawn
    assert (tmp_path / "f.svg").stat().st_size > 0
