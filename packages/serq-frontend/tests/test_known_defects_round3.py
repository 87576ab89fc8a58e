"""``hidden serial;`` and ``hidden turn_no;`` compile, and that is the spec's rule, not a defect: language.txt §3
hidden refuses to hide only "an attribute the scheduler itself sets (cached, computed)", and lists serial and
turn_no among the built-in session attributes, which the workload sets. Hiding one means what hiding any
attribute means (docs/language.md, "The built-in attributes"): the scheduler's moments (a hold's header, a queue,
eviction or serve key, a spill clause) may not read it, the session's statements may."""

from __future__ import annotations

import pytest
import serq_sim
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(60)

HEAD = "stage s : fifo;\n"


def workload(hide: str) -> str:
    return f"workload {{ arrive poisson(1); hidden {hide}; }}\n"


@pytest.mark.parametrize("name", ["serial", "turn_no"])
def test_a_workload_set_built_in_may_be_hidden_and_the_session_reads_it(name):
    src = (HEAD + "pool p { cap 1; }\n" + workload(name)
           + f"session {{ set x = {name}; observe y = {name}; hold p (x + 1) {{ run s (0.5); }} }}\n"
           "run { horizon 20; seed 3; }\n")
    program = compile_src(src)
    # the IR marks the built-in slot hidden (serq_ir.nodes.Attribute), and no other
    assert [(a.name, a.builtin) for a in program.attributes if a.hidden] == [(name, True)]
    report = serq_sim.run(program)
    y = report.observe("y")
    # the session reads the attribute as it is: serial 0, 1, 2, ... in arrival order; turn_no 0 (no turn;)
    values = list(y.buffer("values"))
    sessions = list(y.buffer("sessions"))
    assert values and values == ([float(s) for s in sessions] if name == "serial" else [0.0] * len(values))


@pytest.mark.parametrize("name", ["serial", "turn_no"])
@pytest.mark.parametrize("where, head, session, said", [
    ("a queue key", "pool p { cap 1; queue by (-waited, ⟨{n}); }\n", "hold p (1) {{ run s (1); }}",
     "a pool's queue key is the scheduler's"),
    ("a hold's units", "pool p { cap 4; }\n", "hold p (⟨{n} + 1) {{ run s (1); }}", "a hold's header"),
    ("a hold's pool index", "pool p[2] { cap 4; }\n", "hold p[⟨{n} % 2] (1) {{ run s (1); }}", "a hold's header"),
])
def test_the_scheduler_may_not_read_it(name, where, head, session, said):
    refused(HEAD + head.replace("{n}", name) + workload(name) + "session { " + session.format(n=name) + " }\n",
            f"`{name}` is hidden: {said}")


@pytest.mark.parametrize("name", ["cached", "computed"])
def test_what_the_scheduler_sets_cannot_be_hidden(name):
    # language.txt §3: "An attribute the scheduler itself sets (cached, computed) cannot be hidden."
    refused(HEAD + f"workload {{ arrive poisson(1); hidden ⟨{name}; }}\nsession {{ run s (1); }}\n",
            f"`{name}` cannot be hidden: the scheduler itself sets it")
