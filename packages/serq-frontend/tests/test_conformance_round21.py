"""Conformance of the text syntax at its lexical and grammatical corners: language.txt §2 (the grammar, and
the Expressions paragraph), the item syntax of program-reference.txt and pool-reference.txt in this
dialect, and docs/language.md (Lexical, Expressions, and the rules it chose where the text is silent).

Checklist. Each rule: where it is written; the variants; "covered" names the test that already held it,
"new" a test here; "fixed" a disagreement fixed in the commit that added its test.

Lexical (docs/language.md, Lexical; the text writes numbers such as 1e5, 0.5, .5 and 2e-5 in its programs)
  L1  number: 1, 1.0, .5, 5., 1e3, 1E-3, 1E+3 fold to their value ........ covered test_ascii_literals
  L2  number: 1.e3, .5e1, 00012 (leading zeros), the greatest double ....... new test_number_literals
  L3  number: other scripts' digits refused ............................... covered test_ascii_literals
  L4  number: 1_000, 0x10, 1e, 1.5.3, 2x refused, one message at the number . new, fixed (it was
      "missing `;` (found `_000` next)" one column on, at the part after the number)
  L5  name: leading underscore, `_`, `__`, digits after the first ........ new test_names
  L6  name: a digit first refused ........................................ new test_names_refused
  L7  name: not ASCII refused (U+00E9) .................................... covered test_audit_frontend;
      new here as a name of an attribute
  L8  comment `//` to the end of the line, between any two tokens ......... covered test_parser (a line's
      end); new test_comments_between_tokens (inside an expression, an index, a hold's header)
  L9  comment at the end of the file without a newline; a file of one comment, an empty file . new
  L10 `/* … */` and `#` are no comment: refused at the `/*` or `#` ........ new, fixed (the message was
      "unexpected `/` (expected `}`, a name)" and "unexpected character `#`")
  L11 blanks: space, tab, form feed, LF, CRLF between any two tokens ....... CRLF covered
      test_line_separators, test_hostile_round6_carriage_return; new test_blanks (byte-identical IR), and
      test_blanks_around_every_punctuation over every production's program of test_conformance_syntax
  L12 vertical tab, no-break space refused ................................ covered test_diagnostics,
      test_audit_frontend
  L13 string: a `//` inside is no comment ................................. new test_string_holds_slashes
  L14 keywords are names where no keyword can stand (attributes, lets, pools, stages named cap, block,
      evict, seed, hold, loop, run, set, in, by, else, from) ............... covered test_parser (prefill,
      queue); new test_keywords_as_names, test_every_grammar_word_names_an_attribute (all 88 words)
  L14b a word that begins a statement is a keyword a definition or parameter may not take ......... new,
      fixed: `record` was missing from the language's keywords (`def record(a) { … }` linked, and no
      statement could call it)
  L14c a statement definition named like a statement's keyword is refused at its name, not at its use's
      parse error ............................................................. new, fixed (the error was
      at the use: "unexpected `(` (expected a name)")
  L15 `&`, `|` alone refused, naming `&&`, `||`; `**` refused naming pow ... new, fixed (the messages
      were "unexpected character `&`" and "unexpected `*`")
Grammar (language.txt §2 `program := item*` and the productions)
  G1  every production compiles in a minimal program ...................... covered test_conformance_syntax
  G2  `;` required after let, use, def = e, stage (plain kind), share, gauge, a statement . covered
      test_missing_semicolon_before_a_statement, test_diagnostics; new test_semicolons (let, a statement)
  G3  no `;` after an item or statement that ends in `}` (pool, workload, session, run, branch, loop) .
      covered test_equals_and_semicolon_habits (branch); new for the others
  G4  `;` optional after a hold and after a step kind (docs/language.md) ... covered test_parser (step);
      new test_optional_semicolons (byte-identical IR)
  G5  no empty statement (`;;`), no `;` where an item begins ............... new
  G5b `else` only right after a branch's first block, once ................. new, fixed (a second `else`
      offered `release`, an `else` after a loop or a hold was "unexpected `{` (expected `(`, …)")
  G6  `( e , … )` lists take no trailing comma: call arguments, def parameters, hold pools, at admission
      bindings, hidden, evict by, choose by ................................ new test_trailing_commas
  G7  empty blocks: session, loop, branch and else, pool, workload, run { } . new test_empty_blocks
  G8  order of a hold's clauses before the block (reserve after its pool; reuse and at admission in
      either order), after it cache then lease ............................. new; cache after lease
      refused (test_cache_after_lease)
  G9  order of pool options, step fields, run fields, workload items: any (the text lists run's fields
      with defaults, pool options and workload items as `*`; the step's fields are read so too) .. run
      covered by docs and test_link; new byte-identical IR for all four
  G10 a repeated clause or item refused at the second: pool cap, evict, preempt, queue; step budget,
      memory, serve; run horizon; arrive, turn, init, hidden; workload, session, run block; reuse, at
      admission, reserve ....................................................... covered for serve
      (round19), share (syntax), workload (round19); new for the rest
  G11 a family index written with blanks or line breaks, in a declaration, a hold, an observable, a run .
      new test_family_index_blanks (byte-identical IR)
  G12 a parenthesised expression wherever an expression goes (cap, block, fifo count, family size,
      arrive, run fields, a hold's units and cache, a guard, an aggregate's count and body, choose's n
      and keys, an index) ................................................... new (byte-identical IR), and
      test_every_number_parenthesised_twice over every production's program
  G13 unary chains: --1, - - 1, !!2, !-1, -!0, 2--1, -max(1, 2) ............ new test_folded
  G14 precedence of each pair of adjacent levels (?:, ||, &&, comparisons, + -, * / %, unary) .. covered
      test_parser (one tree); new test_folded, each pair with a value that tells the two readings apart
  G15 left associativity of - / % and of mixed * / %, of comparisons and equalities .. stated in
      docs/language.md (`3 > 2 > 1` is 0, `2 - 3 - 4` is -5), new test_folded
  G16 the conditional nests to the right, in either arm; an aggregate is an atom . new test_folded
  G17 the evaluator reads the tree the folding reads: the same expressions over an attribute, observed in
      a one-session run (and a draw binds as an atom); `serq fmt` keeps each reading .. new test_evaluated,
      test_folded
  G18 preempt by (…) takes `requeue head | tail` only whole (pool-reference: `[requeue head | requeue
      tail]`): `preempt by (k) tail;` refused ................................ new
Counts: 36 rules; 4 covered whole before (L1, L3, L12, G1), 10 covered in part and completed here (L7,
L8, L11, L14, G2, G3, G4, G9, G10, G14), 22 newly covered. 7 disagreements: one of acceptance (L14b, a
definition named `record` linked), fixed in serq_frontend.names; six in the message of a refusal (L4,
L10, L14c, L15, G5b, G8's `cache` after `lease` and a second `lease`), fixed in serq_frontend.parser.
Where the text is silent (G8, G9 the order of clauses, G6 trailing commas, G7 empty blocks)
docs/language.md says what this frontend chose.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_frontend.fmt import format_source
from sqhelpers import SERQ, compile_src, ir_bytes, refused
from syntax_programs import PD, PROGRAMS

pytestmark = pytest.mark.timeout(60)

BASE = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"


def folded(expr: str) -> float:
    """The value the `let a = expr;` folds to."""
    (c,) = compile_src(f"let a = {expr};\n" + BASE).constants
    assert c.name == "a"
    return float(c.value)  # (inf is the IR's "inf")


def same_ir(a: str, b: str) -> None:
    assert ir_bytes(compile_src(a)) == ir_bytes(compile_src(b))


# -- L2, L4: numbers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, value", [("1", 1.0), ("1.0", 1.0), (".5", 0.5), ("5.", 5.0), ("1e3", 1000.0),
                                         ("1E-3", 0.001), ("1.e3", 1000.0), (".5e1", 5.0), ("00012", 12.0),
                                         ("1.7976931348623157e308", 1.7976931348623157e308)])
def test_number_literals(text, value):
    assert folded(text) == value


@pytest.mark.parametrize("text", ["1_000", "0x10", "1e", "1.5.3", "2x", "1e3e3"])
def test_malformed_numbers_are_one_error_at_the_number(text):
    refused(f"let a = ⟨{text};\n" + BASE, f"`{text}` is not a number: a number is decimal digits")
    # in a session's expression too, and in the middle of one
    refused(BASE.replace("run s (1)", f"run s (1 + ⟨{text})"), f"`{text}` is not a number")


def test_numbers_next_to_words_the_grammar_reads_on():
    # a number followed by a keyword without a blank is two tokens where the grammar wants both: not an error
    same_ir("pool kv[2] { cap 4; }\n" + BASE.replace("run s (1);", "choose j in 2by (used(kv[j])); run s (1);"),
            "pool kv[2] { cap 4; }\n" + BASE.replace("run s (1);", "choose j in 2 by (used(kv[j])); run s (1);"))


# -- L5 – L7: names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["_x", "_", "__", "x1_2", "X_", "a0b9"])
def test_names(name):
    p = compile_src(BASE.replace("run s (1);", f"set {name} = 2; run s ({name});"))
    assert name in [a.name for a in p.attributes]


def test_names_refused():
    refused(BASE.replace("run s (1);", "set ⟨1x = 2; run s (1);"), "unexpected `1`: `set` names the attribute it sets")
    refused(BASE.replace("run s (1);", "set ⟨\u00e9 = 2; run s (1);"), "a program is ASCII outside its strings")


# -- L8 – L10, L13: comments ---------------------------------------------------------------------------


def test_comments_between_tokens():
    plain = "pool kv[2] { cap 4; }\n" + BASE.replace("run s (1);", "hold kv[1] (2) { run s (1 + 2); }")
    commented = ("pool kv // a family\n[ // of two\n2 ] { cap // its\n4; }\n"
                 + BASE.replace("run s (1);", "hold kv[ // member\n1] (2) // units\n{ run s (1 + // one\n2); }"))
    same_ir(plain, commented)


def test_comment_at_the_end_without_a_newline():
    same_ir(BASE, BASE + "// the end")
    same_ir(BASE, BASE.rstrip("\n") + "  // the end")
    assert compile_src("// nothing else").session == []
    assert compile_src("").session == []


@pytest.mark.parametrize("src", [
    BASE.replace("run s (1);", "⟨/* a comment of C */ run s (1);"),
    BASE.replace("run s (1);", "run s (1 ⟨/* one */);"),
    BASE.replace("run s (1);", "run s (2 ⟨/* one */ * 3);"),
])
def test_c_comments_are_no_comments(src):
    refused(src, "`/*` begins no comment: a comment runs from `//` to the end of the line")


def test_hash_is_no_comment():
    refused("⟨# a comment of the shell\n" + BASE, "unexpected character `#`: a comment runs from `//`")


def test_string_holds_slashes():
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src('use "no//such.sq";\n' + BASE)
    assert "no//such.sq" in str(info.value).splitlines()[0]


# -- L11: blanks -------------------------------------------------------------------------------------


def test_blanks():
    plain = "pool kv { cap 4; }\n" + BASE.replace("run s (1);", "hold kv (2) { run s (1 + 2); }")
    for sep in ("\t", "\f", "\n", "\r\n", " \t\f\r\n "):
        spaced = plain.replace(" ", sep)
        same_ir(plain, spaced)
    tight = ("pool kv{cap 4;}stage s:delay;workload{arrive poisson(1);}session{hold kv(2){run s(1+2);}}"
             "run{horizon 5;}")
    same_ir(plain, tight)


def _spread(src: str, before: str) -> str:
    """``src`` with ``before`` and a tab before every punctuation token (a `.` in a number excepted) and a blank
    after it, outside its strings."""
    parts = src.split('"')
    parts[::2] = [re.sub(r"([\[\](),;:{}]|\.(?!\d))", lambda m: f"{before}\t{m.group(1)} ", p) for p in parts[::2]]
    return '"'.join(parts)


@pytest.mark.parametrize("before", [" \n", " // a comment\n", "\r\n", " // c\r\n"])
@pytest.mark.parametrize("name", sorted(PROGRAMS) + ["PD"])
def test_blanks_around_every_punctuation(name, before):
    """L8, L11, G11: every production's minimal program (test_conformance_syntax's), the disaggregated path
    with queues, roles, entry calls and a pull included, compiles spread over lines (LF or CRLF, a comment
    ending each) to the same IR."""
    src = PD if name == "PD" else PROGRAMS[name]
    spread = _spread(src, before)
    assert spread.count("\t") >= src.count("\t") + 10
    if "\r" in before:  # a file's line ends are one kind: CRLF throughout
        spread = spread.replace("\r\n", "\n").replace("\n", "\r\n")
    assert ir_bytes(compile_src(spread)) == ir_bytes(compile_src(src))


# -- L14: keywords as names -----------------------------------------------------------------------------


def test_keywords_as_names():
    p = compile_src("let cap = 2;\nlet loop = 3;\npool block { cap cap; }\nstage run : delay;\nstage hold : delay;\n"
                    "workload { arrive poisson(1); }\nsession { set evict = 1; set seed = 2; set in = 3; set by = 4; "
                    "set else = 5; set from = 6; hold block (1) { run run (loop + in); } run hold (by + else); }\n")
    assert [c.name for c in p.constants] == ["cap", "loop"]
    assert [x.name for x in p.pools] == ["block"] and p.pools[0].cap == 2
    assert [x.name for x in p.stages] == ["run", "hold"]
    assert {"evict", "seed", "in", "by", "else", "from"} <= {a.name for a in p.attributes}


GRAMMAR_WORDS = sorted({w for f in (Path(serq_frontend.__file__).parent / "grammar").glob("*.lark")
                        for w in re.findall(r'"([a-z]+)"', re.sub(r"//[^\n]*", "", f.read_text()))})


@pytest.mark.parametrize("word", GRAMMAR_WORDS)
def test_every_grammar_word_names_an_attribute(word):
    """L14: each word of the grammar (read from its files) is a name where no keyword can stand: an attribute
    set and read, except `admission`, a context variable, and `computed` (a pool's `cache computed`), a built-in
    attribute (language.txt §2: such names are the language's): read, not set."""
    src = BASE.replace("run s (1);", f"set {word} = 1; run s ({word});")
    if word == "admission":
        refused(src.replace("set admission", "⟨set admission"), "`admission` is a context variable")
    elif word == "computed":
        refused(src.replace("set computed", "⟨set computed"), "`computed` is a built-in attribute")
        read = compile_src(BASE.replace("run s (1);", "run s (computed + 1);"))
        assert "computed" in [a.name for a in read.attributes if a.builtin]
    else:
        assert word in [a.name for a in compile_src(src).attributes]


def test_record_is_a_keyword():
    """L14b: `record` begins a statement, so a definition may not take it (program-reference.txt, def: NAME
    'Not a keyword'; PARAM likewise): `def record(a) { … }` was accepted and no statement could call it
    (`record(1);` is the start of a record, "unexpected `(` (expected a name)"), and `def record(a) = a;`
    was used in an expression."""
    refused("def ⟨record(a) = a;\n" + BASE.replace("run s (1);", "run s (record(1));"),
            "`record` is a keyword; a definition needs another name")
    refused("def f(⟨record) = record + 1;\n" + BASE.replace("run s (1);", "run s (f(1));"),
            "`record` cannot be a parameter of `f`: it is a keyword")


@pytest.mark.parametrize("word", ["branch", "choose", "drop", "end", "grow", "hold", "load", "loop", "mark",
                                  "observe", "record", "release", "request", "set", "transfer", "turn"])
def test_a_definition_named_like_a_statement_keyword(word):
    """L14c: a statement definition named like a statement's keyword is refused at its name, as the linker
    refuses it (program-reference.txt, def: NAME 'Not a keyword'), although its use `hold(1);` begins that
    statement and does not parse: the parse error was at the use ("unexpected `(` (expected a name)", and
    "unexpected `;` (expected `{`)" for `branch(1);`)."""
    refused(f"def ⟨{word}(a) {{ run s (a); }}\n" + BASE.replace("run s (1);", f"{word}(1);"),
            f"`{word}` is a keyword; a definition needs another name")


# -- L15: other languages' operators ----------------------------------------------------------------------


@pytest.mark.parametrize("src, message", [
    ("let a = 1 ⟨& 1;", "unexpected character `&`: the logical and is `&&`"),
    ("let a = 1 ⟨| 1;", "unexpected character `|`: the logical or is `||`"),
    ("let a = 2 ⟨** 3;", "unexpected `**`: a power is `pow(x, y)`"),
])
def test_other_languages_operators(src, message):
    refused(src + "\n" + BASE, message)


# -- G2 – G5: semicolons ------------------------------------------------------------------------------


def test_semicolons():
    refused("let a = 1⟨\n" + BASE, "missing `;` (found `stage` next)")
    refused(BASE.replace("run s (1);", "run s (1)⟨"), "missing `;` (found `}` next)")


@pytest.mark.parametrize("src", [
    "pool p { cap 2; }⟨;\n" + BASE,
    "stage s : delay;\nworkload { arrive poisson(1); }⟨;\nsession { run s (1); }\n",
    BASE.replace("session { run s (1); }", "session { run s (1); }⟨;"),
    BASE.replace("run { horizon 5; }", "run { horizon 5; }⟨;"),
    BASE.replace("run s (1);", "loop { run s (1); }⟨;"),
    BASE.replace("run s (1);", "branch (1) { run s (1); } else { run s (2); }⟨;"),
])
def test_no_semicolon_after_a_block(src):
    refused(src, "unexpected `;` after a block: a statement or item that ends in `}` takes no `;`")


def test_optional_semicolons():
    hold = "pool kv { cap 4; }\n" + BASE.replace("run s (1);", "hold kv (1) { run s (1); } cache (1)")
    same_ir(hold, hold.replace("cache (1)", "cache (1);"))
    step = "stage e : step { budget 4; cost 1; }\nworkload { arrive poisson(1); }\nsession { run e prefill (1); }\n"
    same_ir(step, step.replace("cost 1; }", "cost 1; };"))


def test_no_empty_statement():
    refused(BASE.replace("run s (1);", "run s (1);⟨;"), "unexpected `;`")
    refused("⟨;\n" + BASE, "unexpected `;`")


# -- G6: trailing commas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("src", [
    "def f(a, b) = a + b;\n" + BASE.replace("run s (1);", "run s (f(1, 2,⟨));"),
    "def f(a,⟨) = a;\n" + BASE,
    "pool p { cap 2; }\n" + BASE.replace("run s (1);", "hold p (1), ⟨{ run s (1); }"),
    "pool p { cap 2; }\n" + BASE.replace("run s (1);", "hold p (h) at admission (h = 1,⟨) { run s (1); }"),
    BASE.replace("arrive poisson(1);", "arrive poisson(1); hidden n,⟨; init { set n = 1; }"),
    "pool p { evict by (age,⟨); }\n" + BASE,
    "pool p[2] { cap 2; }\n" + BASE.replace("run s (1);", "choose j in 2 by (used(p[j]),⟨); run s (1);"),
    BASE.replace("run s (1);", "run s (max(1, 2,⟨));"),
])
def test_trailing_commas(src):
    refused(src, "unexpected")


