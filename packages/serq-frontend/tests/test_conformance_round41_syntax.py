"""language.txt §2 (Syntax) and docs/language.md, Lexical, round 41: productions written in odd but legal
forms, each compiling to the IR of the same program written plainly (byte for byte, spans left out), and
the neighbouring illegal forms refused with one message at the column marked ``⟨`` (file:line:col, the line
quoted and a caret).

* Legal: comments between any two tokens ("Comments run from `//` to the end of the line"; "Blanks are …
  between any two tokens"), a comment that ends the file without a line end, CRLF line ends, a family's
  index spaced over lines (`kv [ 1 ]`), the numbers "`2e-5`, `.5`, `5.`, `1.e3`, `8010`; `007` is 7", the
  words of the grammar as attribute names ("`set in = 1;`, `set hold = 2;`"), stages named `prefill` and
  `decode` ("a stage may be called `prefill`, `decode`, …"), a definition of no parameter, empty blocks ("a
  block may be empty (`session { }`, `branch (c) { } else { }`, `pool p { }`, `workload { }`, `run { }`)"),
  the run block's settings in any order, `c ? a : b ? d : e` grouping to the right.
* Illegal: a trailing comma in a call, a `hidden` list, a definition's parameters and a hold's pools ("A
  list in parentheses or after `hidden` takes no trailing comma"), an empty statement, `/* … */` and `#`,
  a letter outside ASCII, numbers with a separator, in hexadecimal, with an exponent of no digits or two
  points, `**`, `<>`, `and`, `fifo()`, a word run on into a number (`horizon10`), a setting twice in the
  run block, a hold's `lease` before its `cache`.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(120)

PLAIN = """let a = 3;
pool p { cap 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold p (a) { run d (1); } cache (2);
  observe x = max(1, 2);
}
run { horizon 5; }
"""

COMMENTED = """let // c
  a // c
  = // c
  3 // c
  ; // c
pool // c
  p { // c
  cap // c
    4 ; // c
} // c
stage d : // c
  delay; // c
workload { arrive // c
  batch(2); } // c
session { // c
  hold p ( // c
    a ) // c
  { // c
    run d ( 1 ) ; // c
  } // c
  cache ( // c
  2 ) ; // c
  observe x = max( // c
    1, // c
    2 // c
  ); // c
} // c
run { horizon // c
  5; } // the end, and no line end after it"""

LEGAL = [
    # comments between every two tokens, the last one ending the file
    ("comments_between_every_two_tokens", COMMENTED, PLAIN),
    # CRLF line ends, and tabs
    ("crlf_and_tabs", PLAIN.replace("\n", "\r\n").replace("  ", "\t"), PLAIN),
    # the run block's settings in any order; the numbers as the language writes them: 3. and 30e-1 are 3,
    # 004 is 4, .5e1 is 5, 2. + 0. is 2
    ("numbers_and_run_settings_in_any_order",
     PLAIN.replace("let a = 3;", "let a = 30e-1 * 1.;").replace("cap 4;", "cap 004;")
     .replace("run { horizon 5; }", "run { seed 1; warmup 0.; horizon .5e1; }")
     .replace("max(1, 2)", "max(1., 2. + 0.)"),
     PLAIN.replace("run { horizon 5; }", "run { horizon 5; warmup 0; seed 1; }")),
    # a family's index spaced, over lines
    ("family_index_spaced_over_lines",
     "pool p[2] { cap 4; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { hold p\n  [\n  1\n  ] (3) { run d (1); } }\nrun { horizon 5; }\n",
     "pool p[2] { cap 4; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { hold p[1] (3) { run d (1); } }\nrun { horizon 5; }\n"),
    # the grammar's words as attribute names
    ("keywords_as_attribute_names",
     "stage d : delay;\nworkload { arrive batch(1); }\n"
     "session { set in = 1; set hold = in + 1; set cache = hold * 2; run d (cache); }\nrun { horizon 5; }\n",
     "stage d : delay;\nworkload { arrive batch(1); }\n"
     "session { set in = 1; set hold = in + 1; set cache = hold * 2; run d (cache); }\nrun { horizon 5; }\n"),
    # a definition of no parameter, used in an expression; a statement definition of none
    ("definitions_of_no_parameter",
     "def one() = 1;\ndef go() { run d (one() + one()); }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { go(); }\nrun { horizon 5; }\n",
     "stage d : delay;\nworkload { arrive batch(1); }\nsession { run d ((1) + (1)); }\nrun { horizon 5; }\n"),
    # empty blocks: a pool's options, a branch's arms, a hold's body
    ("empty_blocks",
     "pool p { }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { branch (serial == 0) { } else { } hold p (1) { } run d (1); }\nrun { horizon 5; }\n",
     "pool p { cap inf; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { branch (serial == 0) { } else { } hold p (1) { } run d (1); }\nrun { horizon 5; }\n"),
    # the conditional groups to the right
    ("conditional_groups_to_the_right",
     PLAIN.replace("max(1, 2)", "serial ? 1 : serial + 1 ? 2 : 3"),
     PLAIN.replace("max(1, 2)", "serial ? 1 : (serial + 1 ? 2 : 3)")),
    # stages named prefill and decode, run by name (a plain run; no serving form here)
    ("stages_named_prefill_and_decode",
     "stage prefill : fifo;\nstage decode : delay;\nworkload { arrive batch(1); }\n"
     "session { run prefill (1); run decode (2); }\nrun { horizon 5; }\n",
     "stage prefill : fifo;\nstage decode : delay;\nworkload { arrive batch(1); }\n"
     "session { prefill 1; decode 2; }\nrun { horizon 5; }\n"),
]


