"""A hold's header written wrong (language.txt §2: `hold POOL ( expr ) [reserve ( expr )] [, POOL ( expr ) …]
[reuse ( expr )] [at admission ( NAME = expr , ... )] block`).

A pool after another without the `,` (`hold reqs (1) kv (2) { … }`) was "unexpected `kv` (expected `,`, `{`, at,
reserve, reuse)"; a binding of `at admission` written as a test (`hit == …`) "unexpected `=` (expected `!`, `(`,
…)" at its second `=`. Each is told as what is wrong, at it.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told

BASE = """pool reqs { cap 4; }
pool kv { cap 100; }
stage s : delay;
workload { arrive batch(1); }
session { hold reqs (1), kv (2) reuse (hit) at admission (hit = cachedin(kv)) { run s (1); } cache (2); }
run { horizon 10; }
"""


def _told(old: str, new: str) -> str:
    assert BASE.count(old) == 1
    return told(BASE.replace(old, new))


@pytest.mark.parametrize("old, new, said", [
    ("reqs (1), kv (2)", "reqs (1) ⟨kv (2)", "unexpected `kv`: the pools of a hold are separated by `,`, `hold P "
     "(units), kv (units) { … }`"),
    ("(hit = cachedin(kv))", "(hit ⟨== cachedin(kv))", "unexpected `==`: a binding of `at admission` gives its name "
     "a value with `=`, `at admission (hit = …)` (`==` is a test of equality)"),
    ("(hit = cachedin(kv))", "(x = 1, hit ⟨== cachedin(kv))", "unexpected `==`: a binding of `at admission` gives "
     "its name a value with `=`, `at admission (hit = …)` (`==` is a test of equality)"),
    ("reqs (1), kv (2)", "reqs (1) ⟨cache (3), kv (2)", "`cache` goes after the hold's block"),  # as before
])
def test_a_hold_header_written_wrong(old, new, said):
    assert _told(old, new).startswith(said)


def test_the_header_as_written_compiles():
    compile_src(BASE)
