"""Known defects of the frontend, round 9, each found wrong by hand, then fixed at its cause.

1. ``blocksize(p)`` is "the pool's block, folded at link time" (language.txt §2), a constant; a ``let`` that
   read it was refused ("not a constant"), and so was a cap or another pool's block. It is a constant
   wherever constants are read (``Context.block_of``), a cycle refused at the name that closes it."""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, hold_tail, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)

TAIL = hold_tail("H")


# --- 1. blocksize(p) is a link-time constant ---------------------------------------------------------------------

def test_a_let_cap_block_and_horizon_may_read_blocksize_and_compile_as_the_numbers_worked_out_by_hand():
    # bs = 8: B = 2 * 8 = 16; kv2's cap 16 * 8 = 128 and block 8 / 2 = 4; the horizon 10 * 4 = 40
    read = """let bs = 8;
let B = 2 * blocksize(kv);
pool kv { cap 64; block bs; }
pool kv2 { cap B * blocksize(kv); block blocksize(kv) / 2; }
let H = 10 * blocksize(kv2);
""" + TAIL
    written = """let bs = 8;
let B = 16;
pool kv { cap 64; block bs; }
pool kv2 { cap 128; block 4; }
let H = 40;
""" + TAIL
    assert ir_bytes(compile_src(read)) == ir_bytes(compile_src(written))
    # --set reaches it through the block: bs = 2 gives B = 4, kv2's cap 8 and block 1, a horizon of 10
    over = written.replace("let B = 16;", "let B = 4;").replace("cap 128; block 4;", "cap 8; block 1;") \
        .replace("let H = 40;", "let H = 10;")
    assert ir_bytes(compile_src(read, sets={"bs": 2})) == ir_bytes(compile_src(over, sets={"bs": 2}))


def test_blocksize_of_a_pool_without_block_is_1_and_a_familys_members_share_theirs():
    src = """let B = blocksize(kv) + sum j in 2 (blocksize(m[j]));
let H = 5;
pool kv { cap 64; }
pool m[2] { cap 64; block 4; }
""" + TAIL
    assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(src.replace(
        "let B = blocksize(kv) + sum j in 2 (blocksize(m[j]));", "let B = 9;")))


def test_a_let_whose_block_reads_itself_is_a_cycle_refused_at_the_name_that_closes_it():
    refused("let B = blocksize(kv);\nlet H = 5;\npool kv { cap 64; block ⟨B; }\n" + TAIL,
            "a cycle of constants: `let B` reads `blocksize(kv)`, and the block of pool `kv` (declared at 3:1) "
            "reads `B`; a constant cannot be computed from itself")


def test_two_blocks_read_from_each_other_and_a_block_read_from_itself_are_cycles():
    refused("let B = 4;\nlet H = 5;\npool kv { cap 64; block ⟨blocksize(m); }\npool m { cap 64; block "
            "blocksize(kv); }\n" + TAIL,
            "a cycle of constants: the block of pool `m` (declared at 4:1) reads `blocksize(kv)`, and the block of "
            "pool `kv` (declared at 3:1) reads `blocksize(m)`; a constant cannot be computed from itself")
    refused("let B = 4;\nlet H = 5;\npool kv { cap 64; block ⟨blocksize(kv); }\n" + TAIL,
            "a cycle of constants: the block of pool `kv` (declared at 3:1) reads `blocksize(kv)`; a constant "
            "cannot be computed from itself")


def test_a_let_reads_only_the_lets_before_it_through_a_block_too():
    refused("let B = blocksize(kv);\nlet bs = 8;\nlet H = 5;\npool kv { cap 64; block ⟨bs; }\n" + TAIL,
            "`let B` reads `blocksize(kv)`, and the block of pool `kv` reads `bs`, declared after `let B` (at 2:1); "
            "a `let` reads only the ones before it: declare it first")


def test_blocksize_of_what_is_no_pool_is_refused_in_a_let_as_in_an_expression():
    refused("let B = blocksize(⟨nope);\nlet H = 5;\npool kv { cap 64; }\n" + TAIL, "unknown pool `nope`")
    refused("let B = blocksize(⟨s);\nlet H = 5;\npool kv { cap 64; }\n" + TAIL,
            "`s` is a stage, and a pool is wanted here")
    refused("let B = ⟨blocksize(kv, 1);\nlet H = 5;\npool kv { cap 64; }\n" + TAIL,
            "`blocksize` takes one argument, `blocksize(pool)`, and got 2")


