"""``serq plot`` of a sweep's runs table draws a point's mean over the runs that have a finite value of the figure
(docs/sweep.md: "Values that are not finite are left out of every statistic across seeds"), as ``--show`` and
``--find`` do; those mark such a mean (``(n=1)``, a warning), and the plot said nothing. An overloaded point of a
capacity sweep (max_num_seqs 4 at 6 requests/s over a short run: two of three seeds completed no request sent
after the warm-up) was drawn at its one seed's p99 TTFT, and the next load, whose seeds completed none, was left
out of its line, both without a word. The plot now warns of each, naming the point and how many of its runs
the mean is over."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

HEAD = "point,Lambda,max_seqs,seed,status,message,warnings,key,requests.ttft.p99,requests.e2el.mean\n"


def _table(tmp_path):
    rows = []
    values = {(2, 1): 1.0, (2, 2): 2.0, (2, 3): 3.0, (6, 1): 98.0, (6, 2): None, (6, 3): None,
              (10, 1): None, (10, 2): None, (10, 3): None}
    for point, lam in enumerate((2, 6, 10)):
        for seed in (1, 2, 3):
            v = values[lam, seed]
            cell = "" if v is None else repr(v)
            rows.append(f"{point},{lam},4,{seed},ok,,not-steady,k{point}{seed},{cell},{5.0 + seed}\n")
    path = tmp_path / "runs.csv"
    path.write_text(HEAD + "".join(rows))
    return path


def test_the_curve_warns_of_means_over_fewer_runs_and_of_points_left_out(tmp_path, capsys):
    from serq_sweep.plots import curve, curve_data

    path = _table(tmp_path)
    fig, data = curve_data(str(path), "Lambda", "requests.ttft.p99")
    xs, means, cis = data[None]
    # by hand: Lambda 2 over 1, 2, 3 (mean 2, t(2) 4.3027 x sd 1 / sqrt 3); Lambda 6 its one value, no CI;
    # Lambda 10 no value: NaN, which the line leaves out
    assert xs == [2, 6, 10]
    assert means[:2] == [2.0, 98.0] and math.isnan(means[2])
    assert cis[0] == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025) / math.sqrt(3), rel=1e-12) and math.isnan(cis[1])
    assert capsys.readouterr().err == ""  # the data alone says nothing
    curve(str(path), "Lambda", "requests.ttft.p99", hue="max_seqs")
    err = capsys.readouterr().err
    assert err == ("warning: --y requests.ttft.p99: some points' runs had no value of it (no sample of it: an "
                   "observe that took none, a request metric of a run that completed no request after the "
                   "warm-up), and each such mean is drawn over the others': max_seqs=4, Lambda=6 over 1 of 3 "
                   "runs; max_seqs=4, Lambda=10 no value in its 3 runs (left out of its line)\n"), err
    # a figure every run has: no warning
    curve(str(path), "Lambda", "requests.e2el.mean")
    assert capsys.readouterr().err == ""


def test_against_a_figure_the_points_are_named_by_their_swept_values(tmp_path, capsys):
    from serq_sweep.plots import curve

    curve(str(_table(tmp_path)), "requests.e2el.mean", "requests.ttft.p99")
    err = capsys.readouterr().err
    assert err.endswith("drawn over the others': Lambda=6, max_seqs=4 over 1 of 3 runs; Lambda=10, max_seqs=4 "
                        "no value in its 3 runs (left out of its line)\n"), err


def test_the_command_line_says_it_on_stderr_and_draws(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    serq = str(Path(sys.executable).parent / "serq")
    out = tmp_path / "p.svg"
    r = subprocess.run([serq, "plot", str(_table(tmp_path)), "--x", "Lambda", "--y", "requests.ttft.p99", "-o",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0
    assert "Lambda=6 over 1 of 3 runs; Lambda=10 no value in its 3 runs" in r.stderr, r.stderr


RECORDS = "point,Lambda,max_seqs,seed,key,session,turn,time,sent,first_token,last_token,output\n"


def test_a_records_cdf_says_which_hue_values_the_where_leaves_without_requests(tmp_path, capsys):
    """The records of a sweep hold no row for a run that completed no request: ``--where Lambda=10`` of a
    sweep whose max_seqs=4 runs completed none there drew max_seqs=16's line alone, the other not named."""
    from serq_sweep.plots import plot

    rows = ["0,2,4,1,a,0,1,1.0,0.0,0.5,1.0,3\n", "1,2,16,1,b,0,1,1.0,0.0,0.25,1.0,3\n",
            "3,10,16,1,d,0,1,1.0,0.0,0.75,1.0,3\n", "3,10,16,1,d,1,1,1.0,0.0,1.25,2.0,3\n"]
    path = tmp_path / "recs.csv"
    path.write_text(RECORDS + "".join(rows))
    plot(str(path), cdf_of=["ttft"], hue="max_seqs", where={"Lambda": 10})
    assert capsys.readouterr().err == ("warning: --hue max_seqs: max_seqs=4 has requests in the records and none "
                                       "where Lambda=10, so no line: its runs there recorded no request (a run "
                                       "that completed none has no row)\n")
    plot(str(path), cdf_of=["ttft"], hue="max_seqs", where={"Lambda": 2})  # both have requests there
    plot(str(path), cdf_of=["ttft"], hue="max_seqs")
    assert capsys.readouterr().err == ""
