"""Known defects of the frontend, round 11: carets and hints, each found wrong by hand, then fixed at its cause.

1. A pool, a stage, a queue or a `let` refused for its name (a `let`'s, a context variable's, `inf`, a built-in
   attribute's, a trace column's, declared twice) had its caret under `pool`/`stage`/`queue`/`let`; the
   project's rule is a caret under the offending token. Where each name is written is kept (``name_pos``, as
   ``DefItem.name_pos``) and the messages are at it, their words unchanged.
2. An aggregate refused for its index's name (a name the program has, the index of the aggregate around it, a
   binding of `at admission`, a name of a queue's entry, a definition's parameter) had its caret under
   `sum`/`max`/`min`; it is under the index (``Agg.var_pos``), the words unchanged.
3. `2 |||| 3` said "unexpected `||` (expected …)" with no hint, where `2 &&& 3` names the operator (its third
   `&` an unexpected character): a run of `|` or `&` read as the operator twice names it too, at the first
   character too many.
4. `blocksize(Q)` of a queue Q said "unknown pool `Q`" in a `let` (and "`Q` is a stage, …" in a session's
   expression, where the queue's stage has its name): a queue named where a pool is wanted is said to be one,
   its first pool offered as a near name is ("did you mean `Q.kv`?"), in a `let` as in any reference."""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(60)

S = "stage s : fifo;\n"
RUN = "session { run s (1); }\n"
Q = "prefill { pool kv { cap 9; } serve delay; prefill (p) { hold kv (p) { run (1); } } }\n"
OWN = "another name (a pool, a stage and an attribute have names of their own)"
BUILTIN = "a built-in attribute of a session"


# --- 1. the caret under the refused name of a pool, a stage, a queue or a let -------------------------------------

def test_the_briefs_program_is_refused_at_the_pools_name():
    src = ("pool ⟨serial[2] { cap 4; }\npool kv { cap 4; }\nstage s : delay;\nworkload { arrive poisson(1); }\n"
           "session { hold kv (1) { run s (1); } }\n")
    e = refused(src, f"the pool `serial` has the name of {BUILTIN}; give the pool {OWN}")
    # the words are those of the message before: only the caret moved, to column 6 (`pool ` is 5 characters)
    assert str(e).splitlines()[1:] == ["  pool serial[2] { cap 4; }", "       ^"]


@pytest.mark.parametrize("src, message", [
    # a let's name
    ("let kv = 1;\npool ⟨kv { cap 1; }\n" + S + RUN, "the pool `kv` has the name of a `let`"),
    ("let t = 1;\nstage  ⟨t : fifo;\n" + S + RUN, "the stage `t` has the name of a `let`"),
    ("let q = 1;\n" + S + "queue ⟨q : " + Q + RUN, "the queue `q` has the name of a `let`"),
    # a context variable's and inf
    ("pool ⟨now { cap 1; }\n" + S + RUN, "the pool `now` has the name of a context variable"),
    ("stage ⟨waiting[3] : delay;\n" + S + RUN, "the stage `waiting` has the name of a context variable"),
    ("pool\t⟨inf { cap 1; }\n" + S + RUN, "the pool `inf` has the name of the language's infinity"),
    (S + "queue   ⟨now : " + Q + RUN, "the queue `now` has the name of a context variable"),
    # a built-in attribute's
    ("stage ⟨cached : delay;\n" + S + RUN, f"the stage `cached` has the name of {BUILTIN}; give the stage {OWN}"),
    (S + "queue ⟨turn_no : " + Q + RUN, f"the queue `turn_no` has the name of {BUILTIN}; give the queue {OWN}"),
    # declared twice: at the second declaration's name (the first's place in the words, as before)
    ("pool kv { cap 1; }\npool  ⟨kv { cap 2; }\n" + S + RUN, "`kv` is declared twice (first at 1:1)"),
    (S + "pool ⟨s { cap 1; }\n" + RUN, "`s` is declared twice (first at 1:1)"),
    (S + "queue ⟨s : " + Q + RUN, "`s` is declared twice (first at 1:1)"),
    ("let x = 1;\nlet   ⟨x = 2;\n" + S + RUN, "`x` is declared twice (first at 1:1)"),
    (S + "queue P : " + Q + "queue ⟨P : " + Q + RUN, "queue `P` is declared twice"),
    (S + "queue P : prefill { pool kv { cap 9; } pool ⟨kv { cap 3; } serve delay; prefill (p) { hold kv (p) { "
     "run (1); } } }\n" + RUN, "queue `P` declares pool `kv` twice"),
    # a let's own name
    ("let ⟨tokens = 3;\n" + S + RUN, "`let tokens`: `tokens` is a context variable"),
    ("let\n  ⟨inf = 3;\n" + S + RUN, "`let inf`: `inf` is the language's infinity"),
    ("let ⟨serial = 7;\n" + S + RUN, f"`let serial`: `serial` is {BUILTIN}; give the constant another name"),
])
def test_a_refused_name_is_told_at_the_name(src, message):
    refused(src, message)