def test_blocksize_in_a_sessions_expression_is_the_same_constant():
    # hold kv (blocksize(kv) * 2) is hold kv (16) with bs = 8
    src = "let bs = 8;\nlet B = 1;\nlet H = 5;\npool kv { cap 64; block bs; }\n" + TAIL
    assert ir_bytes(compile_src(src.replace("hold kv (B)", "hold kv (blocksize(kv) * 2)"))) == \
        ir_bytes(compile_src(src.replace("hold kv (B)", "hold kv (16)")))



def test_a_let_may_read_the_block_of_a_queues_pool():
    # the lets are folded before the queues are written out: `P.kv` is the queue's pool all the same (block 8)
    queue = "queue P{n} : prefill {{ pool kv {{ cap 96; block 8; }} serve delay; prefill (p) {{ hold kv (p) {{ run (1); }} }} }}\n"
    for n, ref in (("", "P.kv"), ("[2]", "P[1].kv")):
        src = f"let B = 2 * blocksize({ref});\nlet H = 5;\npool kv {{ cap 64; }}\n" + queue.format(n=n) + TAIL
        assert ir_bytes(compile_src(src)) == ir_bytes(compile_src(src.replace(f"2 * blocksize({ref})", "16")))

# --- 2. a definition's parameter is the definition's own name ----------------------------------------------------
#
# program-reference.txt, def: a PARAM is "Not a keyword or a function, and not a name the body assigns or binds",
# and "Only the parameters are the definition's own. Every other name in the body is the program's". A parameter
# named like a context variable, a built-in attribute, `inf` or a `let` is allowed, and read as the parameter
# (docs/language.md, defs). The defect was the other half: a name that came into the body from a definition the
# body uses was taken by the parameter too (`def g() = now; def f(now) = g() + now;` read f's argument twice).

DEFS = """let bs = 16;
stage s : fifo(1);
{defs}

workload {{
  arrive batch(1);
}}

session {{
  set a = 5;
  run s (1);
  observe x = {value};
}}

run {{ horizon 10; }}
"""


def same(defs: str, value: str, written: str) -> None:
    """The program using the definitions has the IR of the one with the value written out by hand."""
    assert ir_bytes(compile_src(DEFS.format(defs=defs, value=value))) == \
        ir_bytes(compile_src(DEFS.format(defs="", value=written)))


@pytest.mark.parametrize("param", ["now", "serial", "cached", "inf", "bs", "a", "size"])
def test_a_parameter_named_as_a_language_name_a_let_or_an_attribute_reads_the_argument(param):
    # f(3) is 3 * 2 whatever the parameter is called: not the clock, the serial, the let's 16 or the attribute's 5
    same(f"def f({param}) = {param} * 2;", "f(3)", "6")
    same(f"def f({param}) = {param} * 2;", "f(a + now)", "(a + now) * 2")


def test_a_name_a_used_definition_brings_in_is_the_programs_not_the_parameters():
    # g's now is the clock and h's bs the let (16): f(100) is now + 100, k(100) is 116
    same("def g() = now;\ndef f(now) = g() + now;", "f(100)", "now + 100")
    same("def h() = bs;\ndef k(bs) = h() + bs;", "k(100)", "116")
    same("def h() = a;\ndef k(a) = h() * a;", "k(3)", "a * 3")
    # an argument passed on is the outer parameter's: g2's x is f2's now, 7
    same("def g2(x) = x + now;\ndef f2(now) = g2(now) * 2;", "f2(7)", "(7 + now) * 2")
    # and as deep as definitions nest: m's now through k2 and f3 stays the clock
    same("def m() = now;\ndef k2(now) = m() + now;\ndef f3(now) = k2(now + 1) + now;", "f3(10)",
         "now + (10 + 1) + 10")


