"""The trace reader: what a malformed file is told (file:line:col), how rows group into sessions, and
that a trace is read as a stream into compact columns rather than whole."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import pytest
import serq_sim
from serq_sim import trace as trace_mod
from serq_sim.trace import load_trace
from trace_errors import trace_error

HEADER = "session,turn,new,out,think,forced\n"
REPO = Path(__file__).resolve().parents[3]


def write(tmp_path, data: bytes | str, name="t.csv") -> str:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(p)


def error_of(path: str) -> str:
    # the first line; the rest, the line quoted with a caret, checked against the file
    return trace_error(path)


def test_a_byte_that_is_not_utf8_is_named_at_its_line_and_column(tmp_path):
    # line 3: "0,2,12" then the byte 0xff: column 7
    p = write(tmp_path, HEADER.encode() + b"0,1,100,5,0,0\n0,2,12\xff,5,0,0\n")
    assert error_of(p) == f"{p}:3:7: error: the trace is not UTF-8 text (byte 0xFF)"


def test_a_latin1_header_is_named_too(tmp_path):
    p = write(tmp_path, "session,turn,new,out,think,forced,caf\xe9\n0,1,1,1,0,0,x\n".encode("latin-1"))
    assert error_of(p) == f"{p}:1:38: error: the trace is not UTF-8 text (byte 0xE9)"  # 34 + "caf"


def test_a_byte_order_mark_is_skipped(tmp_path):
    p = write(tmp_path, b"\xef\xbb\xbf" + HEADER.encode() + b"0,1,100,5,0,0\n")
    assert load_trace(p).sessions == [[(100.0, 5.0, 0.0, 0.0)]]


def test_what_csv_cannot_read_is_an_error_at_its_line(tmp_path):
    big = "9" * 200_000  # beyond the csv module's field limit (131 072 characters)
    p = write(tmp_path, HEADER + "0,1,100,5,0,0\n" + f'0,2,"{big}",5,0,0\n')
    # (at the field's opening quote, in words of the trace: it was the reader's own at column 1)
    assert error_of(p) == (f"{p}:3:5: error: the trace is not CSV: this field is longer than 131072 characters (a "
                           "trace's cells are numbers)")


@pytest.mark.parametrize("row, message", [
    ("0,1,100,5,-1,0", "3:11: error: column think: -1 is negative"),
    ("0,1,100,-5,1,0", "3:9: error: column out: -5 is negative"),
    ("0,1,nan,5,1,0", "3:5: error: column new: 'nan' is not finite"),
    ("0,1,100,5,1,inf", "3:13: error: column forced: 'inf' is not finite"),
    ("nan,1,100,5,1,0", "3:1: error: column session: 'nan' is not finite"),
    ("0,-inf,100,5,1,0", "3:3: error: column turn: '-inf' is not finite"),
    ("0,1,100,5,1,", "3:13: error: column forced: '' is not a number"),
    ("0,1,100,5,1", "3:1: error: expected 6 fields, found 5"),
])
def test_a_bad_cell_is_named_at_its_column(tmp_path, row, message):
    p = write(tmp_path, HEADER + "0,0,1,1,0,0\n" + row + "\n")
    assert error_of(p) == f"{p}:{message}"


@pytest.mark.parametrize("rows, message", [
    # a quoted field the file ends inside was read as a value ("0\n" is 0): now an error at its quote
    ('0,1,100,5,1,"0\n', "3:13: error: the trace is not CSV: the file ends inside this quoted field (its "
                         "closing quote is missing)"),
    ('0,1,100,5,1,"0', "3:13: error: the trace is not CSV: the file ends inside this quoted field (its "
                       "closing quote is missing)"),
    ('0,1,"100\n1,1,100,5,1,0\n', "3:5: error: the trace is not CSV: the file ends inside this quoted "
                                   "field (its closing quote is missing)"),
    ('0,1,100,5,"1"x,0\n', "3:14: error: the trace is not CSV: a quoted field goes on after its closing "
                           'quote (a quote inside a quoted field is doubled: "")'),
    # a bad cell of a record whose quoted field spans lines is named where it is, not on the record's
    # last line at the column a split of that line on commas gave
    ('0,1,"100\n\n",x,1,0\n', "5:3: error: column out: 'x' is not a number"),
    ('"0","1,5",100,5,1,0\n', "3:5: error: column turn: '1,5' is not a number"),
    ('0,1,"1""",5,1,0\n', "3:5: error: column new: '1\"' is not a number"),
    ('0,1,"1\n2",5,1,0\n', "3:5: error: column new: '1\\n2' is not a number"),
    ('0,1,"1\n2",5,1\n', "3:1: error: expected 6 fields, found 5"),
])
def test_quoted_fields_are_held_to_the_rules_and_named_where_they_are(tmp_path, rows, message):
    p = write(tmp_path, HEADER + "0,0,1,1,0,0\n" + rows)
    assert error_of(p) == f"{p}:{message}"


