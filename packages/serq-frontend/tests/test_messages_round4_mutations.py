"""Syntax errors found by mutating the example programs (a token dropped, two swapped), each told what is wrong
where it was the grammar's list ("(expected …)") or a word of another place:

- the token before a comment that follows a string (`use "vllm.sq";  // …`): parser._prev_token_end read the
  `//` after a `"` as no comment, so a `let` left out on the next line (`B = 2048;`) was "unexpected `=`
  (expected pull)" and a `;` missing after the string was placed at the comment's end;
- a statement's name left out (`set = 1;`, `observe`, `record { … }`, `mark;`): "(expected a name)";
- a `(` left open before a definition's `=` (`def f(x, y = …`) and a `[` before a `,` (`kv[j, e[j]`):
  "(expected `)`, `,`, `;`, `{`)", "(expected `]`)";
- an operator right after a value's word (`cap * bs;`, the operand left out): the tokens an operand begins with;
- a name where a pool's option, a step stage's field, a run setting or a workload's item begins that is none
  of them (`pool kv { …; bs; }`, `workload { closed(1); }`): the block's words listed;
- a word followed by another token than the few it takes (`evict;`, `preempt;`, `requeue;`, `stage s : ;`,
  `request { … }`);
- a hold's `{` left out before its first statement, its second pool's name left out (`hold kv (1), (2)`), its
  `reserve` left out (`hold kv (1) (2)`), and a pool's option where a statement begins (`cap 1;` in a server
  block, the pool's head swapped away).
"""

from __future__ import annotations

import pytest
from sqhelpers import told, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
stage e : step { budget 4; cost 1; }
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
POOL_OPTION = ("a pool's option begins with its word (`cap`, `block`, `evict`, `preempt`, `queue`, `reserve`, "
               "`cache`, `admit`, `spill`)")


@pytest.mark.parametrize("old, new, said", [
    ("tool (1);", "set ⟨= 1;", "unexpected `=`: `set` names the attribute it sets, `set NAME = …;`"),
    ("tool (1);", "observe ⟨= 1;", "unexpected `=`: `observe` names the figure it samples, `observe NAME = …;`"),
    ("tool (1);", "record ⟨{ x = 1; }", "unexpected `{`: `record` names its table, `record NAME { COL = …; … }`"),
    ("tool (1);", "mark⟨;", "unexpected `;`: `mark` names the moment, `mark NAME;`"),
    ("tool (1);", "set x = used(kv[0⟨, 1));", "unexpected `,`: a `]` is missing, the `[` at 5:40 is not closed (an "
                                             "index is one expression, `kv[j]`)"),
    ("cap 100;", "cap ⟨* 2;", "unexpected `*`: an operand is missing before it (a number, a name, a call or a "
                             "parenthesised expression; `-`, `!` and `~` are the operators an operand may begin with)"),
    ("horizon 10;", "horizon ⟨/ 2;", "unexpected `/`: an operand is missing before it (a number, a name, a call or "
                                    "a parenthesised expression; `-`, `!` and `~` are the operators an operand may "
                                    "begin with)"),
    ("cap 100;", "cap 100; ⟨bs;", f"`bs` does not begin a pool's option: {POOL_OPTION}"),
    ("cost 1;", "cost 1; ⟨B;", "`B` does not begin a step stage's field: a step stage's field begins with its word "
                              "(`budget`, `cost`, `chunk`, `serve`, `memory`)"),
    ("horizon 10;", "horizon 10; ⟨foo 2;", "`foo` does not begin a setting of the run block: the run block's "
                                          "settings begin with their word (`horizon`, `warmup`, `seed`, `arrivals`)"),
    ("arrive poisson(1);", "⟨closed(1);", "`closed` does not begin a workload's item: a workload's item begins with "
                                          "its word (`arrive`, `trace`, `hidden`, `init`, `turn`, `session`); an "
                                          "arrival is `arrive closed(…);`"),
    ("stage tool : delay;", "stage tool : ⟨;", "unexpected `;`: a stage's kind follows `:`, `fifo`, `fifo(c)`, "
                                               "`ps(capacity)`, `delay` or `step { … }` (or a plugin's `@name`)"),
    ("cap 100;", "cap 100; evict⟨;", "unexpected `;`: `evict` names its order, `evict lru;` or `evict by (key, …);` "
                                     "(or a plugin's `@name`)"),
    ("cap 100;", "cap 100; preempt⟨;", "unexpected `;`: `preempt` names what a failed growth does, `preempt "
                                       "lifo;`, `preempt none;` or `preempt by (key, …);` (or a plugin's `@name`)"),
    ("hold kv (4) { tool", "hold kv (4) ⟨tool", "unexpected `tool`: a `{` is missing before it, the block of the `hold` at "
                                       "5:11 (`hold … { tool …; }`)"),
    ("hold kv (4)", "hold kv (4), ⟨(2)", "unexpected `(`: a hold names each pool before its units, `hold P (units), "
                                         "Q (units) { … }`"),
    ("hold kv (4)", "hold kv (4) ⟨(2)", "unexpected `(`: a pool's units are one parenthesis; what the hold reserves "
                                        "is its `reserve` after them, `hold P (units) reserve (r) { … }`"),
])
def test_the_mutation_is_told_what_is_wrong(old, new, said):
    assert told_in(BASE, old, new) == said