# -- G7: empty blocks --------------------------------------------------------------------------------------


def test_empty_blocks():
    p = compile_src("pool p { }\nstage s : delay;\nworkload { }\nsession { branch (1) { } else { } "
                    "hold p (1) { } run s (1); }\nrun { }\n")
    assert [x.name for x in p.pools] == ["p"]
    assert compile_src("stage s : delay;\nworkload { arrive poisson(1); }\nsession { }\n").session == []
    compile_src("stage s : delay;\nworkload { arrive poisson(1); }\nsession { loop { } }\n")


@pytest.mark.parametrize("body", [
    "branch (1) { run s (1); } else { run s (2); } ⟨else { run s (3); }",
    "run s (1); ⟨else { run s (2); }",
    "loop { run s (1); } ⟨else { run s (2); }",
    "hold p (1) { run s (1); } ⟨else { run s (2); }",
])
def test_else_only_after_a_branch(body):
    refused("pool p { cap 2; }\n" + BASE.replace("run s (1);", body),
            "`else` stands right after a branch's block, once: `branch (test) { … } else { … }`")


def test_else_of_a_branch_still_told_to_take_a_block():
    refused(BASE.replace("run s (1);", "branch (1) { run s (1); } else ⟨branch (0) { run s (2); }"),
            "`else` takes a block, `else { … }`")


