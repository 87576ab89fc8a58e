"""An audit of the frontend as a hostile user, and a peer porting programs, would meet it.

1. Where a diagnostic points: the column of an error on a line with tabs, wide characters (CJK, emoji),
   combining marks, CRLF line ends, a byte-order mark, on a very long line, at the end of the file, in a
   `use`d library, in a definition's expansion and in constructs the sugar layers write out. The column a
   message gives counts characters (a tab, a wide character, a combining mark are one each, as the parser
   counts them); the caret under the quoted line stands under its character as a terminal shows it.
2. `serq fmt` on every program of the repository, written out of its canonical form in several ways: a
   fixed point, every comment kept, the same IR.
3. The link-time rules of language.txt §2/§3 (and program-reference.txt's `def` and `use`) a peer's program
   could trip: names, definitions, `use`, families and indices, aggregates, context variables.

Each test's docstring quotes the sentence of the description it checks, or says the rule chosen where it
is silent (docs/language.md, "Rules chosen where the spec is silent").
"""

from __future__ import annotations

import random
import re
import tempfile
from pathlib import Path

import pytest
import serq_frontend
from serq.errors import quote_line
from serq_frontend.fmt import format_source
from sqhelpers import ROOT, _pm, compile_src, ir_bytes, refused


def _error(src: str, **kw) -> list[str]:
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(src, **kw)
    return str(info.value).splitlines()


def _file_error(path: Path) -> list[str]:
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(path, pm=_pm())
    assert "Traceback" not in str(info.value)
    return str(info.value).splitlines()


def _caret(lines: list[str], at: int = 2) -> int:
    """The 0-based column of the caret under the quoted line (without the two spaces of indentation)."""
    return lines[at].index("^") - 2


# ---------------------------------------------------------------------------------------------------------
# 1. Diagnostics: the column, and the caret under it
# ---------------------------------------------------------------------------------------------------------


def test_a_tab_is_one_column_and_the_caret_stays_under_the_word():
    """A quoted line shows a tab as a space, so the caret stays under its character (docs/language.md,
    "What a diagnostic quotes"); the column counts the tab as one character, as the parser does."""
    lines = _error("stage svc : fifo;\nsession {\n\t\trun svx (1);\n}\n")
    assert lines[0] == "<source>:3:7: error: unknown stage `svx` (did you mean `svc`?)"
    assert lines[1] == "    run svx (1);"
    assert lines[1][2 + _caret(lines):].startswith("svx")


@pytest.mark.parametrize("text, width", [
    ("日本語", 6),          # wide: two columns each
    ("😀😀", 4),             # emoji: two columns each
    ("e\u0301e\u0301", 2),  # a combining mark sits on the e before it: no column of its own
    ("ｆｕｌｌ", 8),        # full-width letters
])
def test_the_caret_counts_the_columns_a_terminal_shows(text, width):
    """Rule chosen: the column of a message counts characters; the caret is placed by the columns a
    terminal shows them in (a wide character two, a combining mark none), so it stands under the token.
    It was placed by characters, two columns left of `=` after two emoji and two right after two
    combining marks."""
    src = f'use "{text}.sq"; let = 1;\n'
    lines = _error(src)
    col = src.index("=") + 1
    assert lines[0] == f"<source>:1:{col}: error: unexpected `=`: `let` names what it declares, `let NAME = …;`"
    assert _caret(lines) == len('use "') + width + len('.sq"; let ')


def test_an_error_at_a_combining_mark_points_at_the_letter_it_sits_on():
    """Rule chosen: the caret under a combining mark stands under the character it combines with (the
    mark has no column of its own), and the message writes it as an escape, with its name."""
    lines = _error("let cafe\u0301 = 1;\n")
    assert lines[0] == ("<source>:1:9: error: unexpected character `\\u0301` (U+0301 COMBINING ACUTE ACCENT): "
                        "a program is ASCII outside its strings and comments")
    assert _caret(lines) == len("let caf")


@pytest.mark.parametrize("src, ch, hint", [
    ("use \u201cvllm.sq\u201d;\n", "\u201c", 'U+201C LEFT DOUBLE QUOTATION MARK; write `"`)'),
    ("let a = 2 \u2212 1;\n", "\u2212", "U+2212 MINUS SIGN; write `-`)"),
    ("let a = 2 \u00d7 1;\n", "\u00d7", "U+00D7 MULTIPLICATION SIGN; write `*`)"),
    ("let a = 2 \u2264 1;\n", "\u2264", "U+2264 LESS-THAN OR EQUAL TO; write `<=`)"),
    ("let a = 2 \uff0b 1;\n", "\uff0b", "U+FF0B FULLWIDTH PLUS SIGN; write `+`)"),
    ("let a =\u00a02;\n", "\\xa0", "U+00A0 NO-BREAK SPACE; write a space)"),
    ("let a = 2;\u200b\n", "\\u200b", "U+200B ZERO WIDTH SPACE): a program is ASCII outside its strings and comments"),
])
def test_a_character_copied_from_a_document_is_named_with_the_ascii_it_stands_for(src, ch, hint):
    """Rule chosen: a character that is not ASCII where no token begins with it is named by its code point
    and Unicode name, and with the ASCII it stands for when it is a look-alike of one: `−` and `-` look
    the same in the quoted line, and "unexpected character `−`" did not say which was wrong."""
    at = next(i for i, c in enumerate(src) if not c.isascii())
    lines = _error(src)
    assert lines[0] == f"<source>:1:{at + 1}: error: unexpected character `{ch}` ({hint}"
    assert len(lines) == 3


