"""A flag's value of any length is quoted in its error message cut around a ``…``, as ``--set``'s, ``--zip``'s and
``--slo``'s are (serq.errors.clipped: its first 60 and last 59 characters): ``--show``, ``--figure``, ``serq
plot``'s ``--x``, ``--y``, ``--hue``, ``--cdf`` and ``--gauge``, ``--seeds``, ``--dask``, ``--find``, ``--over``'s
range, a sweep's ``--set`` list or range and the value of ``serq run``'s ``--set`` quoted a value of 50 000
characters whole, some twice, in a message line of 100 000 to
200 000 characters. Each is one line of a few hundred now, the same
words, the same status."""

from __future__ import annotations

import pytest
from delay_programs import delay_program
from serq.cli import main
from serq.errors import clipped

PROGRAM = delay_program(record=None)

LONG = "é" * 50_000
#: the value as every message quotes it (independent of the code under test: first 60, …, last 59)
CUT = "é" * 60 + "…" + "é" * 59


def _serq(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.err


@pytest.fixture
def here(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "t.csv").write_text("point,a,seed,status,message,key,w.mean\n0,1,1,ok,,k0,0.5\n1,2,1,ok,,k1,0.7\n")
    (tmp_path / "d").mkdir()  # a dump of one observe, w, as serq run --dump writes it
    (tmp_path / "d" / "w.csv").write_text("time,session,turn,value\n1.0,0,1,0.5\n")
    (tmp_path / "d" / "serq-dump.json").write_text('{"serq-dump": 1, "observes": ["w"], "gauges": []}')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_cut_is_the_rule_of_every_message():
    assert clipped(LONG) == CUT


SWEEP = ["sweep", "p.sq", "--workers", "0", "--no-progress"]


@pytest.mark.parametrize(("argv", "code", "err"), [
    ([*SWEEP, "--show", LONG], 1, f"error: --show: no figure '{CUT}' in the results\n"),
    (["compare", "p.sq", "--set", "a=1,2", "--seeds", "1..2", "--workers", "0", "--no-progress", "--figure", LONG], 1,
     f"error: --figure: no figure '{CUT}' in the results\n"),
    (["plot", "t.csv", "--x", LONG, "--y", "w.mean", "-o", "o.svg"], 1,
     f"error: --x {CUT}: no column {CUT} (the table's swept names: a)\n"),
    (["plot", "t.csv", "--x", "a", "--y", "w.mean", "--hue", LONG, "-o", "o.svg"], 1,
     f"error: --hue {CUT}: no column {CUT} (the table's swept names: a)\n"),
    (["plot", "t.csv", "--x", "a", "--y", LONG, "-o", "o.svg"], 1,
     f"error: --y {CUT}: no figure '{CUT}' in the results\n"),
    ([*SWEEP, "--seeds", LONG], 2,
     f"error: --seeds {CUT}: '{CUT}' is not a seed or a range A..B of seeds\n"),
    ([*SWEEP, "--seeds", "1," + LONG], 2,
     f"error: --seeds 1,{CUT[2:]}: '{CUT}' is not a seed or a range A..B of seeds\n"),
    ([*SWEEP, "--find", LONG + " < 1", "--over", "a", "1:2"], 2,
     f"error: --find '{CUT[:-4]} < 1': expected FIGURE OP NUMBER, OP one of <= < >= > == != (e.g. 'ttft.p99 <= 1')\n"),
    ([*SWEEP, "--find", "w.mean < 1", "--over", "a", LONG], 2,
     f"error: --over a {CUT}: a range LO:HI or LO:HI:STEP\n"),
    (["plot", "d", "--cdf", LONG, "-o", "o.svg"], 1, f"error: d: no observe {CUT} in the dump (observes there: w)\n"),
    (["plot", "d", "--gauge", LONG, "-o", "o.svg"], 1, f"error: d: no gauge {CUT} in the dump (gauges there: none)\n"),
    (["run", "p.sq", "--set", "a=1" + LONG, "--no-progress"], 2,
     f"error: --set a=1{CUT[1:]}: '1{'é' * 38}...{'é' * 9}' (50001 characters) is not a number\n"),
    ([*SWEEP, "--set", "a=1:2:1:" + LONG], 2,
     f"error: --set a: '1:2:1:{CUT[6:]}': a range is START:STOP or START:STOP:STEP\n"),
])
def test_a_long_value_is_quoted_cut(here, capsys, argv, code, err):
    got, said = _serq(argv, capsys)
    assert (got, said) == (code, err)
    assert not (here / "o.svg").exists()


def test_a_seed_of_4000_digits_is_quoted_cut(here, capsys):
    seed = "1" + "0" * 4000
    shown = seed[:60] + "…" + seed[-59:]
    got, said = _serq([*SWEEP, "--seeds", seed], capsys)
    assert got == 2
    assert said.startswith(f"error: --seeds {shown}: {shown}: a seed is an integer from 0 to 2**64 - 1")
    assert len(said) < 400


def test_a_short_value_is_quoted_whole(here, capsys):
    got, said = _serq([*SWEEP, "--seeds", "5..1"], capsys)
    assert (got, said) == (2, "error: --seeds 5..1: '5..1' ends before it starts\n")
    got, said = _serq([*SWEEP, "--show", "nothing"], capsys)
    assert (got, said) == (1, "error: --show: no figure 'nothing' in the results\n")


def test_a_long_dask_address_is_quoted_cut(here, capsys):
    # (without --workers, which --dask ADDRESS refuses as a usage error: its workers are the scheduler's)
    got, said = _serq(["sweep", "p.sq", "--no-progress", "--dask", "tcp://" + LONG], capsys)
    assert got == 1
    assert said.startswith(f"error: --dask tcp://{('tcp://' + LONG)[6:60]}…{CUT[-59:]}: cannot reach the scheduler: ")
    assert said.count("\n") == 1 and len(said) < 800
