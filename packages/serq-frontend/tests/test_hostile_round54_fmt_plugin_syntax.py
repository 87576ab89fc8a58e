"""``serq fmt`` of a program written in a third party's syntax: the formatter spaces tokens by serQ's
grammar, so a plugin's own tokens were laid out as serQ's: ``go -> s;`` became ``go - > s;`` and ``ns
a::b;`` ``ns a : : b;``, programs that no longer parse, and ``say 'a  b';`` became ``say ' a b ';``,
another string; each written over the user's file, status 0. Now the layout of a program of a plugin's
syntax is parsed again and its AST, places aside, compared with the program's (commands._reads_back): one
that does not read back is refused, naming the plugins' layers, and no file is changed (``--check`` as well).
A layout that reads back is written as before."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from click.testing import CliRunner
from serq_frontend import ast as A
from serq_frontend.commands import fmt_command
from serq_frontend.sugar import SugarLayer


@dataclass(eq=False)
class SSay(A.Node):
    words: list
    pos: Any


def drop(module, ctx):
    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(
        b, lambda s: [] if isinstance(s, SSay) else None)) for i in module.items], module.file)


def manager(grammar):
    layer = SugarLayer("say", grammar, {"s_say": lambda ctx, pos, children: SSay([str(c) for c in children], pos)},
                       drop)

    class Say:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Say()])


def program(statement):
    return f"stage s : delay;\nworkload {{ arrive batch(1); }}\nsession {{ {statement}   run s (1); }}\n"


@pytest.mark.parametrize(("grammar", "statement", "why"), [
    ('%extend stmt: "go" "->" NAME ";" -> s_say\n', "go -> s;", "the laid-out text does not parse (3:14: "
                                                                 "unexpected `-` (expected `->`))"),
    ('%extend stmt: "ns" NAME "::" NAME ";" -> s_say\n', "ns a::b;", "the laid-out text does not parse"),
    ("SQ: /'[^']*'/\n%extend stmt: \"say\" SQ \";\" -> s_say\n", "say 'a  b';", "the laid-out text reads as "
                                                                                    "another program"),
], ids=["->", "::", "a string of its own"])
def test_a_layout_that_does_not_read_back_is_refused(tmp_path, grammar, statement, why):
    f = tmp_path / "p.sq"
    old = program(statement)
    f.write_text(old)
    pm = manager(grammar)
    serq_frontend.parse(f, pm=pm)  # the program is the plugin's syntax
    for args in ([str(f)], ["--check", str(f)]):
        r = CliRunner().invoke(fmt_command, args, obj=pm)
        # (a CompileError; under --check the CheckFailed of status 2 that carries it)
        assert type(r.exception).__name__ == ("CheckFailed" if "--check" in args else "CompileError"), r.output
        message = str(r.exception)
        assert message.startswith(f"error: {f}: serq fmt cannot lay this program out: {why}"), message
        assert message.endswith("; the sugar layers of plugins ('say') give syntax the formatter does not know, so "
                                "no file is changed"), message
        assert f.read_text() == old
        assert sorted(x.name for x in tmp_path.iterdir()) == ["p.sq"]


def test_a_layout_that_reads_back_is_written(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text(program("say a  b;"))
    pm = manager('%extend stmt: "say" NAME NAME ";" -> s_say\n')
    r = CliRunner().invoke(fmt_command, [str(f)], obj=pm)
    assert r.exit_code == 0, r.output
    assert f.read_text() == "stage s : delay;\nworkload { arrive batch(1); }\nsession { say a b; run s (1); }\n"