# -- G8, G9: the order of clauses -------------------------------------------------------------------------

def hold(h: str, after: str) -> str:
    """The base program whose session holds ``h`` (pools p and q) around a run, ``after`` after its block."""
    return "pool p { cap 9; }\npool q { cap 9; }\n" + BASE.replace("run s (1);", f"hold {h} {{ run s (1); }} {after}")


def test_hold_clause_order():
    reuse_first = hold(h="p (u) reserve (2), q (1) reuse (1) at admission (u = 1)", after="cache (1);")
    at_first = hold(h="p (u) reserve (2), q (1) at admission (u = 1) reuse (1)", after="cache (1);")
    same_ir(reuse_first, at_first)
    refused(hold(h="p ⟨reserve (2) (1)", after=""), "unexpected `reserve`")


def test_cache_after_lease():
    refused(hold(h="p (1), q (1)", after="lease q (1) ⟨cache (1);"),
            "`cache` comes before `lease`: `hold P (units) { … } cache (units) lease P (time)`")
    refused(hold(h="p (1), q (1)", after="cache (1) ⟨cache (2);"), "this hold has a `cache` already")
    refused(hold(h="p (1), q (1)", after="lease p (1) ⟨lease q (1);"), "this hold has a `lease` already")
    refused(hold(h="p (1), q (1)", after="cache (1) lease p (1)\n  ⟨lease q (1);"), "this hold has a `lease` already")
    refused(BASE.replace("run s (1);", "run s (1); ⟨cache (1);"),
            "`cache` is a hold's clause, after its block: `hold P (units) { … } cache (units)`")


