"""The compile cache (``serq_frontend.cache.load``, the ``.sq`` loader's compile) asks for the library folders
(``SERQ_PATH`` and the plugins' ``serq_frontend_library_paths``) only when the program needs them: at the
compile's first ``use``, and at a hit of an entry whose compile read one (the entry holds the folders it was
given, and other folders are a miss). A program that uses no library compiles, and is stored and read back,
whatever such a hook does; before, the key asked the hook at every load, so a hook that raised, exited or
returned what is no list of folders refused every program, where ``serq_frontend.compile`` asks it at a
``use`` only. When a program needs the folders, such a hook is one message naming the plugin, as before."""

from __future__ import annotations

import sys

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq.errors import PluginError
from serq_frontend import cache

PROGRAM = "stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"
USES = 'use "mm.sq";\nstage s : delay;\nworkload { arrive batch(1); }\nsession { run s (work_of()); }\n'


def hook(behaviour):
    """A plugin whose serq_frontend_library_paths does ``behaviour()`` and counts its calls."""

    class Paths:
        calls = 0

        @serq.hookimpl
        def serq_frontend_library_paths(self):
            Paths.calls += 1
            return behaviour()

    return Paths


def raises():
    raise RuntimeError("no paths")


def exits():
    sys.exit(3)


def not_a_list():
    return "lib"


@pytest.fixture
def cached(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    monkeypatch.delenv("SERQ_PATH", raising=False)
    compiles = []
    real = serq_frontend._compile

    def counted(*args, **kwargs):
        compiles.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(serq_frontend, "_compile", counted)
    return compiles


def entries(tmp_path):
    return sorted((tmp_path / "cache").glob("compile-*.bin"))


@pytest.mark.parametrize("behaviour", [raises, exits, not_a_list], ids=["raises", "exits", "not a list"])
def test_a_program_that_uses_no_library_needs_no_library_folders(tmp_path, cached, behaviour):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    plugin = hook(behaviour)
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, plugin()])
    first = cache.load(prog, pm=pm)
    assert [s.name for s in first.stages] == ["s"]
    assert len(entries(tmp_path)) == 1 and cached == [prog]  # compiled once and stored
    again = cache.load(prog, pm=pm)
    assert cached == [prog]  # a hit
    assert serq_ir_json(again) == serq_ir_json(first)
    assert plugin.calls == 0


@pytest.mark.parametrize(("behaviour", "said"), [
    (raises, "during the compile: RuntimeError: no paths at "),
    (exits, "during the compile: SystemExit: 3 at "),
    (not_a_list, "failed in serq_frontend_library_paths: it returned 'lib', not a list of folders"),
], ids=["raises", "exits", "not a list"])
def test_a_program_that_uses_a_library_is_refused_naming_the_plugin(tmp_path, cached, behaviour, said):
    prog = tmp_path / "p.sq"
    prog.write_text(USES)
    plugin = hook(behaviour)
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, plugin()])
    with pytest.raises(PluginError) as e:
        cache.load(prog, pm=pm)
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"error: plugin '{__name__}.hook.<locals>.Paths' "), lines[0]
    assert said in lines[0], lines[0]
    assert "Traceback" not in str(e.value)
    assert entries(tmp_path) == []


def test_a_hit_of_a_program_that_uses_a_library_asks_for_the_folders(tmp_path, cached):
    """Stored while the hook gave its folder; the hook raising at the next load is the plugin's message there
    (the hit needs the folders), and a hook giving another folder first, which holds another mm.sq, is a miss
    that compiles the other library."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "mm.sq").write_text("def work_of() = 2;\n")
    (two / "mm.sq").write_text("def work_of() = 5;\n")
    prog = tmp_path / "p.sq"
    prog.write_text(USES)
    state = {"folders": [str(one)], "fail": False}

    def given():
        if state["fail"]:
            raise RuntimeError("no paths today")
        return state["folders"]

    plugin = hook(given)
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, plugin()])
    assert cache.load(prog, pm=pm).session[0].work.value == 2.0
    assert cache.load(prog, pm=pm).session[0].work.value == 2.0
    assert cached == [prog] and len(entries(tmp_path)) == 1  # the second a hit
    assert plugin.calls == 2  # asked by the compile, and by the hit
    state["fail"] = True
    with pytest.raises(PluginError, match="during the compile: RuntimeError: no paths today at "):
        cache.load(prog, pm=pm)
    assert cached == [prog]
    state["fail"] = False
    state["folders"] = [str(two), str(one)]
    assert cache.load(prog, pm=pm).session[0].work.value == 5.0
    assert cached == [prog, prog]  # a miss: the folders are not those the entry holds
    # the library edited where it was found: a miss too (its text is among the entry's files)
    (two / "mm.sq").write_text("def work_of() = 7;\n")
    assert cache.load(prog, pm=pm).session[0].work.value == 7.0
    assert cached == [prog, prog, prog]
    assert cache.load(prog, pm=pm).session[0].work.value == 7.0
    assert cached == [prog, prog, prog]


def test_serq_path_is_asked_for_by_a_program_that_uses_a_library_alone(tmp_path, cached, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "mm.sq").write_text("def work_of() = 3;\n")
    plain, uses = tmp_path / "p.sq", tmp_path / "u.sq"
    plain.write_text(PROGRAM)
    uses.write_text(USES)
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin])
    monkeypatch.setenv("SERQ_PATH", str(lib))
    cache.load(plain, pm=pm)
    assert cache.load(uses, pm=pm).session[0].work.value == 3.0
    assert cached == [plain, uses]
    monkeypatch.setenv("SERQ_PATH", str(tmp_path / "elsewhere"))
    cache.load(plain, pm=pm)  # a hit: the program reads no library
    assert cached == [plain, uses]
    with pytest.raises(serq_frontend.CompileError, match="mm.sq"):
        cache.load(uses, pm=pm)  # a miss, whose compile finds no mm.sq
    assert cached == [plain, uses, uses]


def serq_ir_json(program) -> bytes:
    import serq_ir

    return serq_ir.encode(program)


@pytest.mark.parametrize("behaviour", [raises, exits, not_a_list], ids=["raises", "exits", "not a list"])
def test_the_users_error_is_not_hidden_by_the_hint_that_asks_for_the_folders(tmp_path, cached, behaviour):
    """An unknown function's message looks for a library that defines it (the folders asked for): a hook that
    fails then leaves the hint out, and the user's error is the message (it was the plugin's, in its place)."""
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM.replace("run s (1)", "run s (rate())"))
    pm = serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, hook(behaviour)()])
    for load in (lambda: cache.load(prog, pm=pm), lambda: serq_frontend.compile(prog, pm=pm)):
        with pytest.raises(serq_frontend.CompileError) as e:
            load()
        assert str(e.value).splitlines()[0] == f"{prog}:3:18: error: unknown function `rate`"
