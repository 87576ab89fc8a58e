"""A clause's word misspelt, told as the word meant, and the statements that take nothing given parentheses.

`hold kv (4) reserv (4) { … }` was told "the pools of a hold are separated by `,`, `hold P (units), reserv
(units) { … }`", a pool named `reserv`; `branch wiht (0.5)` "`branch` takes its test in parentheses";
`tool onn link (1);` "two names side by side, `onn link`"; `end();` "(expected `;`)". Each is now told at the
word, with the word meant and the form.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
stage link : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } }
run { horizon 10; }
"""
HOLD = "`hold P (units) reserve (r), Q (units) reuse (ρ) at admission (x = …) { … }`"


@pytest.mark.parametrize("old, new, said", [
    ("hold kv (4)", "hold kv (4) ⟨reserv (4)", "unexpected `reserv` (did you mean `reserve`?): " + HOLD),
    ("hold kv (4)", "hold kv (4) ⟨reus (4)", "unexpected `reus` (did you mean `reuse`?): " + HOLD),
    ("tool (1);", "branch ⟨wiht (0.5) { tool (1); }", "unexpected `wiht` (did you mean `with`?): `branch with (p) "
     "{ … }`"),
    ("tool (1);", "tool ⟨onn link (1);", "unexpected `onn` (did you mean `on`?): `tool on S (work);`"),
    ("tool (1);", "tool (1); end⟨();", "unexpected `(`: `end` takes nothing, `end;`"),
    ("tool (1);", "tool (1); turn⟨();", "unexpected `(`: `turn` takes nothing, `turn;`"),
])
def test_the_word_meant_is_offered(old, new, said):
    assert told_in(BASE, old, new) == said


def test_a_second_pool_without_its_comma_is_told_as_before():
    src = BASE.replace("pool kv { cap 100; }", "pool kv { cap 100; }\npool q { cap 1; }").replace(
        "hold kv (4)", "hold kv (4) ⟨q (1)")
    assert told(src).startswith("unexpected `q`: the pools of a hold are separated by `,`")


def test_the_forms_compile():
    compile_src(BASE.replace("hold kv (4)", "hold kv (4) reserve (4) reuse (4)").replace(
        "tool (1); }", "branch with (0.5) { tool on link (1); } } cache (4)"))
