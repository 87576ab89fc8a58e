"""``serq run --format`` and ``serq fit --name`` quote a value of any length in their errors cut around a ``…``
(serq.errors.clipped: its first 60 and last 59 characters), as every flag's value is: one of 50 000 characters
was quoted whole (a line of 100 000 bytes). A short one is quoted whole, as before."""

from __future__ import annotations

import pytest
from serq.cli import main

PROGRAM = """stage s : delay;
workload { arrive poisson(1); }
session { run s (1); }
run { horizon 5; seed 1; }
"""

LONG = "é" * 50_000
#: the value as every message quotes it (first 60 characters, …, last 59)
CUT = "é" * 60 + "…" + "é" * 59


def _serq(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code, capsys.readouterr().err


@pytest.fixture
def here(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "s.jsonl").write_text('{"decoders": 1, "kv_decode": 10, "prefilled": 0, "attention": 0, "time": 0.01}\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_long_format_is_quoted_cut(here, capsys):
    code, err = _serq(["run", "p.sq", "--format", LONG, "--no-progress"], capsys)
    assert (code, err) == (2, f"error: --format {CUT}: unknown report format (installed: text, json, csv)\n")


def test_a_long_fit_name_is_quoted_cut(here, capsys):
    code, err = _serq(["fit", "s.jsonl", "--name", LONG], capsys)
    assert (code, err) == (2, f"error: invalid value for --name: '{CUT}' is not a name (see 'serq fit --help')\n")


def test_short_ones_are_quoted_whole(here, capsys):
    assert _serq(["run", "p.sq", "--format", "xml", "--no-progress"], capsys) == (
        2, "error: --format xml: unknown report format (installed: text, json, csv)\n")
    assert _serq(["fit", "s.jsonl", "--name", "a b"], capsys) == (
        2, "error: invalid value for --name: 'a b' is not a name (see 'serq fit --help')\n")
