"""The compile cache and a third party's sugar layer whose grammar is read from a data file of its plugin (a
``.lark`` file beside its module, as serQ keeps its own grammar): an edit of that file between two loads of
one unchanged program is a miss, and the program compiles with the grammar as it now is (serq_frontend.cache:
the key holds each third party's layer's name, the digest of its grammar and its builders' rules). Before,
the key stamped the plugin's Python files alone: the program compiled from the cache with the grammar it
had, a statement the new grammar no longer has included, until some other change missed. A layer's plugin
taken away is a miss too, told as the syntax error it now is; a sugar hook that raises while the key is made
is the plugin's one message from the compile, not a traceback."""

from __future__ import annotations

import importlib
import sys

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import cache

PROGRAM = "stage s : delay;\nworkload { arrive batch(1); }\nsession { twice { run s (1); } }\n"

PLUGIN = '''
import copy
from dataclasses import dataclass
from pathlib import Path
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
    text = (Path(__file__).parent / "twice.lark").read_text()
    if text.startswith("raise"):
        raise RuntimeError("no grammar today")
    register(SugarLayer("twice", text, {"s_twice": lambda ctx, pos, children: STwice(children[0], pos)}, rewrite))
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The package ``grammar54_pkg`` (its grammar in ``twice.lark``) on sys.path; its module."""
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    pkg = tmp_path / "site" / "grammar54_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(PLUGIN)
    (pkg / "twice.lark").write_text('%extend stmt: "twice" block -> s_twice\n')
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    try:
        yield importlib.import_module("grammar54_pkg")
    finally:
        sys.modules.pop("grammar54_pkg", None)


def manager(*plugins):
    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, *plugins])


def entries(tmp_path):
    return sorted((tmp_path / "cache").glob("compile-*.bin"))


def test_an_edited_grammar_file_misses(tmp_path, plugin):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    first = cache.load(prog, pm=manager(plugin))
    assert len(first.session) == 2 and len(entries(tmp_path)) == 1
    assert len(cache.load(prog, pm=manager(plugin)).session) == 2 and len(entries(tmp_path)) == 1  # a hit
    lark = tmp_path / "site" / "grammar54_pkg" / "twice.lark"
    lark.write_text('%extend stmt: "thrice" block -> s_twice\n')
    with pytest.raises(serq_frontend.CompileError, match=r"p\.sq:3:11: error: `twice` does not begin a statement"):
        cache.load(prog, pm=manager(plugin))
    # the statement of the new grammar compiles, and the old one's entry is not what it reads
    prog.write_text(PROGRAM.replace("twice", "thrice"))
    assert len(cache.load(prog, pm=manager(plugin)).session) == 2
    lark.write_text('%extend stmt: "twice" block -> s_twice\n')
    prog.write_text(PROGRAM)
    assert len(cache.load(prog, pm=manager(plugin)).session) == 2


def test_the_plugin_taken_away_misses(tmp_path, plugin):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    assert len(cache.load(prog, pm=manager(plugin)).session) == 2
    with pytest.raises(serq_frontend.CompileError, match=r"p\.sq:3:11: error: `twice` does not begin a statement"):
        cache.load(prog, pm=manager())


def test_a_hook_that_raises_while_the_key_is_made_is_the_plugins_message(tmp_path, plugin):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    (tmp_path / "site" / "grammar54_pkg" / "twice.lark").write_text("raise\n")
    with pytest.raises(PluginError) as e:
        cache.load(prog, pm=manager(plugin))
    first = str(e.value).splitlines()[0]
    assert first.startswith("error: plugin 'grammar54_pkg' failed in serq_frontend_register_sugar: RuntimeError: "
                            "no grammar today at "), first
    assert entries(tmp_path) == []


class AsyncSugar:
    @serq.hookimpl
    async def serq_frontend_register_sugar(self, register):
        register(None)


class YieldingSugar:
    @serq.hookimpl
    def serq_frontend_register_sugar(self, register):
        yield register(None)


@pytest.mark.parametrize(("plugin", "what"), [(AsyncSugar, "a coroutine function (async def)"),
                                              (YieldingSugar, "a generator function (it yields)")])
def test_a_hook_whose_call_runs_no_body_is_not_called_for_the_key(tmp_path, plugin, what, capfd, monkeypatch):
    # the key leaves it to the compile, which refuses it naming the plugin; calling it for the key made a
    # coroutine nothing awaited, and Python's "RuntimeWarning: coroutine … was never awaited" on stderr
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    prog = tmp_path / "p.sq"
    prog.write_text("stage s : delay;\n")
    with pytest.raises(PluginError, match=f"registers a sugar layer wrongly in serq_frontend_register_sugar: it is "
                                          rf"{what.replace('(', '[(]').replace(')', '[)]')}"):
        cache.load(prog, pm=manager(plugin()))
    import gc

    gc.collect()
    assert "never awaited" not in capfd.readouterr().err
