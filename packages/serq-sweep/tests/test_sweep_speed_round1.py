"""A sweep's CSV table is read a column at a time: the same rows, values, types and faults as reading it a cell
at a time (serq_sweep.core._parse_csv, each cell), with no cell of a column of numbers or flags read one by one."""

from __future__ import annotations

import csv
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import core

#: cells of every kind a hand may write into a number's column, and what a writer writes
ODD = ["1", "-7", "0.5", "-0.0", "1e+300", "inf", "-inf", "nan", "NaN", "-nan", "", "+1", "１２", "1_000", " 3",
       "Infinity", "INF", "-", "1e", ".", ".5", "3.", "1.e5", "True", "FALSE", "tRuE", "ſalse", "yes", "0x10",
       "1e-5", "-.5e-3", "12345678901234567890", "1\n2", "a,b", "Inf", "-iNf", "1.5 "]


def _write(path, header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def _by_cells(path):
    """The oracle: the table read a row and a cell at a time (_parse_csv of each cell, TEXT columns as they
    are), a fault raised at the first faulty row or cell as it is met."""
    with core.wide_fields(), open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f)
        try:
            header = next(reader, [])
        except UnicodeDecodeError:
            raise core.not_utf8_fault(str(path)) from None
        rows = []
        for first, last, row in core.csv_rows(str(path), reader):
            if len(row) != len(header):
                raise core.width_fault(str(path), first, last, row, len(header))
            cells = {}
            for i, (k, v) in enumerate(zip(header, row)):
                try:
                    cells[k] = v if k in core.TEXT else core._parse_csv(v)
                except ValueError as e:
                    raise core.cell_fault(str(path), first, last, i, f"column {k}: {e}") from None
            rows.append(cells)
        return header, rows


def _same(a, b):
    assert a[0] == b[0]
    assert len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1]):
        assert list(x) == list(y)
        assert [type(v) for v in x.values()] == [type(v) for v in y.values()]
        assert [repr(v) for v in x.values()] == [repr(v) for v in y.values()]


