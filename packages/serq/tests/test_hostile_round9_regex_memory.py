"""Placing an error in a JSON file takes no memory in the length of a string it holds.

A JSON file whose object gives a key twice (a scenario, a step trace's line, an IR file) or that nests too
deeply is read a second time, token by token, to say where. A string token was matched by
``"(?:[^"\\\\]|\\\\.)*"``, a repeat of a one-character group that keeps a backtracking point a character
(some 100 bytes): ``serq vllm scenario`` of a 50 MB file holding one long string and a key given twice took
17 s and 6 GB to say so (``serq fit`` and ``serq check`` of an IR file alike). A string is now runs of plain
characters and escapes, each repeat possessive (``serq.jsonin.STRING``), which serq-ir's nesting scan
shares.
"""

from __future__ import annotations

import json
import re
import tracemalloc

import pytest
from serq.jsonin import STRING, JSONDuplicateKey, first_twice, loads

N = 2_000_000  # characters of the long string: the old match held some 200 MB for it


def _peak(fn):
    tracemalloc.start(1)
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.timeout(60)
def test_a_key_given_twice_after_a_long_string_is_placed_in_little_memory():
    text = '{"a": "' + "x" * N + '", "a": 1}'
    found = []
    peak = _peak(lambda: found.append(first_twice(text)))
    # the second "a" starts after {"a": " + N x + ", : offset 7 + N + 3
    assert found == [("a", N + 10, 1)]
    assert peak < 8 * 2**20, peak  # the text itself is not copied; the old scan held ~100 bytes a character
    with pytest.raises(JSONDuplicateKey):
        loads(text)


@pytest.mark.parametrize("s", ['""', r'"a\"b"', r'"\\"', r'"a\\\"\n"', '"\u00e9\U0001f600"', r'"\u0022"'])
def test_the_string_pattern_matches_exactly_a_json_string(s):
    assert re.fullmatch(STRING, s) is not None and isinstance(json.loads(s), str)
    # and stops at its closing quote, not a later one
    assert re.match(STRING, s + ', "z"').end() == len(s)


@pytest.mark.parametrize("s", ['"a', r'"a\"', '"a\\'])
def test_what_is_no_whole_string_is_not_matched(s):
    assert re.fullmatch(STRING, s) is None
