"""A group of commands given no command (``serq``, ``serq vllm``) prints its help, the lines ``--help`` prints,
on stderr, with the status of a usage error (2).

click raises such a call as a usage error whose message is the whole help; serq makes every usage error one
line, so ``serq`` alone printed ``error: usage: serq [OPTIONS] COMMAND [ARGS]...    serQ: an LLM serving
deployment … Commands:   ast      Print a program's AST … (see 'serq --help')``, the help's lines and every
command's summary run together on one line.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("group", [[], ["vllm"]])
def test_a_group_without_a_command_prints_its_help(capsys, group):
    from serq.cli import _main

    assert _main([*group, "--help"]) == 0
    help_text, err = capsys.readouterr()
    assert err == "" and help_text.startswith(f"Usage: serq {' '.join(group)}{' ' if group else ''}[OPTIONS] COMMAND")
    assert _main(group) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == help_text  # the help's own lines, not one line of them
    assert "error:" not in err


def test_a_command_without_its_argument_is_still_one_line(capsys):
    from serq.cli import _main

    assert _main(["run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "error: missing argument 'FILE' (see 'serq run --help')\n"