def test_a_cell_after_a_quoted_comma_is_named_at_its_column(tmp_path):
    p = write(tmp_path, 'note,session,turn,new,out,think,forced\n"a,b",0,1,x,1,0,0\n')
    assert error_of(p) == f"{p}:2:11: error: column new: 'x' is not a number"


@pytest.mark.parametrize("header, message", [
    ("session,turn,new,out,think,forced,session", "1:35: error: the header names the column session twice"),
    ('session,"turn",new,"out",think,forced,"a\nb",out', "2:4: error: the header names the column out twice"),
])
def test_a_column_named_twice_is_an_error(tmp_path, header, message):
    # which of the two was read was the first's, without a word
    p = write(tmp_path, header + "\n0,1,1,1,0,0,0,0\n")
    assert error_of(p) == f"{p}:{message}"


def test_other_columns_may_repeat(tmp_path):
    p = write(tmp_path, "x,session,turn,new,out,think,forced,x\n9,0,1,1,1,0,0,9\n")
    assert load_trace(p).sessions == [[(1.0, 1.0, 0.0, 0.0)]]


def test_header_and_empty_files(tmp_path):
    assert error_of(p := write(tmp_path, "")) == \
        f"{p}:1:1: error: the trace is empty (expected the header session,turn,new,out,think,forced)"
    assert error_of(p := write(tmp_path, "session,turn,new\n0,1,2\n")) == \
        f"{p}:1:1: error: the header lacks the column(s) out, think, forced (expected " \
        "session,turn,new,out,think,forced)"
    assert error_of(p := write(tmp_path, HEADER + "\n ,,,,, \n")) == f"{p}:1:34: error: the trace has no rows after its header"


def test_sessions_in_order_of_first_appearance_turns_sorted(tmp_path, monkeypatch):
    # session 7 first, then 3; rows interleaved, turns out of order, a tie (7, turn 2) kept in file order;
    # extra columns, blank lines and CRLF line ends are fine; "3" and "3.0" are one session
    text = ("turn,extra,session,new,out,think,forced\r\n"
            "2,a,7,20,2,0.5,0\r\n"
            "1,b,3,10,1,0,1\r\n"
            "\r\n"
            "1,c,7,11,1,0,0\r\n"
            "2,d,7,21,2,0.25,0\r\n"
            "0,e,3.0,9,1,0,0\r\n")
    p = write(tmp_path, text)
    want = [[(11.0, 1.0, 0.0, 0.0), (20.0, 2.0, 0.5, 0.0), (21.0, 2.0, 0.25, 0.0)],
            [(9.0, 1.0, 0.0, 0.0), (10.0, 1.0, 0.0, 1.0)]]
    eager = load_trace(p)
    assert isinstance(eager.sessions, list) and eager.sessions == want and eager.rows == 5
    monkeypatch.setattr(trace_mod, "EAGER_ROWS", 0)
    lazy = load_trace(p).sessions
    assert isinstance(lazy, trace_mod.LazySessions)
    assert len(lazy) == 2 and [lazy[0], lazy[1]] == want and lazy[-1] == want[1] and list(lazy) == want


