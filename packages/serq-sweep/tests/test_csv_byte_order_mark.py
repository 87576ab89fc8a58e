"""A CSV file saved with a UTF-8 byte-order mark (as Excel's "CSV UTF-8" saves one) reads as the same file
without it: the mark is no part of its first column's name. It was glued to it (``\\ufeffx``), so
``serq plot --x x`` of such a table said there was no column x, a dump's CSV was "not a dump's CSV" and a
table or records file read back to resume had a first column of another name."""

from __future__ import annotations

import pytest
from serq_sweep import core, plots, records

BOM = b"\xef\xbb\xbf"


@pytest.mark.timeout(60)
def test_a_sweep_table_with_a_byte_order_mark_is_drawn_by_its_first_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(BOM + b"x,seed,status,message,key,events\n1.0,1,ok,,k1,10\n1.0,2,ok,,k2,20\n2.0,1,ok,,k3,30\n")
    assert core.read_csv_table(str(path))[0] == ["x", "seed", "status", "message", "key", "events"]
    xs, ys = plots.curve_data(str(path), "x", "events")[1][None][:2]
    assert list(xs) == [1.0, 2.0] and list(ys) == [15.0, 30.0]


@pytest.mark.timeout(60)
def test_a_dump_csv_with_a_byte_order_mark_is_a_dump(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "response.csv").write_bytes(BOM + b"time,value\n1.0,0.5\n2.0,0.25\n")
    xy = plots.cdf(str(tmp_path / "d"), ["response"]).axes[0].lines[0].get_xydata()
    assert [tuple(p) for p in xy] == [(0.25, 0.5), (0.5, 1.0)]


@pytest.mark.timeout(60)
def test_a_records_file_with_a_byte_order_mark_reads_its_first_column(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(BOM + b"key,session,turn,time\nk1,0,0,1.5\n")
    header, by_key = records._read_csv(str(path))
    assert header == ["key", "session", "turn", "time"]
    assert list(by_key) == ["k1"] and list(by_key["k1"]["time"]) == [1.5]
