"""Known defects of the frontend, round 10, each found wrong by hand, then fixed at its cause.

1. A message about a definition's name or one of its parameters put its caret under `def`; the project's rule
   is a caret under the offending token. The name's and each parameter's place are kept (``DefItem.name_pos``,
   ``DefItem.param_pos``) and the messages are at them, their words unchanged.
2. A request's gateway and a queue call's queue in a definition's body were replaced by a parameter of the
   same name wherever they came from: a definition the body uses (``def pre(w) { P[0].prefill (w); }`` in
   ``def f(P)``) had its queue taken by ``f``'s parameter. Only the parameters are the definition's own
   (program-reference.txt, def); the names keep the place they came from (``name_place``) and follow the rule
   an expression's names follow (``own_name``).
3. The same capture where an aggregate writes its index out: the index took a name the body of a definition
   used in the aggregate reads (``def g() = j * 2;`` made ``sum j in 3 (g())`` 6), and the rule that an
   index is no parameter of the definition it is in refused an aggregate of a definition the body uses
   (``def f(j) = g() + j;`` beside ``def g() = sum j in 2 (j);``). Only the aggregate's own text reads its
   index (``serq_frontend.ast.same_text``), and only the body's own aggregates are held to its parameters.
   And where a queue entry's parameters are substituted: ``def g() = p * 2;`` used in an entry ``prefill (p)``
   read the entry's parameter (the prefill ran 64 for a prompt of 32); g's ``p`` is the program's, a session
   attribute, which an entry does not read, and is refused as the entry's own text reading it would be
   (``queues.own_text``). And where an ``at admission`` binding is put into a hold's header: ``def g() = x *
   2;`` in ``hold kv (g()) at admission (x = 4)`` read the binding (8); an entry's argument that reads a
   name a binding of the entry has, ``P[0].prefill (x)`` into ``hold kv (p) at admission (x = 3) { run (p);
   }``, was taken for the body's read of the binding ('the binding `x`, which the body reads, is an
   attribute the program sets'). Only the hold's own text reads a binding (``admission._own``)."""

from __future__ import annotations

import pytest
import serq_sim
from sqhelpers import compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)

S = "stage s : fifo;\n"


# --- 1. the caret under the offending name of a definition ------------------------------------------------------

@pytest.mark.parametrize("src, message", [
    # a parameter that is a keyword or a function: the second parameter, not the first, not `def`
    (S + "def f(a, ⟨run) = 1;\nsession { run s (f(1, 2)); }\n", "`run` cannot be a parameter of `f`: it is a keyword"),
    (S + "def f(a,\n      ⟨floor) = 1;\nsession { run s (f(1, 2)); }\n",
     "`floor` cannot be a parameter of `f`: it is a function"),
    # a parameter given twice: at its second writing
    (S + "def f(x, y, ⟨x) = 1;\nsession { run s (f(1, 2, 3)); }\n", "`f` has two parameters named `x`"),
    # a parameter the body assigns: at that parameter
    (S + "def f(y, ⟨x) { set x = 1; run s (x + y); }\nsession { f(1, 2); }\n",
     "`x` is a parameter of `f` and its body assigns it"),
    (S + "def  f(⟨x) { choose x in 2 by (1); run s (x); }\nsession { f(1); }\n",
     "`x` is a parameter of `f` and its body assigns it"),
])
def test_a_parameters_error_is_at_the_parameter(src, message):
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    (S + "def   ⟨hold(x) = 1;\nsession { run s (1); }\n", "`hold` is a keyword; a definition needs another name"),
    (S + "def ⟨sqrt(x) = 1;\nsession { run s (1); }\n", "`sqrt` is a function of the language"),
    (S + "def\n⟨s(x) = 1;\nsession { run s (1); }\n", "`s` is a stage; a definition needs another name"),
    # the words name the first definition's place, its `def`, as before; the caret is under the second name
    (S + "def f(x) = 1;\ndef ⟨f(x) { run s (x); }\nsession { run s (f(1)); }\n",
     "`f` is defined twice (first at <source>:2:1)"),
])
def test_a_definitions_name_error_is_at_the_name(src, message):
    refused(src, message)


def test_a_def_option_for_a_statement_definition_is_refused_at_its_name():
    refused(S + "def ⟨f(x) { run s (x); }\nsession { f(1); }\n",
            "defs['f']: `f` is a statement definition; defs gives an expression definition's body",
            defs={"f": "1"})


