"""A word alone where a statement begins (language.txt §2: a statement begins with its word, or is a
definition's call, `NAME(args);`): `rn;`, or a stray `foo` on a line before the block's `}`. The parser reads
a name there as the start of a call and wanted its `(`; the error was ``unexpected `;` (expected `(`, `.`,
`[`)`` at the token after the word, for a stray word on a line of its own the `}` of the next line, with
that line quoted. It is now told at the word, with the closest statement word when one is close
(docs/language.md, "What a diagnostic quotes"), by the compiler and by `serq check` (status 1, the source
line and a caret under the word, no traceback)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import serq_frontend
from serq_frontend import CompileError

HEAD = "stage d : delay;\nworkload { arrive batch(1); }\n"
TAIL = "run { horizon 10; }\n"
WORDS = "a statement begins with one of the language's words (`run`, `hold`, `set`, …)"


@pytest.mark.parametrize("body, where, word, close", [
    ("session {\n  run d (1);\n  rn;\n}\n", (5, 3), "rn", "run"),
    ("session {\n  run d (1);\n  tunr;\n}\n", (5, 3), "tunr", "turn"),
    ("session {\n  run d (1);\n  foo;\n}\n", (5, 3), "foo", None),
    # alone on its line: the token after it is the `}` of the next line
    ("session {\n  run d (1);\n  BODY\n}\n", (5, 3), "BODY", None),
    ("session { branch (serial == 0) { x } }\n", (3, 34), "x", None),
])
def test_a_word_alone_where_a_statement_begins_is_named_where_it_stands(tmp_path, body, where, word, close):
    prog = tmp_path / "p.sq"
    prog.write_text(HEAD + body + TAIL)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    msg = str(e.value)
    assert (e.value.line, e.value.col) == where, msg
    first = msg.splitlines()[0]
    said = f"error: `{word}` does not begin a statement"
    said += f" (did you mean `{close}`?)" if close else ""
    assert first.endswith(f"{said}: {WORDS}, or calls a definition, `{word}(…);`"), first
    assert "expected" not in first, first
    line = (HEAD + body + TAIL).splitlines()[where[0] - 1]
    assert msg.splitlines()[1:3] == ["  " + line, "  " + " " * (where[1] - 1) + "^"], msg


def test_a_statement_definition_used_without_its_parentheses_is_told_so(tmp_path):
    """A definition the program has, called without its parentheses: told as the definition it is (it was told
    as a word that begins no statement, test_messages_round2_definitions)."""
    prog = tmp_path / "p.sq"
    prog.write_text(HEAD + "def stop() { end; }\nsession {\n  stop;\n}\n" + TAIL)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    assert (e.value.line, e.value.col) == (5, 3)
    assert str(e.value).splitlines()[0].endswith("error: `stop` is a definition: its use gives its arguments in "
                                                 "parentheses, `stop(…);`")


def test_serq_check_says_it_once_with_the_line_and_a_caret(tmp_path):
    prog = tmp_path / "p.sq"
    prog.write_text(HEAD + "session {\n  run d (1);\n  BODY\n}\n" + TAIL)
    out = subprocess.run([sys.executable, "-m", "serq", "check", str(prog)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 1 and out.stdout == "", out
    assert out.stderr.splitlines() == [
        f"{prog}:5:3: error: `BODY` does not begin a statement: {WORDS}, or calls a definition, `BODY(…);`",
        "    BODY",
        "    ^",
    ], out.stderr


@pytest.mark.parametrize("src, part", [
    # what is a name mid-statement is not this error: a missing `;` after an expression, or after `end`
    ("session {\n  set x = y\n}\n", "missing `;` (found `}` next)"),
    ("session {\n  end\n}\n", "missing `;` (found `}` next)"),
])
def test_a_name_that_ends_a_statement_is_still_a_missing_semicolon(tmp_path, src, part):
    prog = tmp_path / "p.sq"
    prog.write_text(HEAD + src + TAIL)
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(prog)
    assert part in str(e.value) and "does not begin a statement" not in str(e.value), str(e.value)
