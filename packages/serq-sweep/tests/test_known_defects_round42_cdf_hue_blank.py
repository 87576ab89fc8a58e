"""``serq plot RECORDS --cdf M --hue G`` of records some of whose cells under ``G`` are blank (or ``nan``):
those rows are left out with one warning line, and draw no line. Each such row was a line of its own,
``g = nan (0 requests)`` in the legend, its request drawn on none (NaN is no NaN's equal), and counted
towards the 1000 lines a plot draws at most: 1200 of them refused the plot."""

from __future__ import annotations

import subprocess
import sys

from serq_sweep import plots

HEAD = "session,turn,time,sent,first_token,g\n"


def _records(tmp_path, hues):
    path = tmp_path / "r.csv"
    path.write_text(HEAD + "".join(f"{i},0,{i + 1},0,{i + 1},{h}\n" for i, h in enumerate(hues)))
    return path


def test_blank_hue_cells_are_left_out_and_said(tmp_path, capsys):
    path = _records(tmp_path, ["1", "", "2", "nan", "1"])  # first_token 1..5
    fig = plots.plot(str(path), cdf_of=["first_token"], hue="g")
    assert capsys.readouterr().err == (f"warning: {path}: --hue g: 2 of the 5 rows have a blank (or nan) cell under "
                                       "g and are left out: no line is theirs\n")
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert labels == ["first_token, g = 1 (2 requests)", "first_token, g = 2 (1 requests)"]
    assert plots.records_cdf_data(str(path), ["first_token"], "g") == {("first_token", 1.0): [1.0, 5.0],
                                                                         ("first_token", 2.0): [3.0]}


def test_words_under_hue_with_a_blank(tmp_path):
    path = _records(tmp_path, ["a", "", "b", "a"])
    said: list[str] = []
    data = plots.records_cdf_data(str(path), ["first_token"], "g", said)
    assert data == {("first_token", "a"): [1.0, 4.0], ("first_token", "b"): [3.0]}
    assert said == [f"warning: {path}: --hue g: 1 of the 4 rows have a blank (or nan) cell under g and are left "
                    "out: no line is theirs"]


def test_many_blank_hue_cells_are_no_lines_to_refuse(tmp_path):
    path = _records(tmp_path, ["1", "2"] + [""] * 1200)
    r = subprocess.run([sys.executable, "-m", "serq", "plot", str(path), "--cdf", "first_token", "--hue", "g", "-o",
                        "f.svg"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr == (f"warning: {path}: --hue g: 1200 of the 1202 rows have a blank (or nan) cell under g and "
                        "are left out: no line is theirs\n")
