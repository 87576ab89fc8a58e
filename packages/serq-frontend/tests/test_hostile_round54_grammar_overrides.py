"""A plugin's sugar layer whose grammar changes serQ's language rather than adding to it (docs/hooks.md,
``serq_frontend_register_sugar``): an ``%override`` of a kernel rule or terminal, or an ``%ignore``, which
lark applies to the whole text. Each is refused, naming the plugin and the layer, when a compile collects
the layers. Before, the grammar built, and every program, the ones not written in the layer's syntax
included, was a syntax error naming no plugin: ``%ignore "x"`` made ``let x = 2;`` "unexpected `x`
(expected a name)", ``%override NUMBER`` made ``2`` "unexpected character". So is a terminal of a priority
above 0, which the lexer reads in place of serQ's wherever both may come (``WORD.5: /[a-z]+/`` made ``run s
(x);`` "missing `;`")."""

from __future__ import annotations

import pytest
import serq
import serq_frontend
import serq_frontend.plugin
import serq_ir
from serq.errors import PluginError
from serq_frontend.sugar import SugarLayer

KERNEL = "let x = 2;\nstage s : delay;\nworkload { arrive batch(1); }\nsession { run s (x); }\n"


def manager(layer):
    class Grammar:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Grammar()])


def build(ctx, pos, children):
    return None


@pytest.mark.parametrize(("grammar", "what"), [
    ('%ignore "x"\n', "its grammar has an %ignore, which applies to the whole text (line 1)"),
    ('%extend stmt: "zz" ";" -> s_zz\n  %override NUMBER: /[0-9]+/ "0"\n', "its grammar %overrides 'NUMBER' (line 2)"),
    ('%override stmt: "zz" ";" -> s_zz\n', "its grammar %overrides 'stmt' (line 1)"),
    ("%override\tstart : item*\n", "its grammar %overrides 'start' (line 1)"),
], ids=["ignore", "a terminal", "a rule", "a tab"])
def test_a_grammar_that_changes_the_language_is_refused(grammar, what):
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=KERNEL, pm=manager(SugarLayer("zz", grammar, {"s_zz": build}, None)))
    first = str(e.value).splitlines()[0]
    assert first == (f"error: plugin '{__name__}.manager.<locals>.Grammar' registers a sugar layer wrongly in "
                     f"serq_frontend_register_sugar: sugar layer 'zz': {what}: a layer's grammar %extends serQ's "
                     "rules and adds rules of its own, and leaves every other program's language as it is"), first


@pytest.mark.parametrize("priority", [1, 5, 100])
def test_a_terminal_above_serqs_is_refused(priority):
    # `WORD.5: /[a-z]+/` beside `stmt: WORD ";"` took the `s` of `run s (x);` for a WORD: "missing `;`"
    grammar = f'WORD.{priority}: /[a-z]+/\n%extend stmt: WORD ";" -> s_zz\n'
    with pytest.raises(PluginError) as e:
        serq_frontend.compile(source=KERNEL, pm=manager(SugarLayer("zz", grammar, {"s_zz": build}, None)))
    first = str(e.value).splitlines()[0]
    assert first.endswith(f"sugar layer 'zz': its grammar gives its terminal 'WORD' the priority {priority} (line 1), "
                          "above serQ's terminals, which it would be read in place of wherever both may come: a "
                          "layer's terminals take the priority 0 (none written) or below"), first


def test_a_grammar_that_adds_compiles_the_kernels_programs_as_before():
    layer = SugarLayer("zz", 'WORD.0: /[a-z]+/\n%extend stmt: "zz" WORD ";" -> s_zz  // no %override here\n',
                       {"s_zz": build}, None)
    program = serq_frontend.compile(source=KERNEL, pm=manager(layer))
    alone = serq_frontend.compile(source=KERNEL, pm=serq.get_plugin_manager(autoload=False,
                                                                           plugins=[serq_frontend.plugin]))
    assert serq_ir.encode(program) == serq_ir.encode(alone)
