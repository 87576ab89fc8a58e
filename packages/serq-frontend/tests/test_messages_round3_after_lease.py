"""A stray word or token after a hold's `lease P (time)` or `cache (units)`, the clauses that end it
(language.txt §2: `hold … block [ cache ( expr ) ] [ lease POOL ( expr ) ] ;`), told with what may follow.

`} lease kv (2) foo;` was "unexpected `;` (expected `(`, `.`, `[`)", at the `;` after the word (read as a
definition's call without its parentheses); `} lease kv (2) 5;` listed the tokens a statement may begin with.
Each is told at the word or the token: after the `lease` the hold has ended, and a `;`, the next statement or
the block's `}` follows; after the `cache`, its `lease` as well.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, told_in

BASE = """pool kv { cap 100; }
stage tool : delay;
workload { arrive poisson(1); }
session { hold kv (4) { tool (1); } TAIL }
run { horizon 10; }
"""
AFTER_LEASE = "a hold ends with its `lease`, and a `;`, the next statement or the block's `}` follows"
AFTER_CACHE = ("after a hold's `cache` comes its `lease P (time)`, a `;`, the next statement or the block's `}`")


def word(w: str, clause: str, follows: str) -> str:
    return (f"`{w}` after the hold's `{clause}` begins no statement: {follows} (a statement begins with one of "
            f"the language's words, or calls a definition, `{w}(…);`)")


@pytest.mark.parametrize("tail, said", [
    ("lease kv (2) ⟨foo;", word("foo", "lease kv (2)", AFTER_LEASE)),
    ("lease kv (2) ⟨foo", word("foo", "lease kv (2)", AFTER_LEASE)),  # the block's `}` after it
    ("lease kv (2) ⟨forever;", word("forever", "lease kv (2)", AFTER_LEASE)),
    ("lease kv (2) ⟨until 5;", word("until", "lease kv (2)", AFTER_LEASE)),
    ("lease kv (inf)\n  ⟨then;", word("then", "lease kv (inf)", AFTER_LEASE)),
    ("cache (2) lease kv (2) ⟨s;", word("s", "lease kv (2)", AFTER_LEASE)),
    ("cache (2) ⟨foo;", word("foo", "cache (2)", AFTER_CACHE)),
    ("lease kv (2) ⟨5;", "unexpected `5` after the hold's `lease kv (2)`: " + AFTER_LEASE),
    ("lease kv (2) ⟨= 3;", "unexpected `=` after the hold's `lease kv (2)`: " + AFTER_LEASE),
    ("lease kv (2)⟨, kv (3);", "unexpected `,` after the hold's `lease kv (2)`: " + AFTER_LEASE
     + " (a hold leases one pool)"),
    ("cache (2) ⟨(3);", "unexpected `(` after the hold's `cache (2)`: " + AFTER_CACHE),
])
def test_a_stray_word_after_the_holds_end_is_told_what_may_follow(tail, said):
    assert told_in(BASE, "TAIL", tail) == said


@pytest.mark.parametrize("tail, said", [
    # the language's words and words close to them keep their own hints
    ("lease kv (2) ⟨cache (3);", "`cache` comes before `lease`"),
    ("lease kv (2) ⟨cahce (3);", "`cahce` does not begin a statement (did you mean `cache`?)"),
    ("lease kv (2) ⟨reuse (3);", "`reuse` goes before the hold's block"),
])
def test_the_languages_words_keep_their_hints(tail, said):
    assert told_in(BASE, "TAIL", tail).startswith(said)


@pytest.mark.parametrize("tail", ["lease kv (2)", "lease kv (2);", "lease kv (2) tool (1);", "cache (1) tool (1);"])
def test_what_may_follow_compiles(tail):
    compile_src(BASE.replace("TAIL", tail))