def test_a_string_left_open_is_named_as_such():
    """Rule chosen: a `"` no string begins at is a string not closed on its line (it was "unexpected
    character `\"`", a character the language has)."""
    lines = _error('stage s : fifo;\nworkload { trace "t.csv; }\n')
    assert lines[0] == '<source>:2:18: error: a string is not closed: `"` … `"` on one line'
    assert _caret(lines) == len("workload { trace ")


def test_crlf_line_ends_change_no_column(tmp_path):
    """Lines are counted at `\\n` only (docs/language.md); a CRLF file's `\\r` is not quoted, and an
    error at the end of a CRLF line points after its last token."""
    f = tmp_path / "p.sq"
    f.write_bytes(b"stage svc : fifo;\r\nsession {\r\n  run svx (1);\r\n}\r\n")
    lines = _file_error(f)
    assert lines[0] == f"{f}:3:7: error: unknown stage `svx` (did you mean `svc`?)"
    assert lines[1:] == ["    run svx (1);", "        ^"]
    f.write_bytes(b"stage svc : fifo;\r\nsession {\r\n  run svc (1)\r\n}\r\n")
    lines = _file_error(f)
    assert lines[0] == f"{f}:3:14: error: missing `;` (found `}}` next)"
    assert lines[1:] == ["    run svc (1)", "               ^"]


def test_a_byte_order_mark_is_no_column_in_a_file_or_in_text(tmp_path):
    """A byte-order mark at the start is not part of the program, and the first line's columns count from
    what follows it (docs/language.md). Rule chosen: the same for a program given as text
    (`compile(source=…)`): text read with encoding="utf-8" keeps the mark, which was an unexpected
    character `\\ufeff` at 1:1 although the file it came from compiles."""
    f = tmp_path / "p.sq"
    f.write_bytes("\ufeffstage svc : fifo; session { run svx (1); }\n".encode())
    lines = _file_error(f)
    assert lines[0].startswith(f"{f}:1:33: error: unknown stage `svx`")
    assert lines[1][2 + _caret(lines):].startswith("svx")
    text = f.read_text(encoding="utf-8")
    assert text.startswith("\ufeff")
    lines = _error(text)
    assert lines[0].startswith("<source>:1:33: error: unknown stage `svx`")
    assert "\ufeff" not in "\n".join(lines)
    compile_src("\ufeffstage s : fifo; session { run s (1); }\n")


def test_a_long_line_of_wide_characters_is_cut_around_the_caret(tmp_path):
    """A line longer than 200 characters is cut to the 200 around the caret, `...` marking each cut
    (docs/language.md); with wide characters before the error the caret is still under it."""
    f = tmp_path / "p.sq"
    f.write_text('stage svc : fifo;\nsession { run svc (1); } use "' + "語" * 1000 + '.sq"; let = 1; // '
                 + "字" * 1000 + "\n", encoding="utf-8")
    lines = _file_error(f)
    assert lines[0] == f"{f}:2:1041: error: unexpected `=`: `let` names what it declares, `let NAME = …;`"
    shown = lines[1][2:]
    assert shown.startswith("...") and shown.endswith("...") and len(shown) == 206
    # the caret's column is the shown text's width up to the `=`
    before = shown[: shown.index(" = 1;") + 1]
    width = sum(2 if "\u4e00" <= ch <= "\u9fff" else 1 for ch in before)
    assert _caret(lines) == width


def test_the_run_time_caret_is_placed_the_same_way():
    """One helper quotes a line for the frontend and the simulator (serq.errors.quote_line): it returns
    the caret's column as a terminal shows the line."""
    assert quote_line("\tab", 2) == (" ab", 2)
    assert quote_line("日本 x", 4) == ("日本 x", 6)
    assert quote_line("e\u0301x", 2) == ("e\u0301x", 1)  # the mark: under the e
    assert quote_line("e\u0301x", 3) == ("e\u0301x", 2)


