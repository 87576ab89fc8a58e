"""A program written in a third party's syntax, its plugin switched off (``SERQ_DISABLED_PLUGINS``) since
the program was compiled: the compile cache misses, and the syntax error says which installed plugin is
off and that its sugar layers may give the syntax (serq_frontend._syntax_noted, the words of
serq.parts.others_switched_off), as an unknown stage kind says it. Before, it was ``unexpected `{```
alone, naming no plugin, where the same command had run the program before the variable was set."""

from __future__ import annotations

import sys

import pytest
import serq
import serq_frontend
from serq_frontend import cache

PROGRAM = "stage s : delay;\nworkload { arrive batch(1); }\nsession { twice { run s (1); } }\n"

PLUGIN = '''
import copy
from dataclasses import dataclass
from typing import Any

from serq import hookimpl
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer


@dataclass(slots=True, eq=False)
class STwice(A.Node):
    body: list
    pos: Any
    BLOCKS = ("body",)


def unroll(s):
    return [x for _ in range(2) for x in copy.deepcopy(s.body)] if isinstance(s, STwice) else None


def rewrite(module, ctx):
    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, unroll)) for i in module.items],
                    module.file)


@hookimpl
def serq_frontend_register_sugar(register):
    register(SugarLayer("twice", '%extend stmt: "twice" block -> s_twice',
                        {"s_twice": lambda ctx, pos, children: STwice(children[0], pos)}, rewrite))
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    site = tmp_path / "site"
    info = site / "serq_twice54-0.2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-twice54\nVersion: 0.2.0\n")
    (info / "entry_points.txt").write_text("[serq]\ntwice54 = twice54_sugar\n")
    (site / "twice54_sugar.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    monkeypatch.delenv("SERQ_DISABLED_PLUGINS", raising=False)
    monkeypatch.delenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    yield
    sys.modules.pop("twice54_sugar", None)


def test_the_syntax_error_names_the_plugin_switched_off(tmp_path, installed, monkeypatch):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    assert len(cache.load(prog, pm=serq.get_plugin_manager()).session) == 2
    assert len(cache.load(prog, pm=serq.get_plugin_manager()).session) == 2  # a hit
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "twice54")
    for load in (lambda pm: cache.load(prog, pm=pm), lambda pm: serq_frontend.compile(prog, pm=pm),
                 lambda pm: serq_frontend.parse(prog, pm=pm)):
        with pytest.raises(serq_frontend.CompileError) as e:
            load(serq.get_plugin_manager())
        assert str(e.value).splitlines() == [
            f"{prog}:3:11: error: `twice` does not begin a statement: a statement begins with one of the language's "
            "words (`run`, `hold`, `set`, …), or calls a definition, `twice(…);`",
            "  session { twice { run s (1); } }",
            "            ^",
            f"{prog}:3:11: note: the installed plugin 'twice54' (serq-twice54 0.2.0) is disabled by "
            "SERQ_DISABLED_PLUGINS (take 'twice54' out of SERQ_DISABLED_PLUGINS to enable it), and its sugar "
            "layers may give this syntax"]
        assert e.value.pos.line == 3 and e.value.pos.col == 11


def test_no_note_when_no_plugin_is_switched_off(tmp_path, installed, monkeypatch):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM.replace("twice {", "twice ("))
    with pytest.raises(serq_frontend.CompileError) as e:
        cache.load(prog, pm=serq.get_plugin_manager())
    assert "note:" not in str(e.value)
    # serQ's own part switched off is no third party's syntax
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "sim")
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source="stage s : delay;\nsession { thrice { } }\n", pm=serq.get_plugin_manager())
    assert "note:" not in str(e.value)
