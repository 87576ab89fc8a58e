"""Known defects of the frontend, round 13.

1. An aggregate inside another of the same index was refused wherever the two came from: ``def g(x) = sum j in
   3 (x * j);`` used as ``sum j in 2 (g(j))`` said '`j` is the index of the aggregate around it'. The rule was
   written when a substitution took every name of the index, so that g's aggregate read the argument's `j`
   as its own; an aggregate's substitution now takes only the names of its own text
   (``serq_frontend.ast.same_text``), so each index is read by its own aggregate and the refusal is kept for
   what it guards against: an aggregate around one of the same text (``sum j in 2 (max j in 3 (j))``, or the
   same in a definition's body), whose inner index would hide the outer. Every value below is computed by
   hand, and the one the old capture would have given is said where it differs."""

from __future__ import annotations

import pytest
import serq_sim
from sqhelpers import compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)

S = "stage s : fifo;\n"


def session(expr: str, defs: str = "") -> str:
    return (defs + S + "workload { arrive batch(1); init { set a = 1; } }\nsession { observe r = " + expr
            + "; end; }\nrun { horizon 10; }\n")


def observed(src: str) -> list[float]:
    run = serq_sim.run(compile_src(src), seed=1)
    return [float(v) for v in run.observe("r").values]


def folded(src: str) -> float:
    """The value of ``let A`` as the linker folds it."""
    program = compile_src(src)
    return {c.name: c.value for c in program.constants}["A"]


# --- 1. an aggregate of another text inside one of the same index ------------------------------------------------

G = "def g(x) = sum j in 3 (x * 10 + j);\n"


def test_the_briefs_program_compiles_and_sums_each_index_once():
    # Σ_{i<2} Σ_{k<3} i·k = 0 + (0 + 1 + 2) = 3
    assert folded("def g(x) = sum j in 3 (x * j);\nlet A = sum j in 2 (g(j));\n" + S) == 3.0


@pytest.mark.parametrize("expr, value", [
    # g(i) = Σ_{k<3} (10 i + k) = 30 i + 3: g(0) + g(1) = 3 + 33 = 36 (the inner index read for the outer: 66)
    ("sum j in 2 (g(j))", 36.0),
    # max(g(0), g(1), g(2)) = g(2) = 63; min = g(0) = 3
    ("max j in 3 (g(j))", 63.0),
    ("min j in 3 (g(j))", 3.0),
    # the argument reads the attribute a = 1 too, so the value is the session's, not a constant
    ("sum j in 2 (g(j * a))", 36.0),
    # an index of the outer aggregate read beside the use: Σ_{i<2} (g(i) + i) = 36 + 1
    ("sum j in 2 (g(j) + j)", 37.0),
])
def test_a_definitions_aggregate_inside_one_of_the_same_index(expr, value):
    src = session(expr, G)
    assert observed(src) == [value]
    # the outer index renamed (a program that compiled before) means the same
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(session(expr.replace("j", "i"), G)))


def test_the_old_pinned_case_is_the_maximum_of_the_sums():
    """`max j in 2 (g(j))` with `def g(k) = sum j in 2 (k * 10);`: g(0) = 0, g(1) = 20, so 20 (the capture that
    the refusal guarded against read the argument's j as g's own, Σ_{m<2} 10 m = 10 for every term)."""
    defs = "def g(k) = sum j in 2 (k * 10);\n"
    src = session("max j in 2 (g(j))", defs)
    assert observed(src) == [20.0]
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(session("20", defs)))


def test_three_texts_nested_each_read_by_its_own_aggregate():
    # h(y) = Σ_{m<2} (100 y + m) = 200 y + 1; g(x) = Σ_{k<3} h(10 x + k) = 6000 x + 600 + 3;
    # Σ_{i<2} g(i) = 603 + 6603 = 7206
    defs = "def h(y) = sum j in 2 (y * 100 + j);\ndef g(x) = sum j in 3 (h(x * 10 + j));\n"
    assert folded(defs + "let A = sum j in 2 (g(j));\n" + S) == 7206.0


def test_an_argument_written_in_a_definitions_body_keeps_that_bodys_index():
    # f(y) = g(Σ_{k<3} y·k) = g(3y), g(x) = Σ_{m<2} (x + 100 m) = 2x + 100: f(y) = 6y + 100;
    # Σ_{i<2} f(i + 1) = 106 + 112 = 218
    defs = "def g(x) = sum j in 2 (x + j * 100);\ndef f(y) = g(sum j in 3 (y * j));\n"
    assert folded(defs + "let A = sum j in 2 (f(j + 1));\n" + S) == 218.0


def test_an_aggregate_given_as_the_argument_of_one_of_the_same_index():
    # the argument max_{k<3} k = 2; g(2) = Σ_{m<2} (20 + m) = 41
    defs = "def g(x) = sum j in 2 (x * 10 + j);\n"
    assert folded(defs + "let A = g(max j in 3 (j));\n" + S) == 41.0


def test_a_queue_entrys_aggregate_over_an_argument_of_the_same_index():
    # the argument Σ_{k<3} k = 3, the entry's observe max_{m<2} (p + m) = 4
    src = ("queue gw : gateway { route { P[0].prefill (sum j in 3 (j)); } }\n"
           "queue P[2] : prefill {\n  pool kv { cap 1000; }\n  serve fifo;\n"
           "  prefill (p) { observe r = max j in 2 (p + j); hold kv (p) { run (p); } }\n}\n"
           "workload { arrive batch(1); session { request gw; end; } }\nrun { horizon 100; }\n")
    assert observed(src) == [4.0]


# --- the refusal kept: an aggregate around one of the same text -------------------------------------------------

