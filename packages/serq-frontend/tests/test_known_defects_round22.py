"""Known defects of the frontend, round 22.

4. A declaration could take a name the language reserves for a session's attribute where a declaration of
   its kind elsewhere may not: a queue's own pool named ``serial`` (``queue q { pool serial { … } … }``) was
   taken, where ``pool serial`` is refused, and its entries' ``serial`` read the pool (```q.serial` is a pool,
   not a value``); beside a trace, an ``at admission`` binding or a queue entry's parameter named as a trace
   column (``new = 1``) was taken, where one named ``serial`` is refused, and the body read the binding for the
   turn's prompt. One rule each (serq_frontend.names.declared_name_problem of a pool, a stage or a queue,
   language_name of a substituted name) refuses them at the name, with file:line:col and a caret. A figure's
   name (an observe, a gauge, a record) and a definition's parameter stay free (docs/language.md)."""

from __future__ import annotations

import pytest
import serq_frontend

pytestmark = pytest.mark.timeout(60)

PROGRAM = """{decl}
stage s : delay;
pool kv {{ cap 100; }}
workload {{ arrive batch(1);{trace} }}
session {{
  {turn}{body}
}}
run {{ horizon 10; }}
"""
ROWS = "session,turn,new,out,think,forced\n1,1,10,5,0,0\n"
POOL_END = "give the pool another name (a pool, a stage and an attribute have names of their own)"


def source(decl: str, body: str, trace: bool) -> str:
    return PROGRAM.format(decl=decl, body=body, trace=' trace "t.csv";' if trace else "",
                          turn="turn; " if trace else "")


def refused(tmp_path, decl: str, body: str, trace: bool = False) -> list[str]:
    """The compile's error of the program, its place relative to the file (LINE:COL: …), and its two lines."""
    p = tmp_path / "p.sq"
    p.write_text(source(decl, body, trace))
    (tmp_path / "t.csv").write_text(ROWS)
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(p)
    lines = str(info.value).splitlines()
    assert lines[0].startswith(f"{p}:")
    return [lines[0][len(str(p)) + 1:], *lines[1:3]]


def queue(pool: str = "kv2", param: str = "p") -> str:
    return (f"queue q : prefill {{ pool {pool} {{ cap 9; }} serve delay; prefill ({param}) {{ hold {pool} (1) {{ "
            f"run ({param}); }} }} }}")


@pytest.mark.parametrize("name, trace, why", [
    ("serial", False, f"the pool `serial` has the name of a built-in attribute of a session; {POOL_END}"),
    ("computed", False, f"the pool `computed` has the name of a built-in attribute of a session; {POOL_END}"),
    ("new", True, f"the pool `new` has the name of an attribute each turn of the trace gives; {POOL_END}"),
    ("now", False, "the pool `now` has the name of a context variable"),
    ("inf", False, "the pool `inf` has the name of the language's infinity")])
def test_a_queues_own_pool_is_refused_as_a_pool_is(tmp_path, name, trace, why):
    decl = queue(pool=name)
    assert refused(tmp_path, decl, "q.prefill(2);", trace) == [f"1:26: error: {why}", f"  {decl}", " " * 27 + "^"]
    # the same words as a pool of the program's own
    assert refused(tmp_path, f"pool {name} {{ cap 3; }}", "run s (1);", trace)[0] == f"1:6: error: {why}"


def test_a_binding_beside_a_trace_may_not_take_a_columns_name(tmp_path):
    body = "hold kv (1) at admission (new = 1) { run s (new); }"
    assert refused(tmp_path, "", body, trace=True) == [
        "6:35: error: the binding `new` is an attribute each turn of the trace gives; give it a name of its own",
        f"    turn; {body}", " " * 36 + "^"]


def test_an_entrys_parameter_beside_a_trace_may_not_take_a_columns_name(tmp_path):
    decl = queue(param="out")
    assert refused(tmp_path, decl, "q.prefill(2);", trace=True) == [
        "1:63: error: `out` cannot be a parameter of `q.prefill`: it is an attribute each turn of the trace gives; "
        "a parameter is substituted, so give it a name of its own", f"  {decl}", " " * 64 + "^"]


def test_without_a_trace_the_columns_names_are_free_and_figures_and_parameters_stay_free(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text(source(queue(pool="new", param="out") + "\ngauge serial = 3;\ndef f(turn_no) = turn_no + 1;",
                        "q.prefill(2); hold kv (1) at admission (think = 1) { run s (think); } "
                        "observe cached = f(1);", trace=False))
    program = serq_frontend.compile(p)
    assert [g.name for g in program.gauges] == ["serial"] and "q.new" in [x.name for x in program.pools]


# 5. `preempt by (max(prio, 1 requeue tail;` said the keys' `)` was missing where two were, and `cap (3 + (4;`
#    named the inner `(` alone: every `(` and `[` left open is told with its place, the first first, in one text
#    (parser._unclosed_said) wherever the error finds them (before `requeue`, at the token a statement ends with,
#    at the end of the file, at a `]` where a `)` closes); a `)` or `]` that closes nothing is one too many, as a
#    `}` of no `{` is.

SLIP = """pool kv {{ cap 12; {option} }}
stage d : delay;
workload {{ arrive batch(1); init {{ set prio = 1; }} }}
session {{ hold kv (1) {{ run d (1); }} }}
run {{ horizon 5; }}
"""


@pytest.mark.parametrize("option, col, said", [
    ("preempt by (max(prio, 1 requeue tail;", 43, "unexpected `requeue`: two `)` are missing before it, the `(` at "
     "1:30 and the `(` at 1:34 are not closed; `preempt by (key, …) requeue head;` or `… requeue tail;`"),
    ("preempt by (prio requeue tail;", 36, "unexpected `requeue`: a `)` is missing before it, the `(` at 1:30 is not "
     "closed; `preempt by (key, …) requeue head;` or `… requeue tail;`"),
    ("cap (3 + (4;", 30, "unexpected `;`: two `)` are missing, the `(` at 1:23 and the `(` at 1:28 are not closed"),
    ("queue by (max(prio, used(kv[1;", 48, "unexpected `;`: `]`, `)`, `)` and `)` are missing, the `(` at 1:28, the "
     "`(` at 1:32, the `(` at 1:43 and the `[` at 1:46 are not closed"),
    ("cap (3 + 4];", 29, "unexpected `]`: a `)` is missing, the `(` at 1:23 is not closed"),
    ("cap (3 + 4));", 30, "unexpected `)`: no `(` is open here (one `)` too many)"),
    ("cap 3];", 24, "unexpected `]`: no `[` is open here (one `]` too many)"),
])
def test_every_bracket_left_open_is_told_with_its_place(tmp_path, option, col, said):
    p = tmp_path / "p.sq"
    p.write_text(SLIP.format(option=option))
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(p)
    lines = str(info.value).splitlines()
    assert lines == [f"{p}:1:{col}: error: {said}", f"  pool kv {{ cap 12; {option} }}", " " * (col + 1) + "^"]


def test_at_the_end_of_the_file_the_brackets_are_told(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text("stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); }\nlet a = max(1, (2")
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(p)
    assert str(info.value).splitlines()[0] == (f"{p}:4:18: error: unexpected end of the file: two `)` are missing, "
                                               "the `(` at 4:12 and the `(` at 4:16 are not closed")
