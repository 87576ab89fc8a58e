"""`return` in a statement definition and `if (…) { … }` are other languages' words: each is named as
not part of this language with what to write. `return x;` was 'did you mean `turn`?' (a word close
in spelling, of another meaning); `if (c) { … }` a bare 'unexpected `{`'."""

from __future__ import annotations

from sqhelpers import compile_src, refused

TAIL = "stage svc : fifo;\nworkload { arrive poisson(1); }\n"


def test_return_in_a_definition():
    refused("def f(x) {\n  ⟨return x + 1;\n}\n" + TAIL + "session { run svc (1); }\n",
            "`return` is not part of this language; a definition that gives a value is `def NAME(PARAM, …) = expr;`")


def test_if_with_a_block():
    refused(TAIL + "session {\n  set x = 1;\n  ⟨if (x > 0) { run svc (1); }\n}\n",
            "`if` is not part of this language; a test is `branch (test) { … } else { … }`")


def test_return_and_if_stay_names():
    compile_src("let if = 1;\ndef return(x) = x;\n" + TAIL + "session { run svc (return(if)); }\n")