def test_field_and_option_order():
    same_ir("pool p { cap 9; block 2; evict lru; preempt lifo; queue fifo; }\n" + BASE,
            "pool p { queue fifo; preempt lifo; evict lru; block 2; cap 9; }\n" + BASE)
    step = ("pool kv {{ cap 9; }}\nstage e : step {{ {f} }}\nworkload {{ arrive poisson(1); }}\n"
            "session {{ run e prefill (1); }}\n")
    same_ir(step.format(f="budget 4; cost 1; chunk 2; serve decode first; memory kv;"),
            step.format(f="memory kv; serve decode first; chunk 2; cost 1; budget 4;"))
    same_ir(BASE.replace("run { horizon 5; }", "run { horizon 5; warmup 1; seed 3; }"),
            BASE.replace("run { horizon 5; }", "run { seed 3; warmup 1; horizon 5; }"))
    wl = "stage s : delay;\nworkload {{ {w} }}\nsession {{ run s (n); }}\n"
    same_ir(wl.format(w="arrive poisson(1); hidden n; init { set n = 1; } turn { set n = 2; }"),
            wl.format(w="turn { set n = 2; } init { set n = 1; } hidden n; arrive poisson(1);"))


# -- G10: repeated clauses ---------------------------------------------------------------------------------


@pytest.mark.parametrize("src, message", [
    ("pool p { cap 2; ⟨cap 3; }\n" + BASE, "pool `p`: `cap` is given twice"),
    ("pool p { evict lru; ⟨evict lru; }\n" + BASE, "pool `p`: `evict` is given twice"),
    ("pool p { preempt none; ⟨preempt lifo; }\n" + BASE, "pool `p`: `preempt` is given twice"),
    ("pool p { queue fifo; ⟨queue fifo; }\n" + BASE, "pool `p`: `queue` is given twice"),
    ("stage e : step { budget 2; ⟨budget 3; cost 1; }\n" + BASE, "`budget` is given twice in this step stage"),
    ("pool kv { cap 9; }\nstage e : step { cost 1; memory kv; ⟨memory kv; }\n" + BASE,
     "`memory` is given twice in this step stage"),
    (BASE.replace("horizon 5;", "horizon 5; ⟨horizon 6;"), "`horizon` is given twice in the run block"),
    (BASE.replace("arrive poisson(1);", "arrive poisson(1); ⟨arrive poisson(2);"), "the workload has two `arrive`s"),
    (BASE.replace("arrive poisson(1);", "arrive poisson(1); turn { set n = 1; } ⟨turn { set n = 2; }"),
     "the workload has two `turn`s"),
    (BASE.replace("arrive poisson(1);", "arrive poisson(1); init { set n = 1; } ⟨init { set n = 2; }"),
     "the workload has two `init`s"),
    (BASE.replace("arrive poisson(1);", "arrive poisson(1); hidden n; hidden ⟨n; init { set n = 1; }"),
     "`n` is hidden twice"),
    (BASE.replace("session {", "⟨workload { }\nsession {"), "duplicate workload"),
    (BASE + "⟨session { run s (1); }\n", "a second `session`: a program has one"),
    (BASE + "⟨run { seed 2; }\n", "a second `run { … }` block"),
    (hold(h="p (1) reuse (0) ⟨reuse (0)", after="cache (1);"), "`reuse` is given twice"),
    (hold(h="p (u) at admission (u = 1) ⟨at admission (v = 1)", after=""), "`at admission` is given twice"),
    (hold(h="p (1) reserve (1) ⟨reserve (1)", after=""), "`reserve` is given twice for one pool"),
    ("pool p { preempt by (admission) ⟨tail; }\n" + BASE, "unexpected `tail`: it follows `requeue`, `preempt by (…) "
     "requeue tail;`"),
])
def test_repeated_clauses(src, message):
    refused(src, message)


