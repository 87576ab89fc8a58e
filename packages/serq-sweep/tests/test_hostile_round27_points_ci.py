"""``serq plot`` of a points table (``FIGURE:mean``, ``FIGURE:ci``) refuses a ``FIGURE:ci`` cell that is no CI's
half-width, at the cell, the line quoted with a caret: one that is no number (``x`` edited in) was a traceback
(``ValueError: could not convert string to float``), and a negative one drew the band inside out without a
word. Each is one message, status 1, no picture written; a NaN or an empty cell (a point of one run) is no CI
and its point is drawn without a band, as before."""

from __future__ import annotations

import pandas as pd
import pytest
from serq.cli import main

HEAD = "point,a,runs,w.mean:mean,w.mean:ci\n"


def _plot(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(["plot", *argv])
    return info.value.code, capsys.readouterr().err


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("cell", "why"), [
    ("x", "does not hold numbers (it has 'x'); a CI's half-width is a number"),
    ("-0.5", "holds the negative half-width -0.5; a CI's half-width is at least 0"),
])
def test_a_ci_that_is_no_half_width_is_one_message_at_its_cell(here, capsys, cell, why):
    line = f"1,2,3,0.7,{cell}"
    (here / "t.csv").write_text(HEAD + "0,1,3,0.5,0.1\n" + line + "\n")
    code, err = _plot(["t.csv", "--x", "a", "--y", "w.mean", "-o", "o.svg"], capsys)
    assert code == 1
    col = line.index(cell) + 1
    assert err == (f"t.csv:3:{col}: error: --y w.mean: column w.mean:ci {why}\n  {line}\n  {' ' * (col - 1)}^\n")
    assert not (here / "o.svg").exists()


def test_in_a_parquet_table_it_is_named_without_a_place(here, capsys):
    pd.DataFrame({"point": [0, 1], "a": [1, 2], "runs": [3, 3], "w.mean:mean": [0.5, 0.7],
                  "w.mean:ci": [0.1, -2.0]}).to_parquet(here / "t.parquet")
    code, err = _plot(["t.parquet", "--x", "a", "--y", "w.mean", "-o", "o.svg"], capsys)
    assert (code, err) == (1, "error: --y w.mean: column w.mean:ci holds the negative half-width -2; a CI's "
                              "half-width is at least 0\n")


@pytest.mark.parametrize("cell", ["0.1", "", "nan", "0"])
def test_a_ci_a_sweep_writes_is_drawn(here, capsys, cell):
    (here / "t.csv").write_text(HEAD + "0,1,3,0.5,0.1\n" + f"1,2,3,0.7,{cell}\n")
    code, err = _plot(["t.csv", "--x", "a", "--y", "w.mean", "-o", "o.svg"], capsys)
    assert (code, err) == (0, "")
    assert (here / "o.svg").stat().st_size > 0
