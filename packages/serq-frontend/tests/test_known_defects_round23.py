"""Known defects of the front end, round 23: messages that named a symptom and not the mistake.

* A spill without its `when` clause (``spill cpu via pcie (w);``) said only ``unexpected `;` (expected
  when)``; a spill written without a part of language.txt §2's form (``spill POOL via STAGE ( expr ) when
  ( expr ) ;``) now names the part and the whole form, at the token found.
* An entry call ``from Z[i]`` of a name nothing declares was told as a source other than the one the entry
  pulls from (`` `D` pulls from `P`, and this entry was called `from Z` ``): the unknown name is told first,
  with the closest queue or pool.
* ``log(2)`` said "unknown function `log`", and in a `let` "not a constant: it reads `log(…)`": another
  language's name of a function the language has is offered as it (`ln`), a logarithm to another base or a
  rounding says how the language writes it, and a `let` or a constant position calling an unknown function
  is told so, as an expression is.
* ``run E foo (1);`` said that `run` takes its work in parentheses: a word between the stage and the work is
  a run's mode, and the message says `foo` is not one and names the modes (prefill, decode).
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import EXAMPLES, compile_src, refused

pytestmark = pytest.mark.timeout(60)

OFFLOAD = (EXAMPLES / "multi-turn" / "offload.sq").read_text()
SPILL = "spill cpu via pcie (size / bs * wr) when (1);"
FORM = "`spill TIER via LINK (work) when (pred);`"


def offload(spill: str) -> str:
    assert OFFLOAD.count(SPILL) == 1
    return OFFLOAD.replace(SPILL, spill)


def test_the_offload_example_spills_as_written():
    # (the tier first: the engine admits it before the request slots, docs/vllm.md "A CPU offload tier")
    assert [p.name for p in compile_src(OFFLOAD).pools] == ["cpu", "reqs", "kv"]


@pytest.mark.parametrize("spill, message", [
    # the brief's case: the `when` clause left out
    ("spill cpu via pcie (size / bs * wr)⟨;", "unexpected `;`: a spill says which evicted prefixes it writes, "
     "`when (pred)` after its work: " + FORM),
    # `when` without its parentheses, or without its test
    ("spill cpu via pcie (size / bs * wr) when ⟨1;", "unexpected `1`: `when` takes its test in parentheses: " + FORM),
    ("spill cpu via pcie (size / bs * wr) when⟨;", "unexpected `;`: `when` takes its test in parentheses"),
    # the link left out, or `via` without it
    ("spill cpu ⟨(size / bs * wr) when (1);", "unexpected `(`: a spill names the link its writes go over after "
     "the tier, `via LINK`: " + FORM),
    ("spill cpu via ⟨(size / bs * wr) when (1);", "unexpected `(`: `via` takes the link's name: " + FORM),
    # the work left out: the message of a statement without its amount, as before
    ("spill cpu via pcie ⟨when (1);", "unexpected `when`: `spill` takes the work of its write in parentheses "
     "after the link, " + FORM),
    # the form complete and more after it: a `;` missing, as before
    ("spill cpu via pcie (size / bs * wr) when (1)⟨ lru;", "missing `;` (found `lru` next)"),
])
def test_a_spill_without_a_part_of_its_form_names_it(spill, message):
    """Mutation: without `_spill_unfinished` in the parser's hints the first was "unexpected `;` (expected
    when)", the second and third "(expected `(`)", the fourth "(expected via, …)" and the fifth "(expected a
    name)"."""
    refused(offload(spill), message)


def test_a_spill_ended_by_a_token_on_the_next_line_is_told_there():
    # as a spill without its work is (test_peer_programs_round20_spill_syntax): at the token found
    src = offload("spill cpu via pcie (size / bs * wr)").replace("wr)\n}", "wr)\n⟨}")
    refused(src, "unexpected `}`: a spill says which evicted "
            "prefixes it writes, `when (pred)` after its work: " + FORM)


PD = """queue P[2] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(5);
  prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); }
}
queue D[2] : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(5);
  decode (prompt) from src { hold kv (prompt) { transfer (prompt) from src to kv (prompt); run (o); } }
}
queue gw : gateway { route { choose i in 2 by (i); choose j in 2 by (j); P[i].prefill (prompt); CALL } }
D pull P latency 0.5 share maxmin;
workload { arrive poisson(1); hidden o; turn { set prompt = 10; set o = 3; } session { turn; request gw; end; } }
"""


def test_the_disaggregated_program_links():
    compile_src(PD.replace("CALL", "D[j].decode (prompt) from P[i];"))