@pytest.mark.parametrize("src, where, message", [
    ("stage s : fifo;\nsession {\n  run s (1);\n", "2:9", "a `}` is missing: this `{` is not closed"),
    ("stage s : fifo;\nsession {\n  run s (1)", "3:12", "missing `;` (found the end of the file next)"),
    ("stage s : fifo;\nsession { run s (1) // c", "2:20", "missing `;` (found the end of the file next)"),
    ("stage s : fifo;\nsession {\n\t\t", "2:9", "a `}` is missing: this `{` is not closed"),
    ("let a = 1 +", "1:12", "unexpected end of the file"),
])
def test_an_error_at_the_end_of_the_file_points_after_the_last_token(src, where, message):
    """Rule chosen (docs/language.md): a program that stops short is an error right after its last
    token, naming the end of the file (not the blank lines or comment after it); one that stops inside
    a block is an error at the `{` left open, which names the `}` missing."""
    lines = _error(src)
    assert lines[0].startswith(f"<source>:{where}: error: {message}"), lines[0]
    assert len(lines) == 3


def test_a_syntax_error_in_a_library_names_the_use(tmp_path):
    """"An error in a library is reported in the library, with the uses it was expanded from"
    (program-reference.txt, `use`). A library that did not parse was reported in the library alone, so
    the program it broke was not named."""
    (tmp_path / "bad.sq").write_text("def f(x) = x +;\n")
    (tmp_path / "mid.sq").write_text('// the middle\nuse "bad.sq";\n')
    p = tmp_path / "p.sq"
    p.write_text('stage s : fifo;\nuse "mid.sq";\nsession { run s (1); }\n')
    assert _file_error(p) == [
        f"{tmp_path / 'bad.sq'}:1:15: error: unexpected `;`: an operand is missing after `+` (a number, a name, a call or a "
        "parenthesised expression)",
        "  def f(x) = x +;",
        "                ^",
        f"{tmp_path / 'mid.sq'}:2:1: note: in the library `bad.sq`, used here",
        '  use "bad.sq";',
        "  ^",
        f"{p}:2:1: note: in the library `mid.sq`, used here",
        '  use "mid.sq";',
        "  ^",
    ]


def test_a_definition_of_a_library_refused_as_it_is_read_names_the_use(tmp_path):
    """program-reference.txt, `def`: a PARAM is "Not a keyword or a function" — in a library, the error
    is the library's, noted with the use that read it."""
    (tmp_path / "lib.sq").write_text("def ok(x) = x;\n\tdef f(floor) = 1;\n")
    p = tmp_path / "p.sq"
    p.write_text('use "lib.sq";\nstage s : fifo;\nsession { run s (ok(1)); }\n')
    lines = _file_error(p)
    assert lines[0] == f"{tmp_path / 'lib.sq'}:2:8: error: `floor` cannot be a parameter of `f`: it is a function"
    assert _caret(lines) == 7
    assert lines[3] == f"{p}:1:1: note: in the library `lib.sq`, used here"


def test_an_error_in_a_librarys_definition_names_the_library_and_each_use(tmp_path):
    """"An error in a library is reported in the library, with the uses it was expanded from." A link
    error in a definition's body is at its place in the library, noted with each use down to the
    program's (and not also with the `use`: the expansion's notes say where the program reached it)."""
    (tmp_path / "lib.sq").write_text("def serve_it(st, w) {\n  prefill on st (w + 日本);\n}\n")
    p = tmp_path / "p.sq"
    p.write_text('use "lib.sq";\nstage e : fifo;\nsession {\n  serve_it(e, 1);\n}\n')
    lines = _file_error(p)
    assert lines[0] == f"{tmp_path / 'lib.sq'}:2:22: error: unexpected character `日` (U+65E5 CJK UNIFIED " \
                       "IDEOGRAPH-65E5): a program is ASCII outside its strings and comments"
    assert lines[3] == f"{p}:1:1: note: in the library `lib.sq`, used here"
    (tmp_path / "lib.sq").write_text("def serve_it(st, w) {\n  prefill on st (w + nope);\n}\n")
    lines = _file_error(p)
    assert lines[:3] == [f"{tmp_path / 'lib.sq'}:2:22: error: unknown name `nope`",
                         "    prefill on st (w + nope);", "                       ^"]
    assert lines[3:] == [f"{p}:4:3: note: in the expansion of `serve_it`, used here", "    serve_it(e, 1);", "    ^"]


@pytest.mark.parametrize("src", [
    # a serving form: its kernel run
    "stage prefill : fifo;\nsession {\n  prefill (1 + ⟨nope);\n}\n",
    # branch with: branch (~bernoulli(p))
    "stage s : fifo;\nsession {\n  branch with (⟨nope) { run s (1); }\n}\n",
    # at admission: the binding substituted into the header
    "stage s : fifo;\npool kv { cap 10; }\nsession {\n  hold kv (h) at admission (h = ⟨nope + 1) { run s (1); }\n}\n",
    # an aggregate written out
    "stage s : fifo;\npool kv[2] { cap 10; }\nsession {\n  set x = max j in 2 (used(kv[j]) + ⟨nope);\n"
    "  run s (x);\n}\n",
    # a queue entry's call: its argument
    "queue P : prefill { serve fifo; prefill (p) { run (p + 1); } }\nsession {\n  P.prefill (⟨nope);\n}\n",
    # the server spliced in place of request;
    "stage s : fifo;\nworkload { arrive poisson(1); session { request; request; } }\nserver {\n  run s (⟨nope);\n}\n"
    "run { horizon 1; }\n",
])
def test_an_error_in_a_construct_the_sugar_writes_out_is_where_it_was_written(src):
    """"A linker error inside a form (an unknown name in W, say) speaks of the kernel statement" — at the
    place the user wrote it, in each construct a sugar layer rewrites."""
    refused(src, "unknown name `nope`")


