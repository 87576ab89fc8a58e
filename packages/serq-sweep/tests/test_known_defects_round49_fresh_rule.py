"""``serq sweep --fresh`` without ``--out`` (serq_sweep.cli) and ``serq_sweep.sweep(fresh=True)`` without ``out=``
(serq_sweep.api) were one rule written twice, each with its own literal message; it is one function now,
serq_sweep.core.check_fresh, that both call, each message in its caller's words and unchanged: the command
line's a click usage error with its help hint, the API's a serq.errors.UsageError. Both are said before
anything is compiled (a program that does not exist is not read)."""

from __future__ import annotations

import click
import pytest
import serq_sweep
from serq.errors import UsageError
from serq.loading import argument_given
from serq_sweep import api, cli, core

SAID = "(it runs the sweep again instead of resuming from the table there)"


def test_the_api_says_it_in_its_words(tmp_path):
    with pytest.raises(UsageError) as e:
        serq_sweep.sweep(tmp_path / "none.sq", fresh=True, workers=0, progress=False)
    assert str(e.value) == f"error: fresh=True goes with out= {SAID}"


def test_the_command_line_says_it_in_its_words(tmp_path, serq_in_process):
    r = serq_in_process("sweep", str(tmp_path / "none.sq"), "--fresh", "--workers", "0", "--no-progress")
    assert r.returncode == 2
    assert r.stderr == f"error: --fresh goes with --out {SAID} (see 'serq sweep --help')\n"


def test_the_rule_is_one_function():
    with pytest.raises(click.UsageError) as e:
        core.check_fresh(None, True, error=click.UsageError)
    assert e.value.message == f"--fresh goes with --out {SAID}"
    with pytest.raises(UsageError) as e:
        core.check_fresh(None, True, argument_given)
    assert str(e.value) == f"error: fresh=True goes with out= {SAID}"
    for out, fresh in ((None, False), ("t.csv", True), ("t.csv", False)):
        core.check_fresh(out, fresh)
        core.check_fresh(out, fresh, argument_given)
    # and no caller writes the words again
    import inspect

    for module in (api, cli):
        assert "goes with out=" not in inspect.getsource(module)
        assert "goes with --out (it runs" not in inspect.getsource(module)
        assert "check_fresh(" in inspect.getsource(module)
