"""A serving form given both an index and `on` (language.txt §2: `transfer [ '[' expr ']' | on STAGE [, STAGE]* ]
expr from POOL to POOL ( expr ) ;`, one of the two, and the same for prefill, decode and tool).

`transfer [0] on a (1) from p to q (1);` was refused at the `(` with "a transfer says where the KV moves",
which its `from p to q (1)` does; `decode [0] on a (1);` with "two names side by side, `on a`". Both now say
that the form names its stage by an index or by `on`, at the `on`, as `prefill [0] on P 3;` was told already.
"""

from __future__ import annotations

import pytest
import serq_frontend
from sqhelpers import compile_src, located

HEAD = """pool p { cap 8; }
pool q { cap 8; }
stage a[2] : ps(1);
stage b : ps(1);
stage decode[2] : delay;
workload { arrive batch(1); }
"""
RUN = "run { horizon 5; }\n"


def _both(verb: str) -> str:
    return (f"unexpected `on`: a serving form names its stage by an index or by `on`, not both: `{verb}[j] …;` "
            f"serves the role's array, `{verb} on S …;` the stage S")


@pytest.mark.parametrize("body, verb", [
    ("transfer [0] ⟨on a (1) from p to q (1);", "transfer"),
    ("transfer[1] ⟨on a (1) from p to q (1);", "transfer"),
    ("transfer [0] ⟨on a, b (1) from p to q (1);", "transfer"),
    ("transfer [0] ⟨on a[1] (1) from p to q (1);", "transfer"),
    ("decode [0] ⟨on a (1);", "decode"),
])
def test_an_index_and_on_are_told_at_the_on(body, verb):
    text, line, col = located(HEAD + "session { hold q (1) { " + body + " } }\n" + RUN)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text)
    first, source, caret = str(info.value).splitlines()
    assert first == f"<source>:{line}:{col}: error: {_both(verb)}"
    assert source == "  " + text.splitlines()[line - 1]
    assert caret == " " * (col + 1) + "^"


@pytest.mark.parametrize("body", [
    "transfer [0] (1) from p to q (1);",
    "transfer on a[1] (1) from p to q (1);",
    "transfer on a[0], b (1) from p to q (1);",
])
def test_an_index_or_on_alone_compiles(body):
    compile_src(("share maxmin;\n" if "," in body else "") + HEAD + "stage link[2] : delay;\nsession { hold p (1) { run b (1); } lease p (inf); hold q (1) { "
                + body + " } }\n" + RUN)


def test_a_transfer_without_from_is_still_told_how_it_is_written():
    text, line, col = located(HEAD + "session { hold q (1) { transfer (1) ⟨on a from p to q (1); } }\n" + RUN)
    with pytest.raises(serq_frontend.CompileError) as info:
        compile_src(text)
    first = str(info.value).splitlines()[0]
    assert first == (f"<source>:{line}:{col}: error: unexpected `on`: a transfer names its stages before its "
                     "work, `transfer on L (X) from P to Q (n);`")
