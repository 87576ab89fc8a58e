"""A file that ends inside a statement or an item is told what was left unfinished: the statement as written
and where it begins, what was to follow its last token, and each `(`, `[` and `{` left open with where it was
opened. It was "unexpected end of the file (expected `!`, `(`, `-`, `~`, a name, a number)", the grammar's list
and no word of the `let`, the `set` or the block it was in (found by cutting every example program after each
of its tokens: 1 500 of the cuts said that). And a word that takes a parenthesis, cut after it, said
"unexpected the end of the file".
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import EXAMPLES, compile_src, located

BASE = """let n = 4;
pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session {
  hold kv (4) {
    tool (1);
  }
}
run { horizon 10; }
"""


def _end_said(src: str) -> str:
    """The error of ``src`` (which ends at its ``⟨``, the place the error must name): at the end of the last
    token, its message."""
    text, line, col = located(src)
    assert src.endswith("⟨")
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text)
    first = str(info.value).splitlines()[0]
    prefix = f"<source>:{line}:{col}: error: "
    assert first.startswith(prefix), first
    return first[len(prefix):]


@pytest.mark.parametrize("cut, said", [
    ("let n =⟨", "`let n =` at 1:1 is not finished, an expression was to follow `=`"),
    ("let n = 4 *⟨", "`let n = 4 *` at 1:1 is not finished, an operand was to follow `*`"),
    ("let n = min(1,⟨", "`let n = min(1,` at 1:1 is not finished, an expression was to follow `,`; a `)` is "
                        "missing, the `(` at 1:12 is not closed"),
    ("stage⟨", "`stage` at 1:1 is not finished, a name was to follow `stage`"),
    ("stage s :⟨", "`stage s :` at 1:1 is not finished, a plugin's name (@name), delay, fifo, ps or step was to "
                   "follow `:`"),
    ("run⟨", "`run` at 1:1 is not finished, `{` was to follow `run`"),
    ("pool kv { evict⟨", "`evict` at 1:11 is not finished, a plugin's name (@name), by or lru was to follow "
                         "`evict`; a `}` is missing, the `{` at 1:9 is not closed"),
    ("session {\n  set x =⟨", "`set x =` at 2:3 is not finished, an expression was to follow `=`; a `}` is "
                              "missing, the `{` at 1:9 is not closed"),
    ("session {\n  loop {\n    set⟨", "`set` at 3:5 is not finished, a name was to follow `set`; two `}` are "
                                    "missing, the `{` at 1:9 and the `{` at 2:8 are not closed"),
    ("session { hold kv (4)⟨", "`hold kv (4)` at 1:11 is not finished, `,`, `{`, at, reserve or reuse was to "
                               "follow `)`; a `}` is missing, the `{` at 1:9 is not closed"),
    ("session { set y = (now -⟨", "`set y = (now -` at 1:11 is not finished, an operand was to follow `-`; a `)` "
                                  "is missing, the `(` at 1:19 is not closed; a `}` is missing, the `{` at 1:9 is "
                                  "not closed"),
])
def test_the_statement_left_unfinished_is_told(cut, said):
    assert _end_said(cut) == "unexpected end of the file: " + said


def test_a_long_statement_is_named_by_its_first_word():
    said = _end_said("session { set a_rather_long_name = a_rather_long_name + another_long_name_here *⟨")
    assert said.startswith("unexpected end of the file: `set` at 1:11 is not finished, an operand was to follow "
                           "`*`")


@pytest.mark.parametrize("cut, word", [("session { hold kv⟨", "hold"), ("session { branch⟨", "branch"),
                                        ("workload { arrive poisson⟨", "arrive poisson")])
def test_a_word_cut_before_its_parenthesis_is_told_without_the_the(cut, word):
    said = _end_said(cut)
    assert said.startswith(f"unexpected end of the file: `{word}` takes "), said


@pytest.mark.parametrize("name", ["single-turn/mg1.sq", "multi-turn/closed.sq", "single-turn/vllm_priority.sq"])
def test_no_cut_of_an_example_is_told_the_grammars_list(name):
    # the example cut after each of its tokens: the end of the file is never told with the grammar's list
    from serq_frontend.parser import _line_col, _offset, _scan_tokens

    text = (EXAMPLES / name).read_text()
    told_unfinished = 0
    for _, token, line, col in _scan_tokens(text, len(text)):
        part = text[:_offset(text, line, col) + len(token)]
        try:
            compile_src(part)
        except serq_frontend.CompileError as e:
            first = str(e).splitlines()[0]
            assert not ("(expected" in first and "end of the file" in first), (part[-40:], first)
            assert "unexpected the end" not in first, first
            told_unfinished += "is not finished" in first
    assert told_unfinished > 10  # (the cuts this module is about)
    assert _line_col(text, len(text))[0] > 10
