"""``serq plot RECORDS --cdf`` says, in one warning line a metric, how many rows it left out for a blank (or
``nan``) cell and under which column, and how many of its values are ``inf`` or ``-inf`` (counted among the
requests, as a CDF's fraction at or below a value counts them, and drawn nowhere: the curve ends below 1 and
starts above 0 by their shares). Both went without a word: only the legend's count told of the rows left
out, and an infinite value shifted the curve with nothing said of it."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from serq_sweep import plots

HEAD = "session,turn,time,sent,first_token,last_token,output,admitted\n"


def _records(tmp_path, rows):
    path = tmp_path / "r.csv"
    path.write_text(HEAD + "".join(",".join(str(c) for c in r) + "\n" for r in rows))
    return path


# first_token column: 1, 2, blank, inf, -inf, 3 (the column drawn as it is, --cdf first_token)
ROWS = [(0, 0, 1, 0, 1, 2, 3, 0), (1, 0, 2, 0, 2, 3, 3, 0), (2, 0, 3, 0, "", 4, 3, 0),
        (3, 0, 4, 0, "inf", 5, 3, 0), (4, 0, 5, 0, "-inf", 6, 3, 0), (5, 0, 6, 0, 3, 7, 3, 0)]


def test_a_blank_cell_and_infinite_values_are_said(tmp_path, capsys):
    path = _records(tmp_path, ROWS)
    fig = plots.plot(str(path), cdf_of=["first_token"])
    err = capsys.readouterr().err
    assert err == (f"warning: {path}: --cdf first_token: 1 of the 6 rows have a blank (or nan) cell under "
                   "first_token and are left out; the values of first_token hold 1 inf and 1 -inf, counted among "
                   "the requests and drawn nowhere (beyond the axis: the curve ends below 1 by the share of inf and starts above "
                   "0 by the share of -inf)\n")
    # what is drawn, by hand: 5 requests, -inf, 1, 2, 3, inf; the steps at the finite values at 2/5, 3/5, 4/5
    (line,) = fig.axes[0].lines
    assert line.get_label() == "first_token (5 requests)"
    drawn = [(x, y) for x, y in line.get_xydata().tolist() if math.isfinite(x)]
    assert drawn == [(1.0, 0.4), (2.0, 0.6), (3.0, 0.8)]


def test_the_columns_of_a_metric_are_named_with_their_counts(tmp_path, capsys):
    # ttft = first_token - sent: sent blank in row 0, first_token blank in rows 0 and 1: 2 rows left out
    rows = [(0, 0, 1, "", "", 2, 3, 0), (1, 0, 2, 0, "nan", 3, 3, 0), (2, 0, 3, 0, 1, 4, 3, 0),
            (3, 0, 4, 1, 3, 5, 3, 0)]
    path = _records(tmp_path, rows)
    data = plots.records_cdf_data(str(path), ["ttft"], said=(said := []))
    assert data == {("ttft", None): [1.0, 2.0]}
    assert said == [f"warning: {path}: --cdf ttft: 2 of the 4 rows have a blank (or nan) cell 1 under sent and "
                    "2 under first_token and are left out"]


def test_a_value_a_metric_has_none_of_is_no_blank(tmp_path, capsys):
    # prefill of a request never admitted (admitted -1) and tpot of one output token: none by definition
    rows = [(0, 0, 1, 0, 1, 2, 1, -1), (1, 0, 2, 0, 2, 3, 3, 0), (2, 0, 3, 0, 1, 4, 3, 0)]
    path = _records(tmp_path, rows)
    plots.plot(str(path), cdf_of=["prefill", "tpot"])
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("blank", ["", "nan"])
def test_the_command_line_says_it_once(tmp_path, blank):
    rows = [(0, 0, 1, 0, 1, 2, 3, 0), (1, 0, 2, 0, blank, 3, 3, 0), (2, 0, 3, 0, 2, 4, 3, 0)]
    path = _records(tmp_path, rows)
    r = subprocess.run([sys.executable, "-m", "serq", "plot", str(path), "--cdf", "ttft", "-o", "f.svg"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr == (f"warning: {path}: --cdf ttft: 1 of the 3 rows have a blank (or nan) cell under first_token "
                        "and are left out\n")
    assert (tmp_path / "f.svg").stat().st_size > 0
