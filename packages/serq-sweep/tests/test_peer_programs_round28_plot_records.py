"""serq plot --x/--y and aggregate of records: refused, naming the CDF that draws them.

A user who replayed a trace asked for the prefix-cache hit per turn with ``serq plot requests.csv --x turn
--y cached``. Records are a row per request, and a curve averages a table's rows at each x as the seeds of
one point: of one run's records it drew each turn's mean with a band "95 % CI across seeds" over the
requests of that turn (no seeds, and no independent samples), and of a sweep's records ``turn``, no swept
name, was taken for a figure: a point per point of the sweep, all at the mean turn of its requests (5.48
for both spacings of the replay). Both are refused now, at the source, with the CDF the records do draw
(``--cdf cached --hue turn``), whose lines are checked here against the values by hand. The Python API's
``aggregate`` took records for runs the same way (``runs`` 1196 at a point of 2 runs) and raises saying so.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("matplotlib")

import serq_sweep
from serq.errors import UserError
from serq_sweep.core import records_columns
from serq_sweep.plots import curve_data, records_cdf_data

SERQ = str(Path(sys.executable).parent / "serq")
HEADER = "session,turn,time,sent,admitted,first_token,last_token,prompt,output,cached,preemptions,engine"
# two sessions of two turns: turn 1 finds nothing cached, turn 2 finds 16 and 32 tokens
ROWS = ["0,1,2.0,1.0,1.0,1.5,2.0,20,3,0,0,0", "1,1,3.0,2.0,2.0,2.25,3.0,20,3,0,0,0",
        "0,2,6.0,4.0,4.0,4.5,6.0,40,3,16,0,0", "1,2,7.0,5.0,5.0,5.25,7.0,40,3,32,0,0"]


def _plot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, "plot", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("prefix", ["", "point,spacing,seed,key,"])
def test_a_curve_of_records_is_refused_naming_the_cdf(tmp_path, prefix):
    # of one run's records and of a sweep's (point, swept name, seed and key before the record's columns)
    cells = "0,5,1,k0," if prefix else ""
    (tmp_path / "r.csv").write_text("\n".join([prefix + HEADER, *(cells + r for r in ROWS)]) + "\n")
    r = _plot(tmp_path, "r.csv", "--x", "turn", "--y", "cached", "-o", "c.svg")
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("error:") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: r.csv: --x turn --y cached: these are records, a row per request (columns "
                               f"{prefix.replace(',', ', ')}session, turn, time, "), r.stderr
    assert "not a sweep's table" in r.stderr and "--cdf cached --hue turn" in r.stderr
    assert not (tmp_path / "c.svg").exists()
    with pytest.raises(UserError, match="these are records, a row per request"):
        serq_sweep.plot(str(tmp_path / "r.csv"), x="turn", y="cached")


def test_the_cdf_it_names_draws_each_turn_by_hand(tmp_path):
    (tmp_path / "r.csv").write_text("\n".join([HEADER, *ROWS]) + "\n")
    r = _plot(tmp_path, "r.csv", "--cdf", "cached", "--hue", "turn", "-o", "c.svg")
    assert r.returncode == 0, r.stderr
    data = records_cdf_data(str(tmp_path / "r.csv"), ["cached"], hue="turn")
    assert data == {("cached", 1): [0.0, 0.0], ("cached", 2): [16.0, 32.0]}
    ttft = records_cdf_data(str(tmp_path / "r.csv"), ["ttft"], hue="turn")
    assert ttft == {("ttft", 1): [0.25, 0.5], ("ttft", 2): [0.25, 0.5]}


def test_a_runs_table_with_a_turn_named_column_is_still_a_curve(tmp_path):
    # a sweep's runs table (status column) is drawn as ever, though it has no record's columns
    lines = ["point,load,seed,status,message,warnings,key,requests.ttft.mean"]
    lines += [f"{p},{load},{seed},ok,,,k{p}{seed},{load + seed}" for p, load in enumerate((1, 2)) for seed in (1, 2)]
    (tmp_path / "sw.csv").write_text("\n".join(lines) + "\n")
    fig, data = curve_data(str(tmp_path / "sw.csv"), "load", "requests.ttft.mean")
    assert fig == "requests.ttft.mean" and data[None][:2] == ([1, 2], [2.5, 3.5])


def test_aggregate_refuses_records_and_averages_a_runs_table(tmp_path):
    # aggregate took each request of a records frame for a run: runs 4 at the one point of one run
    records = pd.read_csv(io.StringIO("\n".join(["point,spacing,seed,key," + HEADER, *("0,5,1,k0," + r for r in ROWS)])))
    with pytest.raises(ValueError, match="these are records, a row per request"):
        serq_sweep.aggregate(records)
    table = pd.DataFrame({"point": [0, 0], "spacing": [5, 5], "seed": [1, 2], "status": ["ok", "ok"],
                          "key": ["a", "b"], "requests.ttft.mean": [1.0, 2.0]})
    points = serq_sweep.aggregate(table)
    assert points["runs"].tolist() == [2] and points["requests.ttft.mean:mean"].tolist() == [1.5]


def test_what_tells_records_from_a_table():
    # a record's own column may be named as one mark of a table (status, runs, outcome), never as all of a
    # runs table's (status, message, warnings); a sweep may sweep lets named session, turn and time
    assert records_columns(["session", "turn", "time", "status", "runs", "outcome"])
    assert not records_columns(["point", "session", "turn", "time", "seed", "status", "message", "warnings", "key"])
    assert not records_columns(["point", "session", "turn", "time", "runs", "requests.ttft.mean:mean"])
    assert not records_columns(["session", "turn", "time", "knob", "outcome", "holds", "fails", "evaluations"])
    assert not records_columns(["session", "turn", "sent"])
