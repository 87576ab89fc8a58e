"""Known defects of the frontend, each found wrong by hand, then fixed at its cause.

A bidirectional control (U+202A … U+202E, U+2066 … U+2069) in a comment or a string was taken silently: an
editor shows the text after it in another order than serQ reads it ("Trojan Source"), so what a reader sees
as the end of a comment, or as a string, need not be what compiles. docs/language.md, Lexical: a warning at
its line and column with the line and a caret, the first of each comment or string; the program compiles
as it would without it. Anywhere else it is no token's character: an error, as before."""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata

import pytest
import serq_frontend
from sqhelpers import compile_src, ir_bytes, make_pm

pytestmark = pytest.mark.timeout(60)

BIDI = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]

PROGRAM = """stage s : fifo;{comment}
workload {{ arrive batch(2); }}
session {{ run s (1); }}
run {{ horizon 10; }}
"""


def warning(line: int, col: int, ch: str, where: str, quoted: str, name: str = "<source>") -> str:
    """The warning's three lines, written out from docs/language.md (the quoted line shows the control as its escape, \\uNNNN)."""
    return (f"{name}:{line}:{col}: warning: a bidirectional control character (U+{ord(ch):04X} "
            f"{unicodedata.name(ch)}) in {where}: an editor shows the text after it in another order than serQ "
            f"reads it; delete it\n  {quoted}\n  {' ' * (col - 1)}^\n")


@pytest.mark.parametrize("ch", BIDI, ids=[f"U+{ord(c):04X}" for c in BIDI])
def test_a_bidirectional_control_in_a_comment_is_a_warning_at_it(ch, capsys):
    program = compile_src(PROGRAM.format(comment=f" // a{ch}b"))
    # "stage s : fifo; // a" is 20 characters: the control is the 21st
    assert capsys.readouterr().err == warning(1, 21, ch, "a comment", f"stage s : fifo; // a\\u{ord(ch):04x}b")
    # the program is the one without the comment
    assert ir_bytes(program) == ir_bytes(compile_src(PROGRAM.format(comment="")))
    assert capsys.readouterr().err == ""


def test_one_warning_for_each_comment_at_its_first_control(capsys):
    src = PROGRAM.format(comment=" // \u202e} \u2066x\u2069") + "// \u2067 and \u202b\n"
    compile_src(src)
    assert capsys.readouterr().err == (warning(1, 20, "\u202e", "a comment", "stage s : fifo; // \\u202e} \\u2066x\\u2069")
                                       + warning(5, 4, "\u2067", "a comment", "// \\u2067 and \\u202b"))


def test_a_control_in_a_string_is_a_warning_and_the_string_is_read_as_it_is(tmp_path, capsys):
    # a library whose file name holds an isolate: the string names it, and it is found
    name = "li\u2066b.sq"
    (tmp_path / name).write_text("def go(x) { run x (1); }\n")
    prog = tmp_path / "p.sq"
    prog.write_text(f'use "{name}";\n' + PROGRAM.format(comment="").replace("run s (1);", "go(s);"))
    program = serq_frontend.compile(prog, pm=make_pm())
    assert capsys.readouterr().err == warning(1, 8, "\u2066", "a string", 'use "li\\u2066b.sq";', name=str(prog))
    assert ir_bytes(program) == ir_bytes(compile_src(PROGRAM.format(comment="")))


def test_a_quote_inside_a_comment_does_not_make_the_control_a_string(capsys):
    compile_src(PROGRAM.format(comment=' // say "a\u202eb" here'))
    assert capsys.readouterr().err == warning(1, 26, "\u202e", "a comment", 'stage s : fifo; // say "a\\u202eb" here')


def test_outside_comments_and_strings_it_is_still_an_error(capsys):
    with pytest.raises(serq_frontend.CompileError) as e:
        compile_src("stage s : fifo; \u202e\n")
    assert str(e.value).splitlines()[0] == ("<source>:1:17: error: unexpected character `\\u202e` (U+202E "
                                            "RIGHT-TO-LEFT OVERRIDE): a program is ASCII outside its strings "
                                            "and comments")
    assert capsys.readouterr().err == ""  # no warning before the error


@pytest.mark.parametrize("text", ["\u200f\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627", "\u200e"],
                         ids=["RLM and Hebrew", "Arabic", "LRM"])
def test_right_to_left_text_and_the_marks_are_no_controls(text, capsys):
    # the marks U+200E and U+200F and the letters of right-to-left scripts reorder nothing after the line: no
    # warning
    compile_src(PROGRAM.format(comment=f" // {text}"))
    assert capsys.readouterr().err == ""


def test_the_command_says_it_and_a_hit_of_the_compile_cache_says_it_again(tmp_path):
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM.format(comment=" // \u202e}"), encoding="utf-8")
    said = warning(1, 20, "\u202e", "a comment", "stage s : fifo; // \\u202e}", name="p.sq")
    env = {k: v for k, v in os.environ.items() if k != "SERQ_COMPILE_CACHE"}
    env["SERQ_CACHE_DIR"] = str(tmp_path / "cache")

    def check():
        return subprocess.run([sys.executable, "-m", "serq", "check", "p.sq"], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=60)

    first = check()
    assert (first.returncode, first.stderr) == (0, said), first
    (entry,) = (tmp_path / "cache").rglob("compile-*")  # the compile was stored, with what it wrote on stderr
    assert b"(U+202E RIGHT-TO-LEFT OVERRIDE) in a comment" in entry.read_bytes()
    second = check()
    assert (second.returncode, second.stderr) == (0, said), second
