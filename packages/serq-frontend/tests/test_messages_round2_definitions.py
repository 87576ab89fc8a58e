"""Definitions and items written wrong (language.txt §2: `def NAME ( NAME , ... ) = expr ;`, `def NAME ( NAME ,
... ) block`, used as `NAME ( arg , ... ) ;`; every item but a block's ends in `;`).

A statement definition used without its arguments (`g;`) was "`g` does not begin a statement: … or calls a
definition, `g(…);`", of a name the program defines; an item whose `;` is missing before an item on the next line
(`def f(a) = a` then `def g…`, `let y = 3` then `stage …`) "two names side by side, `a def`". Each is told as what
is wrong, where.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

BASE = """def f(a, b) = a + b;
def g(p) { hold kv (p) { run s (1); } }
pool kv { cap 10; }
stage s : delay;
workload { arrive batch(1); }
session { set x = f(1, 2); g(1); }
run { horizon 10; }
"""


def _told(old: str, new: str) -> str:
    assert BASE.count(old) == 1
    return told(BASE.replace(old, new))


@pytest.mark.parametrize("old, new, said", [
    ("g(1); }", "⟨g; }", "`g` is a definition: its use gives its arguments in parentheses, `g(…);`"),
    ("g(1); }", "⟨zz; }", "`zz` does not begin a statement: a statement begins with one of the language's words "
     "(`run`, `hold`, `set`, …), or calls a definition, `zz(…);`"),  # no such definition: as before
    ("a + b;", "a + b⟨", "missing `;` (found `def` next)"),
    ("cap 10; }\n", "cap 10; }\nlet y = 3⟨\n", "missing `;` (found `stage` next)"),
])
def test_a_definition_or_item_written_wrong(old, new, said):
    assert _told(old, new) == said


def test_the_program_compiles():
    compile_src(BASE)
