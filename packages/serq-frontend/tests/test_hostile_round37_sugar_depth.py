"""A plugin's sugar layer whose rewrite returns a program nested deeper than any program's text may be, or
whose own code recurses without end, is that plugin's failure, named: both were `p.sq: error: the program
nests too deeply to compile` (a tree 2 000 deep, the linker's error at the user's session), naming neither
the plugin nor a place of the program's."""

from __future__ import annotations

import pytest
import serq
from serq.errors import PluginError
from serq_frontend import MAX_NESTING, CompileError
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer
from sqhelpers import compile_src, make_pm

PROGRAM = ("stage svc : fifo;\nworkload { arrive poisson(1); }\nsession { run svc (1); end; }\n"
           "run { horizon 10; }\n")


def _nested(depth: int):
    def rewrite(module, ctx):
        items = []
        for item in module.items:
            if isinstance(item, A.SessionItem):
                body = item.body
                for _ in range(depth):
                    body = [A.SBranch(A.Num(1.0, item.pos), body, [], item.pos)]
                item = A.SessionItem(body, item.pos)
            items.append(item)
        return A.Module(items, module.file)

    return rewrite


def _endless(module, ctx):
    return _endless(module, ctx)


class Layer:
    def __init__(self, rewrite):
        self.layer = SugarLayer("nest", None, {}, rewrite)

    @serq.hookimpl
    def serq_frontend_register_sugar(self, register):
        register(self.layer)


@pytest.mark.parametrize("depth", [MAX_NESTING + 5, 100_000])
def test_a_rewrite_that_nests_too_deep_is_the_plugins_failure(depth):
    pm = make_pm(Layer(_nested(depth)))
    with pytest.raises(PluginError) as e:
        compile_src(PROGRAM, pm=pm)
    lines = str(e.value).splitlines()
    assert lines[0] == (f"error: plugin '{__name__}.Layer' failed in the rewrite of its sugar layer 'nest': "
                        f"rewrite(module, ctx) returned a program nested more than {MAX_NESTING} deep (expressions "
                        "and blocks inside one another), which no program's text may be"), lines
    assert lines[1] == "(run without it: leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it)", lines


def test_a_rewrite_that_recurses_without_end_is_named_at_its_line():
    pm = make_pm(Layer(_endless))
    with pytest.raises(PluginError) as e:
        compile_src(PROGRAM, pm=pm)
    head = str(e.value).splitlines()[0]
    assert head.startswith(f"error: plugin '{__name__}.Layer' failed in _endless during the compile: "
                           "RecursionError: maximum recursion depth exceeded"), head
    assert head.endswith(f"{__file__}:{_endless.__code__.co_firstlineno + 1}"), head
    assert isinstance(e.value.__cause__, RecursionError)


def test_a_rewrite_within_the_limits_compiles_and_the_linker_judges_it():
    # 3 branches deep: compiles; 40 deep: the linker's own limit on branches (32), at the place the rewrite gave
    assert compile_src(PROGRAM, pm=make_pm(Layer(_nested(3)))).session
    with pytest.raises(CompileError) as e:
        compile_src(PROGRAM, pm=make_pm(Layer(_nested(40))))
    assert "loops, branches and holds nest more than 32 deep here" in str(e.value)
