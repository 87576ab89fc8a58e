"""A usage error click words (``got unexpected extra argument (…)``) quotes what the command line gave with its
characters that do not print written as escapes (serq.errors.printable), as every message of serq's: a bell or
an escape sequence in an extra argument was sent to the terminal as it is (click strips an escape sequence
only where standard error is no terminal, and a bell never)."""

from __future__ import annotations

import pytest
from serq.cli import main


def _serq(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize(("extra", "shown"), [("x\x07", "x\\x07"), ("\x1b[31mred", "\\x1b[31mred"),
                                              ("a\tb", "a\\tb")])
def test_an_extra_argument_is_quoted_with_escapes(tmp_path, capsys, extra, shown):
    (tmp_path / "p.sq").write_text("stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"
                                   "run { horizon 1; seed 1; }\n")
    code, err = _serq(["check", str(tmp_path / "p.sq"), extra], capsys)
    assert (code, err) == (2, f"error: got unexpected extra argument ({shown}) (see 'serq check --help')\n")


def test_a_plain_usage_error_is_as_before(capsys):
    assert _serq(["run", "--seed"], capsys) == (2, "error: option '--seed' requires an argument (see 'serq run --help')\n")
