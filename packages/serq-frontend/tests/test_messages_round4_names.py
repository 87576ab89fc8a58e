"""Which names may be shared (docs/language.md, "An observe, a gauge and a record table or column may take any
of these names"). language.txt §2 gives attributes, `let` constants and the names the language supplies names
of their own because an expression would read one where the other was meant. An observe's, a gauge's and a
record table's name is read by no expression, and the report and a sweep's table keep them in sections of
their own, so `observe kv = used(kv);` beside `pool kv` links and `kv` stays the pool. An attribute may take a
definition's name (`set more = more();`: the definition is read with its parentheses, the attribute without).
An attribute of a pool's, a stage's or a queue's name, and a pool, a stage or a queue of a `let`'s, is refused,
now naming the earlier declaration where it is (it said "`kv` is a pool; an attribute needs another name").
"""

from __future__ import annotations

import pytest
from serq_ir import nodes as ir
from sqhelpers import compile_src, told

BASE = """let L = 2;
def d() = 3;
pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { set a = 1; hold kv (4) { tool (1); } STMT }
ITEM
run { horizon 10; }
"""


def _src(stmt: str = "", item: str = "") -> str:
    return BASE.replace("STMT", stmt).replace("ITEM", item)


@pytest.mark.parametrize("stmt, item, figure", [
    ("observe kv = used(kv);", "", "kv"), ("observe tool = busy(tool);", "", "tool"), ("observe L = L;", "", "L"),
    ("observe a = a;", "", "a"), ("observe d = d();", "", "d"),
    ("", "gauge kv = used(kv);", "kv"), ("", "gauge tool = 1;", "tool"), ("", "gauge L = 1;", "L"),
    ("", "gauge d = 1;", "d"),
])
def test_a_figure_may_take_a_declared_name_and_the_name_reads_the_declaration(stmt, item, figure):
    program = compile_src(_src(stmt, item))
    figures = [o.name for o in program.observes] + [g.name for g in program.gauges]
    assert figures == [figure]
    assert [p.name for p in program.pools] == ["kv"] and [s.name for s in program.stages] == ["tool"]
    value = program.session[-1].value if stmt else program.gauges[0].value
    if figure == "kv":  # `used(kv)`: the pool, not the figure
        assert isinstance(value, ir.Observable) and value.target == ir.PoolRef(pool=0, span=value.target.span)


def test_a_record_table_may_take_a_declared_name():
    program = compile_src(_src("record kv { L = L; tool = 1; }"))
    assert [r.name for r in program.records] == ["kv"] and [r.columns for r in program.records] == [["L", "tool"]]


def test_an_attribute_may_take_a_definitions_name_each_read_as_written():
    program = compile_src(_src("set d = d() + now; observe o = d * 10;"))
    slot = [a.name for a in program.attributes].index("d")
    set_d, observe = program.session[-2], program.session[-1]
    assert isinstance(set_d, ir.Set) and set_d.slot == slot and set_d.value.lhs.value == 3.0  # the definition
    assert observe.value.lhs == ir.Attr(slot=slot, span=observe.value.lhs.span)  # the attribute


@pytest.mark.parametrize("stmt, item, said", [
    ("⟨set kv = 1;", "", "`kv` is a pool (at 3:6); an attribute needs another name"),
    ("⟨choose tool in 2 by (1);", "", "`tool` is a stage (at 4:7); an attribute needs another name"),
    ("⟨set L = 1;", "", "`L` is a `let` constant and an attribute this sets: give them two names (the attribute "
                       "would be read where the constant was meant; the `let` is at 1:5)"),
    ("", "pool ⟨L { cap 1; }", "the pool `L` has the name of a `let` (at 1:5)"),
    ("", "stage ⟨L : delay;", "the stage `L` has the name of a `let` (at 1:5)"),
])
def test_a_name_an_expression_reads_is_refused_naming_the_earlier_declaration(stmt, item, said):
    assert told(_src(stmt, item)) == said


def test_a_queue_refused_names_the_earlier_declaration():
    queue = "queue Q : prefill { pool kv { cap 4; } serve delay; prefill (p) { hold kv (p) { run (p); } } }\n"
    assert told(queue + _src("⟨set Q = 1;")) == "`Q` is a queue (at 1:7); an attribute needs another name"
    assert told("let Q = 1;\n" + queue.replace("queue Q", "queue ⟨Q") + _src()) == (
        "the queue `Q` has the name of a `let` (first at 1:5)")
