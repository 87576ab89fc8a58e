"""A sweep's CSV files edited by hand are read in the syntax their writer writes, or refused, never read as
other numbers.

* The records CSV (``--records r.csv``, read back when a sweep resumes): a column was an integer column when
  every cell passed ``str.isdigit``, which takes full-width ``１２`` (``int()`` read 12) and ``²`` (a
  ValueError of ``int()``); an integer beyond int64 was an OverflowError traceback of numpy; a float cell
  was read by ``float()`` (``1_000``, `` 3``, ``Infinity``); and the columns every record has (``session``,
  ``turn``) were cast to their dtypes whatever they held (``1e30`` became -9223372036854775808, ``0.5``
  became 0, a RuntimeWarning at most). Each is now the one message "cannot read the records to resume from
  (…)".
* The sweep's table (``--out t.csv``): a cell was ``int()`` then ``float()`` of its text, so ``１２``,
  `` 3`` and ``1_000`` were numbers; a cell that is no number in the writer's syntax is kept as text. A
  run's status that no sweep writes (``OK``, ``""``, ``ok `` or a NUL in it) was taken as finished and
  written back; it is refused, in the table and in its journal.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from serq_sweep.core import _parse_csv
from serq_sweep.records import _own_dtypes, _read_csv

SERQ = str(Path(sys.executable).parent / "serq")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); record r { y = now; } }
run { horizon 5; seed 1; }
"""


SWEEP = ["sweep", "p.sq", "--set", "a=1,2", "--workers", "0", "--no-progress", "-o", "t.csv", "--records", "r.csv"]


def _sweep(tmp_path: Path, here=None) -> subprocess.CompletedProcess:
    """The sweep run again in ``tmp_path``, as a child process; given ``here`` (serq_in_process), serq.cli.main
    in the test's process, in that folder (a test of what is said and of the files left as they were)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(tmp_path)
            return here(*SWEEP)
    return subprocess.run([SERQ, *SWEEP], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def swept(tmp_path, serq_in_process, monkeypatch):
    """The sweep's files, made by the sweep in this process (what a test checks is the sweep run on them again
    after its edit: in this process too, but for the first case of each kind of edit, a child process)."""
    (tmp_path / "p.sq").write_text(PROGRAM)
    with monkeypatch.context() as m:
        m.chdir(tmp_path)
        r = serq_in_process(*SWEEP)
    assert r.returncode == 0, r.stderr
    return tmp_path


@pytest.mark.parametrize(("cell", "why"), [
    ("１２", "column session: '１２' is not a number"),
    ("²", "column session: '²' is not a number"),
    (" 3", "column session: ' 3' is not a number"),
    ("+3", "column session: '+3' is not a number"),
    ("1_0", "column session: '1_0' is not a number"),
    ("Infinity", "column session: 'Infinity' is not a number"),
    ("99999999999999999999999", "column session: 1e+23 is not a whole number within int64"),
    ("0.5", "column session: 0.5 is not a whole number within int64"),
    ("nan", "column session: nan is not a whole number within int64"),
    ("-inf", "column session: -inf is not a whole number within int64"),
])
def test_a_session_cell_that_is_no_session_is_refused(swept, serq_in_process, cell, why):
    path = swept / "r.csv"
    lines = path.read_text().splitlines()
    fields = lines[1].split(",")
    fields[4] = cell  # point,a,seed,key,session,...
    lines[1] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    before = path.read_bytes()
    r = _sweep(swept, None if cell == "１２" else serq_in_process)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "Warning" not in r.stderr, r.stderr
    col = len(",".join(fields[:4])) + 2  # the cell's column: after the four cells before it and their commas
    assert r.stderr == (f"r.csv:2:{col}: error: cannot read the records to resume from ({why}); remove it or give "
                        f"--fresh\n  {lines[1]}\n  {' ' * (col - 1)}^\n")
    assert path.read_bytes() == before


def test_a_turn_beyond_int32_is_refused(swept, serq_in_process):
    path = swept / "r.csv"
    lines = path.read_text().splitlines()
    fields = lines[1].split(",")
    fields[5] = str(2**31)
    lines[1] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    r = _sweep(swept, serq_in_process)
    assert r.returncode == 1
    assert "(column turn: 2147483648 is not a whole number within int32)" in r.stderr, r.stderr


def test_the_writers_own_cells_read_back(tmp_path):
    # what serq_report.csv.format_column writes: integers by str, floats by repr (-0.0, 1e+300, inf, nan)
    (tmp_path / "r.csv").write_text("point,key,session,turn,time,y\n"
                                    "0,k,0,0,-0.0,1e+300\n0,k,-5,1,inf,nan\n0,k,9223372036854775807,2,1.5,-inf\n")
    header, by_key = _read_csv(str(tmp_path / "r.csv"))
    cols = by_key["k"]
    assert cols["session"].dtype == np.int64 and cols["session"].tolist() == [0, -5, 2**63 - 1]
    assert cols["time"].dtype == np.float64 and str(cols["time"][0]) == "-0.0" and cols["time"][1] == float("inf")
    assert np.isnan(cols["y"][1]) and cols["y"][0] == 1e300
    own = _own_dtypes(cols)
    assert own["turn"].dtype == np.int32 and own["turn"].tolist() == [0, 1, 2]


def test_a_table_cell_is_a_number_only_in_the_writers_syntax():
    for text, value in [("1", 1), ("-3", -3), ("1.5", 1.5), ("1e+300", 1e300), ("-0.0", -0.0), ("inf", float("inf")),
                        ("True", True)]:
        got = _parse_csv(text)
        assert got == value and type(got) is type(value), text
    assert _parse_csv("nan") != _parse_csv("nan")  # NaN
    for text in ["１２", "²", " 3", "+3", "1_000", "Infinity", "0x10", "1e5 "]:
        assert _parse_csv(text) == text  # text, as it is


@pytest.mark.parametrize("status", ["OK", "", "ok ", "o\x00k", "done"])
def test_a_status_no_sweep_writes_is_refused(swept, serq_in_process, status):
    path = swept / "t.csv"
    lines = path.read_text().splitlines()
    fields = lines[1].split(",")
    assert fields[3] == "ok"  # point,a,seed,status,...
    fields[3] = status
    lines[1] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    r = _sweep(swept, None if status == "OK" else serq_in_process)
    assert r.returncode == 1, r.stderr
    col = len(",".join(fields[:3])) + 2  # at the status cell, the line quoted (a NUL as \x00)
    head, quote, caret = r.stderr.splitlines()
    assert head.startswith(f"t.csv:2:{col}: error: the run {fields[6]} (row 1) has the status "), r.stderr
    assert head.endswith(", none a sweep writes (ok, partial, error); remove it or give --fresh")
    assert quote == "  " + lines[1].replace("\x00", "\\x00") and caret == " " * (2 + col - 1) + "^"


def test_a_journal_entry_of_another_status_is_refused(swept):
    import json

    key = (swept / "t.csv").read_text().splitlines()[1].split(",")[6]
    (swept / "t.csv").unlink()
    line = json.dumps({"key": key, "status": "OK", "message": "", "warnings": "", "figures": {}})
    (swept / "t.csv.journal").write_text(line + "\n")
    r = _sweep(swept)
    assert r.returncode == 1
    col = line.index('"OK"') + 1  # at the status's value
    assert r.stderr == (f"t.csv.journal:1:{col}: error: not an entry of a sweep's journal; remove the file or give "
                        f"--fresh\n  {line}\n  {' ' * (col - 1)}^\n")