@pytest.mark.parametrize("odd, plain", [c[1:] for c in LEGAL], ids=[c[0] for c in LEGAL])
def test_odd_but_legal_forms_compile_to_the_plain_ir(odd, plain):
    assert ir_bytes(compile_src(odd)) == ir_bytes(compile_src(plain))


B = "stage d : delay;\nworkload { arrive batch(1); }\n"
R = "run { horizon 5; }\n"

REFUSED = [
    ("let a = max(1, 2,⟨);\n" + B + "session { run d (a); }\n" + R, "unexpected `)`"),
    ("stage d : delay;\nworkload { arrive batch(1); hidden n,⟨; }\nsession { set n = 1; run d (n); }\n" + R,
     "unexpected `;`"),
    ("def g(a,⟨) = a;\n" + B + "session { run d (g(1)); }\n" + R, "unexpected `)`"),
    ("pool p { cap 2; }\n" + B + "session { hold p (1), ⟨{ run d (1); } }\n" + R, "unexpected `{`"),
    (B + "session { run d (1);⟨; }\n" + R, "a stray `;`, an empty statement"),
    (B + "session { ⟨/* c */ run d (1); }\n" + R, "`/*` begins no comment"),
    (B + "session { run d (1); ⟨# c\n}\n" + R, "`#`"),
    ("let ⟨é = 1;\n" + B + "session { run d (1); }\n" + R, "a program is ASCII outside its strings and comments"),
    ("let a = ⟨1_000;\n" + B + "session { run d (a); }\n" + R, "`1_000` is not a number"),
    ("let a = ⟨0x10;\n" + B + "session { run d (a); }\n" + R, "is not a number"),
    ("let a = ⟨1e;\n" + B + "session { run d (a); }\n" + R, "is not a number"),
    ("let a = ⟨1.5.3;\n" + B + "session { run d (a); }\n" + R, "is not a number"),
    ("let a = 2 ⟨** 3;\n" + B + "session { run d (a); }\n" + R, "a power is `pow(x, y)`"),
    ("let a = 1 ⟨<> 2;\n" + B + "session { run d (a); }\n" + R, "a test of inequality is `!=`"),
    ("let a = 1 ⟨and 1;\n" + B + "session { run d (a); }\n" + R, "the logical and is `&&`"),
    ("let a = 1 ⟨= 1;\n" + B + "session { run d (a); }\n" + R, "a test of equality is `==`"),
    ("stage s : fifo(⟨);\n" + B + "session { run s (1); }\n" + R, "`fifo` takes its number of servers"),
    (B + "session { run d (1); }\nrun { ⟨horizon10; }\n", "the word `horizon` runs on into `10`"),
    (B + "session { run d (1); }\nrun { horizon 1; ⟨horizon 2; }\n", "`horizon` is given twice in the run block"),
    ("pool p { cap 2; }\n" + B + "session { hold p (1) { run d (1); } lease p (1) ⟨cache (1); }\n" + R,
     "`cache` comes before `lease`"),
    ("let a = ⟨max();\n" + B + "session { run d (a); }\n" + R, "`max` takes one argument at least, `max(a, …)`, and got none"),
    ("let a = ⟨pow(2);\n" + B + "session { run d (a); }\n" + R, "`pow` takes two arguments, `pow(x, y)`, and got 1"),
    ("let a = 1 ? 2⟨;\n" + B + "session { run d (a); }\n" + R, "unexpected `;`: a conditional is `c ? a : b`"),
    ("let a = (1⟨;\n" + B + "session { run d (a); }\n" + R, "a `)` is missing, the `(` at 1:9 is not closed"),
    ("let a = ⟨b;\nlet b = 1;\n" + B + "session { run d (a); }\n" + R, "`let a` reads `b`, declared after it"),
    ("let a = 1;\nlet ⟨a = 2;\n" + B + "session { run d (a); }\n" + R, "`a` is declared twice (first at 1:1)"),
    ("let a = sum j in ⟨2.5 (j);\n" + B + "session { run d (a); }\n" + R,
     "the count of `sum j in …` must be an integer of at least 1, not 2.5"),
    ("let b = 1;\nlet a = sum ⟨b in 2 (b);\n" + B + "session { run d (a); }\n" + R, "`b` is a name the program has already"),
    ("let a = ⟨ln(-1);\n" + B + "session { run d (a); }\n" + R, "`let a` evaluates to NaN"),
    ("let a = ⟨~exp(1);\n" + B + "session { run d (a); }\n" + R, "`let a` is not a constant: it reads the draw"),
]


@pytest.mark.parametrize("src, message", REFUSED, ids=[f"r{i}" for i in range(len(REFUSED))])
def test_illegal_forms_refused_at_their_place(src, message):
    refused(src, message)