def _columns():
    """Columns of one kind each (integers, floats, flags, with holes) and columns mixing each odd cell in."""
    n = 30
    cols = {
        "point": [str(i // 3) for i in range(n)],
        "status": ["ok"] * n,
        "key": [f"{i:024x}" for i in range(n)],
        "ints": [str(i * 7 - 50) for i in range(n)],
        "ints_holes": ["" if i % 4 == 0 else str(i) for i in range(n)],
        "floats": [repr(i / 7) for i in range(n)],
        "floats_holes": ["" if i % 5 == 0 else repr(-i * 1e-3) for i in range(n)],
        "floats_words": ["nan" if i % 3 == 0 else "inf" if i % 3 == 1 else repr(i * 0.25) for i in range(n)],
        "flags": ["True" if i % 2 else "False" for i in range(n)],
        "flags_holes": ["" if i % 2 else "TRUE" for i in range(n)],
        "mixed": [str(i) if i % 2 else repr(i + 0.5) for i in range(n)],
        "empty": [""] * n,
    }
    for j, cell in enumerate(ODD):
        cols[f"odd{j}"] = [cell if i == j % n else repr(i * 0.5) for i in range(n)]
        cols[f"oddint{j}"] = [cell if i == (j * 7) % n else str(i) for i in range(n)]
    return cols


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_columns_read_as_cells(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(core, "CSV_CHUNK", chunk)
    cols = _columns()
    header = list(cols)
    rows = [list(r) for r in zip(*cols.values())]
    path = tmp_path / "t.csv"
    _write(path, header, rows)
    lines: list[tuple[int, int]] = []
    got = core.read_csv_table(str(path), lines)
    _same(got, _by_cells(path))
    # each row's lines: a cell holding a line break makes its row two lines
    want, at = [], 2
    for r in rows:
        span = 1 + sum(c.count("\n") for c in r)
        want.append((at, at + span - 1))
        at += span
    assert lines == want
    # spot checks against the writer's syntax, independent of _parse_csv
    first = got[1][0]
    assert first["ints"] == -50 and type(first["ints"]) is int
    assert math.isnan(first["ints_holes"]) and first["floats"] == 0.0 and first["flags"] is False
    assert got[1][1]["flags"] is True and got[1][0]["flags_holes"] is True
    assert got[1][1]["mixed"] == 1 and type(got[1][1]["mixed"]) is int and got[1][0]["mixed"] == 0.5
    assert got[1][0]["status"] == "ok"


def test_no_cell_of_a_number_column_read_alone(tmp_path, monkeypatch):
    """Only the cells of a column that is not all numbers or flags go through _parse_csv, once a value."""
    calls: list[str] = []
    real = core._parse_csv

    def counted(v):
        calls.append(v)
        return real(v)

    monkeypatch.setattr(core, "_parse_csv", counted)
    n = 500
    header = ["point", "seed", "status", "key", "program", "x", "ok", "ci"]
    rows = [[str(i), "1", "ok", f"k{i}", "a.sq" if i % 2 else "b.sq", repr(i / 3), "False", "nan" if i % 2 else "1.5"]
            for i in range(n)]
    path = tmp_path / "t.csv"
    _write(path, header, rows)
    got = core.read_csv_table(str(path))
    assert sorted(calls) == ["a.sq", "b.sq"]  # the program column, each value once
    assert got[1][1]["program"] == "a.sq" and got[1][2]["x"] == 2 / 3 and got[1][2]["ci"] == 1.5


def _fault(path):
    with pytest.raises(core.TableFault) as e:
        core.read_csv_table(str(path))
    with pytest.raises(core.TableFault) as want:
        _by_cells(path)
    got = e.value.line, e.value.col, e.value.why
    assert got == (want.value.line, want.value.col, want.value.why)
    return got


@pytest.mark.parametrize("chunk", [1, 2, 4096])
def test_first_fault_in_reading_order(tmp_path, monkeypatch, chunk):
    """Of several faults, the first in the order of the rows, then the columns, as a cell-by-cell reading finds."""
    monkeypatch.setattr(core, "CSV_CHUNK", chunk)
    big = "9" * 400
    path = tmp_path / "t.csv"
    # row 2 (line 3): a too-long integer in column c, then in b; row 3 is a row cut short
    path.write_text(f"a,b,c\n1,2,3\n4,{big},{big}\n5,6\n")
    line, col, why = _fault(path)
    assert (line, col) == (3, 3) and why.startswith("column b: the integer 999999999999...999999 (400 digits)")
    # the short row first: its fault is the first
    path.write_text(f"a,b,c\n1,2,3\n5,6\n4,{big},{big}\n")
    assert _fault(path)[:2] == (3, 1)
    # a column of a number and a word: the word is text, the long integer after it the fault
    path.write_text(f"a,b\nx,1\n2,{big}\n")
    line, col, why = _fault(path)
    assert (line, col) == (3, 3) and why.startswith("column b:")
    # a byte that is not UTF-8 far after a long integer (past the decoder's first read): the integer's fault
    path.write_bytes(f"a,b\n1,{big}\n".encode() + b"2,3\n" * 5000 + b"\xff,1\n")
    assert _fault(path)[:2] == (2, 3)
    # a byte that is not UTF-8 in the decoder's first read: its fault
    path.write_bytes(f"a,b\n1,{big}\n2,3\n".encode() + b"\xff,1\n")
    assert _fault(path)[:2] == (4, 1)


# --- a sweep's points and the compile cache ---------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]
MG1 = ROOT / "examples" / "single-turn" / "mg1.sq"


def _serq(env, *args):
    out = subprocess.run([sys.executable, "-m", "serq", *map(str, args)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out


def _entries(folder):
    return sorted(p.name for p in folder.glob("compile-*.bin"))


def test_a_sweep_s_points_make_no_compile_cache_entry(tmp_path):
    """Each point of a sweep (the program with --set values) wrote a compile-cache entry, synced, and the
    sweep's entries pushed the user's others out of the cache (it keeps 256); the points now leave the cache
    as it was, and the tables are those of a sweep with the cache off."""
    cache = tmp_path / "cache"
    env = {**os.environ, "SERQ_CACHE_DIR": str(cache)}
    env.pop("SERQ_COMPILE_CACHE", None)
    other = tmp_path / "other.sq"
    other.write_text(MG1.read_text())
    _serq(env, "check", other)  # the user's program, in the cache
    before = _entries(cache)
    assert len(before) == 1
    stamp = (cache / before[0]).stat().st_mtime_ns
    sweep = ["sweep", MG1, "--set", "lambda=0.1,0.2,0.3,0.4,0.5", "--def", "service=~exp(1)", "--def",
             "service=~det(1)", "--arrivals", "30", "--warmup", "0", "--seeds", "1,2", "--workers", "0", "--no-progress"]
    _serq(env, *sweep, "-o", tmp_path / "on.csv")
    assert _entries(cache) == before and (cache / before[0]).stat().st_mtime_ns == stamp
    _serq({**env, "SERQ_COMPILE_CACHE": "0"}, *sweep, "-o", tmp_path / "off.csv")
    for name in ("on.csv", "on.points.csv"):
        assert (tmp_path / name).read_bytes() == (tmp_path / name.replace("on", "off")).read_bytes()
    assert len((tmp_path / "on.csv").read_text().splitlines()) == 1 + 5 * 2 * 2
    # the program as written (no --set, no --def) is stored as serq run stores it: one entry, then a hit
    _serq(env, "sweep", MG1, "--arrivals", "30", "--warmup", "0", "--seeds", "1,2", "--workers", "0", "--no-progress", "-o",
          tmp_path / "plain.csv")
    assert len(_entries(cache)) == 2