# --- 2. a queue's and a gateway's name in a definition's body ---------------------------------------------------

QUEUES = """queue gw : gateway { route { ROUTE } }
queue P[2] : prefill {
  pool kv { cap 1000; }
  serve fifo;
  prefill (p) { hold kv (p) { run (p); } }
}
queue Q[2] : prefill {
  pool kv { cap 1000; }
  serve ps(2);
  prefill (p) { hold kv (p) { run (p); } }
}
workload { arrive batch(1); init { set prompt = 32; } session { SESSION } }
run { horizon 100; }
"""


def queues(defs: str, route: str, session: str = "request gw; end;") -> str:
    return defs + QUEUES.replace("ROUTE", route).replace("SESSION", session)


def observed(src: str, *names: str) -> list[list[float]]:
    run = serq_sim.run(compile_src(src), seed=1)
    return [[float(v) for v in run.observe(n).values] for n in names]


PRE = "def pre(w) { P[0].prefill (w); }\n"


def test_a_queue_named_in_a_used_definition_is_not_the_parameter_of_the_same_name():
    # pre's P is the program's queue, whatever f's parameter P is given: a number (it was refused, 'no queue
    # `prompt` is declared') or another queue (its calls went there)
    src = queues(PRE + "def f(P) { pre(P); observe r = now; }\n", "f(prompt);")
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(queues("", "P[0].prefill (prompt); observe r = now;")))
    # one 32-unit prefill on P[0]'s fifo (rate 1), then one on the queue f is given, Q[0]'s ps(2): 32, then 16
    src = queues(PRE + "def f(P) { set t0 = now; pre(32); observe a = now - t0; P[0].prefill (32); "
                 "observe b = now - t0; }\n", "f(Q);")
    assert observed(src, "a", "b") == [[32.0], [48.0]]  # pre's call went to Q too: 16 and 32
    written = queues("", "set t0 = now; P[0].prefill (32); observe a = now - t0; Q[0].prefill (32); "
                     "observe b = now - t0;")
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(written))


def test_a_queue_a_parameter_passes_on_is_the_argument_however_deep():
    # g's Q2 is given f's own P, so it is f's argument: Q, 16; and the program's P through h stays P, 32
    src = queues("def g(Q2) { Q2[0].prefill (32); }\ndef h() { g(P); }\n"
                 "def f(P) { set t0 = now; g(P); observe a = now - t0; h(); observe b = now - t0; }\n", "f(Q);")
    assert observed(src, "a", "b") == [[16.0], [48.0]]


def test_a_gateway_named_in_a_used_definition_is_not_the_parameter_of_the_same_name():
    src = queues("def go() { request gw; }\ndef f(gw) { go(); observe r = gw; }\n",
                 "P[0].prefill (prompt);", "f(5); end;")
    # it was refused: '`request gw;` in `f`: the argument must name a gateway'
    written = queues("", "P[0].prefill (prompt);", "request gw; observe r = 5; end;")
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(written))
    assert observed(src, "r") == [[5.0]]


def test_a_gateway_or_queue_of_the_bodys_own_text_is_still_the_parameter():
    # the parameter is the definition's own: `f(gw2)` requests gw2, `f(Q)` calls Q
    two = QUEUES.replace("queue P[2]", "queue gw2 : gateway { route { Q[1].prefill (prompt); } }\nqueue P[2]")
    src = "def f(g) { request g; }\n" + two.replace("ROUTE", "P[0].prefill (prompt);").replace(
        "SESSION", "f(gw2); end;")
    written = two.replace("ROUTE", "P[0].prefill (prompt);").replace("SESSION", "request gw2; end;")
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(written))
    src = queues("def f(P) { P[1].prefill (prompt); }\n", "f(Q);")
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(queues("", "Q[1].prefill (prompt);")))


def test_a_parameter_that_names_no_queue_is_still_refused_in_its_own_call():
    refused(queues("def f(P) { P[0].prefill (1); }\n", "f(⟨1);"),
            "`P.prefill` in `f`: the argument must name a queue")


# --- 3. an aggregate's index and the names of a definition's body ----------------------------------------------

def session(expr: str, defs: str = "") -> str:
    return defs + S + "workload { arrive batch(1); }\nsession { observe r = " + expr + "; end; }\nrun { horizon 10; }\n"