# ---------------------------------------------------------------------------------------------------------
# 2. serq fmt over every program of the repository
# ---------------------------------------------------------------------------------------------------------

_FMT_DIRS = ["examples", "bench", "docs", "packages/serq-vllm/src/serq_vllm/lib",
             "packages/serq-vllm/src/serq_vllm/programs"]
FMT_FILES = sorted(p for d in _FMT_DIRS for p in (ROOT / d).rglob("*.sq")
                   if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))
_WORD = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][+-]?[0-9]+|[A-Za-z_0-9.@]+"
_TOKEN = re.compile(rf'//[^\n]*|"[^"\n]*"|{_WORD}|<=|>=|==|!=|&&|\|\||\S')


def _comments(text: str) -> list[str]:
    return [c.rstrip() for c in re.findall(r"//[^\n]*", text.replace("\r\n", "\n"))]


def _rewrite(text: str, how: str) -> str:
    """``text`` written out of its canonical form, the program the same."""
    lines = text.split("\n")
    if how == "dedent":
        return "\n".join(line.lstrip() for line in lines)
    if how == "tabs":
        return "\n".join(re.sub(r"^( +)", lambda m: "\t" * (len(m.group(1)) // 2), line) + " \t" for line in lines)
    if how == "crlf":
        return text.replace("\n", "\r\n")
    rng = random.Random(how)
    out = []
    for line in lines:
        code, sep, comment = line.partition("//")
        if '"' in code and sep:  # a `//` inside a string
            out.append(line)
            continue
        s = ""
        for tok in _TOKEN.findall(code):
            word = re.match(r"[\w.@\"]", tok) and re.search(r"[\w.@\"]$", s)
            if how == "squeeze":  # as few spaces as the tokens allow
                s += (" " if word else "") + tok
            else:  # "breaks": tokens on lines of their own, anywhere, at any indentation
                s += ("\n" + " " * rng.randrange(12) if s and rng.random() < 0.3 else " " if s else "") + tok
        out.append(s + ("   " + sep + comment if sep else ""))
    return "\n".join(out)


def _is_library(text: str) -> bool:
    return not re.search(r"^\s*(session|server|workload|stage|pool|queue)\b", text, re.M)


def _ir(path: Path, text: str) -> bytes:
    # in a folder of its own, never beside the original in the source tree (test_fmt.py says why)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / path.name
        f.write_bytes(text.encode())
        return ir_bytes(serq_frontend.compile(f, pm=_pm()))


def _shape(node):
    """The AST of a library without positions."""
    if type(node).__name__ == "Pos":
        return None
    if isinstance(node, (list, tuple)):
        return [_shape(x) for x in node]
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is not None:
        return (type(node).__name__, [(k, _shape(getattr(node, k))) for k in fields if k != "pos"])
    return node


@pytest.mark.parametrize("path", FMT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fmt_of_every_program_written_any_way_is_a_fixed_point_with_its_comments_and_its_program(path):
    """`serq fmt`: "line breaks and comments are kept … the result is a fixed point" (docs/language.md);
    the program is unchanged (its IR, `serq ir --no-spans`; a library's definitions). Each program of
    examples/, bench/, docs/, serq-vllm's lib/ and programs/ is written out of its canonical form — no
    indentation, tabs and trailing blanks, CRLF, as few spaces as possible, tokens broken over lines —
    and formatted."""
    text = path.read_text()
    library = _is_library(text)
    before = (_shape(serq_frontend.parse(source=text).items) if library else _ir(path, text))
    assert format_source(text) == text
    for how in ("dedent", "tabs", "crlf", "squeeze", "breaks"):
        written = _rewrite(text, how)
        once = format_source(written)
        assert format_source(once) == once, how
        assert _comments(once) == _comments(written), how
        if library:
            assert _shape(serq_frontend.parse(source=once).items) == before, how
        else:
            assert _ir(path, once) == before, how


# ---------------------------------------------------------------------------------------------------------
# 3. Link-time rules
# ---------------------------------------------------------------------------------------------------------

S = "stage s : fifo;\n"


@pytest.mark.parametrize("src, message", [
    ("let x = 3;\n" + S + "session { ⟨set x = 2; run s (x); }\n", "`x` is a `let` constant and an attribute"),
    (S + "session { ⟨set present = 1; run s (1); }\n", "`present` is a context variable; an attribute needs"),
    (S + "session { ⟨choose waiting in 2 by (1); run s (1); }\n", "`waiting` is a context variable"),
    ("let ⟨tokens = 3;\n" + S + "session { run s (1); }\n", "`let tokens`: `tokens` is a context variable"),
    ("let ⟨inf = 3;\n" + S + "session { run s (1); }\n", "`let inf`: `inf` is the language's infinity"),
    (S + "session { ⟨set inf = 2; run s (1); }\n", "`inf` is the language's infinity; an attribute needs"),
    (S + "session { ⟨set now = 2; run s (1); }\n", "`now` is a context variable"),
    (S + "session { ⟨set cached = 2; run s (1); }\n", "`cached` is a built-in attribute"),
    ("pool kv { cap 1; }\n" + S + "session { ⟨set kv = 1; run s (1); }\n", "`kv` is a pool (at 1:6); an attribute"),
    ("let s = 1;\nstage ⟨s : fifo;\n" + "session { run s (1); }\n", "the stage `s` has the name of a `let`"),
    ("let n = 1;\n" + S + "pool kv { cap 10; }\nsession { hold kv (1) at admission (⟨n = 1) { run s (1); } }\n",
     "the binding `n` is a `let`"),
])
def test_attributes_lets_and_the_names_the_language_supplies_have_names_of_their_own(src, message):
    """"Session attributes, let constants and the names the language supplies (the context variables,
    inf) have names of their own: the linker rejects a program that gives two of them one name." (The
    message for `inf` called it a context variable.)"""
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    (S + "session { set x = ⟨tokens; run s (x); }\n", "`tokens` is not readable in a session statement"),
    ("pool kv { cap 10; evict by (⟨tokens); }\n" + S + "session { hold kv (1) { run s (1); } }\n",
     "`tokens` is not readable in an eviction key"),
    (S + "session { run s (⟨present); }\n", "`present` is not readable in a session statement"),
    ("pool kv { cap 10; queue by (⟨size); }\n" + S + "session { hold kv (1) { run s (1); } }\n",
     "`size` is not readable in a pool's queue key"),
    ("stage e : step { budget 10 + ⟨decoding; cost 1; }\npool kv { cap 10; }\n"
     "session { hold kv (1) { run e prefill (1); } }\n", "`decoding` is not readable in a step stage's budget"),
    ("stage e : step { budget 10; cost 1; serve by (⟨attention); }\npool kv { cap 10; }\n"
     "session { hold kv (1) { run e prefill (1); } }\n", "`attention` is not readable in a step stage's serve key"),
    (S + "gauge g = ⟨present;\nsession { run s (1); }\n", "`present` is not readable in a gauge"),
    (S + "gauge g = ⟨now;\nsession { run s (1); }\n", "a gauge may not read `now`"),
    (S + "session { observe o = ⟨waiting; run s (1); }\n", "`waiting` is not readable in a session statement"),
    ("pool kv { cap ⟨size; }\n" + S + "session { hold kv (1) { run s (1); } }\n",
     "the cap of pool `kv` must be a constant"),
])
def test_a_context_variable_read_outside_its_place_does_not_link(src, message):
    """"Each context variable exists at the one place named in its parenthesis (now everywhere), and
    reading it anywhere else is a link error rather than a 0: set x = tokens; in a session, or evict by
    (tokens), does not link." """
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    ("let a = ⟨0/0;\n" + S + "session { run s (1); }\n", "`let a` evaluates to NaN"),
    ("let a = ⟨inf - inf;\n" + S + "session { run s (1); }\n", "`let a` evaluates to NaN"),
    ("pool kv { cap ⟨0/0; }\n" + S + "session { hold kv (1) { run s (1); } }\n",
     "the cap of pool `kv` evaluates to NaN"),
])
def test_a_constant_that_is_nan_does_not_link(src, message):
    """"Every constant (a let, or a constant position …) is a number or inf; one that evaluates to NaN
    (0/0, inf - inf) does not link." """
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    (S + "def ⟨hold(x) = 1;\nsession { run s (1); }\n", "`hold` is a keyword"),
    (S + "def ⟨sqrt(x) = 1;\nsession { run s (1); }\n", "`sqrt` is a function of the language"),
    (S + "def ⟨exp(x) = 1;\nsession { run s (1); }\n", "`exp` is a function of the language"),
    ("pool kv { cap 1; }\n" + S + "def ⟨kv(x) = 1;\nsession { run s (1); }\n", "`kv` is a pool"),
    ("let a = 1;\n" + S + "def ⟨a(x) = 1;\nsession { run s (1); }\n", "`a` is a `let`"),
    (S + "def f(x) = 1;\ndef ⟨f(x) = 2;\nsession { run s (f(1)); }\n", "`f` is defined twice (first at <source>:2:1)"),
])
def test_a_definitions_name(src, message):
    """program-reference.txt, `def`: NAME is "Not a keyword, a function, a distribution, a pool, a stage
    or a let, and not defined twice." """
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    (S + "def f(x) = ⟨f(x) + 1;\nsession { run s (f(1)); }\n", "`f` uses itself"),
    (S + "def f(x) { run s (x); ⟨f(x); }\nsession { f(1); }\n", "`f` uses itself"),
    (S + "def g(x) = ⟨f(x);\ndef f(x) = g(x);\nsession { run s (f(1)); }\n",
     "`f` is used before its definition (at 3:1); define it first"),
    (S + "session { run s (⟨f(1)); }\ndef f(x) = x;\n", "`f` is used before its definition (at 3:1)"),
])
def test_a_definition_is_defined_before_its_use_and_never_reaches_itself(src, message):
    """"Defined before its first use; a body uses only the definitions before it, so none reaches itself."
    A definition that uses itself is named as such (it was "`f` is used before its definition (at 2:1)",
    the line of the very definition the use is in)."""
    refused(src, message)


