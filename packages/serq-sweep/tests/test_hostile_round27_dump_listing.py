"""``serq plot DIR`` refuses a dump's list of files (``DIR/serq-dump.json``) that is not one ``serq run --dump``
writes saying what it lacks, at the value, the line quoted with a caret, as every JSON file's mistake is told.
A list without the mark ``"serq-dump": 1`` (or with another value there) was said to have "no list of
observes" beside its list of observes, and a list of observes holding a list named the whole file."""

from __future__ import annotations

import pytest
from serq.cli import main

LISTED = '"observes": ["w"], "gauges": []'


def _plot(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(["plot", *argv])
    return info.value.code, capsys.readouterr().err


@pytest.fixture
def dump(tmp_path, monkeypatch):
    """A dump of one observe, w, as serq run --dump writes it; its list written by each test."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "w.csv").write_text("time,session,turn,value\n1.0,0,1,0.5\n2.0,1,1,0.25\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "d" / "serq-dump.json"


@pytest.mark.parametrize(("text", "col", "why"), [
    ("{" + LISTED + "}", 1, 'no "serq-dump": 1'),
    ('{"serq-dump": 2, ' + LISTED + "}", 15, 'no "serq-dump": 1'),
    ('{"serq-dump": "1", ' + LISTED + "}", 15, 'no "serq-dump": 1'),
    ('{"serq-dump": 1, "observes": [["w"]], "gauges": []}', 31, "observes: item 1 is no file's name"),
    ('{"serq-dump": 1, "observes": ["w", 3], "gauges": []}', 36, "observes: item 2 is no file's name"),
    ('{"serq-dump": 1, "observes": "w", "gauges": []}', 30, "no list of observes"),
    ('{"serq-dump": 1, "gauges": []}', 1, "no list of observes"),
    ('["w"]', 1, "it is no JSON object"),
])
def test_a_list_no_dump_writes_says_what_it_lacks_where(dump, capsys, text, col, why):
    dump.write_text(text)
    code, err = _plot(["d", "--cdf", "w", "-o", "o.svg"], capsys)
    assert code == 1
    assert err == (f"{dump.relative_to(dump.parent.parent)}:1:{col}: error: not the list of files serq run --dump "
                   f"writes ({why})\n  {text}\n  {' ' * (col - 1)}^\n")
    assert not (dump.parent.parent / "o.svg").exists()


def test_the_list_a_dump_writes_is_read(dump, capsys):
    dump.write_text('{\n "serq-dump": 1,\n "observes": [\n  "w"\n ],\n "gauges": []\n}\n')
    code, err = _plot(["d", "--cdf", "w", "-o", "o.svg"], capsys)
    assert (code, err) == (0, "")
    assert (dump.parent.parent / "o.svg").stat().st_size > 0
