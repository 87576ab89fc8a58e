"""A sweep's CSV table read back, by `serq plot` as by a resuming sweep, tells a malformed row, a cell that is no
number where one goes and a byte that is not UTF-8 as a source's mistake is told: FILE:LINE:COL, the line
quoted (a character that does not print as an escape) and a caret under the column.

`serq plot` read the table with pandas: a row cut short was a row with holes (plotted), a byte that is not
UTF-8 was Python's "'utf-8' codec can't decode byte 0xff in position 0", and a column holding one cell that is
no number was said to hold the first value of the column (a number), with no line. A resuming sweep named the
line's number and the column's name alone. Every position below is counted by hand from the text written."""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sweep.core import TableFault, read_table
from serq_sweep.plots import curve_data

HEADER = "point,x,seed,status,message,key,y\n"
ROWS = "0,1,1,ok,,k1,0.5\n1,2,1,ok,,k2,0.75\n"


def _curve_error(tmp_path, text: str, x: str = "x", y: str = "y") -> str:
    (tmp_path / "t.csv").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(UserError) as e:
        curve_data(str(tmp_path / "t.csv"), x, y)
    return str(e.value)


def test_plot_refuses_a_row_cut_short_at_its_line(tmp_path):
    path = tmp_path / "t.csv"
    assert _curve_error(tmp_path, HEADER + ROWS + "2,3,1\n") == (
        f"{path}:4:1: error: cannot read the table (line 4 has 3 fields, the header 7)\n  2,3,1\n  ^")


def test_plot_refuses_a_row_too_long_at_its_first_extra_field(tmp_path):
    # the eighth field starts after "2,3,1,ok,,k3,1.0," (17 characters): column 18
    path = tmp_path / "t.csv"
    assert _curve_error(tmp_path, HEADER + ROWS + "2,3,1,ok,,k3,1.0,9\n") == (
        f"{path}:4:18: error: cannot read the table (line 4 has 8 fields, the header 7)\n"
        f"  2,3,1,ok,,k3,1.0,9\n{' ' * 19}^")


def test_plot_names_a_byte_that_is_not_utf8_at_its_column(tmp_path):
    # the byte 0xFF, the fifth field's one character, after "2,3,1,ok," (9 characters): column 10
    path = tmp_path / "t.csv"
    assert _curve_error(tmp_path, HEADER + ROWS + "2,3,1,ok,\udcff,k3,1.0\n") == (
        f"{path}:4:10: error: cannot read the table (not UTF-8 text (byte 0xFF))\n"
        f"  2,3,1,ok,\\xff,k3,1.0\n{' ' * 11}^")


def test_plot_names_the_cell_that_is_no_number_on_its_line(tmp_path):
    # line 3's y, after "1,2,1,ok,,k2," (13 characters): column 14; the cell, not the column's first value
    path = tmp_path / "t.csv"
    text = HEADER + "0,1,1,ok,,k1,0.5\n1,2,1,ok,,k2,abc\n"
    assert _curve_error(tmp_path, text) == (
        f"{path}:3:14: error: --y y: column y does not hold numbers (it has 'abc'); a curve's x and y are numbers "
        "(a name whose values are not, such as a program, goes to --hue)\n"
        f"  1,2,1,ok,,k2,abc\n{' ' * 15}^")


def test_a_resumed_tables_cell_is_located_on_a_later_line(tmp_path):
    # lines 2 and 3 are one record (a quoted message over two lines); line 4's seed, of 400 digits (beyond a
    # number's range), starts after "1,2," (4 characters): column 5
    big = "9" * 400
    (tmp_path / "t.csv").write_text(HEADER + '0,1,1,error,"two\nlines",k1,\n' + f"1,2,{big},ok,,k2,0.75\n")
    with pytest.raises(TableFault) as e:
        read_table(str(tmp_path / "t.csv"))
    assert (e.value.line, e.value.col) == (4, 5)
    head, quote, caret = e.value.message("cannot read the table to resume from").split("\n")
    assert head == (f"{tmp_path / 't.csv'}:4:5: error: cannot read the table to resume from (column seed: the "
                    "integer 999999999999...999999 (400 digits) is beyond the range of a number (at most 308 digits))")
    assert caret == "  " + " " * 4 + "^" and quote.startswith("  1,2,9999")


RECORDS = "session,turn,time,sent,first_token,last_token,output\n0,0,1,1,2,3,4\n"


def _records_error(tmp_path, text: str, metric: str) -> str:
    from serq_sweep.plots import records_cdf_data

    (tmp_path / "r.csv").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(UserError) as e:
        records_cdf_data(str(tmp_path / "r.csv"), [metric])
    return str(e.value)


def test_records_cdf_refuses_a_row_too_long_at_its_extra_field(tmp_path):
    # the eighth field starts after "1,0,1,1,2,3,4," (14 characters): column 15
    path = tmp_path / "r.csv"
    assert _records_error(tmp_path, RECORDS + "1,0,1,1,2,3,4,9\n", "ttft") == (
        f"{path}:3:15: error: cannot read the records (line 3 has 8 fields, the header 7)\n"
        f"  1,0,1,1,2,3,4,9\n{' ' * 16}^")


def test_records_cdf_names_a_byte_that_is_not_utf8_at_its_column(tmp_path):
    path = tmp_path / "r.csv"  # the byte after "1,0," (4 characters): column 5
    assert _records_error(tmp_path, RECORDS + "1,0,\udce91,1,2,3,4\n", "ttft") == (
        f"{path}:3:5: error: cannot read the records (not UTF-8 text (byte 0xE9))\n"
        f"  1,0,\\xe91,1,2,3,4\n{' ' * 6}^")


@pytest.mark.parametrize("metric", ["ttft", "tpot", "first_token"])
def test_records_cdf_names_a_cell_of_text_its_metric_reads(tmp_path, metric):
    # first_token, the fifth field after "1,0,1,1," (8 characters): column 9; ttft and tpot subtract it (a
    # TypeError traceback of pandas)
    path = tmp_path / "r.csv"
    assert _records_error(tmp_path, RECORDS + "1,0,1,1,abc,3,4\n", metric) == (
        f"{path}:3:9: error: --cdf {metric}: column first_token does not hold numbers\n"
        f"  1,0,1,1,abc,3,4\n{' ' * 10}^")
