"""A table whose fields are separated by ``;`` or a tab (a spreadsheet's export where the decimal mark is a
comma) is read as one column. ``serq plot`` of one said ``needs --x NAME and --y FIGURE``, or that the table
has no column of the name asked for (its one column listed), and ``serq metrics`` that the records lack their
columns. Every reader of a CSV table (serq_sweep.core._csv_chunks) now says the header is one column holding
the separator, at that separator on line 1, and ``serq plot`` says so before it asks for a flag."""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sweep import metrics

HEADER = ["point", "lambda", "seed", "status", "observes.response.mean"]
ROWS = [["0", "0.5", "1", "ok", "2.1"], ["1", "0.7", "1", "ok", "3.4"]]


def _table(tmp_path, sep, name="t.csv"):
    p = tmp_path / name
    p.write_text("".join(sep.join(r) + "\n" for r in [HEADER, *ROWS]))
    return p


def _said(sep):
    word = "';'" if sep == ";" else "a tab"
    shown = ";".join(HEADER) if sep == ";" else "\\t".join(HEADER)  # (a tab shown as \t)
    return (f"the header is one column, {shown}, whose "
            f"name holds {word}: the fields seem separated by {word}, not by commas; serq reads a table whose "
            "fields are separated by commas, as serq writes one: write it with commas")


@pytest.mark.parametrize("sep", [";", "\t"])
@pytest.mark.parametrize("flags", [[], ["--y", "observes.response.mean"], ["--x", "lambda"],
                                   ["--x", "lambda", "--y", "observes.response.mean"]])
def test_serq_plot_says_the_separator(tmp_path, serq_in_process, sep, flags):
    p = _table(tmp_path, sep)
    out = tmp_path / "p.svg"
    r = serq_in_process("plot", str(p), *flags, "-o", str(out))
    assert r.returncode == 1 and not out.exists()
    lines = r.stderr.splitlines()
    # the first separator is after "point": column 6 of line 1
    assert lines[0] == f"{p}:1:6: error: cannot read the table ({_said(sep)})"
    assert lines[2] == "       ^"


def test_records_are_told_so_too(tmp_path, serq_in_process):
    p = _table(tmp_path, ";")
    with pytest.raises(UserError) as e:
        metrics(p)
    assert str(e.value).splitlines()[0] == f"{p}:1:6: error: cannot read the records ({_said(';')})"
    r = serq_in_process("plot", str(p), "--cdf", "ttft", "-o", str(tmp_path / "c.svg"))
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == f"{p}:1:6: error: cannot read the records ({_said(';')})"


def test_a_comma_table_is_as_before(tmp_path, serq_in_process):
    """A table with commas, whose one column's name holds no separator, and one of several columns, one of
    whose names holds a ';' (quoted): read as before."""
    p = _table(tmp_path, ",")
    r = serq_in_process("plot", str(p), "-o", str(tmp_path / "p.svg"))
    assert r.returncode == 2 and r.stderr.startswith("error: serq plot TABLE needs --x NAME and --y FIGURE")
    one = tmp_path / "one.csv"
    one.write_text("sent\n1\n")
    r = serq_in_process("plot", str(one), "-o", str(tmp_path / "p.svg"))
    assert r.returncode == 2 and "needs --x NAME and --y FIGURE" in r.stderr
    two = tmp_path / "two.csv"
    two.write_text('"a;b",c\n1,2\n')
    r = serq_in_process("plot", str(two), "--x", "c", "--y", "x", "-o", str(tmp_path / "p.svg"))
    assert "separated" not in r.stderr
