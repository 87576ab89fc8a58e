"""A plugin's stage kind or policy that no installed plugin registers is an error at the name saying, besides the
names registered and built in, how another is added: by the point's hook, in a plugin installed with an entry point
in the group 'serq' (docs/hooks.md). The message listed what is registered with no word of how more come to be."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq
import serq_sim.plugin
from sqhelpers import make_pm, refused

SERQ = str(Path(sys.executable).parent / "serq")
TAIL = "workload { arrive poisson(1); }\nsession { run s (0.5); }\nrun { horizon 10; }\n"


def _how(plural: str, hook: str) -> str:
    return f"; a plugin adds {plural} by the hook {hook}, installed with an entry point in the group 'serq' (docs/hooks.md)"


def unbuilt(*_args):
    """A registration's object (the linker checks names only)."""


class Batch:
    @serq.hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("batch", unbuilt)

    @serq.hookimpl
    def serq_sim_register_preemption_policies(self, register):
        register("youngest", unbuilt)


@pytest.mark.parametrize(("src", "message"), [
    ("stage s : ⟨@acme(2);\n", "stage `s`: unknown stage kind `@acme` (no plugin registers stage kinds; built in: "
     "fifo, ps, delay, step)" + _how("stage kinds", "serq_sim_register_stage_kinds")),
    ("pool p { cap 4; evict ⟨@acme; }\nstage s : fifo;\n", "pool `p`: unknown eviction order `@acme` (no plugin "
     "registers eviction orders; built in: lru, by (…))" + _how("eviction orders", "serq_sim_register_eviction_orders")),
    ("pool p { cap 4; preempt ⟨@acme; }\nstage s : fifo;\n", "pool `p`: unknown preemption policy `@acme` (no plugin "
     "registers preemption policies; built in: none, lifo, by (…))"
     + _how("preemption policies", "serq_sim_register_preemption_policies")),
])
def test_with_no_plugin_of_the_point(src, message):
    e = refused(src + TAIL, message, pm=make_pm(serq_sim.plugin))
    assert str(e).splitlines()[0].endswith(message)


def test_the_installed_ones_are_listed_with_the_way_to_add_one():
    pm = make_pm(serq_sim.plugin, Batch())
    message = ("stage `s`: unknown stage kind `@acme` (plugins register: batch; built in: fifo, ps, delay, step)"
               + _how("stage kinds", "serq_sim_register_stage_kinds"))
    e = refused("stage s : ⟨@acme(2);\n" + TAIL, message, pm=pm)
    assert str(e).splitlines()[0].endswith(message)
    message = ("pool `p`: unknown preemption policy `@acme` (plugins register: youngest; built in: none, lifo, by "
               "(…))" + _how("preemption policies", "serq_sim_register_preemption_policies"))
    e = refused("pool p { cap 4; preempt ⟨@acme; }\nstage s : fifo;\n" + TAIL, message, pm=pm)
    assert str(e).splitlines()[0].endswith(message)


def test_a_name_near_a_registered_one_is_pointed_at_it_alone():
    # `@bacth`: the near name is the likelier meaning, and the way to add one is left out
    pm = make_pm(serq_sim.plugin, Batch())
    e = refused("stage s : ⟨@bacth(2);\n" + TAIL, "(did you mean `@batch`?)", pm=pm)
    assert "a plugin adds" not in str(e)


def test_the_command_points_at_the_kind(tmp_path):
    f = tmp_path / "p.sq"
    f.write_text("stage s : @acme(2);\n" + TAIL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERQ_DISABLE")}
    r = subprocess.run([SERQ, "check", str(f)], capture_output=True, text=True, timeout=120, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    # no plugin installed here registers a stage kind (serq-sim's are the built-in ones)
    assert lines == [f"{f}:1:11: error: stage `s`: unknown stage kind `@acme` (no plugin registers stage kinds; built "
                     "in: fifo, ps, delay, step)" + _how("stage kinds", "serq_sim_register_stage_kinds"),
                     "  stage s : @acme(2);", " " * 12 + "^"]