@pytest.mark.parametrize("word, what, shape", [
    ("cap", "a pool's option", "`pool NAME { cap …; }`"),
    ("budget", "a step stage's field", "`stage E : step { budget …; }`"),
    ("warmup", "a setting of the run block", "`run { warmup …; }`"),
])
def test_an_option_where_a_statement_begins_is_told_where_it_stands(word, what, shape):
    assert told_in(BASE, "tool (1);", f"⟨{word} 1;") == f"`{word}` is {what}, not a statement: it stands in its block, {shape}"


def test_a_string_then_a_comment_ends_the_line_where_the_string_does():
    assert told('use "vllm.sq";  // the library\n⟨B = 2048;\n' + BASE).startswith(
        "`B` does not begin an item: an item begins with def, gauge, let, pool,")
    assert told('use "vllm.sq";  // the library\n⟨B = 2048;\n' + BASE).endswith("(a constant is `let B = …;`)")
    assert told('use "vllm.sq"⟨ // the "library"\n' + BASE) == "missing `;` (found `pool` next)"
    # a `//` inside the string is no comment
    assert told('use "a//b.sq"⟨\n' + BASE) == "missing `;` (found `pool` next)"


def test_a_definitions_parenthesis_left_open_before_its_equals():
    assert told("def f(x, y ⟨= x;\n" + BASE) == "unexpected `=`: a `)` is missing, the `(` at 1:6 is not closed"
    # (in an expression, `=` is the test of equality written as C's assignment, as before)
    assert told_in(BASE, "tool (1);", "tool (1 ⟨= 2);") == "unexpected `=` in an expression: a test of equality is `==`"


def test_request_and_requeue_are_told_their_forms():
    src = ("queue P : prefill { pool kv { cap 9; } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n"
           "queue gw : gateway { route { request ⟨{ P.prefill (1); } } }\n"
           "workload { arrive batch(1); session { request gw; end; } }\nrun { horizon 5; }\n")
    assert told(src) == ("unexpected `{`: `request` runs the server block, `request;`, or a gateway's route, "
                         "`request GATEWAY;`")
    assert told_in(BASE, "cap 100;", "cap 100; preempt by (admission) requeue⟨;") == (
        "unexpected `;`: `requeue` names where a preempted request waits again, `requeue head;` or `requeue tail;`")


def test_a_trace_flag_alone_and_a_misspelt_word_keep_their_words():
    assert told_in(BASE, "arrive poisson(1);", "arrive batch(1); ⟨ordered;") == (
        "unexpected `ordered`: it follows a trace's file, `trace \"file.csv\" ordered;`")
    assert told_in(BASE, "horizon 10;", "horizon 10; ⟨hrizon 2;").endswith("(did you mean `horizon`?)")
    assert told_in(BASE, "cap 100;", "cap⟨: 100;") == "unexpected `:`: `cap` takes its value without one, `cap …;`"


