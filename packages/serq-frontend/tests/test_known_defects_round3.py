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


# The canonical form of a --def body, by which a sweep tells its points apart (serq_sweep: `--def 'f=a+b'` and
# `--def 'f= a + b'` were two points of one program): the body as serq fmt spaces it, on one line, without its
# comments (fmt.expression_form, the .sq loader's definition_form; docs/sweep.md, docs/hooks.md).


@pytest.mark.parametrize("body", ["a+b", "max(a,b)*2", "-x + ~exp(1)", "c ? 1 : -2", "min (a,b)", "pow(a , 2)/3",
                                  "x%2==0&&y!=1"])
def test_the_form_of_a_one_line_body_is_what_serq_fmt_writes(body):
    from serq_frontend.fmt import expression_form, format_source

    # the independent truth: serq fmt's own layout of the definition that holds the body
    assert format_source(f"def f() = {body};\n") == f"def f() = {expression_form(body)};\n"


@pytest.mark.parametrize("body, form", [
    ("a+b", "a + b"), ("  a  +  b  ", "a + b"), ("a +\n b", "a + b"), ("a + b // the sum", "a + b"),
    ("a\t+\r\nb", "a + b"), ("max(a,\n  b)", "max(a, b)"),
    ("min (a, b)", "min (a, b)"), ("min\n(a, b)", "min (a, b)"), ("min(a, b)", "min(a, b)"),  # kept as written
    ("a - -b", "a - -b"), ("a--b", "a - -b"),
])
def test_blanks_line_breaks_and_comments_do_not_change_the_form(body, form):
    from serq_frontend.fmt import expression_form

    assert expression_form(body) == form


def test_the_sq_loader_gives_the_form_and_other_files_keep_their_text():
    from serq.loading import definition_form
    from serq.plugins import installed_plugin_manager

    pm = installed_plugin_manager()
    assert definition_form(pm, "p.sq", "a+b // c") == "a + b"
    assert definition_form(pm, "p.ir.json", "a+b") == "a+b"  # (an IR file takes no --def: its own text)