def _big_trace(path: Path, rows: int, interleaved: bool) -> list[list[tuple]]:
    """A trace of ``rows`` rows of sessions of 1–9 turns (interleaved: in a shuffled order), and what it
    holds, computed here."""
    rng = random.Random(5)
    sessions, n = [], 0
    while n < rows:
        k = min(rng.randint(1, 9), rows - n)
        sessions.append([(float(rng.randint(1, 5000)), float(rng.randint(1, 300)), rng.randint(0, 999) / 8,
                          float(rng.randint(0, 1))) for _ in range(k)])
        n += k
    lines = [(s, t, row) for s, turns in enumerate(sessions) for t, row in enumerate(turns)]
    if interleaved:
        # sessions must still first appear in order: shuffle the rows after each session's first
        firsts = [x for x in lines if x[1] == 0]
        rest = [x for x in lines if x[1] != 0]
        rng.shuffle(rest)
        lines = firsts + rest
    with open(path, "w") as f:
        f.write(HEADER)
        for s, t, (a, b, c, d) in lines:
            f.write(f"{s},{t},{a:g},{b:g},{c!r},{d:g}\n")
    return sessions


@pytest.mark.parametrize("interleaved", [False, True], ids=["grouped", "interleaved"])
def test_a_large_trace_is_read_into_compact_columns(tmp_path, monkeypatch, interleaved):
    # 60 000 rows (a 2 MB file): reading the text whole into rows of Python tuples peaked at 509 bytes a
    # row; the columns take 48, and grouping and reordering up to about 40 more
    rows = 60_000
    path = tmp_path / "big.csv"
    want = _big_trace(path, rows, interleaved)
    monkeypatch.setattr(trace_mod, "EAGER_ROWS", 0, raising=False)
    tracemalloc.start()
    try:
        corpus = load_trace(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * rows, f"{peak / rows:.0f} bytes a row"
    assert corpus.rows == rows and len(corpus.sessions) == len(want)
    for i in (0, 1, len(want) // 2, len(want) - 1):
        assert corpus.sessions[i] == want[i]


def test_the_lazy_sessions_replay_exactly_as_the_eager_ones(monkeypatch):
    import serq_frontend

    prog = serq_frontend.compile(str(REPO / "examples" / "replay" / "vllm_replay.sq"), sets={}, defs={})
    eager = serq_sim.run(prog, seed=3)
    monkeypatch.setattr(trace_mod, "EAGER_ROWS", 0)
    lazy = serq_sim.run(prog, seed=3)
    assert lazy.result == eager.result and lazy.result.turns > 3000
    for name in eager.observes:
        assert lazy.observe(name).values.tobytes() == eager.observe(name).values.tobytes()


@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("tier", ["fast", "general"])
def test_lazy_sessions_in_either_tier(tmp_path, monkeypatch, ordered, tier):
    from irb import P
    from serq_ir import nodes as N

    write(tmp_path, HEADER + "0,1,100,5,1,0\n1,1,70,3,0,1\n0,2,150,6,2,0\n")
    p = P()
    p.trace_attrs()
    d = p.stage("d", N.Delay())
    prog = p.build([N.Turn(), N.Loop(body=[
        p.observe("new", "new"),
        p.branch("more", [N.Turn(), p.run(d, "think")], [N.End()])])],
        arrive=N.Batch(n=6), trace=N.Trace(path="t.csv", ordered=ordered), source=str(tmp_path / "prog.sq"))
    eager = serq_sim.run(prog, check_invariants=tier == "general")
    monkeypatch.setattr(trace_mod, "EAGER_ROWS", 0)
    lazy = serq_sim.run(prog, check_invariants=tier == "general")
    assert lazy.tier == eager.tier == tier
    assert list(lazy.observe("new").values) == list(eager.observe("new").values)
    if ordered:  # sessions 0, 2, 4 replay trace session 0 (100, then 150), sessions 1, 3, 5 session 1 (70)
        assert sorted(eager.observe("new").values) == [70.0] * 3 + [100.0] * 3 + [150.0] * 3
    assert lazy.result == eager.result
