"""serq.jsonin.loads reads a user's JSON as json.loads with its guard on every integer (parse_int), calling
the guard only when the text has a run of digits long enough for it to refuse: the same value or the same
error for every text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serq import jsonin


def guarded(text):
    try:
        return "ok", jsonin.json.loads(text, parse_int=jsonin._int)
    except (ValueError, RecursionError) as e:
        return type(e).__name__, str(e)


def read(text):
    try:
        return "ok", jsonin.loads(text)
    except (ValueError, RecursionError) as e:
        return type(e).__name__, str(e)


digits = st.integers(0, 400).map(lambda n: "9" * n)
tokens = st.sampled_from(['{"a": ', "[", "]", "}", ", ", "-", "1", "0.5", "e3", '"x"', " ", "NaN", ":"]) | digits
texts = st.lists(tokens, max_size=8).map("".join)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(texts)
def test_every_text_reads_as_with_the_guard_on_every_integer(text):
    assert read(text) == guarded(text)
    assert read(text.encode()) == guarded(text.encode())


@pytest.mark.parametrize("n", [307, 308, 309, 310, 5000])
def test_an_integer_at_the_limit(n):
    text = json.dumps({"budget": 1}).replace("1", "1" + "0" * (n - 1))
    assert read(text) == guarded(text)
    assert (read(text)[0] == "ok") == (n <= jsonin.MAX_DIGITS)