def test_a_parameter_read_once_in_its_own_text_may_take_a_draw_beside_a_used_definitions_name():
    # the body reads its own `now` once; g's `now` is not a read of the parameter, so a draw may go to it
    same("def g() = now;\ndef f(now) = g() + now;", "f(~exp(1))", "now + ~exp(1)")


# --- 3. a pool, stage or queue named as a built-in attribute ---------------------------------------------------
#
# language.txt §2: "Session attributes, let constants and the names the language supplies (the context variables,
# inf) have names of their own", and the linker refuses an attribute named as a pool or a stage (`set kv = …`
# beside `pool kv`). A pool, stage or queue named `serial`, `turn_no`, `cached` or `computed` (a trace's column
# beside a trace) gave a built-in attribute and a pool one name; it linked. Refused at the declaration now (a
# queue at the queue, whose stage takes its name); an observe, a gauge, a record may take such a name, since no
# expression reads them (docs/language.md).

SESSION = """stage s : fifo(1);
{decl}
workload {{
  arrive batch(1);{trace}
}}

session {{
  {turn}run s (1);
  {out}
}}

run {{ horizon 10; }}
"""

BUILTIN = "a built-in attribute of a session"
OWN = "another name (a pool, a stage and an attribute have names of their own)"


def session(decl: str = "", out: str = "observe x = serial;", trace: bool = False) -> str:
    return SESSION.format(decl=decl, out=out, trace=' trace "t.csv";' if trace else "",
                          turn="turn; " if trace else "")


@pytest.mark.parametrize("name", ["serial", "turn_no", "cached", "computed"])
def test_a_pool_or_stage_named_as_a_built_in_attribute_is_refused_at_it(name):
    refused(session(f"pool ⟨{name} {{ cap 4; }}"), f"the pool `{name}` has the name of {BUILTIN}; give the pool {OWN}")
    refused(session(f"stage ⟨{name}[2] : delay;"), f"the stage `{name}` has the name of {BUILTIN}; give the stage "
            + OWN)
    refused(session(f"queue ⟨{name} : prefill {{ pool kv {{ cap 9; }} serve delay; prefill (p) {{ hold kv (p) {{ "
                    "run (1); } } }"), f"the queue `{name}` has the name of {BUILTIN}; give the queue {OWN}")


def test_a_queue_named_as_a_context_variable_is_refused_at_the_queue_not_its_serve():
    refused(session("queue ⟨now : prefill { pool kv { cap 9; } serve delay; prefill (p) { hold kv (p) { run (1); } } }"),
            "the queue `now` has the name of a context variable")
    refused("let q = 1;\n" + session("queue ⟨q : prefill { pool kv { cap 9; } serve delay; prefill (p) { hold kv (p) "
                                     "{ run (1); } } }"), "the queue `q` has the name of a `let`")


@pytest.mark.parametrize("name", ["new", "out", "think", "more", "forced"])
def test_a_stage_named_as_a_trace_column_is_refused_beside_a_trace_and_free_without(tmp_path, name):
    src = session(f"stage {name} : delay;", trace=True)
    (tmp_path / "p.sq").write_text(src)
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(tmp_path / "p.sq")
    assert str(info.value).splitlines()[0] == (
        f"{tmp_path / 'p.sq'}:2:7: error: the stage `{name}` has the name of an attribute each turn of the trace "
        f"gives; give the stage {OWN}")
    compile_src(session(f"stage {name} : delay;"))


@pytest.mark.parametrize("out, table, want", [("observe now = 5;", "now", 5.0), ("observe serial = 2;", "serial", 2.0)])
def test_an_observe_may_take_such_a_name_and_reads_nothing_in_its_place(out, table, want):
    # one session (serial 0) done at 1: the sample named `now` is 5, not the clock; `serial` is 2, not 0
    import serq_sim

    r = serq_sim.run(compile_src(session(out=out)))
    assert (list(r.observe(table).values), list(r.observe(table).times)) == ([want], [1.0])


def test_a_record_may_take_such_names_for_its_table_and_columns():
    import serq_sim

    r = serq_sim.run(compile_src(session(out="record cached { computed = 3; now = 7; }")))
    rows = r.records("cached", kind="numpy")
    assert (list(rows["computed"]), list(rows["now"]), list(rows["time"])) == ([3], [7], [1.0])