def test_a_use_before_a_definition_in_another_file_names_that_file(tmp_path):
    """Rule chosen: the place of the definition an early use names is a file:line:col when it is in
    another file than the use (a library's body using a definition the program gives after the use)."""
    (tmp_path / "lib.sq").write_text("def g(x) = late(x);\n")
    p = tmp_path / "p.sq"
    p.write_text('use "lib.sq";\ndef late(x) = x;\nstage s : fifo;\nsession { run s (g(1)); }\n')
    lines = _file_error(p)
    assert lines[0] == (f"{tmp_path / 'lib.sq'}:1:12: error: `late` is used before its definition (at "
                        f"{p}:2:1); define it first")


@pytest.mark.parametrize("src, message", [
    (S + "def f(⟨run) = 1;\nsession { run s (f(1)); }\n", "`run` cannot be a parameter of `f`: it is a keyword"),
    (S + "def f(⟨floor) = 1;\nsession { run s (f(1)); }\n", "`floor` cannot be a parameter of `f`: it is a function"),
    (S + "def f(x, ⟨x) = 1;\nsession { run s (f(1, 2)); }\n", "`f` has two parameters named `x`"),
    (S + "def f(⟨x) { set x = 1; run s (x); }\nsession { f(1); }\n", "`x` is a parameter of `f` and its body"),
    (S + "def f(⟨x) { choose x in 2 by (1); run s (x); }\nsession { f(1); }\n", "`x` is a parameter of `f`"),
    ("pool kv { cap 10; }\n" + S + "def f(⟨h) { hold kv (h) at admission (h = 1) { run s (1); } }\n"
     "session { f(1); }\n", "`h` is a parameter of `f` and its body assigns it"),
    (S + "def f(j) = max ⟨j in 2 (j);\nsession { run s (f(5)); }\n", "`max j in …`: `j` is a parameter of `f`"),
    (S + "def f(j) { run s (sum ⟨j in 2 (j)); }\nsession { f(5); }\n", "`sum j in …`: `j` is a parameter of `f`"),
])
def test_a_parameter_is_not_a_name_the_body_assigns_or_binds(src, message):
    """program-reference.txt, `def`: PARAM is "Not a keyword or a function, and not a name the body assigns
    or binds (set p =, choose p, p = in a binding)". An aggregate binds its index: `def f(j) = max j in
    2 (j);` linked, the parameter substituted for the index's reads, so f(5) was 5."""
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    (S + "def f(x) = x + x;\nsession { set y = f(⟨~exp(1)); run s (y); }\n", "reads `x` 2 times: each would"),
    (S + "def f(x) { run s (x); run s (x); }\nsession { f(⟨~exp(1)); }\n", "reads `x` 2 times"),
    (S + "def g() = ⟨~exp(1);\ndef f(x) = x + x;\nsession { set y = f(g()); run s (y); }\n", "reads `x` 2 times"),
    (S + "def f(x) = sum j in 3 (x);\nsession { set y = f(⟨~exp(1)); run s (y); }\n",
     "reads `x` 3 times (in an aggregate, once a term)"),
    ("let n = 4;\n" + S + "def f(x) = 1 + max j in n (x + j);\nsession { set y = f(⟨~exp(1)); run s (y); }\n",
     "reads `x` 4 times (in an aggregate, once a term)"),
])
def test_an_argument_that_draws_goes_only_to_a_parameter_read_once(src, message):
    """program-reference.txt: "An argument that draws (itself, or through a definition that draws) may be
    passed only to a parameter the body reads once." A read in an aggregate is read once per term ("the
    linker writes the terms out"): `def f(x) = sum j in 3 (x);` with f(~exp(1)) linked as three draws."""
    refused(src, message)


