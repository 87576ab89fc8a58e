"""A ``let`` may not take the name of a built-in attribute, nor of an attribute the workload's trace gives
(language.txt §2: "Session attributes, let constants and the names the language supplies … have names of
their own: the linker rejects a program that gives two of them one name").

The linker refused a ``let`` of a context variable's name or of ``inf``, and a ``set`` of a ``let``'s name,
but not a ``let`` of ``serial``, ``turn_no``, ``cached`` or ``computed``, nor, beside a ``trace``, of ``new``,
``out``, ``think``, ``more`` or ``forced``: a name reads the ``let`` first, so the constant was read where
the attribute was meant, silently. ``let new = 5;`` beside a trace whose turns have prompts of 2004 tokens
observed ``new`` as 5 in every session (and would have replayed prompts of 5 tokens); ``let serial = 7;``
made every session's serial 7.
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError

pytestmark = pytest.mark.timeout(60)

BODY = ("stage s : delay;\nworkload {{ arrive poisson(1);{trace} }}\nsession {{ {turn}run s (1); observe n = {name}; "
        "end; }}\nrun {{ horizon 30; warmup 0; seed 1; }}\n")


def program(name: str, trace: bool) -> str:
    return f"let {name} = 7;\n" + BODY.format(trace=' trace "t.csv";' if trace else "", turn="turn; " if trace else "",
                                             name=name)


@pytest.mark.parametrize("name", ["serial", "turn_no", "cached", "computed"])
def test_a_let_of_a_built_in_attribute_is_refused(name):
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=program(name, trace=False))
    assert str(info.value).splitlines() == [
        f"<source>:1:5: error: `let {name}`: `{name}` is a built-in attribute of a session; give the constant "
        "another name (it would be read where the attribute was meant)",
        f"  let {name} = 7;",
        "      ^",
    ]


@pytest.mark.parametrize("name", ["new", "out", "think", "more", "forced"])
def test_a_let_of_a_trace_attribute_is_refused_beside_a_trace(tmp_path, name):
    (tmp_path / "p.sq").write_text(program(name, trace=True))
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(tmp_path / "p.sq")
    assert str(info.value).splitlines()[0] == (
        f"{tmp_path / 'p.sq'}:1:5: error: `let {name}`: `{name}` is an attribute each turn of the trace gives; "
        "give the constant another name (it would be read where the attribute was meant)")


@pytest.mark.parametrize("name", ["new", "out", "think", "more", "forced"])
def test_without_a_trace_those_names_are_free(name):
    p = serq_frontend.compile(source=program(name, trace=False))
    assert [a.name for a in p.attributes] == ["serial", "turn_no", "cached", "computed"]


def test_the_attribute_is_read_where_it_is_meant(tmp_path):
    """Without the let, ``new`` reads the trace's prompt (the program below is what the refused one meant)."""
    import serq_sim

    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,1,2004,4,1,0\n")
    (tmp_path / "p.sq").write_text(BODY.format(trace=' trace "t.csv";', turn="turn; ", name="new"))
    report = serq_sim.run(serq_frontend.compile(tmp_path / "p.sq"))
    values = report.observes["n"].values.tolist()
    assert values and set(values) == {2004.0}
