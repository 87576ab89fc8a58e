"""Words written where the parser or the linker read another construct, each told what is wrong:

- an operator right after the `)` of a statement's or a clause's parenthesis (`run svc[j] (a) + b);`, `grow kv
  (1) * 2;`, `hold kv (1) + 2 { … }`): it was "unexpected `+` (expected `;`, growing)"; the parenthesis ended
  at that `)`, the whole amount goes inside it, and a later `)` that closes no `(` is named (unbalanced);
- a word that may stand twice (a serving role's, a stage's name as a run's mode, `by`) written twice where the
  place takes it once (`serve decode decode first;`, `serve exclusive prefill prefill;`, `run e decode decode
  (w);`, `serve by by (k);`): it was "(expected first)", a `;` missing, the run's work;
- `admission (x = 1);` where a statement begins (a hold's `at admission (…)` left out or moved): it was told as
  an equality test (`=` for `==`), or "no definition `admission`";
- a serving form's word written twice (`tool tool (1);`, `prefill [j] prefill (w);`) or a second one after the
  first (`decode tool (1);`): the lexer read the second as a name where the amount begins, and the linker said
  "unknown function `tool`"; any other word of the language called as a function (`set x = tool(1);`) is told
  it is a word of the language.
"""

from __future__ import annotations

import re

import pytest
from sqhelpers import compile_src, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
stage svc[2] : fifo;
stage e : step { budget 4; cost 1; }
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""


def ended(word: str, at: str, shape: str, unbalanced: str = "") -> str:
    return (f"the parenthesis of `{word}` ended at the `)` at {at}; the whole amount goes inside it, `{shape}`"
            + (f"; the `)` at {unbalanced} closes no `(`: the parentheses are unbalanced" if unbalanced else ""))


@pytest.mark.parametrize("new, said", [
    ("run svc[0] (a) ⟨+ b);", "unexpected `+`: " + ended("run", "6:38", "run svc[0] ((a) + …)", "6:43")),
    ("run svc[0] (a) ⟨* b;", "unexpected `*`: " + ended("run", "6:38", "run svc[0] ((a) * …)")),
    ("run tool (1) ⟨- 2;", "unexpected `-`: " + ended("run", "6:36", "run tool ((1) - …)")),
    ("grow kv (1) ⟨* 2;", "unexpected `*`: " + ended("grow", "6:35", "grow kv ((1) * …)")),
    ("load kv (x) ⟨/ 2);", "unexpected `/`: " + ended("load", "6:35", "load kv ((x) / …)", "6:40")),
    ("run tool (f(x)) ⟨+ (g(y)));", "unexpected `+`: " + ended("run", "6:39", "run tool ((f(x)) + …)", "6:49")),
    ("hold kv (1) ⟨+ 2 { tool (1); }", "unexpected `+`: " + ended("hold", "6:35", "hold kv ((1) + …)")),
    ("hold kv (1) reuse (3) ⟨&& 2 { tool (1); }", "unexpected `&&`: "
     + ended("reuse", "6:45", "hold kv (1) reuse ((3) && …)")),
])
def test_an_operator_after_a_statements_parenthesis_says_where_it_ended(new, said):
    assert told_in(BASE, "tool (1);", new) == said


def test_an_arrivals_parenthesis_too():
    assert told_in(BASE, "arrive poisson(1);", "arrive poisson(1) ⟨* 2;") == (
        "unexpected `*`: " + ended("arrive", "5:28", "arrive poisson((1) * …)"))


def test_an_operator_the_amount_takes_is_no_error():
    # (a serving form's amount is an expression, not a parenthesis: `tool (1) + 2;` runs 3)
    compile_src(BASE.replace("tool (1);", "tool (1) + 2;"))
    compile_src(BASE.replace("tool (1);", "run svc[0] ((1) + 2);"))


@pytest.mark.parametrize("old, new, first", [
    ("cost 1;", "cost 1; serve decode ⟨decode first;", "4:42"),
    ("cost 1;", "cost 1; serve exclusive prefill ⟨prefill;", "4:52"),
    ("cost 1;", "cost 1; serve by ⟨by (1);", "4:42"),
    ("tool (1);", "run e decode ⟨decode (1);", "6:31"),
    ("tool (1);", "choose j in 2 by ⟨by (1);", "6:39"),
])
def test_a_word_that_may_stand_twice_is_written_twice_where_the_place_takes_it_once(old, new, first):
    word = re.match(r"\w+", new.split("⟨")[1]).group()
    assert told_in(BASE, old, new) == f"`{word}` is written twice (the first at {first})"


def test_a_stage_named_as_a_mode_still_runs_in_that_mode():
    compile_src("stage decode : step { budget 4; cost 1; }\nworkload { arrive poisson(1); }\n"
                "session { run decode decode (1); }\nrun { horizon 10; }\n")


ADMISSION = ("`admission` begins no statement: `at admission (x = e, …)` is a hold's clause, in its header before its "
             "block, `hold P (u) at admission (x = e) { … }`")


@pytest.mark.parametrize("new", [
    "⟨admission (x = 1);",
    "⟨admission (x = 1, y = prompt);",
    "tool (1); ⟨admission (x = 1) { tool (1); }",
    "⟨admission (x);",
    "⟨admission(1);",
])
def test_at_admission_alone_is_told_it_belongs_to_a_holds_header(new):
    assert told_in(BASE, "tool (1);", new) == ADMISSION


def test_admission_after_a_holds_block_too():
    assert told_in(BASE, "hold kv (4) { tool (1); }", "hold kv (4) { tool (1); } ⟨admission (x = 1);") == ADMISSION


@pytest.mark.parametrize("new, said", [
    ("tool ⟨tool (1);", "`tool` is written twice (the first at 6:25): a serving form is its word once and its "
                        "amount, `tool (w);`"),
    ("tool [0] ⟨tool (1);", "`tool` is written twice (the first at 6:25): a serving form is its word once and its "
                            "amount, `tool (w);`"),
    ("prefill ⟨prefill (1);", "`prefill` is written twice (the first at 6:25): a serving form is its word once and "
                              "its amount, `prefill (w);`"),
    ("transfer ⟨transfer (1) from kv to kv (1);", "`transfer` is written twice (the first at 6:25): a serving form "
                                                 "is its word once and its amount, `transfer (w) from P to Q (n);`"),
    ("decode ⟨tool (1);", "`tool` after `decode`: a serving form is one of the words `prefill`, `decode`, `tool`, "
                          "`transfer` and its amount, `decode (w);` or `tool (w);`, one at a time"),
])
def test_a_serving_forms_word_twice(new, said):
    assert told_in(BASE, "tool (1);", new) == said


@pytest.mark.parametrize("new, word", [
    ("set x = ⟨tool(1);", "tool"),
    ("run tool (⟨run (1));", "run"),
    ("set x = 1 + ⟨hold(2);", "hold"),
])
def test_a_word_of_the_language_called_as_a_function(new, word):
    assert told_in(BASE, "tool (1);", new) == (f"`{word}` is one of the language's words, not a function: a "
                                               "statement, a clause or an item begins with it, and no definition "
                                               "may take its name")


def test_a_keyword_another_language_calls_a_function_is_told_what_to_write_instead():
    # (`cap(kv)`: the language's `cap` is a pool's option; a read of it is told what to write, as before)
    said = told_in(BASE, "tool (1);", "set x = ⟨cap(kv);")
    assert said.startswith("unknown function `cap`: the language has no `cap`") and "`used(p) + free(p)`" in said
