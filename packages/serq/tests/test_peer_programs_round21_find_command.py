"""A capacity planner types ``serq find …``, the search docs/sweep.md calls "capacity search", which is the
option ``--find`` of ``serq sweep``: the error said ``no such command 'find'`` and nothing more, and ``serq
--help`` lists no such command. A name that is no command but the long option of some says which command
has it (``serq.cli``'s ``SerqGroup.option_named``); any other name is told as before."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)


def error_of(capsys, args: list[str]) -> str:
    from serq.cli import _main

    assert _main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    return err


def test_serq_find_says_it_is_an_option_of_sweep(capsys):
    pytest.importorskip("serq_sweep")
    err = error_of(capsys, ["find", "p.sq", "--over", "N", "1:4:1"])
    assert err == "error: no such command 'find' (--find is an option of serq sweep) (see 'serq --help')\n"


def test_an_option_of_several_commands_names_them_in_the_listing_s_order(capsys):
    pytest.importorskip("serq_sweep")
    pytest.importorskip("serq_frontend")
    err = error_of(capsys, ["records"])
    assert err == "error: no such command 'records' (--records is an option of serq run and serq sweep) (see 'serq --help')\n"


@pytest.mark.parametrize("name", ["fubar", "p.sq", "sl-o", "find=1"])
def test_another_name_is_told_as_before(capsys, name):
    err = error_of(capsys, [name])
    assert err == f"error: no such command {name!r} (see 'serq --help')\n"
