"""Conformance of language.txt §3, at admission: "The body sees a binding too. One the body reads is set at
its top, set known = e;, which is its admission value … The name of a binding the body reads is its own:
not … an attribute the program sets".

docs/language.md keeps lib/vllm.sq's habit of writing that set itself (`at admission (known = …)` and `set
known = …;` as the body's first statement): the frontend then does not set it again. But any first set was
taken for it, so `hold p (h) at admission (h = 1) { set h = 3; run d (h); }` admitted 1 unit and ran 3: the
body read another value than the header's under the binding's name, the program setting the name the
spec says is the binding's own. Only the binding's own expression, reading nothing the body has set before
it, is that set; any other is refused at it.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes, refused

HEAD = "pool p { cap 8; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
RUN = "run { horizon 5; }\n"


def prog(body: str) -> str:
    return HEAD + "session { set x = 1; " + body + " }\n" + RUN


@pytest.mark.parametrize("body, why", [
    ("hold p (h) at admission (h = 1) { ⟨set h = 3; run d (h); }", "is not the binding's own expression"),
    ("hold p (h) at admission (h = x + 1) { ⟨set h = 1 + x; run d (h); }", "is not the binding's own expression"),
    ("hold p (h) at admission (h = x + 1) { run d (1); ⟨set h = x + 2; run d (h); }",
     "is not the binding's own expression"),
    ("hold p (h) at admission (h = x + 1) { set x = 5; ⟨set h = x + 1; run d (h); }",
     "reads `x`, which the body sets before it"),
    ("hold p (h + k) at admission (h = x + 1, k = h * 2) { set h = x + 1; ⟨set k = h * 3; run d (h + k); }",
     "is not the binding's own expression"),
])
def test_a_first_set_of_a_binding_with_another_value_is_refused(body, why):
    e = refused(prog(body), f"at the top of the body {why}")
    assert "another value than the one the header was admitted with" in str(e)


@pytest.mark.parametrize("written, plain", [
    # the binding's own expression set first: the very set the frontend writes (the IR of the program
    # without it)
    ("hold p (h) at admission (h = x + 1) { set h = x + 1; run d (h); }",
     "hold p (h) at admission (h = x + 1) { run d (h); }"),
    # k's set reads the attribute h set just before it (the frontend's would read x + 1 in its place)
    ("hold p (h + k) at admission (h = x + 1, k = h * 2) { set h = x + 1; set k = h * 2; run d (h + k); }", None),
    # set later, before anything reads it and after nothing it reads was set: the same value, kept as written
    ("hold p (h) at admission (h = x + 1) { run d (1); set h = x + 1; run d (h); }", None),
])
def test_the_bindings_own_set_is_kept(written, plain):
    a = ir_bytes(compile_src(prog(written)))
    if plain is not None:
        assert a == ir_bytes(compile_src(prog(plain)))


def test_lib_vllm_still_compiles():
    """lib/vllm.sq's vllm_request writes `set known = max(had, …);` under `at admission (known = max(had,
    …))`; examples/multi-turn/vllm.sq uses it."""
    import serq_frontend
    from sqhelpers import EXAMPLES, make_pm

    prog = serq_frontend.compile(EXAMPLES / "multi-turn" / "vllm.sq", pm=make_pm())
    assert prog.session