def test_an_argument_that_draws_to_a_parameter_read_once_links():
    """… and one read once (an aggregate of one term included) links."""
    compile_src(S + "def f(x) = sum j in 1 (x) + 1;\nsession { set y = f(~exp(1)); run s (y); }\n")
    compile_src(S + "def f(x, n) = max j in 2 (n + j) + x;\nsession { set y = f(~exp(1), 3); run s (y); }\n")


def test_an_argument_may_not_read_a_name_the_body_assigns():
    """program-reference.txt: "an argument may not read a name the body assigns"."""
    refused(S + "def f(x) { set y = 2; run s (x); }\nsession { set y = 1; f(⟨y + 1); }\n",
            "an argument of `f` reads `y`, which its body assigns")


def test_a_definitions_aggregate_does_not_capture_its_arguments_index():
    """"j may not be a name the program already has": an aggregate inside another of the same index and
    the same text does not link. A definition whose body aggregates over j, given an argument reading the j
    of an aggregate around the use, read the argument's j as its own (`max j in 2 (g(j))` with
    `def g(k) = sum j in 2 (k * 10);` was 10, g(0) and g(1) being 0 and 20); each aggregate reads only the
    index of its own text, so it is 20, as with the outer index named otherwise."""
    refused(S + "session { set x = max j in 2 (max ⟨j in 3 (j)); run s (x); }\n",
            "`j` is the index of the aggregate around it")
    twenty = ir_bytes(compile_src(S + "session { set x = 20; run s (x); }\n"))
    for i in ("i", "j"):
        src = S + f"def g(k) = sum j in 2 (k * 10);\nsession {{ set x = max {i} in 2 (g({i})); run s (x); }}\n"
        assert ir_bytes(compile_src(src)) == twenty