# -- G11, G12: blanks in an index, parentheses around an expression ----------------------------------------


def test_family_index_blanks():
    plain = ("pool kv[2] { cap 4; }\nstage t[2] : delay;\n"
             + BASE.replace("run s (1);", "hold kv[1] (1) { run t[0] (1); } observe u = used(kv[0]);"))
    spaced = ("pool kv [ 2 ] { cap 4; }\nstage t\n[\n2\n] : delay;\n"
              + BASE.replace("run s (1);", "hold kv [\n1 ] (1) { run t [ 0 ] (1); } observe u = used( kv\t[ 0 ] );"))
    same_ir(plain, spaced)


NUMBER = r"(?<![A-Za-z_0-9.])(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?![A-Za-z_0-9.])"


@pytest.mark.parametrize("name", sorted(PROGRAMS) + ["PD"])
def test_every_number_parenthesised_twice(name):
    """G12 over every production: each number of test_conformance_syntax's programs written `((n))` (a family
    size, a fifo count, a rate, a run field, a latency, an aggregate's count, a key, a cost, a hold's amounts,
    a transfer's, a record's column...) compiles to the same IR: a number stands where an expression does."""
    src = PD if name == "PD" else PROGRAMS[name]
    parts = src.split('"')
    parts[::2] = [re.sub(NUMBER, lambda m: f"(({m.group(0)}))", p) for p in parts[::2]]
    wrapped = '"'.join(parts)
    assert wrapped != src
    assert ir_bytes(compile_src(wrapped)) == ir_bytes(compile_src(src))


