"""Records: `record NAME { col = expr; … }` appends one whole row; the report keeps the rows sent after the
warm-up; `serq run --records FILE`, `report.records()`; lib/vllm.sq's request table."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import msgspec
import numpy as np
import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq.cli import main
from serq_frontend.diagnostics import CompileError

REPO = Path(__file__).resolve().parents[3]

PROG = """
stage d : delay;
workload { arrive batch(3); }
session { set t0 = now; run d (1 + serial); record req { sent = t0; done = now; k = serial * 10; } }
run { horizon 100; warmup 0; }
"""


def compile_src(src: str):
    return serq_frontend.compile(source=src)


def test_a_record_is_one_row_of_every_column():
    prog = compile_src(PROG)
    assert [(r.name, r.columns) for r in prog.records] == [("req", ["sent", "done", "k"])]
    report = serq_sim.run(prog)
    rows = report.records("req", kind="numpy")
    assert list(rows) == ["session", "turn", "time", "sent", "done", "k"]
    # batch(3) at t = 0: session i is done at 1 + i
    assert rows["session"].tolist() == [0, 1, 2] and rows["session"].dtype == np.int64
    assert rows["time"].tolist() == rows["done"].tolist() == [1.0, 2.0, 3.0]
    assert rows["sent"].tolist() == [0.0, 0.0, 0.0] and rows["k"].tolist() == [0.0, 10.0, 20.0]
    assert report.result.records == {"req": 3}
    assert report.records(kind="numpy")["k"].tolist() == [0.0, 10.0, 20.0]  # the one table by default


def test_the_warm_up_keeps_or_drops_a_row_whole_by_its_send_time():
    # the first request is sent at 0 and done at 3, the second sent at 3 and done at 6; warm-up 2: the
    # observe keeps both samples (taken at 3 and 6), the record only the second (sent at 3)
    src = """
    stage d : delay;
    workload { arrive batch(1); }
    session { set t0 = now; run d (3); observe x = now - t0; record r { sent = t0; x = now - t0; }
              set t0 = now; run d (3); observe x = now - t0; record r { sent = t0; x = now - t0; } }
    run { horizon 100; warmup 2; }
    """
    report = serq_sim.run(compile_src(src))
    assert report.result.observes["x"].count == 2
    rows = report.records(kind="numpy")
    assert rows["sent"].tolist() == [3.0] and rows["time"].tolist() == [6.0]
    # without a sent column the row's own time decides
    report = serq_sim.run(compile_src(src.replace("sent = t0; ", "")))
    assert report.records(kind="numpy")["time"].tolist() == [3.0, 6.0]


def test_a_request_the_run_ends_in_has_no_row():
    src = PROG.replace("run d (1 + serial)", "run d (1 + 10 * serial)").replace("horizon 100", "horizon 15")
    rows = serq_sim.run(compile_src(src)).records(kind="numpy")
    assert rows["session"].tolist() == [0, 1]  # session 2 would be done at 21


def test_member_names_the_index_of_a_family_member():
    src = """
    stage e[3] : delay;
    stage d : delay;
    workload { arrive batch(5); }
    session { set j = serial % 3; run e[j] (1); record r { m = member(e[j]); one = member(d); first = member(e[0]); } }
    run { horizon 10; warmup 0; }
    """
    rows = serq_sim.run(compile_src(src)).records(kind="numpy")
    assert rows["m"].tolist() == [float(s % 3) for s in rows["session"].tolist()]
    assert set(rows["one"].tolist()) == {0.0} and set(rows["first"].tolist()) == {0.0}


@pytest.mark.parametrize("body, message", [
    ("record r { a = 1; session = 2; }", "`session` is a column every record has"),
    ("record r { a = 1; a = 2; }", "column `a` twice in one record"),
    ("record r { a = 1; } record r { b = 1; }", "record `r` has the columns a elsewhere"),
    ("record r { }", "record `r` has no column"),
    ("record r { a = member(1); }", "`member(…)` takes one pool or stage member"),
])
def test_a_bad_record_is_one_error_at_its_place(body, message):
    src = f"stage d : delay;\nworkload {{ arrive batch(1); }}\nsession {{ {body} }}\nrun {{ horizon 1; }}\n"
    with pytest.raises(CompileError) as info:
        compile_src(src)
    text = str(info.value)
    assert message in text and "<source>:3:" in text, text


def test_a_record_in_a_workload_block_is_refused():
    src = "stage d : delay;\nworkload { arrive batch(1); init { record r { a = 1; } } }\nsession { }\nrun { horizon 1; }\n"
    with pytest.raises(CompileError, match="`record` in the workload's `init` block"):
        compile_src(src)


def test_the_ir_round_trips_and_is_checked():
    prog = compile_src(PROG)
    assert serq_ir.decode(serq_ir.encode(prog)) == prog
    doc = json.loads(serq_ir.encode(prog))
    doc["records"][0]["columns"][2] = "time"
    with pytest.raises(serq_ir.IRError, match=r"column 'time' is one the simulator adds - at '\$.records\[0\].columns\[2\]'"):
        serq_ir.decode(json.dumps(doc).encode())
    doc = json.loads(serq_ir.encode(prog))
    doc["session"][-1]["values"].pop()
    with pytest.raises(serq_ir.IRError, match="2 values for the 3 columns of record 'req'"):
        serq_ir.decode(json.dumps(doc).encode())
    bad = msgspec.structs.replace(prog, records=[])
    with pytest.raises(serq_ir.IRError, match="record table 0 does not exist"):
        serq_ir.decode(serq_ir.encode(bad))


def serq(argv, capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out + out.err


def test_serq_run_records_writes_one_row_per_record(tmp_path, capsys):
    (tmp_path / "p.sq").write_text(PROG)
    out = tmp_path / "req.csv"
    code, text = serq(["run", str(tmp_path / "p.sq"), "--no-progress", "--records", str(out)], capsys)
    assert code == 0, text
    assert "records (rows): req 3" in text
    rows = list(csv.reader(out.read_text().splitlines()))
    # k = serial * 10 can only be a whole number: written as an integer; sent and done are times
    assert rows == [["session", "turn", "time", "sent", "done", "k"], ["0", "0", "1.0", "0.0", "1.0", "0"],
                    ["1", "0", "2.0", "0.0", "2.0", "10"], ["2", "0", "3.0", "0.0", "3.0", "20"]]


def test_serq_run_records_refuses_what_it_cannot_write(tmp_path, capsys):
    (tmp_path / "p.sq").write_text(PROG)
    (tmp_path / "n.sq").write_text(PROG.replace("record req { sent = t0; done = now; k = serial * 10; }", ""))
    code, text = serq(["run", str(tmp_path / "n.sq"), "--records", str(tmp_path / "x.csv")], capsys)
    assert code == 1 and "the program declares no records (`record NAME { col = expr; … }`;" in text and "Traceback" not in text
    code, text = serq(["run", str(tmp_path / "p.sq"), "--records", str(tmp_path / "x.txt")], capsys)
    assert code == 2 and "a records file ends in .csv or .parquet" in text
    (tmp_path / "link.csv").symlink_to(tmp_path / "p.sq")  # the program itself by another name
    code, text = serq(["run", str(tmp_path / "p.sq"), "--records", str(tmp_path / "link.csv")], capsys)
    assert code == 1 and "Traceback" not in text and (tmp_path / "p.sq").read_text() == PROG, text
    if importlib.util.find_spec("pyarrow") is None and importlib.util.find_spec("polars") is None:
        code, text = serq(["run", str(tmp_path / "p.sq"), "--no-progress", "--records", str(tmp_path / "x.parquet")],
                          capsys)
        assert code == 1 and "writing Parquet needs pyarrow or polars" in text
        assert not (tmp_path / "x.parquet").exists()


def test_the_records_file_reads_back_with_pandas_one_row_per_request(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    (tmp_path / "p.sq").write_text(PROG)
    want = [[0, 0, 1.0, 0.0, 1.0, 0.0], [1, 0, 2.0, 0.0, 2.0, 10.0], [2, 0, 3.0, 0.0, 3.0, 20.0]]
    files = ["r.csv"] + (["r.parquet"] if importlib.util.find_spec("pyarrow") or importlib.util.find_spec("polars")
                         else [])
    for name in files:
        code, text = serq(["run", str(tmp_path / "p.sq"), "--no-progress", "--records", str(tmp_path / name)], capsys)
        assert code == 0, text
        df = (pd.read_parquet if name.endswith(".parquet") else pd.read_csv)(tmp_path / name)
        assert list(df.columns) == ["session", "turn", "time", "sent", "done", "k"]
        assert df.values.tolist() == want
    frame = serq_sim.run(compile_src(PROG)).records()
    assert isinstance(frame, pd.DataFrame) and frame.values.tolist() == want


TYPED = """
stage d : delay;
workload { arrive batch(4); }
session {
  set t0 = now;
  set n = 1 + floor(~exp(5));
  set half = n / 2;
  set k = 0;
  loop {
    run d (1);
    set k = k + n;
    branch (k > 20) { end; }
    set at = now;
    record r { sent = t0; at = at; n = n; k = k; half = half; flag = n > 3; m = member(d);
               mixed = serial == 2 ? 1 / 0 : serial; q = ~exp(1); big = n * 1e300; }
  }
}
run { horizon 100; warmup 0; }
"""


def test_integer_columns_are_integers_in_every_output(tmp_path, capsys):
    """Columns that can only be whole numbers (counts, floor, comparisons, member, sums of them, through
    attributes) are int64 when every kept value is a whole finite number below 2^53; times (now, even
    whole on this clock), divisions, draws and a column that holds inf in some row stay float64."""
    prog = compile_src(TYPED)
    from serq_sim.records import whole_columns

    assert whole_columns(prog) == [[False, False, True, True, False, True, True, True, False, True]]
    rows = serq_sim.run(prog, seed=2).records(kind="numpy")
    ints = ["session", "n", "k", "flag", "m"]
    floats = ["time", "sent", "at", "half", "mixed", "q", "big"]
    assert [c for c in rows if rows[c].dtype == np.int64] == ints
    assert all(rows[c].dtype == np.float64 for c in floats) and rows["turn"].dtype == np.int32
    assert rows["at"].tolist() == [float(int(v)) for v in rows["at"]]  # whole, yet a time
    assert np.isinf(rows["mixed"]).any() and (rows["big"] >= 2.0 ** 53).all()  # whole, beyond exact ints
    pd = pytest.importorskip("pandas")
    (tmp_path / "p.sq").write_text(TYPED)
    files = ["r.csv"] + (["r.parquet"] if importlib.util.find_spec("pyarrow") or importlib.util.find_spec("polars")
                         else [])
    for name in files:
        code, text = serq(["run", str(tmp_path / "p.sq"), "--seed", "2", "--no-progress", "--records",
                           str(tmp_path / name)], capsys)
        assert code == 0, text
        df = (pd.read_parquet if name.endswith(".parquet") else pd.read_csv)(tmp_path / name)
        assert [c for c in df.columns if df[c].dtype.kind == "i"] == ["session", "turn", *ints[1:]], name
        assert df["k"].tolist() == rows["k"].tolist()
    frame = serq_sim.run(prog, seed=2).records(kind="pandas")
    assert [c for c in frame.columns if frame[c].dtype.kind == "i"] == ["session", "turn", *ints[1:]]


def test_lib_vllm_request_counts_are_integers():
    src = (REPO / "examples" / "multi-turn" / "vllm.sq").read_text()
    rows = serq_sim.run(compile_src(src), horizon=250.0).records(kind="numpy")
    assert len(rows["session"]) > 10
    for c in ("prompt", "output", "cached", "preemptions", "engine"):
        assert rows[c].dtype == np.int64, c
    for c in ("sent", "admitted", "first_token", "last_token"):
        assert rows[c].dtype == np.float64, c


def test_records_stay_small():
    """100 000 requests of 13 columns: 20 bytes a row for session, turn and time and 8 a column."""
    src = """
    stage d : delay;
    workload { arrive batch(100000); }
    session { set t0 = now; run d (1); record r { sent = t0; a = 1; b = 2; c = 3; d = 4; e = 5; f = 6; g = 7;
                                                   h = 8; i = 9; j = 10; k = 11; l = 12; } }
    run { horizon 10; warmup 0; }
    """
    report = serq_sim.run(compile_src(src))
    table = report.record_table()._table
    assert len(table) == 100000
    held = sum(b.buffer_info()[1] * b.itemsize for b in (table.sessions, table.turns, table.times, *table.values))
    assert held == 100000 * (20 + 8 * 13) and held < 300e6