@pytest.mark.parametrize("src, message", [
    (S + "let j = 1;\nsession { set x = max ⟨j in 2 (j); run s (x); }\n", "`j` is a name the program has already"),
    (S + "session { set j = 1; set x = max ⟨j in 2 (j); run s (x); }\n", "`j` is a name the program has"),
    (S + "session { set x = max ⟨now in 2 (now); run s (x); }\n", "`now` is a name the program has already"),
    ("pool kv { cap 10; }\n" + S + "session { set x = max ⟨kv in 2 (kv); run s (x); }\n", "`kv` is a name"),
    ("pool kv { cap 10; }\n" + S + "session { hold kv (max ⟨h in 2 (h)) at admission (h = 5) { run s (1); } }\n",
     "`max h in …`: `h` is a binding of this `at admission`"),
])
def test_an_aggregates_index_is_no_name_the_program_has(src, message):
    """"j may not be a name the program already has." A binding of `at admission` is one: substituted
    into the header, it took the place of the index (`hold kv (max h in 2 (h)) at admission (h = 5)`
    held 5)."""
    refused(src, message)


def test_an_aggregate_is_written_out_term_by_term():
    """"the linker writes the terms out with j = 0 … n-1, so max k in 2 (used(kv[k])) is
    max(used(kv[0]), used(kv[1]))"; "n a number, a constant's name or a parenthesised constant
    expression"."""
    head = "let n = 1;\npool kv[2] { cap 10; }\n" + S
    a = compile_src(head + "session { set x = max k in 2 (used(kv[k])); run s (x); }\n")
    b = compile_src(head + "session { set x = max(used(kv[0]), used(kv[1])); run s (x); }\n")
    c = compile_src(head + "session { set x = max k in (n + 1) (used(kv[k])); run s (x); }\n")
    assert ir_bytes(a) == ir_bytes(b) == ir_bytes(c)


@pytest.mark.parametrize("src, message", [
    (S + "session { set x = max j in ⟨0 (j); run s (x); }\n", "must be an integer of at least 1, not 0"),
    (S + "session { set n = 2; set x = sum j in ⟨n (j); run s (x); }\n", "must be a constant"),
    ("let n = 2;\n" + S + "session { set x = sum j in n ⟨+ 1 (j); run s (x); }\n", "unexpected `+`"),
    (S + "session { set x = sum j in 2 (j) + ⟨j; run s (x); }\n",
     "`j` is the index of `sum j in …` (at 2:19), read only inside its body"),
    (S + "session { set x = ⟨avg j in 2 (j); run s (x); }\n", "an aggregate is `max`, `min` or `sum`"),
])
def test_an_aggregates_count_is_a_constant(src, message):
    """"aggregates over an index, max j in n (e), min j in n (e), sum j in n (e) (n a number, a constant's
    name or a parenthesised constant expression …)"."""
    refused(src, message)


