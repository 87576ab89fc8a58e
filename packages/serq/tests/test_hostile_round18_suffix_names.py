"""A file's format is read from its suffix by one rule (serq.files.split_suffix): the text from the last
``.`` of its name on, the whole name when it is only a suffix (``.csv``), and the files serq names beside
an output keep that suffix after the name's stem.

``os.path.splitext`` gives a name that is only a suffix none (a hidden file's name), while a sweep's table
and records formats were read from the name's end: ``serq sweep -o .csv`` wrote a CSV table and its points
table ``.csv.points``, which ``serq plot`` refuses (no ``.csv``); ``serq run --records .csv`` of two record
tables wrote ``.csv.a`` and ``.csv.b``, and ``serq sweep --records .csv`` said "--records .csv.a: a records
file is .parquet or .csv"; ``serq run -o .json`` wrote the text report, and ``serq plot -o .svg`` said "a
plot is .svg, .png or .pdf".
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from serq.files import split_suffix

pytestmark = pytest.mark.timeout(120)

PROGRAM = """let lam = 1;
stage s : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run s (0.5); observe w = now - t0; record a { sent = t0; w = now - t0; }
          record b { x = 1; } end; }
run { horizon 20; seed 1; }
"""


def serq(tmp_path, *args, here=None):
    """``serq ARGS`` in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of the files a command writes and what it says)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*args)
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("path, split", [
    ("r.csv", ("r", ".csv")), (".csv", ("", ".csv")), ("d/.csv", ("d/", ".csv")), ("d.x/r", ("d.x/r", "")),
    ("r.points.parquet", ("r.points", ".parquet")), ("d/r", ("d/r", "")), ("r.", ("r", ".")),
])
def test_the_rule(path, split):
    assert split_suffix(path) == split


def test_a_name_that_is_only_a_suffix_names_its_format(tmp_path, serq_in_process):
    # (the run as a child process, the sweep and the plot on serq.cli.main in this process)
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = serq(tmp_path, "run", "p.sq", "-o", ".json", "--records", ".csv")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / ".json").read_text())["end"] == 20  # the JSON report, not the text one
    assert (tmp_path / ".a.csv").read_text().startswith("session,turn,time,sent,w\n")
    assert (tmp_path / ".b.csv").read_text().startswith("session,turn,time,x\n")
    (tmp_path / "t").mkdir()
    r = serq(tmp_path, "sweep", "p.sq", "--set", "lam=1,2", "-o", "t/.csv", "--no-progress", "--workers", "0",
             here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == [".csv", ".points.csv"]
    assert (tmp_path / "t" / ".points.csv").read_text().startswith("point,lam,runs,")
    r = serq(tmp_path, "plot", "t/.points.csv", "--x", "lam", "--y", "w.mean", "-o", ".svg", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / ".svg").read_text().lstrip().startswith("<?xml")


def test_a_sweeps_records_of_two_tables(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "r").mkdir()
    r = serq(tmp_path, "sweep", "p.sq", "--set", "lam=1,2", "-o", "t.csv", "--records", "r/.csv", "--no-progress",
             "--workers", "0", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [".a.csv", ".b.csv"]
    assert (tmp_path / "r" / ".a.csv").read_text().startswith("point,lam,seed,key,session,turn,time,sent,w\n")
