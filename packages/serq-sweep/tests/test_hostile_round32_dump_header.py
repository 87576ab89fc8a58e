"""``serq plot DIR`` refuses a dump's CSV whose header names a column twice, at the second name, as a sweep's
table, a records table and a trace are refused. ``time,session,turn,value,value`` was read through its first
``value`` and the second ignored: ``--cdf`` drew the samples 1 and 2 of a file whose last column held 7 and 8,
and said nothing."""

from __future__ import annotations

import pytest
from serq.cli import main
from serq_sweep.plots import _dump_csv

LIST = '{"serq-dump": 1, "observes": ["w"], "gauges": ["g"]}'


def _plot(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(["plot", *argv])
    return info.value.code, capsys.readouterr().err


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "d" / "gauge").mkdir(parents=True)  # as serq run --dump writes it: the gauges in gauge/
    (tmp_path / "d" / "serq-dump.json").write_text(LIST)
    (tmp_path / "d" / "gauge" / "g.csv").write_text("time,value\n0.0,1.0\n2.0,3.0\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "d"


@pytest.mark.parametrize(("header", "option", "name", "col", "fields"), [
    ("time,session,turn,value,value", "--cdf", "w", 25, (4, 5)),
    ("time,session,turn,value,time", "--cdf", "w", 25, (1, 5)),
    ("value,time,value", "--gauge", "g", 12, (1, 3)),
])
def test_a_column_named_twice_is_refused_at_the_second(folder, capsys, header, option, name, col, fields):
    rows = "".join(f"{k}.0,{k},1,{k},{k + 6}\n" for k in (1, 2)) if option == "--cdf" else "1.0,2.0,3.0\n"
    file = f"{name}.csv" if option == "--cdf" else f"gauge/{name}.csv"
    (folder / file).write_text(f"{header}\n{rows}")
    code, err = _plot(["d", option, name, "-o", "o.svg"], capsys)
    twice = header.split(",")[fields[1] - 1]
    assert code == 1
    assert err == (f"d/{file}:1:{col}: error: not a dump's CSV (the header gives the column {twice} twice, as "
                   f"fields {fields[0]} and {fields[1]}: no column of a table is named twice)\n"
                   f"  {header}\n  {' ' * (col - 1)}^\n")
    assert not (folder.parent / "o.svg").exists()


def test_a_header_of_each_column_once_is_read(folder, capsys):
    (folder / "w.csv").write_text("time,session,turn,value\n1.0,0,1,0.5\n2.0,1,1,0.25\n")
    assert _dump_csv("d", "w", gauge=False) == ([1.0, 2.0], [0.5, 0.25])
    assert _dump_csv("d", "g", gauge=True) == ([0.0, 2.0], [1.0, 3.0])
    code, err = _plot(["d", "--cdf", "w", "-o", "o.svg"], capsys)
    assert (code, err) == (0, "")
    assert (folder.parent / "o.svg").stat().st_size > 0
