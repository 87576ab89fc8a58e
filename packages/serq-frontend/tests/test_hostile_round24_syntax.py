"""Syntax messages near the ones of e8c087b, c87c001, c0edf4f, 40182f9 and 57235dc, attacked.

1. ``def cache(a) { run s (a); }`` used as ``cache(1);`` was told at the use ("`cache` is a hold's clause,
   after its block"): the use parses as a call of a definition, which the block's builder refused before the
   linker could refuse the definition's name. A definition named ``cache`` is what is wrong (program-reference
   .txt, def: NAME "Not a keyword"), so the refusal is the linker's, at the definition's name; so for every
   keyword that begins no statement (``lease``, ``at``, ``by``, ``in``, ``on``, ``from``, ``to``).
2. ``preempt by (admission) tail;`` said "missing `;` (found `tail` next)": pool-reference.txt writes
   ``preempt by (expr, …) [requeue head | tail]``, so the word is told as the one that follows ``requeue``."""

from __future__ import annotations

import subprocess

import pytest
from sqhelpers import SERQ, compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)

REST = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { WORD(1); }\n"


@pytest.mark.parametrize("word", ["cache", "lease", "at", "by", "in", "on", "from", "to"])
def test_a_definition_named_like_a_keyword_is_refused_at_its_name_not_at_its_use(word):
    refused(f"def ⟨{word}(a) {{ run s (a); }}\n" + REST.replace("WORD", word),
            f"`{word}` is a keyword; a definition needs another name")


def test_the_definition_after_its_use_is_found_too():
    refused("stage s : delay;\nworkload { arrive poisson(1); }\nsession { cache(1); }\n"
            "def ⟨cache(a) { run s (a); }\n", "`cache` is a keyword; a definition needs another name")


def test_without_such_a_definition_a_misplaced_cache_keeps_its_message():
    refused("stage s : delay;\nworkload { arrive poisson(1); }\nsession { ⟨cache(1); }\n",
            "`cache` is a hold's clause, after its block: `hold P (units) { … } cache (units)`")
    refused("pool kv { cap 4; }\nstage s : delay;\nworkload { arrive poisson(1); }\n"
            "session { hold kv (1) { run s (1); } cache (1) ⟨cache (1); }\n",
            "this hold has a `cache` already")


