"""A serving form's `on` without its stage, or its stages without their `,` (language.txt §2: `transfer [
'[' expr ']' | on STAGE [, STAGE]* ] expr from POOL to POOL ( expr ) ;`, and `prefill`, `decode`, `tool` with one
stage).

`transfer [0] on (1) from p to q (1);` parsed, `on (1)` read as the work, a call of a function `on`, and was
refused by the linker with "unknown function `on`"; `transfer on a b (1) …` likewise with "unknown function
`b`". `transfer on (1) …` and `transfer on a, (1) …` were "a transfer says where the KV moves", of transfers that
say it, and `prefill on (1);` "(expected a name)". Each now says what the form's head wants, at the word.
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, located

HEAD = """pool p { cap 8; }
pool q { cap 8; }
stage a : ps(1);
stage b : ps(1);
stage prefill[2] : delay;
stage link[2] : delay;
workload { arrive batch(1); }
"""
RUN = "run { horizon 5; }\n"
LEASE = "hold p (1) { run a (1); } lease p (inf); "


def _told(body: str) -> str:
    text, line, col = located(HEAD + "session { " + LEASE + "hold q (1) { " + body + " } }\n" + RUN)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text)
    first, source, caret = str(info.value).splitlines()
    assert source == "  " + text.splitlines()[line - 1]
    assert caret == " " * (col + 1) + "^"
    prefix = f"<source>:{line}:{col}: error: "
    assert first.startswith(prefix), first
    return first[len(prefix):]


@pytest.mark.parametrize("body, verb, tail, w", [
    ("transfer [0] ⟨on (1) from p to q (1);", "transfer", " from P to Q (n);", "X"),
    ("transfer[1] ⟨on (2 * 3) from p to q (1);", "transfer", " from P to Q (n);", "X"),
    ("prefill [0] ⟨on (1);", "prefill", ";", "W"),
    ("tool [0] ⟨on (1);", "tool", ";", "W"),
])
def test_an_index_then_on_without_a_stage_is_no_call_of_on(body, verb, tail, w):
    assert _told(body) == (f"unexpected `on`: a serving form names its stage by an index or by `on`, not both, and "
                           f"`on` is followed by the stage's name: `{verb}[j] ({w}){tail}` serves the role's array, "
                           f"`{verb} on S ({w}){tail}` the stage S")


def test_a_stage_after_another_without_a_comma_is_no_call():
    assert _told("transfer on a ⟨b (1) from p to q (1);") == (
        "unexpected `b`, a stage, where the transfer's work begins: the stages of `on` are separated by `,`, "
        "`transfer on a, b (X) from P to Q (n);`")
    assert _told("prefill on a ⟨b (1);") == (
        "unexpected `b`, a stage, where the work begins: `prefill on` names one stage, `prefill on a (W);`; a run "
        "over several is a `transfer` or the kernel's `run a, b (…);`")


TRANSFER = "`transfer on L (X) from P to Q (n);`, several stages separated by `,` (`transfer on L, M (X) …`)"


@pytest.mark.parametrize("body, said", [
    ("transfer on ⟨(1) from p to q (1);", "unexpected `(`: `on` is followed by the name of the stage the form "
     "runs on, " + TRANSFER),
    ("transfer on ⟨3 (1) from p to q (1);", "unexpected `3`: `on` is followed by the name of the stage the form "
     "runs on, " + TRANSFER),
    ("transfer on a, ⟨(1) from p to q (1);", "unexpected `(`: a `,` after a stage of `on` is followed by another "
     "stage, and the work by no `,`: " + TRANSFER),
    ("decode on ⟨(1);", "unexpected `(`: `on` is followed by the name of the stage the form runs on, "
     "`decode on S (W);`"),
    ("prefill on a, ⟨(1);", "unexpected `(`: a `,` after a stage of `on` is followed by another stage, and the "
     "work by no `,`: `prefill on S (W);`"),
])
def test_on_followed_by_no_stage_is_told_so(body, said):
    assert _told(body) == said


@pytest.mark.parametrize("body", [
    "transfer [0] (1) from p to q (1);",
    "transfer on a, b (1) from p to q (1);",
    "prefill on a (1);",
    "prefill [1] (1);",
])
def test_the_forms_written_as_the_spec_writes_them_compile(body):
    compile_src(("share maxmin;\n" if "," in body else "") + HEAD + "session { " + LEASE + "hold q (1) { " + body
                + " } }\n" + RUN)


def test_no_definition_is_named_on():
    """`on` cannot name a definition (`def on(x) = …;` is refused as a keyword's), so `on (…)` after an index is
    never a call the program could mean."""
    text, line, col = located("def ⟨on(x) = 2 * x;\n" + HEAD + "session { end; }\n" + RUN)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text)
    assert str(info.value).splitlines()[0] == (f"<source>:{line}:{col}: error: `on` is a keyword; a definition "
                                                "needs another name")