def test_a_name_a_used_definition_reads_is_not_the_index_of_the_aggregate_around_the_use():
    # g's j is the program's, which has none: it was read as the index, 0 + 2 + 4 = 6
    e = refused(session("sum j in 3 (g())", "def g() = ⟨j * 2;\n"), "unknown name `j`")
    assert "in the expansion of `g`, used here" in str(e)


def test_an_index_passed_as_an_argument_is_still_the_index():
    # 10 * (0 + 1 + 2) = 30, and g(x) = sum k in 2 (x * k) summed over j: 0 + (0 + 1) = 1
    src = session("sum j in 3 (g(j))", "def g(x) = x * 10;\n")
    assert observed(src, "r") == [[30.0]]
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(session("sum j in 3 (j * 10)")))
    assert observed(session("sum j in 2 (g(j))", "def g(x) = sum k in 2 (x * k);\n"), "r") == [[1.0]]


def test_an_aggregate_of_a_used_definition_may_have_the_index_named_as_a_parameter():
    # it was refused at g's aggregate, '`sum j in …`: `j` is a parameter of `f`'; g's j is its own: 0 + 1, and
    # f's j the argument, 100
    src = session("f(100)", "def g() = sum j in 2 (j);\ndef f(j) = g() + j;\n")
    assert observed(src, "r") == [[101.0]]
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(session("(sum j in 2 (j)) + 100")))
    # the body's own aggregate over its parameter's name is still refused
    refused(session("f(100)", "def f(j) = sum ⟨j in 2 (j) + j;\n"), "`sum j in …`: `j` is a parameter of `f`")


# --- 3. a queue entry's parameter and the names of a definition it uses ----------------------------------------

ENTRY = """DEFS
queue gw : gateway { route { P[0].prefill (prompt); observe r = now; } }
queue P[2] : prefill {
  pool kv { cap 1000; }
  serve fifo;
  prefill (p) { BODY }
}
workload { arrive batch(1); init { set prompt = 32; set p = 5; } session { request gw; end; } }
run { horizon 100; }
"""


def entry(defs: str, body: str) -> str:
    return ENTRY.replace("DEFS", defs).replace("BODY", body)


def test_a_name_a_used_definition_reads_is_not_the_entrys_parameter():
    # it read the parameter, 32 * 2 = 64; g's p is the session's attribute, which the entry may not read
    e = refused(entry("def g() = ⟨p * 2;", "hold kv (p) { run (g()); }"),
                "`P.prefill` reads `p`, a session attribute set outside the queue")
    assert "in the expansion of `g`, used here" in str(e)
    refused(entry("def g() = ⟨p * 2;", "hold kv (g()) { run (p); }"), "the header of a hold in `P.prefill` reads `p`")


def test_the_entrys_parameter_passed_to_a_definition_is_the_argument():
    # the prefill of 32 * 2 = 64 on P[0]'s fifo
    src = entry("def g(x) = x * 2;", "hold kv (g(p)) { run (g(p)); }")
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(entry("", "hold kv (p * 2) { run (p * 2); }")))
    assert observed(src, "r") == [[64.0]]


# --- 3. an `at admission` binding and the names of a definition or an argument ---------------------------------

def test_a_name_a_used_definition_reads_in_a_header_is_not_the_binding():
    # g's x is the program's, which has none: it was read as the binding, 4 * 2 = 8
    src = ("def g() = ⟨x * 2;\npool kv { cap 100; }\n" + S + "workload { arrive batch(1); }\n"
           "session { hold kv (g()) at admission (x = 4) { observe r = used(kv); } end; }\nrun { horizon 10; }\n")
    e = refused(src, "unknown name `x`")
    assert "in the expansion of `g`, used here" in str(e)


def test_an_entrys_argument_is_not_its_bindings_name():
    # the route's x = 7 is the argument: a prefill of 7 units on P[0]'s fifo from time 0, so r = 7; the binding
    # x = 3 is the header's own and nothing reads it
    src = entry("", "hold kv (p) at admission (x = 3) { run (p); }").replace(
        "route { P[0].prefill (prompt);", "route { set x = 7; P[0].prefill (x);")
    assert observed(src, "r") == [[7.0]]
    written = entry("", "hold kv (p) { run (p); }").replace("route { P[0].prefill (prompt);",
                                                            "route { set x = 7; P[0].prefill (x);")
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(written))
    # the binding the header's own text reads is the binding: a hold of 3 units
    own = entry("", "hold kv (x) at admission (x = 3) { run (p); }")
    assert ir_bytes(compile_src(own)) == ir_bytes(compile_src(entry("", "hold kv (3) { run (p); }")))