@pytest.mark.parametrize("call, message", [
    ("D[j].decode (prompt) from ⟨Z[i];", "`from Z[…]`: no queue or pool `Z` is declared"),
    ("D[j].decode (prompt) from ⟨Pp[i];", "`from Pp[…]`: no queue or pool `Pp` is declared (did you mean `P`?)"),
    ("D[j].decode (prompt) from ⟨Z;", "`from Z`: no queue or pool `Z` is declared"),
])
def test_an_entry_call_from_an_undeclared_name_says_so(call, message):
    """Mutation: without the check in QueueRewriter.source the call was expanded with `Z` as a pool named
    outright, and the entry's read said "`D` pulls from `P`, and this entry was called `from Z[i]`", at the
    entry's `transfer`, without saying that `Z` is declared nowhere."""
    refused(PD.replace("CALL", call), message)


def test_an_entry_call_from_a_declared_pool_is_still_told_as_the_wrong_source():
    # a pool named outright is a source the call may name; the entry pulls from `P`, so it is still refused
    src = PD.replace("queue P[2]", "pool Q { cap 4; }\nqueue P[2]").replace("CALL", "D[j].decode (prompt) from Q;")
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src)
    assert "`D.decode` is called `from Q`, and `D` pulls from `P`" in str(info.value)


S = "stage s : fifo;\nworkload { arrive poisson(1); }\n"


@pytest.mark.parametrize("src, message", [
    (S + "session { set x = ⟨log(2); end; }\n", "unknown function `log` (did you mean `ln`, the natural "
     "logarithm?)"),
    (S + "session { set x = ⟨power(2, 3); end; }\n", "unknown function `power` (did you mean `pow`?)"),
    (S + "session { set x = ⟨log10(2); end; }\n", "unknown function `log10`: the language has no `log10`; the "
     "logarithm to base 10 is `ln(x) / ln(10)`"),
    (S + "session { set x = ⟨round(2.5); end; }\n", "unknown function `round`: the language has no `round`; "
     "rounding to the nearest is `floor(x + 0.5)`"),
    # a `let` and a constant position: the unknown function, not "not a constant: it reads `log(…)`"
    ("let x = ⟨log(2);\n" + S + "session { end; }\n", "unknown function `log` (did you mean `ln`"),
    ("let x = ⟨g(2);\n" + S + "session { end; }\n", "unknown function `g`"),
    ("stage s : fifo;\nworkload { arrive poisson(⟨log(2)); }\nsession { end; }\n", "unknown function `log`"),
    # another dialect's word keeps its own message, in a `let` too
    ("let x = ⟨cost(2);\n" + S + "session { end; }\n", "`cost(…)` is not part of this language"),
    # a misspelling of the language's own function, as before
    (S + "session { set x = ⟨sqr(2); end; }\n", "unknown function `sqr` (did you mean `sqrt`?)"),
])
def test_an_unknown_function_points_to_the_languages_own(src, message):
    """language.txt §2's functions are min, max, abs, floor, ceil, sqrt, exp, ln and pow. Mutation: without
    names.function_hint the first four said only "unknown function `…`"; without Context.unknown_function in
    the folding of constants the `let`s said "`let x` is not a constant: it reads `log(…)`"."""
    refused(src, message)


def test_a_let_reading_an_observable_is_still_not_a_constant():
    refused("pool kv { cap 4; }\nlet x = ⟨used(kv);\n" + S + "session { end; }\n",
            "`let x` is not a constant: it reads `used(…)`")


def test_ln_is_the_logarithm_the_message_points_to():
    # the replacement the message offers links and folds to the natural logarithm
    program = compile_src("let x = ln(2) / ln(10);\nstage s : fifo;\nworkload { arrive poisson(x); }\n"
                          "session { run s (1); end; }\n")
    assert abs(program.workload.arrive.rate - 0.30102999566398120) < 1e-15


STEP = ("pool kv { cap 100; admit via E; }\nstage E : step { budget 10; cost 0.01; memory kv; }\n"
        "workload { arrive poisson(1); }\nsession { hold kv (10) { RUN } end; }\n")


@pytest.mark.parametrize("run, message", [
    ("run E ⟨foo (1);", "unexpected `foo`: a run's mode on a step stage is `prefill` or `decode`; `foo` is not a "
     "run mode: `run E decode (work);`, or without a mode `run E (work);`"),
    ("run E, E ⟨foo (1);", "`foo` is not a run mode: `run E, E decode (work);`"),
    ("run E[0] ⟨foo (1);", "`foo` is not a run mode: `run E[0] decode (work);`"),
    # a misspelt mode: the closest, as before
    ("run E ⟨decodeing (1);", "a run's mode on a step stage is `prefill` or `decode` (did you mean `decode`?); "
     "`decodeing` is not a run mode"),
    # no `(` after the word: the work's parentheses, as before
    ("run E ⟨foo;", "unexpected `foo`: `run` takes its work in parentheses after the stage, `run E (work);`"),
])
def test_a_word_between_the_stage_and_the_work_is_no_run_mode(run, message):
    """Mutation: without the second half of the run-mode hint in `_clause_out_of_order` the first three said
    "`run` takes its work in parentheses after the stage" of a run whose work is in parentheses."""
    refused(STEP.replace("RUN", run), message)


def test_a_run_with_a_mode_links():
    assert compile_src(STEP.replace("RUN", "run E decode (1);")) is not None