@pytest.mark.parametrize("old, new, said", [
    # a token duplicated (the error came at the token after it, in words about the first)
    ("cap 100;", "cap 100; evict ⟨evict lru;", "`evict` is written twice (the first at 1:20)"),
    ("tool (1);", "set ⟨set x = 1;", "`set` is written twice (the first at 5:25)"),
    ("stage tool : delay;", "stage ⟨stage tool : delay;", "`stage` is written twice (the first at 2:1)"),
    ("cap 100;", "cap ⟨cap 100;", "`cap` is written twice (the first at 1:11)"),
    ("tool (1);", "observe sent ⟨sent = 1;", "`sent` is written twice (the first at 5:33)"),
    ("stage tool : delay;", "stage tool : ⟨: delay;", "`:` is written twice (the first at 2:12)"),
    ("tool (1);", "set x = min(1, ⟨, 2);", "`,` is written twice (the first at 5:38)"),
    ("tool (1);", "set x = ⟨= 1;", "unexpected `=`: `=` is written twice (the first at 5:31)"),
    ("tool (1);", "set x = used(kv[⟨[0]);", "unexpected `[`: a `[` follows the name it indexes, `kv[j]`"),
])
def test_a_token_written_twice_is_told_so(old, new, said):
    assert told_in(BASE, old, new) == said


def test_a_stage_named_as_a_mode_may_stand_twice():
    # `run prefill prefill (T);`: a step engine named `prefill` run in its prefill mode (language.txt's table)
    from sqhelpers import compile_src

    program = compile_src(BASE.replace("stage e :", "stage prefill :").replace("tool (1);", "run prefill prefill (1);"))
    assert program.stages[1].name == "prefill"
    # and a syntax error after the two is told as it is, not as a word written twice
    assert told_in(BASE.replace("stage e :", "stage prefill :"), "tool (1);", "run prefill prefill⟨;") == (
        "unexpected `;`: `run` takes its work in parentheses after the stage, `run prefill prefill (work);`")


@pytest.mark.parametrize("old, new, said", [
    # a function or an observable without its call (it was "unknown name `min` (did you mean `inf`?)")
    ("tool (1);", "tool (⟨min);", "`min` is a function, not a value: call it, `min(a, …)`"),
    ("tool (1);", "tool (⟨exp);", "`exp` is a function, not a value: call it, `exp(x)`"),
    ("tool (1);", "tool (⟨used);", "`used` is an observable, not a value: call it, `used(pool)`"),
    ("tool (1);", "tool (⟨price);", "`price` is an observable, not a value: call it, `price(s, s_hit, ds)`"),
    # a clause alone where a statement begins (`reuse (3);` was offered `request`, `reserve (3);` `observe`)
    ("tool (1);", "⟨reuse (3);", "`reuse` begins no statement: it is a hold's clause, before its block, `hold P (u) "
                                "reuse (bound) { … }`"),
    ("tool (1);", "⟨reserve (3);", "`reserve` begins no statement: it is a hold's clause, after a pool's units, "
                                  "`hold P (u) reserve (r) { … }`"),
    ("tool (1);", "⟨growing kv;", "`growing` begins no statement: it is a run's clause, after its work, `run S "
                                 "(work) growing P;`"),
    ("tool (1);", "⟨at admission (x = 1);", "`at` begins no statement: it is a hold's clause, before its block, "
                                           "`hold P (u) at admission (x = e) { … }`"),
    # a statement in a declaration's block
    ("cap 100;", "cap 100; ⟨run tool (1);", f"`run` begins a statement, which stands in a session's block, a "
                                           f"server's, a definition's or a queue's entry: {POOL_OPTION}"),
    ("arrive poisson(1);", "arrive poisson(1); ⟨set x = 1;", "`set` begins a statement, which stands in the "
     "workload's `init`, `turn` or `session` block: a workload's item begins with its word (`arrive`, `trace`, "
     "`hidden`, `init`, `turn`, `session`)"),
])
def test_a_word_out_of_its_place_is_told_its_place(old, new, said):
    assert told_in(BASE, old, new) == said