def test_a_stage_declared_after_a_queue_of_its_name_is_refused_at_the_stage():
    """The queue's stage takes the queue's name where the queue writes it; a stage of that name declared after
    the queue is the second declaration, refused at its own name (not at the queue's)."""
    refused("queue s : " + Q + "stage ⟨s : delay;\n" + RUN, "`s` is declared twice (first at 1:")


@pytest.mark.parametrize("name", ["new", "more"])
def test_a_trace_columns_name_is_refused_at_the_name(tmp_path, name):
    src = ("pool kv { cap 9; }\n" + S + f"stage  {name} : delay;\n"
           'workload { arrive poisson(1); trace "t.csv"; }\nsession { turn; run s (1); }\n')
    (tmp_path / "p.sq").write_text(src)
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(tmp_path / "p.sq")
    # line 3, column 8: `stage` and two blanks before the name
    assert str(info.value).splitlines()[0] == (
        f"{tmp_path / 'p.sq'}:3:8: error: the stage `{name}` has the name of an attribute each turn of the trace "
        f"gives; give the stage {OWN}")


def test_the_names_are_free_elsewhere():
    """The same declarations under other names compile (the refusals are of the names alone)."""
    compile_src("let k = 1;\npool kv { cap 1; }\nstage t : fifo;\n" + S + "queue P : " + Q + RUN)


# --- 2. the caret under an aggregate's refused index ---------------------------------------------------------------

TAIL = "stage s : fifo;\nworkload { arrive poisson(1); }\nrun { horizon 5; }\n"
QUEUE = ("queue P[2] : prefill {\n  pool kv { cap 1000; }\n  serve fifo;\n"
         "  prefill (p) { hold kv (max  ⟨p in 2 (p)) { run (p); } }\n}\nsession { P[0].prefill (5); }\n")


@pytest.mark.parametrize("src, message", [
    ("stage s : fifo;\ndef g(j) = sum ⟨j in 2 (j);\nsession { run s (g(1)); }\n",
     "`sum j in …`: `j` is a parameter of `g`; a parameter is substituted"),
    ("stage s : fifo;\ndef g(j) { run s (min\t⟨j in 2 (j)); }\nsession { g(1); }\n",
     "`min j in …`: `j` is a parameter of `g`"),
    (TAIL + "session { set j = 1; set x = sum ⟨j in 2 (j); run s (x); }\n",
     "`sum j in …`: `j` is a name the program has already"),
    (TAIL + "let k = 2;\nsession { set x = max\n  ⟨k in 2 (k); run s (x); }\n",
     "`max k in …`: `k` is a name the program has already"),
    (TAIL + "session { set x = sum j in 2 (max ⟨j in 3 (j)); run s (x); }\n",
     "`max j in …`: `j` is the index of the aggregate around it (`sum j in …` at 4:19)"),
    ("pool kv { cap 10; }\n" + TAIL + "session { hold kv (max ⟨h in 2 (h)) at admission (h = 5) { run s (1); } }\n",
     "`max h in …`: `h` is a binding of this `at admission`"),
    ("workload { arrive poisson(1); }\nrun { horizon 5; }\n" + QUEUE,
     "`max p in` inside queue `P`: `p` is a name of the entry"),
])
def test_a_refused_index_is_told_at_the_index(src, message):
    refused(src, message)


def test_an_index_from_a_definitions_body_is_told_there_with_the_use_noted():
    """The aggregate written in ``g``'s body, its index caught by the aggregate around it in that body: the caret
    under the index in the body (line 2, column 24: `def g(k) = max j in 2 (sum ` is 23 characters), the use
    noted. (An aggregate of the use's text around g's, ``max j in 2 (g(j))``, is another text and compiles:
    test_known_defects_round13.)"""
    e = refused("stage s : fifo;\ndef g(k) = max j in 2 (sum ⟨j in 2 (k * 10));\nsession { set x = g(1); run s (x); }\n",
                "`sum j in …`: `j` is the index of the aggregate around it (`max j in …` at 2:12)")
    assert str(e).splitlines()[3] == "<source>:3:19: note: in the expansion of `g`, used here"


# --- 3. an operator written on names the operator ------------------------------------------------------------------