def test_the_definition_is_named_in_serq_check_at_its_name(tmp_path):
    p = tmp_path / "x.sq"
    p.write_text("def cache(a) { run s (a); }\nstage s : delay;\nworkload { arrive poisson(1); }\n"
                 "session { cache(1); }\n")
    r = subprocess.run([SERQ, "check", str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    first, line, caret = r.stderr.splitlines()[:3]
    assert first.endswith("x.sq:1:5: error: `cache` is a keyword; a definition needs another name")
    assert line == "  def cache(a) { run s (a); }" and caret == "      ^"


POOL = "pool p {{ cap 4; preempt by ({keys}){gap}{word}; }}\nstage s : delay;\nworkload {{ arrive poisson(1); }}\n" \
       "session {{ hold p (1) {{ run s (1); }} }}\n"


@pytest.mark.parametrize("word", ["head", "tail"])
@pytest.mark.parametrize("keys, gap", [("admission", " "), ("admission, -serial", " "), ("admission", "\n  ")])
def test_a_requeue_place_without_requeue_is_told_where_it_goes(word, keys, gap):
    refused(POOL.format(keys=keys, gap=gap + "⟨", word=word),
            f"unexpected `{word}`: it follows `requeue`, `preempt by (…) requeue {word};`")
    # written as the reference says, it links (requeue head is the default)
    compile_src(POOL.format(keys=keys, gap=gap, word="requeue " + word))


def test_requeue_head_is_the_default_so_the_corrected_program_is_the_one_without_it():
    written = POOL.format(keys="admission", gap=" ", word="requeue head")
    assert ir_bytes(compile_src(written)) == ir_bytes(compile_src(written.replace(" requeue head", "")))


def test_requeue_without_its_place_keeps_its_message():
    refused(POOL.format(keys="admission", gap=" ", word="requeue⟨"), "unexpected `;`: `requeue` names where a preempted request waits again, `requeue head;` or `requeue tail;`")


# --- 3. an exponent's sign is part of the malformed number's text ---------------------------------------------------
#
# docs/language.md (Lexical): a number is decimal digits with an optional fraction and exponent, `2e-5`. `1e+`
# was told as "`1e` is not a number" (the sign left out of what the program wrote), and `1e+5e` as "`5e` is not a
# number" three columns on, as if `1e+` were an expression's first operand.

NUMBER = "let a = ⟨TEXT;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (a); }\n"


@pytest.mark.parametrize("text, word", [("1e+", "1e+"), ("1e-", "1e-"), ("1E+ 3", "1E+"), ("1e+5e", "1e+5e"),
                                        ("2.5e-1x", "2.5e-1x"), ("2e+x", "2e")])
def test_the_malformed_number_is_quoted_with_its_exponents_sign(text, word):
    refused(NUMBER.replace("TEXT", text), f"`{word}` is not a number: a number is decimal digits")


def test_a_name_before_the_sign_is_no_part_of_the_number():
    # `x2e` is a name, so `5e` after `x2e +` is the malformed number, where it stands
    refused(NUMBER.replace("⟨TEXT", "x2e + ⟨5e").replace("let a", "let x2e = 1;\nlet a"),
            "`5e` is not a number")
    refused(NUMBER.replace("⟨TEXT", "x2e+⟨5e").replace("let a", "let x2e = 1;\nlet a"), "`5e` is not a number")


@pytest.mark.parametrize("text, value", [("1e+3", "1000"), ("2.5e-1", "0.25"), ("1.e3", "1000"), ("5.", "5"),
                                         (".5", "0.5")])
def test_the_numbers_near_them_are_numbers(text, value):
    assert ir_bytes(compile_src(NUMBER.replace("⟨TEXT", text))) == ir_bytes(compile_src(NUMBER.replace("⟨TEXT",
                                                                                                        value)))


# --- 4. no `;` is missing after a `}` ------------------------------------------------------------------------------
#
# `/*`'s neighbours: a stray `*`, `/` or `+` on the line after a block was told as "missing `;` (found `*` next)" at
# the `}`, though no statement or item that ends in `}` wants a `;` (`};` is refused: "a statement or item that
# ends in `}` takes no `;`"). The error is at the stray token.

PROGRAM = "pool kv { cap 4; }\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { hold kv (1) { run s (1); }AFTER }\n"


@pytest.mark.parametrize("stray", ["*", "/", "+", "&& 1", "5"])
def test_a_stray_token_after_a_block_is_told_at_the_token(stray):
    e = refused(PROGRAM.replace("AFTER", "") + f"⟨{stray}\n", f"unexpected `{stray.split()[0]}`")
    assert "missing `;`" not in str(e)
    e = refused(PROGRAM.replace("AFTER", f"\n  ⟨{stray}"), f"unexpected `{stray.split()[0]}`")
    assert "missing `;`" not in str(e)


def test_a_statement_that_runs_on_into_the_next_line_still_misses_its_semicolon():
    refused(PROGRAM.replace("hold kv (1) { run s (1); }AFTER", "set x = 1⟨\n  run s (x);"),
            "missing `;` (found `run` next)")


# --- 5. `/*` at the very start -------------------------------------------------------------------------------------
#
# e8c087b tells `/*` as no comment; at offset 0 (a file, or a --def value, that begins with it: a C-style header
# comment) the check did not run (`tok.start_pos` 0 read as false) and the error was "unexpected `/` (expected a
# name)".

def test_a_file_that_begins_with_slash_star_is_told_the_comment_form():
    refused("⟨/* header */\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n",
            "`/*` begins no comment: a comment runs from `//` to the end of the line")


def test_a_def_value_that_begins_with_slash_star_is_told_the_comment_form():
    with pytest.raises(Exception) as info:
        compile_src("def w() = 8;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (w()); }\n",
                    defs={"w": "/* 4 */"})
    first = str(info.value).splitlines()[0]
    assert first.endswith("w']:1:1: error: `/*` begins no comment: a comment runs from `//` to the end of the line")


def test_a_lone_star_or_slash_at_the_start_is_unexpected_there():
    for text in ("*\n", "/\n", "**\n"):
        refused("⟨" + text, f"unexpected `{text[0]}`")