def test_one_text_nested_is_still_refused():
    refused(session("sum j in 2 (max ⟨j in 3 (j))"),
            "`max j in …`: `j` is the index of the aggregate around it (`sum j in …` at 3:23)")


def test_one_definitions_body_nested_is_still_refused_with_the_use_noted():
    e = refused(session("g(1)", "def g(x) = sum j in 2 (max ⟨j in 3 (x + j));\n"),
                "`max j in …`: `j` is the index of the aggregate around it (`sum j in …` at 1:12)")
    assert "in the expansion of `g`, used here" in str(e)


def test_an_argument_nested_in_its_own_texts_aggregate_through_a_definition_is_still_refused():
    """`sum j in 2 (g(max j in 3 (j)))`: the argument's aggregate is inside the use's `sum j`, one text, with
    g's aggregate between them; its `j` would hide the outer one."""
    refused(session("sum j in 2 (g(max ⟨j in 3 (j)))", "def g(x) = sum j in 2 (x + j);\n"),
            "`max j in …`: `j` is the index of the aggregate around it (`sum j in …` at 4:23)")


# --- 2. every rule on a queue's name in one place -----------------------------------------------------------------
# The linker refused a queue's stage (named as the queue) declared twice, named like a `let`, a context
# variable, `inf` or a built-in or trace attribute, in the queue's words ('the queue `Q` has the name of …'),
# and the queue layer refused a queue's name beside a let, a pool, a stage or a queue first: the linker's
# declared-twice and let branches could not be reached for a queue, and a queue without a `serve` (which makes
# no stage) named `now`, `inf`, `serial` or, with a trace, `new` compiled. The queue layer refuses them all,
# with or without a serve, in the words the linker gave; the linker's refusals are of pools and stages.

SERVE = "serve delay; "


def queue_program(name: str, serve: str, before: str = "", after: str = "", trace: bool = False) -> str:
    # `queue ` is 6 characters: the queue's name is at column 7 of its line
    return (before + f"queue {name} : prefill {{ pool kv {{ cap 4; }} {serve}prefill (p) {{ hold kv (p) "
            "{ run s (p); } } }\n" + after + "stage s : delay;\nworkload { arrive poisson(1);"
            + (' trace "t.csv";' if trace else "") + " }\nsession { " + ("turn; " if trace else "")
            + f"{name.lstrip('⟨')}.prefill (1); }}\nrun {{ horizon 5; }}\n")


@pytest.mark.parametrize("serve", [SERVE, ""], ids=["serve", "serveless"])
@pytest.mark.parametrize("name, trace, message", [
    ("now", False, "the queue `now` has the name of a context variable"),
    ("inf", False, "the queue `inf` has the name of the language's infinity"),
    ("serial", False, "the queue `serial` has the name of a built-in attribute of a session; give the queue "
     "another name (a pool, a stage and an attribute have names of their own)"),
    ("new", True, "the queue `new` has the name of an attribute each turn of the trace gives; give the queue "
     "another name"),
])
def test_a_queue_named_as_the_language_names_something_is_refused_with_or_without_a_serve(serve, name, trace,
                                                                                         message):
    """language.txt §2: "Session attributes, let constants and the names the language supplies (the context
    variables, inf) have names of their own". A serveless queue named so compiled (it made no stage)."""
    refused(queue_program("⟨" + name, serve, trace=trace), message)


def test_a_trace_attributes_name_is_a_queues_without_a_trace():
    for serve in (SERVE, ""):
        compile_src(queue_program("new", serve))


@pytest.mark.parametrize("serve", [SERVE, ""], ids=["serve", "serveless"])
@pytest.mark.parametrize("before, after, queue, message", [
    # the queue first: the later declaration is refused, 'first at' the queue's name (2:7 or 1:7)
    ("", "pool ⟨Q { cap 1; }\n", "Q", "`Q` is declared twice (first at 1:7)"),
    ("", "stage ⟨Q : delay;\n", "Q", "`Q` is declared twice (first at 1:7)"),
    ("", "let ⟨Q = 1;\n", "Q", "`let Q`: `Q` is a queue; give the constant another name (first at 1:7)"),
    # the pool, stage or let first: the queue is refused at its name
    ("pool Q { cap 1; }\n", "", "⟨Q", "`Q` is declared twice (first at 1:1)"),
    ("stage Q : delay;\n", "", "⟨Q", "`Q` is declared twice (first at 1:1)"),
    ("let Q = 1;\n", "", "⟨Q", "the queue `Q` has the name of a `let`"),
])
def test_a_queues_name_beside_a_declaration_is_told_by_the_queue_layer(serve, before, after, queue, message):
    """The messages a user gets where the linker's declared-twice branch would have refused a queue's stage:
    the queue layer's, the same with or without a serve (the linker would have said 'first at' the serve)."""
    refused(queue_program(queue, serve, before, after), message)


@pytest.mark.parametrize("decl, message", [
    ("pool ⟨now { cap 1; }\n", "the pool `now` has the name of a context variable"),
    ("stage ⟨inf : delay;\n", "the stage `inf` has the name of the language's infinity"),
    ("pool ⟨serial { cap 1; }\n", "the pool `serial` has the name of a built-in attribute of a session; give the "
     "pool another name"),
    ("let k = 1;\nstage ⟨k : delay;\n", "the stage `k` has the name of a `let`"),
    ("pool k { cap 1; }\nstage ⟨k : delay;\n", "`k` is declared twice (first at 1:1)"),
])
def test_the_linker_still_refuses_a_pools_and_a_stages_name(decl, message):
    refused(decl + "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n",
            message)