def test_parentheses_wherever_an_expression_goes():
    plain = ("let n = 2;\npool kv[2] { cap 4; block 1; }\nstage f : fifo(2);\n"
             "stage s : delay;\nworkload { arrive poisson(1); }\n"
             "session { set j = 1; hold kv[j] (1) { run f (1); } cache (1); branch (j) { run s (2); } "
             "observe m = max k in n (used(kv[k])); choose i in 2 by (used(kv[i]), i); run s (j); }\n"
             "run { horizon 5; seed 3; }\n")
    paren = ("let n = (2);\npool kv[(2)] { cap (4); block ((1)); }\nstage f : fifo((2));\n"
             "stage s : delay;\nworkload { arrive poisson((1)); }\n"
             "session { set j = (1); hold kv[(j)] ((1)) { run f ((1)); } cache ((1)); branch ((j)) { run s ((2)); } "
             "observe m = max k in (n) ((used(kv[(k)]))); choose i in (2) by ((used(kv[i])), (i)); run s (((j))); }\n"
             "run { horizon (5); seed (3); }\n")
    same_ir(plain, paren)


# -- G13 – G16: unary operators, precedence, associativity, the conditional --------------------------------

# each value is worked by hand from the precedence and associativity docs/language.md states; the other
# reading, in the comment, gives another value, so the case tells the two apart
CASES = [
    # G13 unary chains
    ("--1", 1.0), ("- - 1", 1.0), ("!!2", 1.0), ("!-1", 0.0), ("-!0", -1.0), ("2--1", 3.0), ("-max(1, 2)", -2.0),
    ("- -(3)", 3.0),
    # G14 precedence, adjacent levels
    ("0 || 0 ? 5 : 6", 6.0),  # (0 || 0) ? 5 : 6; 0 || (0 ? 5 : 6) is 1
    ("1 ? 2 : 3 + 10", 2.0),  # 1 ? 2 : (3 + 10); (1 ? 2 : 3) + 10 is 12
    ("1 || 0 && 0", 1.0),  # 1 || (0 && 0); (1 || 0) && 0 is 0
    ("0 && 1 || 1", 1.0),  # (0 && 1) || 1; 0 && (1 || 1) is 0
    ("1 && 2 == 2", 1.0),  # 1 && (2 == 2); (1 && 2) == 2 is 0
    ("2 == 2 && 3", 1.0),
    ("1 + 1 < 3", 1.0),  # (1 + 1) < 3; 1 + (1 < 3) is 2
    ("3 < 1 + 3", 1.0),  # 3 < (1 + 3); (3 < 1) + 3 is 3
    ("1 + 2 * 3", 7.0), ("7 - 5 % 3", 5.0),  # (7 - 5) % 3 is 2
    ("!0 * 5", 5.0),  # (!0) * 5; !(0 * 5) is 1
    ("!2 + 1", 1.0),  # (!2) + 1; !(2 + 1) is 0
    ("-1 < 0", 1.0), ("-2 * -3", 6.0),
    # G15 left associativity
    ("2 - 3 - 4", -5.0), ("8 / 4 / 2", 1.0), ("7 % 4 % 2", 1.0), ("2 * 3 % 4", 2.0),  # 2 * (3 % 4) is 6
    ("6 / 2 * 3", 9.0), ("1 - 2 + 3", 2.0),  # 1 - (2 + 3) is -4
    ("3 > 2 > 1", 0.0), ("2 == 2 == 2", 0.0),  # 2 == (2 == 2) is 0 too; (2 == 2) == 1 below tells
    ("1 < 2 == 1", 1.0),  # (1 < 2) == 1; 1 < (2 == 1) is 0
    ("3 == 3 > 0", 1.0),  # (3 == 3) > 0; 3 == (3 > 0) is 0
    ("1 || 0 || 0", 1.0), ("1 && 1 && 0", 0.0),
    ("8 / 4 % 3", 2.0),  # (8 / 4) % 3; 8 / (4 % 3) is 8
    ("7 % 3 * 2", 2.0),  # (7 % 3) * 2; 7 % (3 * 2) is 1
    ("0 <= 0 < 1", 0.0),  # (0 <= 0) < 1; 0 <= (0 < 1) is 1
    ("3 >= 2 >= 2", 0.0),  # (3 >= 2) >= 2; 3 >= (2 >= 2) is 1
    ("3 != 2 != 1", 0.0),  # (3 != 2) != 1; 3 != (2 != 1) is 1
    ("2 == 2 != 2", 1.0),  # (2 == 2) != 2; 2 == (2 != 2) is 0
    ("!1 < 2", 1.0),  # (!1) < 2; !(1 < 2) is 0
    # parentheses override each of the above
    ("2 - (3 - 4)", 3.0), ("8 / (4 / 2)", 4.0), ("(1 || 0) && 0", 0.0), ("1 + (1 < 3)", 2.0), ("!(0 * 5)", 1.0),
    ("(1 ? 2 : 3) + 10", 12.0), ("0 || (0 ? 5 : 6)", 1.0), ("1 < (2 == 1)", 0.0), ("-(-1)", 1.0), ("!(!2)", 1.0),
    # G16 the conditional
    ("1 ? 0 : 1 ? 4 : 5", 0.0),  # 1 ? 0 : (1 ? 4 : 5); (1 ? 0 : 1) ? 4 : 5 is 5
    ("0 ? 2 : 0 ? 4 : 5", 5.0), ("0 ? 2 : 1 ? 4 : 5", 4.0),
    ("1 ? 0 ? 7 : 8 : 9", 8.0), ("(1 ? 0 : 1) ? 4 : 5", 5.0),
    ("max j in 2 (j) + 1", 2.0),  # the aggregate is an atom: (max j in 2 (j)) + 1
    # a non-zero operand is true (language.txt §2, Expressions), in every position that tests
    ("!0.5", 0.0), ("0.5 && -2", 1.0), ("0 || 0.25", 1.0), ("0.5 ? 3 : 4", 3.0), ("-0 ? 1 : 2", 2.0),
    ("-max j in 3 (j) * 2", -4.0),
]


