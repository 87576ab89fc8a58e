"""The path of an IR file that nests too deeply is found in no memory in the length of a string it holds.

serq_ir's nesting scan (``_deep_path``) matched a string with ``"(?:[^"\\\\]|\\\\.)*"``, which keeps a
backtracking point a character: ``serq check`` of a 50 MB IR file of one long string and a list nested
3000 deep took 14 s and 6 GB to say where it nests. It shares serq.jsonin's possessive string pattern.
"""

from __future__ import annotations

import tracemalloc

import pytest
import serq_ir
from serq_ir.codec import JSON_DEPTH

N = 2_000_000


@pytest.mark.timeout(60)
def test_too_deep_after_a_long_string_is_placed_in_little_memory():
    # beyond what msgspec decodes on any supported Python (a RecursionError: about 1 000 deep on 3.11, 12 000 on
    # 3.13, whose C stack allowance is larger; at 3 000, 3.13 decoded the list and said the unknown field 's'
    # first), and beyond JSON_DEPTH
    deep = 60_000
    data = ('{"version": 2, "s": "' + "x" * N + '", "b": ' + "[" * deep + "]" * deep + "}").encode()
    tracemalloc.start(1)
    try:
        with pytest.raises(serq_ir.IRError) as info:
            serq_ir.decode(data, name="deep.ir.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "nests too deeply" in str(info.value)
    # the path goes into b, past the long string, and no deeper than JSON_DEPTH
    path = str(info.value).rpartition("- at '")[2]
    assert path.startswith("$.b[0][0]") and path.endswith("]'")
    assert path[len("$.b"):-1] == "[0]" * path.count("[0]") and path.count("[0]") < JSON_DEPTH
    assert peak < 8 * 2**20, peak
