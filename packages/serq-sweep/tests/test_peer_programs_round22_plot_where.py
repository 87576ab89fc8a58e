"""serq plot --where NAME=VALUE: the rows of one value of a swept name, from the command line.

A capacity planner swept a trace's load, its engines and its KV blocks, and drew p99 TTFT against the load
per count of engines: ``serq plot sw.csv --x load --y requests.ttft.p99 --hue N`` was refused, as it should
be (the blocks vary at one x), with ``give blocks as --hue, or plot the rows of one value of it``; but the
command had no way to keep those rows (--hue takes one name), so the table had to be cut by hand in pandas.
``--where blocks=8010`` keeps them, for a table (runs, points) and for records; the refusal names the option
with a value the table holds. The lines drawn are checked against the means and CIs worked out by hand.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("matplotlib")

import serq_sweep
from serq.errors import UsageError, UserError
from serq_sweep.rows import selected, where_option

SERQ = str(Path(sys.executable).parent / "serq")
T1 = math.tan(0.475 * math.pi)  # Student t, 97.5 %, 1 degree of freedom (the Cauchy's, in closed form): 12.7062
FIG = "requests.ttft.p99"

# load x blocks, 2 seeds; the figure is 10 * load + blocks / 1000 + seed (seed 1 and 2: mean + 1.5, sd 1/sqrt 2)
ROWS = [(p, load, blocks, seed) for p, (load, blocks) in enumerate([(1, 2000), (1, 8010), (2, 2000), (2, 8010)])
        for seed in (1, 2)]


def _table(path: Path) -> None:
    lines = [f"point,load,blocks,seed,status,message,warnings,key,{FIG}"]
    lines += [f"{p},{load},{blocks},{seed},ok,,,k{p}s{seed},{10 * load + blocks / 1000 + seed}"
              for p, load, blocks, seed in ROWS]
    path.write_text("\n".join(lines) + "\n")


def _records(path: Path) -> None:
    # a sweep's records: load 1's requests have TTFT 0.1, 0.2; load 2's 0.5, 0.7, 0.9
    lines = ["point,load,seed,key,session,turn,time,sent,first_token,last_token,output"]
    ttfts = {1: [0.1, 0.2], 2: [0.5, 0.7, 0.9]}
    for load, ts in ttfts.items():
        for i, t in enumerate(ts):
            lines.append(f"{load - 1},{load},1,k{load},{i},1,{i + 5.0},{i + 1.0},{i + 1.0 + t},{i + 5.0},4")
    path.write_text("\n".join(lines) + "\n")


def _plot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "plot", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_where_draws_one_value_of_a_name_by_hand(tmp_path):
    _table(tmp_path / "sw.csv")
    figure = serq_sweep.plot(str(tmp_path / "sw.csv"), x="load", y=FIG, where={"blocks": 8010})
    (ax,) = figure.axes
    (line,) = ax.get_lines()
    assert line.get_xdata().tolist() == [1, 2]
    # seeds 1 and 2 at blocks 8010: 10 * load + 8.01 + 1.5 on average, half-width t(1) * (1 / sqrt 2) / sqrt 2
    assert line.get_ydata() == pytest.approx([19.51, 29.51], rel=1e-12)
    ys = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert min(ys) == pytest.approx(19.51 - T1 / 2, rel=1e-12)
    assert max(ys) == pytest.approx(29.51 + T1 / 2, rel=1e-12)
    # the same from the command line, as text; a value written as a float matches the whole number
    r = _plot(tmp_path, "sw.csv", "--x", "load", "--y", FIG, "--where", "blocks=8.01e3", "-o", "p.svg")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.svg").stat().st_size > 0


def test_the_refusal_of_several_points_per_x_names_the_option_and_its_advice_draws(tmp_path):
    _table(tmp_path / "sw.csv")
    r = _plot(tmp_path, "sw.csv", "--x", "load", "--y", FIG, "-o", "p.svg")
    assert r.returncode == 1
    assert r.stderr == ("error: --x load: the table has 2 points at load = 1 (they differ in blocks): a line draws "
                        "one point per x; give blocks as --hue, or keep the rows of one value of it "
                        "(--where blocks=2000)\n")
    r = _plot(tmp_path, "sw.csv", "--x", "load", "--y", FIG, "--where", "blocks=2000", "-o", "p.svg")
    assert r.returncode == 0, r.stderr
    # the points table of the same sweep: the means by hand, at blocks 2000
    points = serq_sweep.aggregate(pd.read_csv(tmp_path / "sw.csv"))
    _, data = serq_sweep.plots.curve_data(selected(points, {"blocks": "2000"}), "load", FIG)
    assert data[None][0] == [1, 2] and data[None][1] == pytest.approx([13.5, 23.5], rel=1e-12)


def test_where_keeps_the_rows_of_records(tmp_path):
    _records(tmp_path / "recs.csv")
    figure = serq_sweep.plot(str(tmp_path / "recs.csv"), cdf_of=["ttft"], where={"load": "2"})
    (line,) = figure.axes[0].get_lines()
    assert line.get_xdata() == pytest.approx([0.5, 0.7, 0.9], rel=1e-9)
    assert line.get_ydata().tolist() == pytest.approx([1 / 3, 2 / 3, 1])
    r = _plot(tmp_path, "recs.csv", "--cdf", "ttft", "--where", "load=1", "-o", "c.svg")
    assert r.returncode == 0, r.stderr


def test_several_where_keep_the_rows_that_match_all():
    frame = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "y", "x", "y"], "v": [1.0, 2.0, 3.0, 4.0]})
    assert selected(frame, {"a": 2, "b": "y"})["v"].tolist() == [4.0]
    assert selected(frame, {"a": "1.0"})["v"].tolist() == [1.0, 2.0]
    assert selected(frame, {})["v"].tolist() == [1.0, 2.0, 3.0, 4.0]
    # a number given in Python, an int or a float alike; inf as a number
    assert selected(pd.DataFrame({"a": [math.inf, 1.0]}), {"a": "inf"})["a"].tolist() == [math.inf]
    assert selected(frame, {"a": 2.0})["v"].tolist() == [3.0, 4.0]


@pytest.mark.parametrize("where, said", [
    ({"blks": "8010"}, "--where blks=8010: the table has no column blks"),
    ({"blocks": "8000"}, "--where blocks=8000: no row of the table has blocks = 8000 (its values: 2000, 8010)"),
    ({"load": "1", "blocks": "3"}, "--where blocks=3: no row of the table has blocks = 3 (its values: 2000, 8010)"),
])
def test_a_where_that_keeps_nothing_is_one_message(tmp_path, where, said):
    _table(tmp_path / "sw.csv")
    with pytest.raises(UserError) as info:
        serq_sweep.plot(str(tmp_path / "sw.csv"), x="load", y=FIG, where=where)
    assert str(info.value).startswith("error: " + said)
    if "blks" in where:
        assert str(info.value).endswith("(did you mean `blocks`?)")


def test_the_option_written_wrong_is_a_usage_error(tmp_path):
    _table(tmp_path / "sw.csv")
    assert where_option(["a=1", "b= x"]) == {"a": "1", "b": " x"}
    for items, said in ((["blocks"], "--where blocks: give a column and one of its values"),
                        (["=3"], "--where =3: give a column"), (["a="], "--where a=: give a column"),
                        (["a=1", "a=2"], "--where a is given twice (1 and 2)")):
        with pytest.raises(UsageError, match=said.replace("(", r"\(").replace(")", r"\)")):
            where_option(items)
    r = _plot(tmp_path, "sw.csv", "--x", "load", "--y", FIG, "--where", "blocks", "-o", "p.svg")
    assert r.returncode == 2 and r.stderr.startswith("error: --where blocks: give a column") and not (
        tmp_path / "p.svg").exists()
    (tmp_path / "dump").mkdir()
    r = _plot(tmp_path, "dump", "--cdf", "ttft", "--where", "a=1", "-o", "p.svg")
    assert r.returncode == 2 and "a dump folder's samples are no such rows" in r.stderr
