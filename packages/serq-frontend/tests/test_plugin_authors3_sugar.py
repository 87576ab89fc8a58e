"""A third party's sugar layer written from docs/hooks.md alone: ``tally NAME;``, a statement that is
``observe NAME = 1;``; and two plugins' layers that meet in the grammar: both building the rule their
grammars name (``-> s_tally``), both writing one statement, or a layer building a rule of serQ's own
grammar. The parser keeps one builder a rule, so the second plugin's builder built the first one's
statement without a word (``tally n;`` observed the other plugin's value), and two grammars of one
statement were lark's GrammarError naming no plugin: each is now one message naming the plugin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer

pytestmark = pytest.mark.timeout(60)


def tally_layer(name: str, keyword: str, rule: str, value: float) -> SugarLayer:
    """``KEYWORD NAME;``, built by the rule ``rule``, rewritten to ``observe NAME = value;``."""

    @dataclass(slots=True, eq=False)
    class STally(A.Node):
        name: Any
        pos: Any
        EXPRS = ()

    def build(ctx, pos, children):
        return STally(str(children[0]), pos)

    def rewrite(module, ctx):
        def tally(s):
            if not isinstance(s, STally):
                return None
            return [A.SObserve(s.name, A.Num(value, s.pos), s.pos)]

        return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, tally)) for i in module.items],
                        module.file)

    return SugarLayer(name, f'%extend stmt: "{keyword}" NAME ";" -> {rule}\n', {rule: build}, rewrite)


class Tally:
    @staticmethod
    @hookimpl
    def serq_frontend_register_sugar(register):
        register(tally_layer("tally", "tally", "s_tally", 1.0))


def other(name: str, keyword: str, rule: str) -> type:
    """Another plugin's class, registering its layer ``name``."""

    @staticmethod
    @hookimpl
    def serq_frontend_register_sugar(register):
        register(tally_layer(name, keyword, rule, 2.0))

    return type("Other", (), {"serq_frontend_register_sugar": serq_frontend_register_sugar})


PROGRAM = """stage d : delay;
workload { arrive batch(3); }
session { run d (1); STMT }
run { horizon 10; }
"""


def _observes(tmp_path, pm, stmt):
    path = tmp_path / "P.sq"
    path.write_text(PROGRAM.replace("STMT", stmt))
    r = serq_sim.run(serq_frontend.compile(path, pm=pm), pm=pm, seed=1)
    return {k: (o.count, o.mean) for k, o in r.result.observes.items()}


def test_the_statement_is_the_observe_it_stands_for(tmp_path):
    pm = get_plugin_manager(plugins=[Tally])
    assert _observes(tmp_path, pm, "tally n;") == _observes(tmp_path, pm, "observe n = 1;") == {"n": (3, 1.0)}


def test_another_layer_with_a_statement_of_its_own_keeps_both(tmp_path):
    pm = get_plugin_manager(plugins=[Tally, other("count", "count", "s_count")])
    assert _observes(tmp_path, pm, "tally n; count m;") == {"n": (3, 1.0), "m": (3, 2.0)}


@pytest.mark.parametrize(("layer", "keyword", "rule", "by"), [
    ("count", "count", "s_tally", "the sugar layer 'tally' of "),   # both build s_tally: the second built `tally n;`
    ("tally2", "tally", "s_tally", "the sugar layer 'tally' of "),
    ("seen", "seen", "s_observe", "serQ's own grammar"),            # its builder would build every `observe`
])
def test_a_rule_another_layer_builds_is_refused_naming_the_plugin(tmp_path, layer, keyword, rule, by):
    pm = get_plugin_manager(plugins=[Tally, other(layer, keyword, rule)])
    with pytest.raises(PluginError) as e:
        _observes(tmp_path, pm, "tally n;")
    first, second = str(e.value).splitlines()
    assert first.startswith(f"error: plugin '{__name__}.Other' registers the sugar layer {layer!r}, whose builder of "
                            f"the rule {rule!r} is refused: {by}")
    assert first.endswith(f"builds the rule {rule!r} too, and a rule has one builder (give the layer's rules names "
                          f"of its own, `-> s_{layer}_…`)")
    assert second == "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"


def test_two_grammars_of_one_statement_name_the_second_plugin(tmp_path):
    pm = get_plugin_manager(plugins=[Tally, other("tally2", "tally", "s_tally2")])
    with pytest.raises(PluginError) as e:
        _observes(tmp_path, pm, "tally n;")
    first, second = str(e.value).splitlines()
    assert first.startswith(f"error: plugin '{__name__}.Other' registers the sugar layer 'tally2', whose grammar does "
                            f"not build beside the sugar layer 'tally' of {__name__}.Tally: GrammarError: Rules "
                            "defined twice: ")
    assert second == "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)"