@pytest.mark.parametrize("src, message", [
    ("pool kv[⟨0] { cap 1; }\n" + S + "session { run s (1); }\n", "must be an integer of at least 1, not 0"),
    ("pool kv[⟨x] { cap 1; }\n" + S + "session { run s (1); }\n", "must be a constant"),
    ("pool kv[2] { cap 1; }\n" + S + "session { hold kv[⟨2] (1) { run s (1); } }\n", "`kv` has members 0 … 1"),
    ("pool kv[2] { cap 1; }\n" + S + "session { hold kv[⟨-1] (1) { run s (1); } }\n", "`kv` has members 0 … 1"),
    ("pool kv[2] { cap 1; }\n" + S + "session { hold ⟨kv (1) { run s (1); } }\n",
     "`kv` is a family of 2; index it, `kv[j]`"),
    ("pool kv[2] { cap 1; }\n" + S + "session { set x = used(kv[⟨5]); run s (x); }\n", "`kv` has members 0 … 1"),
    ("pool kv[2] { cap 1; }\n" + S + "gauge g = used(kv[⟨x]);\nsession { set x = 1; run s (1); }\n",
     "a gauge may not read an attribute"),
    ("stage s[2] : fifo;\nsession { run s[⟨2] (1); }\n", "`s` has members 0 … 1"),
])
def test_families_and_their_indices(src, message):
    """Families: `pool NAME [ '[' N ']' ]`, "N … Declares an array of N pools, NAME[0] … NAME[N-1]"
    (program-reference.txt); a constant index outside it, or a family named without an index, does not
    link; a gauge's "pool or stage index is a number"."""
    refused(src, message)


def test_a_family_sized_by_a_let_and_a_member_of_a_family_of_one():
    """"A family's size may be a let constant (queue D[ND]), and a family of one is still a family"; a
    member of a family of one may be written with an index, `D[0]` (docs/language.md)."""
    compile_src("let N = 2;\npool kv[N] { cap 1; }\n" + S + "session { hold kv[1] (1) { run s (1); } }\n")
    a = compile_src("pool kv[1] { cap 1; }\n" + S + "session { hold kv[0] (1) { run s (1); } }\n")
    b = compile_src("pool kv[1] { cap 1; }\n" + S + "session { hold kv (1) { run s (1); } }\n")
    assert ir_bytes(a) == ir_bytes(b)


def test_use_names_a_library_file(tmp_path):
    """program-reference.txt, `use`: "path is a file of defs (and uses), relative to the file the use is
    in … A library read once is not read again." A program is no library; a file that names itself
    gets that said (it was "no such library", the file being right there)."""
    (tmp_path / "lib.sq").write_text("def f(x) = x;\n")
    (tmp_path / "prog.sq").write_text("def f(x) = x;\nlet y = 1;\n")
    (tmp_path / "loop.sq").write_text('def g(x) = x;\nuse "loop.sq";\n')
    p = tmp_path / "p.sq"
    body = "stage s : fifo;\nsession { run s (f(1)); }\n"
    p.write_text('use "lib.sq";\nuse "./lib.sq";\n' + body)
    serq_frontend.compile(p, pm=_pm())  # read once
    p.write_text('use "lib";\n' + body)
    assert _file_error(p)[0] == f'{p}:1:1: error: `use "lib"`: a library is a `.sq` file'
    p.write_text('use "prog.sq";\n' + body)
    assert "which is a program, not a library" in _file_error(p)[0]
    p.write_text('use "p.sq";\n' + body)
    assert _file_error(p)[0].startswith(f'{p}:1:1: error: `use "p.sq"` names the file it is in, and a file '
                                        "does not use itself; no other library of that name (looked in ")
    p.write_text('use "loop.sq";\n' + body)
    lines = _file_error(p)
    assert lines[0].startswith(f'{tmp_path / "loop.sq"}:2:1: error: `use "loop.sq"` names the file it is in')
    assert lines[3] == f"{p}:1:1: note: in the library `loop.sq`, used here"
    p.write_text('session { ⟨use "lib.sq"; }\n'.replace("⟨", ""))
    assert _file_error(p)[0] == f"{p}:1:11: error: `use` begins an item: write it at the top level, outside every block"


@pytest.mark.parametrize("src, message", [
    (S + "pool kv { cap 10; }\nsession { hold kv (a) at admission (a = ⟨b, b = 1) { run s (1); } }\n",
     "the binding `a` reads `b`, bound after it: a binding reads only the ones before it in its clause"),
    (S + "pool kv { cap 10; }\nsession { hold kv (a) at admission (a = ⟨a + 1) { run s (1); } }\n",
     "the binding `a` reads itself"),
    (S + "pool kv { cap 10; }\nsession { hold kv (1) at admission (⟨inf = 1) { run s (1); } }\n",
     "the binding `inf` is the language's infinity"),
])
def test_a_binding_reads_only_the_ones_before_it(src, message):
    """"A later binding sees the earlier ones." … "A binding reads only the ones before it in its clause."
    One that reads a later one (or itself) was "unknown name `b`", the name bound right beside it."""
    refused(src, message)


def test_a_binding_may_read_an_attribute_of_a_later_bindings_name():
    """… where the program sets an attribute of that name, the binding reads the attribute."""
    compile_src(S + "pool kv { cap 10; }\nsession { set b = 1; hold kv (a) at admission (a = b, b = 2) "
                "{ run s (1); } }\n")
