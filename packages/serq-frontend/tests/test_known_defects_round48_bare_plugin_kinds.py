"""A bare name where a stage kind, an eviction order or a preemption policy stands (`stage s : acme;`) says how a
plugin's is named (`@acme`) and how one is added, as an `@acme` no plugin registers has said since round 45: the
syntax error listed the built-in words alone. A name near a built-in word is pointed at it alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq
import serq_sim.plugin
from sqhelpers import compile_src, make_pm, refused

SERQ = str(Path(sys.executable).parent / "serq")
TAIL = "workload { arrive poisson(1); }\nsession { run s (0.5); }\nrun { horizon 10; }\n"


def _how(plural: str, hook: str) -> str:
    return f"a plugin adds {plural} by the hook {hook}, installed with an entry point in the group 'serq' (docs/hooks.md)"


STAGE = ("unexpected `acme` (expected a plugin's name (@name), delay, fifo, ps, step): a plugin's stage kind is named "
         "with an `@`, `@acme`; " + _how("stage kinds", "serq_sim_register_stage_kinds"))


@pytest.mark.parametrize(("src", "message"), [
    ("stage s : ⟨acme;\n", STAGE),
    ("stage s : ⟨acme(2);\n", STAGE),
    ("pool p { cap 4; evict ⟨acme; }\nstage s : fifo;\n",
     "unexpected `acme` (expected a plugin's name (@name), by, lru): a plugin's eviction order is named with an `@`, "
     "`@acme`; " + _how("eviction orders", "serq_sim_register_eviction_orders")),
    ("pool p { cap 4; preempt ⟨acme; }\nstage s : fifo;\n",
     "unexpected `acme` (expected a plugin's name (@name), by, lifo, none): a plugin's preemption policy is named "
     "with an `@`, `@acme`; " + _how("preemption policies", "serq_sim_register_preemption_policies")),
])
def test_a_bare_name_says_how_a_plugins_is_named_and_added(src, message):
    e = refused(src + TAIL, message, pm=make_pm(serq_sim.plugin))
    assert str(e).splitlines()[0].endswith(message)


def unbuilt(*_args):
    """A registration's object (the linker checks names only)."""


class Acme:
    @serq.hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("acme", unbuilt)


def test_the_name_it_points_at_is_the_plugins():
    # with a plugin that registers acme, the bare name's error is the same, and `@acme` compiles
    pm = make_pm(serq_sim.plugin, Acme())
    e = refused("stage s : ⟨acme;\n" + TAIL, STAGE, pm=pm)
    assert str(e).splitlines()[0].endswith(STAGE)
    program = compile_src("stage s : @acme;\n" + TAIL, pm=pm)
    assert program.stages[0].kind.name == "acme"


@pytest.mark.parametrize("src", ["stage s : ⟨fif;\n", "pool p { cap 4; evict ⟨lr; }\nstage s : fifo;\n"])
def test_a_name_near_a_built_in_word_is_pointed_at_it_alone(src):
    e = refused(src + TAIL, "(did you mean", pm=make_pm(serq_sim.plugin))
    assert "a plugin adds" not in str(e)


def test_a_name_where_no_plugin_goes_gets_no_such_hint():
    e = refused("stage s : fifo;\nworkload { arrive ⟨acme(1); }\nsession { run s (0.5); }\nrun { horizon 10; }\n",
                "unexpected `acme`", pm=make_pm(serq_sim.plugin))
    assert "plugin" not in str(e)


def test_the_command_says_it_at_the_name(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text("stage s : acme;\n" + TAIL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERQ_DISABLE")}
    r = subprocess.run([SERQ, "check", str(f)], capture_output=True, text=True, timeout=120, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [f"{f}:1:11: error: {STAGE}", "  stage s : acme;", " " * 12 + "^"]
