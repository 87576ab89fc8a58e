"""``serq metrics`` of records whose times span no window, and ``serq_sweep.metrics`` given arguments of the wrong
type.

Without ``--duration`` the run's window is the span of its requests, from the first ``sent`` to the last
``last_token``. A file edited so that the last token comes before the first send made a window of -3 s ("completed
1 over -3 s", rates of NaN); a ``sent`` column of NaN made one of 0 s, and numpy's "RuntimeWarning: All-NaN slice
encountered" with its source line on stderr; an infinite time an infinite window, every rate 0. Each is one error
at the cell, asking for ``--duration``, which still gives the figures of such a file (the times of each request
are the report's to judge, as ``serq run`` does). Truth: the files are made by hand here."""

from __future__ import annotations

import pytest
from serq.errors import UsageError
from serq_sweep import metrics

HEADER = "sent,first_token,last_token,output\n"
ASK = "give the run's window with --duration SECONDS"


@pytest.mark.parametrize(("rows", "said", "line", "caret"), [
    # the first sent (5) after the last token (2): the caret at that sent
    (["5,1,2,3"], "the requests span no time: the first sent, 5, is after the last last_token, 2", "5,1,2,3", "^"),
    (["0,1,inf,3"], "the requests span no finite time: a last_token of inf", "0,1,inf,3", "    ^"),
    (["1,2,3,3", "-inf,1,2,3"], "the requests span no finite time: a sent of -inf", "-inf,1,2,3", "^"),
])
def test_a_window_of_no_time_is_refused_at_its_cell(tmp_path, serq_in_process, rows, said, line, caret):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + "\n".join(rows) + "\n")
    r = serq_in_process("metrics", str(p))
    at = 1 + next(i for i, row in enumerate(rows, 1) if row == line)
    assert r.returncode == 1 and r.stdout == ""
    assert f"req.csv:{at}:{len(caret)}: error: {said}: {ASK}" in r.stderr
    assert f"\n  {line}\n  {caret}\n" in r.stderr
    assert "Traceback" not in r.stderr and "Warning" not in r.stderr
    # --duration gives the window: the figures are those of the times as written
    ok = serq_in_process("metrics", str(p), "--duration", "4", "--json")
    assert ok.returncode == 0 and ok.stderr == ""


def test_every_sent_nan(tmp_path, serq_in_process):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + "nan,1,2,3\n,1,2,3\n")
    r = serq_in_process("metrics", str(p))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"error: {p}: every request has a sent of NaN, so the run's window is not the span of its requests: " \
                       f"{ASK} (the report's end - warmup)\n"
    (whole,) = metrics(p, duration=2)
    assert whole.requests.completed == 2 and whole.requests.request_throughput == 1.0


def test_nan_cells_beside_numbers_are_left_out_of_the_span(tmp_path):
    p = tmp_path / "req.csv"
    # sent 1 .. last token 6: a window of 5 s (the NaN sent of the second row is no time)
    p.write_text(HEADER + "1,2,4,3\nnan,3,6,3\n")
    (whole,) = metrics(p)
    assert whole.requests.duration == 5.0 and whole.requests.request_throughput == 2 / 5


def test_a_sweep_run_is_named(tmp_path, serq_in_process):
    p = tmp_path / "r.csv"
    p.write_text("point,B,seed,key,sent,first_token,last_token,output\n0,8,1,k1,0,1,2,3\n0,8,2,k2,5,1,3,3\n")
    r = serq_in_process("metrics", str(p))
    assert r.returncode == 1
    assert ("r.csv:3:10: error: the requests (the run point=0, B=8, seed=2) span no time: the first sent, 5, is "
            "after the last last_token, 3") in r.stderr


def test_a_parquet_file_says_the_same(tmp_path, serq_in_process):
    import pandas as pd
    p = tmp_path / "req.parquet"
    pd.DataFrame({"sent": [5.0], "first_token": [1.0], "last_token": [2.0], "output": [3]}).to_parquet(p)
    r = serq_in_process("metrics", str(p))
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: {p}: the requests span no time: the first sent, 5, is after the last "
                               "last_token, 2")


def test_an_empty_file_is_a_run_of_no_requests(tmp_path):
    p = tmp_path / "req.csv"
    p.write_text(HEADER)
    (whole,) = metrics(p)
    assert whole.requests.completed == 0 and whole.requests.duration == 0.0


@pytest.mark.parametrize(("kw", "said"), [
    ({"records": 3}, "records: a path, not 3"),
    ({"records": None}, "records: a path, not None"),
    ({"by": 3}, "--by: a column's name or a list of them, not 3"),
    ({"by": b"engine"}, "--by: a column's name or a list of them, not b'engine'"),
])
def test_python_arguments_of_the_wrong_type(tmp_path, kw, said):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + "0,1,2,3\n")
    with pytest.raises(UsageError) as e:
        metrics(**{"records": p, **kw})
    assert said in str(e.value)


def test_by_as_any_iterable_of_names(tmp_path):
    p = tmp_path / "req.csv"
    p.write_text("sent,first_token,last_token,output,engine\n0,1,2,3,1\n0,1,3,3,2\n")
    for by in (("engine",), iter(["engine"]), {"engine"}):
        assert [r.group for r in metrics(p, by=by)] == [{"engine": 1}, {"engine": 2}, {}]
