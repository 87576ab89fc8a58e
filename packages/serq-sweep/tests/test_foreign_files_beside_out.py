"""The files a sweep names itself beside ``--out OUT.csv`` — its points table ``OUT.points.csv`` and its
journal ``OUT.csv.journal`` — are never someone else's files replaced or removed (docs/security.md).

A file of another program at ``OUT.points.csv`` was replaced by the sweep's points table, and one at
``OUT.csv.journal`` (its lines skipped as entries a kill cut short) was appended to and removed when the
table was complete. Now such a file is refused before any run, status 1, the file as it was (byte for
byte: the append no longer gives it a line end first), nothing else written. An empty file, a points table
of another sweep, a journal whose last entry a kill cut short (also with entries appended after it by a
resumed sweep) and ``--fresh`` are as before.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sweep import sweep

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); }
run { horizon 5; seed 1; }
"""

POINTS_REFUSED = ("error: t.points.csv: not a sweep's points table (no column point and runs); a sweep into t.csv "
                  "writes its table of points there: remove it, give --out another name, or give --fresh\n")


def _cli(tmp_path: Path, *args: str, values: str = "1,2", here=None) -> subprocess.CompletedProcess:
    """The sweep into t.csv in ``tmp_path``, as a child process; given ``here`` (serq_in_process),
    serq.cli.main in the test's process, in that folder (a test of what is said and of the files left)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here("sweep", "p.sq", "--set", f"a={values}", "--workers", "0", "--no-progress", "-o", "t.csv",
                        *args)
    return subprocess.run([SERQ, "sweep", "p.sq", "--set", f"a={values}", "--workers", "0", "--no-progress",
                           "-o", "t.csv", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


def _files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.parametrize("text", ["precious data\n", "precious data", "name,score\nalice,3\n", "point,a\n0,1\n"])
def test_a_file_of_someone_else_at_the_points_table_is_refused_and_kept(tmp_path, serq_in_process, text):
    (tmp_path / "p.sq").write_text(PROGRAM)
    pts = tmp_path / "t.points.csv"
    pts.write_bytes(text.encode())
    r = _cli(tmp_path, here=None if text == "precious data\n" else serq_in_process)  # (the first: a child)
    assert r.returncode == 1, r.stderr
    assert r.stderr == POINTS_REFUSED
    assert pts.read_bytes() == text.encode()
    assert _files(tmp_path) == ["p.sq", "t.points.csv"]  # no table, no journal


def test_a_points_file_that_is_no_table_is_refused_at_its_line(tmp_path, serq_in_process):
    (tmp_path / "p.sq").write_text(PROGRAM)
    pts = tmp_path / "t.points.csv"
    pts.write_text("point,runs\n0,1,2\n")  # a row wider than its header
    r = _cli(tmp_path, here=serq_in_process)
    assert r.returncode == 1
    assert r.stderr.startswith("t.points.csv:2:")
    assert "not a sweep's points table" in r.stderr and "a sweep into t.csv writes its table of points" in r.stderr
    assert pts.read_text() == "point,runs\n0,1,2\n"


def test_an_empty_file_and_another_sweeps_points_table_are_replaced(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    pts = tmp_path / "t.points.csv"
    pts.write_text("")
    r = _cli(tmp_path)
    assert r.returncode == 0, r.stderr
    first = pts.read_text()
    assert first.startswith("point,a,runs,")
    assert [line.split(",")[1] for line in first.splitlines()[1:]] == ["1", "2"]
    r = _cli(tmp_path, values="3,4")  # other values: the table's runs are left out, its points table replaced
    assert r.returncode == 0, r.stderr
    assert [line.split(",")[1] for line in pts.read_text().splitlines()[1:]] == ["3", "4"]


def test_fresh_replaces_it_as_it_replaces_the_table(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    pts = tmp_path / "t.points.csv"
    pts.write_text("precious data\n")
    r = _cli(tmp_path, "--fresh")
    assert r.returncode == 0, r.stderr
    assert pts.read_text().startswith("point,a,runs,")


@pytest.mark.parametrize("text", [b"precious data", b"precious data\n", b"name,score\nalice,3\n",
                                  b'{"key": "k"}\nnot json\n{"key": "k2"}\n'])
def test_a_file_of_someone_else_at_the_journal_is_refused_and_kept(tmp_path, serq_in_process, text):
    (tmp_path / "p.sq").write_text(PROGRAM)
    jp = tmp_path / "t.csv.journal"
    jp.write_bytes(text)
    r = _cli(tmp_path, here=None if text == b"precious data" else serq_in_process)  # (the first: a child)
    assert r.returncode == 1
    assert "error: not an entry of a sweep's journal; remove the file or give --fresh" in r.stderr
    assert r.stderr.startswith("t.csv.journal:")
    assert jp.read_bytes() == text  # (no line end appended)
    assert _files(tmp_path) == ["p.sq", "t.csv.journal"]


def test_the_api_refuses_both(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    out = tmp_path / "t.csv"
    pts = tmp_path / "t.points.csv"
    pts.write_text("precious data\n")
    with pytest.raises(UserError, match=r"t\.points\.csv: not a sweep's points table"):
        sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(out), progress=False)
    pts.unlink()
    jp = tmp_path / "t.csv.journal"
    jp.write_text("precious data\n")
    with pytest.raises(UserError, match="not an entry of a sweep's journal"):
        sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(out), progress=False)
    assert jp.read_text() == "precious data\n"
    assert not out.exists() and not pts.exists()


def _keys(tmp_path: Path, here) -> list[str]:
    """The keys of the runs of a sweep of a=1,2 into t.csv (its table's rows), the table and points removed
    (the sweep made by ``here``, serq_in_process)."""
    r = _cli(tmp_path, here=here)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "t.csv", newline="") as f:
        keys = [row["key"] for row in csv.DictReader(f)]
    for made in ("t.csv", "t.points.csv"):
        (tmp_path / made).unlink()
    return keys


@pytest.mark.parametrize("torn", ['{"key": "', '{"k', "{", '{"key": "0:1:abc", "status": "o', ""])
def test_an_entry_a_kill_cut_short_and_a_blank_line_are_still_skipped(tmp_path, serq_in_process, torn):
    """A journal of a sweep's entries with a line a kill cut short before them (a resumed sweep's entries
    come after it: open_own_append ends the torn line first) and a blank line: resumed, its entries taken
    (their events are the journal's, not the runs' again), the torn one's run run again."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    keys = _keys(tmp_path, serq_in_process)
    entries = [{"key": k, "status": "ok", "message": "", "warnings": "", "figures": {"events": 12345.0 + n}}
               for n, k in enumerate(keys)]
    jp = tmp_path / "t.csv.journal"
    jp.write_text(f"{torn}\n" + json.dumps(entries[0]) + "\n\n" + json.dumps(entries[1]) + "\n")
    frame = sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=0, out=str(tmp_path / "t.csv"),
                  progress=False)
    assert list(frame["events"]) == [12345.0, 12346.0]
    assert not jp.exists()  # (removed with the complete table, as before)
