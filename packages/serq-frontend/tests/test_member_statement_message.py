"""A statement that begins with a family's member and is no entry call (``think[1] (2);``, ``kv[j];``) says
what such a statement is and how a stage's or a pool's member is used (serq_frontend.parser.syntax_error:
it said only "unexpected `(` (expected `.`)", the `.` of a queue member's entry call, ``D[j].decode (…)``).
"""

from __future__ import annotations

import pytest
import serq_frontend
from serq_frontend import CompileError

HEAD = """stage think[2] : delay;
pool kv[2] { cap 4; }
workload { arrive poisson(1); }
session {
"""
TAIL = """}
run { horizon 5; }
"""


def _error(body: str) -> str:
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(source=HEAD + body + TAIL)
    return str(e.value)


@pytest.mark.parametrize(("body", "ref", "what", "col"), [
    ("  think[1] (2);\n", "think[1]", "`(`", 12),
    ("  kv[ 1 ] (2);\n", "kv[ 1 ]", "`(`", 11),
    ("  think[1];\n", "think[1]", "`;`", 11),
    ("  run think[0] (1);\n  think[0 + 1] (2);\n", "think[0 + 1]", "`(`", 16),
    ("  branch (1) { run think[0] (1); } else { end; }\n  kv[0] (1);\n", "kv[0]", "`(`", 9),
])
def test_a_member_that_begins_a_statement_is_explained(body, ref, what, col):
    said = _error(body)
    line = HEAD.count("\n") + body.count("\n")
    assert said.splitlines()[0] == (
        f"<source>:{line}:{col}: error: unexpected {what} after `{ref}`: a statement that begins with a family's "
        f"member calls an entry of a queue's member, `{ref}.ENTRY (…);`; a stage's member runs with `run {ref} "
        f"(…);`, a pool's is held with `hold {ref} (…) {{ … }}`"), said
    assert said.splitlines()[2].index("^") == col + 1  # (the quoted line is indented by two)


def test_a_member_inside_an_expression_is_not_taken_for_a_statement():
    said = _error("  set x = think[1] (3);\n")
    assert "after `think[1]`" not in said and "unexpected `(`" in said