@pytest.mark.parametrize("old, new, said", [
    # found by inserting, deleting and replacing characters of the examples
    ("horizon 10;", "horizon ⟨, 10;", "unexpected `,`: `horizon` takes a value, `horizon …;`"),
    ("cap 100;", "cap ⟨) 100;", "unexpected `)`: `cap` takes a value, `cap …;`"),
    ("stage tool : delay;", "stage tool : delay; ⟨(mean s)", "unexpected `(`: an item begins with its word (`let`, "
     "`def`, `pool`, `stage`, `queue`, `workload`, `session`, `server`, `run`, `share`, `gauge`, `use`), or is "
     "`READER pull SOURCE …;`; a comment begins with `//`"),
])
def test_a_character_out_of_place_is_told_what_the_place_takes(old, new, said):
    assert told_in(BASE, old, new) == said


@pytest.mark.parametrize("old, new, said", [
    ("tool (1);", "record r ⟨x = 1; }", "unexpected `x`: a record's columns are in a block, `record r { COL = …; … }`"),
    ("pool kv { cap 100; }", "pool kv[2] ⟨cap 100; }", "unexpected `cap`: a pool's options are in a block, `pool "
                                                        "kv[N] { cap …; … }`"),
    ("tool (1);", "choose j in ⟨by (j);", "unexpected `by`: `choose` takes its count after `in`, `choose k in n by "
                                          "(key, …);`"),
    ("tool (1);", "run tool (1)⟨();", "unexpected `(`: a run's work is one parenthesis, `run S (work);`"),
    ("tool (1);", "⟨with (0.5) { tool (1); }", "`with` begins no statement: a draw is `branch with (p) { … }` (and a "
                                              "test `branch (test) { … }`)"),
    ("tool (1);", "branch (1) { tool (1); } ⟨(1) growing kv;", "unexpected `(`: a statement begins with its word; a "
                                                              "test is `branch (test) { … }`, a value `set x = (…);`"),
])
def test_a_block_or_a_word_left_out_is_told(old, new, said):
    assert told_in(BASE, old, new) == said


@pytest.mark.parametrize("src, said", [
    ("stage e[2] ⟨step { budget 4; cost 1; }\n", "unexpected `step`: a stage's kind follows `:`, `stage e[N] : KIND;`"),
    ("queue gw : ⟨{ route { end; } }\n", "unexpected `{`: a queue names its roles after `:`, `queue NAME : ROLE { … }` "
                                         "(gateway, prefill, decode, link)"),
    # a queue's `serve` left out: `step { … }` is then an entry, and its `budget` no statement
    ("queue P : prefill { pool kv { cap 9; } step { ⟨budget 4; cost 1; } prefill (p) { hold kv (p) { run (p); } } }\n",
     "`budget` is a step stage's field, not a statement: it stands in its block, `stage E : step { budget …; }`"),
])
def test_a_declarations_word_left_out_is_told(src, said):
    assert told(src + BASE) == said


@pytest.mark.parametrize("old, new, said", [
    # a hold's clause after a `}` that closes no hold (a line written twice: `} cache (…);` again)
    ("tool (1); }", "tool (1); } cache (4); } ⟨cache (4);", "unexpected `cache`: a hold's `cache` follows the hold's "
                                                         "block, and the `}` at 5:48 closes the `session` at 5:1, "
                                                         "which is no hold"),
    ("tool (1);", "branch (1) { tool (1); } ⟨lease kv (1);", "unexpected `lease`: a hold's `lease` follows the hold's "
                                                             "block, and the `}` at 5:48 closes the `branch` at 5:25, "
                                                             "which is no hold"),
])
def test_a_holds_clause_after_another_block_is_told_which_block_it_follows(old, new, said):
    assert told_in(BASE, old, new) == said


@pytest.mark.parametrize("new, said", [
    ("tool (1) ⟨cache (4);", "unexpected `cache`: a hold's `cache` follows the hold's block, `hold P (u) { … } cache "
                             "(units)`, and `tool (1)` is no hold"),
    ("run tool (1) ⟨lease kv (1);", "unexpected `lease`: a hold's `lease` follows the hold's block, `hold P (u) { … } "
                                    "lease P (time)`, and `run tool (1)` is no hold"),
])
def test_a_holds_clause_after_a_statement_is_told_it_is_no_hold(new, said):
    # it was "missing `;` (found `cache` next)"
    assert told_in(BASE, "tool (1);", new) == said
