"""The bridge reads a scenario in a buffer of what the file holds: ``read(MAX_SCENARIO + 1)`` took a buffer of
256 MB for a scenario of a few kB, from a file and from standard input alike (a bound on virtual memory of a
few hundred MB failed it)."""

from __future__ import annotations

import io
import subprocess
import sys
import tracemalloc

import pytest
from serq_vllm import real
from serq_vllm.real import _Unreadable, read_scenario_file

pytestmark = pytest.mark.timeout(60)

SCENARIO = b'{"budget": 64, "requests": [' + b",".join(b"%d" % i for i in range(300)) + b"]}"


def peak_of(fn):
    tracemalloc.start(1)
    try:
        value = fn()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_small_file_is_read_without_a_buffer_of_the_bound(tmp_path):
    (tmp_path / "s.json").write_bytes(SCENARIO)
    got, peak = peak_of(lambda: read_scenario_file(str(tmp_path / "s.json")))
    assert got["requests"] == list(range(300))
    assert peak < 2**20, peak  # 256 MB before


def test_a_stream_is_read_in_pieces_to_the_bound(monkeypatch):
    got, peak = peak_of(lambda: real._read_bounded(io.BytesIO(SCENARIO), None))
    assert got == SCENARIO and peak < 2**20, peak
    monkeypatch.setattr(real, "MAX_SCENARIO", 5 * 2**20 // 2)  # 2.5 MiB: three pieces and the byte past it
    big = b"x" * (3 * 2**20)
    got = real._read_bounded(io.BytesIO(big), None)
    assert len(got) == real.MAX_SCENARIO + 1  # the bound and one: refused by the caller


def test_a_file_that_grew_is_read_on(monkeypatch):
    # fstat said 4 bytes; the file holds 10 now: the rest in pieces, all of it
    assert real._read_bounded(io.BytesIO(b"0123456789"), 4) == b"0123456789"


def test_a_file_beyond_the_bound_is_refused_from_its_size(tmp_path, monkeypatch):
    f = tmp_path / "s.json"
    with open(f, "wb") as out:
        out.truncate(real.MAX_SCENARIO + 1)  # sparse: nothing of it is read
    (_, peak) = (None, None)
    tracemalloc.start(1)
    try:
        with pytest.raises(_Unreadable) as e:
            read_scenario_file(str(f))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "more than 256 MiB, more than a scenario may have" in str(e.value)
    assert peak < 2**20, peak


def test_standard_input_is_read_whole():
    code = "import sys; from serq_vllm.real import read_scenario_file; print(len(read_scenario_file('-')['requests']))"
    r = subprocess.run([sys.executable, "-c", code], input=SCENARIO, capture_output=True, timeout=30)
    assert r.returncode == 0 and r.stdout == b"300\n", r.stderr
