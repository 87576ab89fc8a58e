"""``--where NAME=VALUE`` of a flag column (a sweep's ``interrupted``, a record of a condition) in ``serq metrics``
and ``serq plot`` (serq_sweep.rows, their one rule).

A CSV table's reader reads ``true`` and ``false`` in any case as flags (core._parse_csv), and ``--where`` compared
a flag cell with nothing: ``--where interrupted=false`` kept no row and said ``no row of the table has
interrupted = false (its values: False)``, and ``--where interrupted=False`` the same of the value it listed. A
flag cell now matches the word ``true`` or ``false`` in any case (and ``True``/``False`` given in Python), and no
number: ``0`` and ``1`` are no flags, as the language's flags are no numbers. Truth: the rows written here,
counted by hand."""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sweep import metrics

HEADER = "sent,first_token,last_token,output,f\n"
# two requests of f true (written two ways), one false, one of the number 1 (a column of flags and a number)
ROWS = "0,1,2,3,true\n0,1,2,3,True\n0,1,2,3,FALSE\n0,1,2,3,1\n"


@pytest.fixture
def flags(tmp_path):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + ROWS)
    return p


@pytest.mark.parametrize(("value", "kept"), [
    ("true", 2), ("TRUE", 2), ("True", 2), ("false", 1), ("False", 1), (True, 2), (False, 1), ("1", 1), (1, 1),
])
def test_metrics_where_a_flag(flags, value, kept):
    (whole,) = metrics(flags, where={"f": value})
    assert whole.requests.completed == kept


@pytest.mark.parametrize("value", ["0", "yes", "tru"])
def test_no_flag_no_row(flags, value):
    with pytest.raises(UserError) as e:
        metrics(flags, where={"f": value})
    assert f"no row of the records {flags} has f = {value} (its values: 1, False, True)" in str(e.value)


def test_plot_where_interrupted_of_a_sweep_table(tmp_path, serq_in_process):
    t = tmp_path / "t.csv"
    # a runs table as serq sweep writes it: interrupted False in every row (two points, one seed)
    t.write_text("point,lambda,seed,status,message,warnings,key,interrupted,observes.response.mean\n"
                 "0,0.5,1,ok,,,k0,False,2.0\n1,0.6,1,ok,,,k1,False,2.5\n")
    svgs = {}
    for value in ("false", "False", "FALSE"):
        out = tmp_path / f"{value}.svg"
        r = serq_in_process("plot", str(t), "--x", "lambda", "--y", "response.mean", "--where",
                            f"interrupted={value}", "-o", str(out))
        assert r.returncode == 0, r.stderr
        svgs[value] = out.read_bytes()
    plain = tmp_path / "all.svg"
    assert serq_in_process("plot", str(t), "--x", "lambda", "--y", "response.mean", "-o", str(plain)).returncode == 0
    # every row is kept: the same picture as without --where
    assert set(svgs.values()) == {plain.read_bytes()}
    r = serq_in_process("plot", str(t), "--x", "lambda", "--y", "response.mean", "--where", "interrupted=true",
                        "-o", str(tmp_path / "none.svg"))
    assert r.returncode == 1
    assert "no row of the table has interrupted = true (its values: False)" in r.stderr


@pytest.mark.parametrize(("rows", "at", "line"), [
    ("0,1,2,3\n0,1,2,true\n", "3:7", "0,1,2,true"),  # a column of numbers and a flag
    ("0,1,2,false\n0,1,2,true\n", "2:7", "0,1,2,false"),  # a column of flags
])
def test_a_flag_is_no_count_of_tokens(tmp_path, serq_in_process, rows, at, line):
    # output true was taken as 1 token, false as 0
    p = tmp_path / "req.csv"
    p.write_text("sent,first_token,last_token,output\n" + rows)
    r = serq_in_process("metrics", str(p))
    assert r.returncode == 1 and r.stdout == ""
    assert f"req.csv:{at}: error: column output does not hold numbers (a request's output is a number)\n  {line}\n" \
           in r.stderr


def test_a_parquet_column_of_flags_is_no_count_of_tokens(tmp_path):
    import pandas as pd

    p = tmp_path / "req.parquet"
    pd.DataFrame({"sent": [0.0], "first_token": [1.0], "last_token": [2.0], "output": [True]}).to_parquet(p)
    with pytest.raises(UserError) as e:
        metrics(p)
    assert str(e.value) == f"error: {p}: column output does not hold numbers (a request's output is a number)"
