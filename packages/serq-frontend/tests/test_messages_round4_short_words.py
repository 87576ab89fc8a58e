"""A word of two letters one letter off a word the place takes is offered it: `tp` for `to`, `st` for `at`, `om`
for `on`, `yb` for `by`. difflib's closeness (serq.errors.did_you_mean) found nothing for them (half their letters
differ), so `hold kv (4) st admission (…)` listed the words without the one meant and `choose c in 2 yb (c);`
was told a `;` was missing. Only the one candidate of two letters one substitution or swap away is offered:
none where two are, nor a longer word for a two-letter one where a `;` may be what is missing.
"""

from __future__ import annotations

import pytest
from serq.errors import did_you_mean, one_edit
from sqhelpers import told_in

BASE = """pool kv { cap 100; }
pool p { cap 8; }
stage tool : delay;
stage link : delay;
stage e : step { budget 4; cost 1; }
workload { arrive poisson(1); }
session { hold p (1) { run link (1); } lease p (inf); hold kv (4) { tool (1); } }
run { horizon 10; }
"""


@pytest.mark.parametrize("old, new, meant", [
    ("hold kv (4)", "hold kv (4) ⟨st admission (h = 1)", "at"),
    ("hold kv (4)", "hold kv (4) ⟨ta admission (h = 1)", "at"),
    ("tool (1);", "prefill ⟨om e (1);", "on"),
    ("tool (1);", "decode ⟨no e (1);", "on"),
    ("tool (1);", "transfer (1) from p ⟨tp kv (1);", "to"),
    ("tool (1);", "transfer (1) from p ⟨ot kv (1);", "to"),
    ("tool (1);", "choose c in 2 ⟨yb (c);", "by"),
    ("stage tool : delay;", "stage tool : ⟨sp(1);", "ps"),
])
def test_a_two_letter_word_one_letter_off_is_offered_the_word(old, new, meant):
    said = told_in(BASE, old, new)
    assert f"(did you mean `{meant}`?)" in said, said


def test_the_candidates_are_the_places_words():
    # `bt` is one letter from `at` and from `by`; after a choose's count only `by` is taken there
    assert told_in(BASE, "tool (1);", "choose c in 2 ⟨bt (c);").startswith("unexpected `bt` (did you mean `by`?)")


@pytest.mark.parametrize("word, candidates, offered", [
    ("tp", ["to", "at", "on", "run"], "to"),
    ("TP", ["to", "at"], "to"),  # compared case-folded, as every name is
    ("ot", ["to", "on", "at"], None),  # `to` swapped, `on` one letter off: two, so neither
    ("bt", ["at", "by"], None),
    ("xy", ["to", "at", "on"], None),  # two letters off each
    ("kw", ["kv", "lam"], "kv"),  # a program's names too (a --set of a let `kv`)
])
def test_did_you_mean_offers_the_one_candidate_one_edit_away(word, candidates, offered):
    assert did_you_mean(word, candidates) == (f" (did you mean `{offered}`?)" if offered else "")


def test_one_edit_is_a_letter_or_a_swap_of_neighbours():
    assert one_edit("abcd", ["abxd"]) == "abxd" and one_edit("abcd", ["bacd"]) == "bacd"
    assert one_edit("abcd", ["acbd", "abce"]) is None  # two candidates
    assert one_edit("abcd", ["dbca", "abcde", "abc", "abcd"]) is None  # a far swap, another length, itself
