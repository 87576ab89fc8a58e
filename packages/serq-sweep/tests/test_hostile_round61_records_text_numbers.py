"""A records file whose moment or count is written as no writer writes a number (``1_0``, `` 2``, ``+5``), read by
``serq metrics`` and ``serq plot --cdf``.

The CSV reader keeps such a cell as text (serq_sweep.core: ``int()`` and ``float()`` read more than the language
writes); the readers of a column as numbers then took numpy's ``float()`` of it, so ``serq metrics`` read
``last_token`` ``1_0`` as 10 (a window of 10 s, its rates a tenth of the file's), and ``serq plot --cdf e2el``
subtracted the column of text from ``sent``, pandas' ``TypeError: operation 'sub' not supported for dtype 'str'``
traceback. Such a cell is now no number, one error at it with the language's reason, as a flag's value is told.
Truth: the files are written by hand here; the reason is serq.numbers.not_a_number's of the same text, and a
file of numbers gives the metrics computed by hand."""

from __future__ import annotations

import json

import pytest
from serq.numbers import not_a_number

HEADER = "sent,first_token,last_token,output\n"


@pytest.mark.parametrize("cell", ["1_0", " 2", "+5"])
@pytest.mark.parametrize("command", [("metrics",), ("plot", "--cdf", "e2el", "-o", "c.png"),
                                     ("plot", "--cdf", "tpot", "-o", "c.png")])
def test_a_cell_no_writer_writes_is_no_number(tmp_path, serq_in_process, monkeypatch, cell, command):
    monkeypatch.chdir(tmp_path)
    line = f"0,1,{cell},3"
    (tmp_path / "r.csv").write_text(HEADER + "0,0.5,4,3\n" + line + "\n")
    r = serq_in_process(command[0], "r.csv", *command[1:])
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr
    what = ("column last_token does not hold numbers (a request's last_token is a number)" if command[0] == "metrics"
            else f"--cdf {command[2]}: column last_token does not hold numbers")
    assert r.stderr == f"r.csv:3:5: error: {what}: {not_a_number(cell)}\n  {line}\n      ^\n"
    assert not (tmp_path / "c.png").exists()


def test_a_word_is_said_as_before(tmp_path, serq_in_process, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.csv").write_text(HEADER + "0,1,soon,3\n")
    r = serq_in_process("plot", "r.csv", "--cdf", "e2el", "-o", "c.png")
    assert r.stderr == "r.csv:2:5: error: --cdf e2el: column last_token does not hold numbers\n  0,1,soon,3\n      ^\n"


def test_numbers_give_the_metrics(tmp_path):
    from serq_sweep import metrics

    # two requests sent at 0 and 1, last tokens at 4 and 5: a window of 5 s; e2el 4 and 4, TTFT 0.5 and 1
    (tmp_path / "r.csv").write_text(HEADER + "0,0.5,4,3\n1,2,5,3\n")
    (whole,) = metrics(tmp_path / "r.csv")
    m = whole.requests
    assert (m.duration, m.completed, m.request_throughput) == (5.0, 2, 0.4)
    assert (m.e2el.mean, m.ttft.mean) == (4.0, 0.75)


def test_a_parquet_file_is_read_by_the_same_rule(tmp_path):
    import pandas as pd
    from serq.errors import UserError
    from serq_sweep import metrics

    p = tmp_path / "r.parquet"
    pd.DataFrame({"sent": [0.0, 1.0], "first_token": [0.5, 2.0], "last_token": ["4", "1_0"],
                  "output": [3, 3]}).to_parquet(p)
    with pytest.raises(UserError) as e:
        metrics(p)
    assert str(e.value) == (f"error: {p}: column last_token does not hold numbers (a request's last_token is a "
                            f"number): {not_a_number('1_0')}")
    # a nullable column's missing cell (pandas' NA) is a blank cell, as in a CSV file (it was refused as no number)
    pd.DataFrame({"sent": [0.0, 1.0], "first_token": [0.5, 2.0], "last_token": [4.0, 5.0],
                  "output": pd.array([3, None], dtype="Int64")}).to_parquet(p)
    (tmp_path / "r.csv").write_text(HEADER + "0,0.5,4,3\n1,2,5,\n")
    (whole,), (csv,) = metrics(p), metrics(tmp_path / "r.csv")
    got, want = whole.to_builtins(), csv.to_builtins()
    got["requests"].pop("table"), want["requests"].pop("table")
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)  # (NaN figures alike)
    assert whole.requests.completed == 2 and whole.requests.tpot.count == 1