@pytest.mark.parametrize("expr, message", [
    # the first character too many: `set y = 2 ` is 10 characters after `session { `, so the run begins at 21
    ("2 ||⟨|| 3", "unexpected `||`: the logical or is `||`"),
    ("2 &&⟨&& 3", "unexpected `&&`: the logical and is `&&`"),
    ("2 ||⟨||| 3", "unexpected `||`: the logical or is `||`"),
    ("1 &&⟨&&&& 0", "unexpected `&&`: the logical and is `&&`"),
    # as they were: a third character alone is an unexpected character with the same words
    ("2 ||⟨| 3", "unexpected character `|`: the logical or is `||`"),
    ("2 &&⟨& 3", "unexpected character `&`: the logical and is `&&`"),
])
def test_an_operator_written_on_names_the_operator(expr, message):
    e = refused("stage s : fifo;\nsession { set y = " + expr + "; run s (y); }\n", message)
    assert str(e).splitlines()[0].endswith(message)
    refused("let a = " + expr + ";\nstage s : fifo;\nsession { run s (a); }\n", message)


@pytest.mark.parametrize("expr, message", [
    ("2 || ⟨|| 3", "unexpected `||`: an operand is missing after `||`"),
    ("2 ||⟨&& 3", "unexpected `&&`: an operand is missing after `||`"),
    ("⟨|| 3", "unexpected `||`: the value is missing after `=`"),
])
def test_other_operators_out_of_place_are_told_as_before(expr, message):
    """Two operators apart, or two different ones, or one with no left side, are no run of one operator: the
    message says what is missing (test_messages_round3_expressions; it listed what was expected)."""
    refused("stage s : fifo;\nsession { set y = " + expr + "; run s (y); }\n", message)


# --- 4. a queue named where a pool is wanted offers its pools ------------------------------------------------------

QK = ("queue Q : prefill { pool kv { cap 8; block 4; } pool sw { cap 3; } serve fifo; prefill (p) { hold kv (p) "
      "{ run (p); } } }\nworkload { arrive poisson(1); }\n")
QUEUE_NOT_POOL = "`Q` is a queue, and a pool is wanted here (did you mean `Q.kv`?)"


@pytest.mark.parametrize("src", [
    "let B = blocksize(⟨Q);\n" + QK + "session { Q.prefill (B); }\n",
    QK + "session { set b = blocksize(⟨Q); Q.prefill (b); }\n",
    QK + "session { set c = used(⟨Q); Q.prefill (1); }\n",
    QK + "session { hold ⟨Q (1) { Q.prefill (1); } }\n",
])
def test_a_queue_where_a_pool_is_wanted_offers_its_first_pool(src):
    e = refused(src, QUEUE_NOT_POOL)
    assert str(e).splitlines()[0].endswith(QUEUE_NOT_POOL)


def test_the_offer_compiles_to_the_pools_block():
    """Doing what the message says: ``blocksize(Q.kv)`` is the pool's block, 4, as the number written out."""
    from sqhelpers import ir_bytes

    def prog(b: str) -> str:
        return f"let B = {b};\n" + QK + "session { Q.prefill (B); }\n"

    assert ir_bytes(compile_src(prog("blocksize(Q.kv)"))) == ir_bytes(compile_src(prog("4")))


def test_a_member_of_a_queue_family_is_offered_with_its_index_kept():
    src = ("let B = blocksize(⟨Q[1]);\nqueue Q[2] : prefill { pool kv { cap 8; block 4; } serve fifo; prefill (p) { "
           "hold kv (p) { run (p); } } }\nworkload { arrive poisson(1); }\nsession { Q[0].prefill (B); }\n")
    refused(src, "`Q` is a queue, and a pool is wanted here (did you mean `Q[…].kv`?)")


def test_a_queue_without_pools_offers_none_and_other_names_are_as_before():
    g = ("queue G : gateway { route { set z = used(⟨G); P.prefill (1); } }\n"
         "queue P : prefill { pool kv { cap 8; } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n"
         "workload { arrive batch(1); session { request G; } }\n")
    e = refused(g, "`G` is a queue, and a pool is wanted here")
    assert str(e).splitlines()[0].endswith("a pool is wanted here")
    refused("let B = blocksize(⟨kvv);\n" + QK + "pool kv2 { cap 1; }\nsession { Q.prefill (B); }\n",
            "unknown pool `kvv` (did you mean `kv2`?)")
    refused(QK + "stage t : fifo;\nsession { hold ⟨t (1) { run t (1); } }\n", "`t` is a stage, and a pool is wanted here")
