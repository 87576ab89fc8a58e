"""``serq plot``'s own usage errors exit 2, as every command's (docs/language.md: "A bad value of a flag is a
usage error, status 2, in every command"; flags that do not go together too).

serq plot said these with status 1, the status of an error in a program or an input: ``-o`` of a picture
that is no ``.svg``, ``.png`` or ``.pdf`` (serq sweep's ``--out t.txt`` is 2), ``--cdf`` beside ``--gauge``,
``--x``/``--y`` beside either, and a table's curve without ``--x`` or ``--y``. What SOURCE holds stays an
error of that input, status 1. To a caller of ``serq_sweep.plots.plot`` each is still a UserError.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def here(tmp_path, monkeypatch):
    (tmp_path / "t.csv").write_text("x,seed,ttft.p99\n1,1,0.5\n2,1,0.7\n")
    (tmp_path / "d").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _serq(capsys, *args: str) -> tuple[int, str]:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main(["plot", *args])
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize("args, head", [
    (["t.csv", "--x", "x", "--y", "ttft.p99", "-o", "a.txt"], "error: -o a.txt: a plot is .svg, .png or .pdf"),
    (["d", "--cdf", "r", "--gauge", "g", "-o", "a.svg"], "error: --cdf and --gauge make two plots"),
    (["d", "--cdf", "r", "--x", "x", "-o", "a.svg"], "error: --x and --cdf make two plots"),
    (["d", "--gauge", "g", "--y", "y", "-o", "a.svg"], "error: --y and --gauge make two plots"),
    (["t.csv", "--x", "x", "-o", "a.svg"], "error: serq plot TABLE --x x needs --y FIGURE: the figure to draw against x"),
    (["t.csv", "-o", "a.svg"], "error: serq plot TABLE needs --x NAME and --y FIGURE"),
])
def test_a_plot_flag_mistake_is_a_usage_error(here, capsys, args, head):
    code, err = _serq(capsys, *args)
    assert (code, err.count("\n")) == (2, 1), err
    assert err.startswith(head) and "Traceback" not in err, err
    assert sorted(p.name for p in here.iterdir()) == ["d", "t.csv"]  # no picture


def test_what_the_source_holds_stays_an_error_of_the_input(here, capsys):
    code, err = _serq(capsys, "t.csv", "--x", "x", "--y", "tpot.p99", "-o", "a.svg")
    assert code == 1 and "no figure 'tpot.p99'" in err and "Traceback" not in err, err
