"""A pool option the kernel does not have, left for the linker by a plugin's sugar layer (its rewrite adds
``PoolOpt("evict_weird")`` to a pool, or its builder builds a pool with one), is refused at the option's place
naming the layer, as a stage kind of a layer's own is (test_known_defects_round51_kind_left). Before, the
linker passed over an option it does not know: the pool compiled without it, its eviction LRU, without a
word."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
from serq_frontend import ast as A
from serq_frontend.diagnostics import CompileError, Pos
from serq_frontend.sugar import SugarLayer

SOURCE = ("pool m { cap 4; }\nstage s : fifo;\nworkload { arrive batch(1); }\n"
          "session { hold m (1) { run s (1); } }\n")


def adding(kind, in_place=False):
    def rewrite(module, ctx):
        items = []
        for i in module.items:
            if isinstance(i, A.PoolItem):
                if in_place:
                    i.opts.append(A.PoolOpt(kind, [], Pos(i.pos.file, 1, 10)))
                else:
                    i = A.PoolItem(i.name, i.size, [*i.opts, A.PoolOpt(kind, [], Pos(i.pos.file, 1, 10))], i.pos)
            items.append(i)
        return module if in_place else A.Module(items, module.file)
    return rewrite


def manager(*layers):
    class Layers:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            for layer in layers:
                register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Layers()])


PLUGIN = f"(plugin {__name__}.manager.<locals>.Layers)"


def first_line(source, pm) -> str:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=source, pm=pm)
    return str(e.value).splitlines()[0]


@pytest.mark.parametrize("in_place", [False, True], ids=["a new module", "the module changed in place"])
@pytest.mark.parametrize("kind", ["evict_weird", "weird"])
def test_an_option_a_rewrite_added_is_refused_naming_its_layer(kind, in_place):
    pm = manager(SugarLayer("weirdopt", "", {}, adding(kind, in_place)))
    assert first_line(SOURCE, pm) == (f"<source>:1:10: error: pool `m`: a pool option the kernel does not have "
                                      f"({kind!r}), left by the sugar layer 'weirdopt' {PLUGIN}, whose rewrite "
                                      "made it")


def test_an_option_a_builder_built_is_refused_naming_its_layer():
    layer = SugarLayer("wp", '%extend item: "wpool" NAME ";" -> i_wpool\n',
                       {"i_wpool": lambda ctx, pos, k: A.PoolItem(str(k[0]), None, [
                           A.PoolOpt("cap", [A.Num(4.0, pos)], pos), A.PoolOpt("queue_random", [], pos)], pos)},
                       None)
    line = first_line(SOURCE.replace("pool m { cap 4; }", "wpool m;"), manager(layer))
    assert line == ("<source>:1:1: error: pool `m`: a pool option the kernel does not have ('queue_random'), left by "
                    f"the sugar layer 'wp' {PLUGIN}, whose builder built it and whose rewrite (if any) left it")


def test_a_kind_that_is_no_text():
    pm = manager(SugarLayer("weirdopt", "", {}, adding([1])))
    assert first_line(SOURCE, pm) == ("<source>:1:10: error: pool `m`: a pool option the kernel does not have "
                                      f"([1]), left by the sugar layer 'weirdopt' {PLUGIN}, whose rewrite made it")


def test_the_kernels_options_compile_as_before():
    pm = manager(SugarLayer("lru", "", {}, adding("evict_lru")))
    (pool,) = serq_frontend.compile(source=SOURCE, pm=pm).pools
    assert (pool.cap, type(pool.evict).__name__) == (4.0, "EvictLru")
