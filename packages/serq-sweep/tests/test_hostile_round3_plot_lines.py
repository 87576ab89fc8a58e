"""serq plot --hue of a column of many values (a figure, a request's column, the seed of a large sweep) is
one message, not minutes of drawing.

Each line (and band) costs matplotlib milliseconds: --hue of a column of 200 000 values ran for more than
five minutes in 6 GB (killed), and a records CDF per hue value selected each value's rows with a pass over
every row (quadratic). A plot draws at most 1 000 lines (serq_sweep.plots.MAX_LINES).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERQ = str(Path(sys.executable).parent / "serq")
N = 50_000


def _table(path: Path, rows: int) -> None:
    lines = ["point,lambda,seed,status,message,key,observes.response.p99"]
    lines += [f"{i % 2},{0.5 + 0.3 * (i % 2)},{i},ok,,k{i},{1.0 + (i % 7)}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")


def _records(path: Path, rows: int) -> None:
    lines = ["session,turn,time,sent,admitted,first_token,last_token,prompt,output,cached,preemptions,engine"]
    lines += [f"{i},1,{i + 1.0},{i + 0.5},{i + 0.5},{i + 0.6},{i + 1.0},{100 + i},10,0,0,0" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")


def _plot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # (a plot that drew its thousands of lines first took minutes: the child's timeout fails the test)
    return subprocess.run([SERQ, "plot", *args, "-o", "p.svg"], capture_output=True, text=True, cwd=cwd, timeout=30,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("make, args, message", [
    (_table, ["t.csv", "--x", "lambda", "--y", "response.p99", "--hue", "seed"],
     f"error: --hue seed: {N} values, more than the 1000 lines a plot draws (a line a value: --hue takes a swept "
     "name of a few values)\n"),
    (_records, ["t.csv", "--cdf", "ttft", "--hue", "prompt"],
     f"error: --hue prompt: {N} values, more than the 1000 lines a plot draws (a line a value: --hue takes a swept "
     "name of a few values)\n"),
])
def test_a_hue_of_many_values_is_one_message_at_once(tmp_path, make, args, message):
    make(tmp_path / "t.csv", N)
    r = _plot(tmp_path, *args)
    assert r.returncode == 1 and r.stdout == "" and r.stderr == message, r.stderr
    assert not (tmp_path / "p.svg").exists()


def test_a_hue_of_a_few_values_is_drawn(tmp_path):
    _table(tmp_path / "t.csv", 40)
    r = _plot(tmp_path, "t.csv", "--x", "lambda", "--y", "response.p99", "--hue", "seed")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.svg").stat().st_size > 0


def test_a_curve_of_many_points_is_drawn_without_a_dataframe_a_point(tmp_path, peak_memory):
    # 200 000 values of x: groupby held every group (a DataFrame each) at once, 3.5 GB and 50 s
    _table(tmp_path / "t.csv", 200_000)
    with open(tmp_path / ".err", "w") as err:  # (its own peak: conftest.py's peak_memory)
        code, peak = peak_memory([SERQ, "plot", "t.csv", "--x", "seed", "--y", "response.p99", "-o", "p.svg"],
                                 cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    assert code == 0, (tmp_path / ".err").read_text()
    assert peak < 1.5 * 2**30, peak
