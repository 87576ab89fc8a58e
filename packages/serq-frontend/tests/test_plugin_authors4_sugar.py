"""A third party's sugar layer written from docs/hooks.md and serq-example-repeat alone, given in-process:
``sleep (t);``, a statement that waits ``t`` seconds, rewritten to a run at a delay stage the layer declares
itself (``stage sleeper : delay;``, added once, before the program's own declarations). Checked by hand on
both tiers; a negative time is the program's error at the user's own expression (the rewrite keeps its
place); a program that declares the layer's stage name itself is refused as a name declared twice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_frontend import CompileError
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(60)

GRAMMAR = '%extend stmt: "sleep" "(" expr ")" ";"   -> s_sleep\n'


@dataclass(slots=True, eq=False)
class SSleep(A.Node):
    time: Any
    pos: Any
    EXPRS = ("time",)


def _build(b, pos, children):
    (time,) = children
    return SSleep(time, pos)


def _rewrite(module, ctx):
    used = []

    def expand(s):
        if not isinstance(s, SSleep):
            return None
        used.append(s)
        return [A.SRun([A.Var([("sleeper", None)], s.pos)], "plain", s.time, s.pos)]

    items = [A.map_item(i, lambda e: e, lambda b: A.rewrite_block(b, expand)) for i in module.items]
    if used:
        items.insert(0, A.StageItem("sleeper", None, A.Kind("delay", used[0].pos), used[0].pos))
    return A.Module(items, module.file)


class Sleep:
    @hookimpl
    def serq_frontend_register_sugar(self, register):
        register(SugarLayer("sleep", GRAMMAR, {"s_sleep": _build}, _rewrite))


SLEEPS = """stage d : delay;
workload { arrive batch(3); }
session { set t0 = now; sleep (2 + serial); run d (1); sleep (0.5); observe t = now - t0; }
run { horizon 10; }
"""


def test_the_statement_waits_its_time_on_both_tiers(monkeypatch):
    """Session k sleeps 2 + k, runs 1 at the delay d, sleeps 0.5: 3.5, 4.5, 5.5 (a delay has no queue)."""
    pm = get_plugin_manager(plugins=[Sleep()])
    prog = serq_frontend.compile(source=SLEEPS, pm=pm)
    assert [s.name for s in prog.stages] == ["sleeper", "d"]
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(prog, pm=pm, seed=1)
        out.append(encode_json(r))
        assert r.observe("t").values.tolist() == [3.5, 4.5, 5.5]
        assert [s.completions for s in r.result.stages] == [6, 3]
    assert out[0] == out[1]


def test_a_negative_time_is_the_programs_error_at_its_expression():
    pm = get_plugin_manager(plugins=[Sleep()])
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=SLEEPS.replace("sleep (0.5)", "sleep (-1)"), pm=pm)
    assert str(e.value).splitlines() == [
        "<source>:3:63: error: run sleeper: the work is negative (-1); a run's work is not negative",
        "  session { set t0 = now; sleep (2 + serial); run d (1); sleep (-1); observe t = now - t0; }",
        " " * 64 + "^"]


def test_the_layers_stage_name_declared_by_the_program_is_refused():
    pm = get_plugin_manager(plugins=[Sleep()])
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source="stage sleeper : fifo;\n" + SLEEPS, pm=pm)
    assert str(e.value).splitlines()[0].startswith("<source>:1:7: error: `sleeper` is declared twice")