@pytest.mark.parametrize("expr, value", CASES)
def test_folded(expr, value):
    assert folded(expr) == value
    # `serq fmt` keeps the reading: the formatted let folds to the same value
    (c,) = compile_src(format_source(f"let a = {expr};\n" + BASE)).constants
    assert float(c.value) == value


def test_evaluated():
    """G17: the simulator evaluates the tree the folding reads: each case with every number `k` written
    `(z + k)`, `z` an attribute that is 0 at run time (so nothing folds), observed in a one-session run,
    has the folded value."""
    cases = [(re.sub(NUMBER, r"(z + \g<0>)", e), v) for e, v in CASES if "j" not in e]
    # a draw is an atom: `~det(x)` binds tighter than every operator
    cases += [("~det(2) * 3", 6.0), ("-~det(2) + 1", -1.0), ("1 + ~det(2) * 3 > 6 ? 1 : 2", 1.0),
              ("!~det(0)", 1.0)]
    obs = " ".join(f"observe o{i} = {e};" for i, (e, _) in enumerate(cases))
    src = ("stage s : delay;\nworkload { arrive batch(1); }\n"
           f"session {{ set z = serial; {obs} run s (1); }}\nrun {{ horizon 5; }}\n")
    report = serq_sim.run(compile_src(src))
    for i, (e, v) in enumerate(cases):
        assert list(report.observe(f"o{i}").values) == [v], e


# -- the messages on the command line: file:line:col, the line, a caret, exit 1, no traceback --------------


@pytest.mark.parametrize("line, col, first", [
    ("session { set x = 1_000; run s (x); }", 19, "`1_000` is not a number"),
    ("session { /* no */ run s (1); }", 11, "`/*` begins no comment"),
    ("session { run s (max(1, 2,)); }", 27, "unexpected `)`"),
])
def test_command_line_messages(tmp_path, line, col, first):
    p = tmp_path / "p.sq"
    p.write_text("stage s : delay;\nworkload { arrive poisson(1); }\n" + line + "\n")
    r = subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    err = r.stderr.splitlines()
    assert err[0].startswith(f"p.sq:3:{col}: error: {first}")
    assert err[1].strip() == line and err[2].index("^") - err[1].index("s") == col - 1
    assert "Traceback" not in r.stderr
