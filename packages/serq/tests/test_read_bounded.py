"""serq.files.read_bounded: what a stream holds up to a bound and one byte, in a buffer of what it holds."""

from __future__ import annotations

import io
import tracemalloc

from serq.files import read_bounded


def test_a_regular_file_of_its_size_is_read_at_once_without_a_buffer_of_the_bound():
    tracemalloc.start(1)
    try:
        assert read_bounded(io.BytesIO(b"abc"), 2**28, 3) == b"abc"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**16, peak


def test_a_file_that_grew_and_a_pipe_are_read_in_pieces_to_the_bound_and_one():
    assert read_bounded(io.BytesIO(b"0123456789"), 100, 4) == b"0123456789"
    assert read_bounded(io.BytesIO(b"0123456789"), 100) == b"0123456789"
    assert read_bounded(io.BytesIO(b"0123456789"), 6) == b"0123456"  # 7 bytes: more than the bound of 6
    data = b"y" * (2**20 * 2 + 5)
    assert read_bounded(io.BytesIO(data), 2**21 + 1) == data[: 2**21 + 2]
    assert read_bounded(io.BytesIO(b""), 10) == b""
    assert read_bounded(io.BytesIO(b""), 10, 0) == b""
