"""A plugin's sugar layer whose grammar defines a terminal of its own (``DUR: /[0-9]+ms/``, then ``"sleep"
DUR ";"``): its builder is given the token, as it is given serQ's named terminals (NAME, NUMBER, STRING).
Before, every token not among serQ's named terminals was dropped as a keyword is, so the builder of
``sleep 250ms;`` was called with no children and could not know the duration (an IndexError in its own
code, or, written defensively, a statement that read nothing). The kernel's and serQ's own layers' builders
are given what they were."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import serq
import serq_frontend
import serq_frontend.plugin
import serq_ir
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer


@dataclass(eq=False)
class SSleep(A.Node):
    ms: float
    pos: Any


def rewrite(module, ctx):
    def sleep(s):
        if not isinstance(s, SSleep):
            return None
        return [A.SRun([A.Var([("sleeper", None)], s.pos)], "plain", A.Num(s.ms / 1000, s.pos), s.pos)]

    return A.Module([A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, sleep)) for i in module.items],
                    module.file)


seen: list[list[str]] = []


def build(ctx, pos, children):
    seen.append([f"{c.type}={c}" for c in children])
    (dur,) = children
    return SSleep(float(str(dur)[:-2]), pos)


def manager():
    layer = SugarLayer("sleep", 'DUR: /[0-9]+ms/\n%extend stmt: "sleep" DUR ";" -> s_sleep\n', {"s_sleep": build},
                       rewrite)

    class Sleep:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(layer)

    return serq.get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, Sleep()])


PROGRAM = ("stage sleeper : delay;\nworkload { arrive batch(1); }\nsession { sleep 250ms; sleep 5ms; }\n"
           "run { horizon 10; }\n")


def test_the_builder_is_given_its_own_terminal():
    seen.clear()
    program = serq_frontend.compile(source=PROGRAM, pm=manager())
    assert seen == [["DUR=250ms"], ["DUR=5ms"]]
    assert [s.work.value for s in program.session] == [0.25, 0.005]


def test_the_kernels_programs_compile_as_before():
    source = "let d = 2;\nstage s : delay;\nworkload { arrive batch(1); }\nsession { run s (d); }\n"
    alone = serq_frontend.compile(source=source, pm=serq.get_plugin_manager(autoload=False,
                                                                            plugins=[serq_frontend.plugin]))
    assert serq_ir.encode(serq_frontend.compile(source=source, pm=manager())) == serq_ir.encode(alone)
