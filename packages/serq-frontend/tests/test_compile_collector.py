"""The cyclic collector during a compile (serq.shared.collector_raised, docs/performance.md).

A compile (serq_frontend.compile, parse, and serq_frontend.cache.load: the compile, the IR's encoding for
the cache, a hit's decoding) raises the collector's first threshold to serq.shared.WORK_GC_THRESHOLD while
it works, and puts the thresholds back when it ends, however it ends. A threshold the caller set higher, or
0 (automatic collection off), is left as it is. A run under way shares the one setting
(serq-sim's test_run_collector.py).
"""

from __future__ import annotations

import gc

import pytest
import serq_frontend
import serq_frontend.cache as cache
import serq_ir
from serq.shared import COLLECTOR, WORK_GC_THRESHOLD
from serq_frontend import CompileError

pytestmark = pytest.mark.timeout(60)

SRC = """pool server { cap 1; }
stage svc : delay;
workload { arrive poisson(0.5); }
session { set t0 = now; hold server (1) { run svc (~exp(1)); } observe response = now - t0; }
run { horizon 100; seed 3; }
"""


@pytest.fixture
def thresholds():
    old = gc.get_threshold()
    yield
    gc.set_threshold(*old)


def _watch_parse(monkeypatch) -> list:
    """The thresholds seen while the parsed program is checked (inside the compile's work)."""
    seen = []
    check = serq_frontend._check_nesting

    def check_(module, ctx):
        seen.append(gc.get_threshold())
        return check(module, ctx)

    monkeypatch.setattr(serq_frontend, "_check_nesting", check_)
    return seen


def test_a_compile_raises_the_first_threshold_and_puts_it_back(monkeypatch, thresholds):
    gc.set_threshold(700, 10, 10)
    seen = _watch_parse(monkeypatch)
    serq_frontend.compile(source=SRC)
    serq_frontend.parse(source=SRC)
    assert seen == [(WORK_GC_THRESHOLD, 10, 10)] * 2
    assert gc.get_threshold() == (700, 10, 10)
    assert COLLECTOR.count == 0


def test_a_failed_compile_puts_it_back(monkeypatch, thresholds):
    gc.set_threshold(700, 10, 10)
    seen = _watch_parse(monkeypatch)
    with pytest.raises(CompileError):
        serq_frontend.compile(source=SRC.replace("run svc", "run nosuch"))
    assert seen == [(WORK_GC_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("first", [0, 2 * WORK_GC_THRESHOLD])
def test_a_threshold_set_higher_or_off_is_left_as_it_is(monkeypatch, thresholds, first):
    gc.set_threshold(first, 7, 9)
    seen = _watch_parse(monkeypatch)
    serq_frontend.compile(source=SRC)
    assert seen == [(first, 7, 9)]
    assert gc.get_threshold() == (first, 7, 9)


def test_the_cached_load_raises_it_for_the_store_and_the_hit(monkeypatch, thresholds, tmp_path):
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    prog = tmp_path / "p.sq"
    prog.write_text(SRC)
    gc.set_threshold(700, 10, 10)
    seen = []
    import serq_ir.codec as codec

    encode, decode = codec._encode, codec._decode  # (the work inside serq_ir.encode and decode)

    def encode_(*a, **k):
        seen.append(("store", gc.get_threshold()))
        return encode(*a, **k)

    def decode_(*a, **k):
        seen.append(("hit", gc.get_threshold()))
        return decode(*a, **k)

    monkeypatch.setattr(codec, "_encode", encode_)
    monkeypatch.setattr(codec, "_decode", decode_)
    first = cache.load(prog)
    second = cache.load(prog)  # a hit
    assert seen == [("store", (WORK_GC_THRESHOLD, 10, 10)), ("hit", (WORK_GC_THRESHOLD, 10, 10))]
    assert gc.get_threshold() == (700, 10, 10)
    assert serq_ir.encode(first) == serq_ir.encode(second)
