"""The cyclic collector while the IR is decoded or encoded (serq.shared.collector_raised,
docs/performance.md, "The same rule for a compile").

``serq_ir.decode`` (every IR file read, a compile cache hit) and ``serq_ir.encode`` (``serq ir``, the
compile cache's store) make the program's nodes by the hundred thousand for a large program, which live as
long as it does: each raises the collector's first threshold to serq.shared.WORK_GC_THRESHOLD while it
works and puts the thresholds back after, however it ends; a threshold set higher, or 0, is left as it is.
"""

from __future__ import annotations

import gc

import pytest
import serq_ir
import serq_ir.codec as codec
import serq_ir.validate as validate_mod
from ir_programs import mm1
from serq.shared import COLLECTOR, WORK_GC_THRESHOLD
from serq_ir import IRError

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def thresholds():
    old = gc.get_threshold()
    yield
    gc.set_threshold(*old)


def _watch(monkeypatch, module, name) -> list:
    seen = []
    fn = getattr(module, name)

    def watched(*a, **k):
        seen.append(gc.get_threshold())
        return fn(*a, **k)

    monkeypatch.setattr(module, name, watched)
    return seen


def test_decode_and_encode_raise_the_first_threshold_and_put_it_back(monkeypatch, thresholds):
    data = serq_ir.encode(mm1())
    gc.set_threshold(700, 10, 10)
    in_validate = _watch(monkeypatch, validate_mod, "validate")
    in_conform = _watch(monkeypatch, codec, "conform")
    program = serq_ir.decode(data)
    assert in_validate == [(WORK_GC_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)
    assert serq_ir.encode(program) == data
    assert in_conform == [(WORK_GC_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)
    assert COLLECTOR.count == 0


def test_a_refused_file_puts_it_back(thresholds):
    gc.set_threshold(700, 10, 10)
    with pytest.raises(IRError):
        serq_ir.decode(b'{"version": 2, "stages": 5}')
    assert gc.get_threshold() == (700, 10, 10)
    assert COLLECTOR.count == 0


@pytest.mark.parametrize("first", [0, 2 * WORK_GC_THRESHOLD])
def test_a_threshold_set_higher_or_off_is_left_as_it_is(monkeypatch, thresholds, first):
    data = serq_ir.encode(mm1())
    gc.set_threshold(first, 7, 9)
    in_validate = _watch(monkeypatch, validate_mod, "validate")
    serq_ir.decode(data)
    assert in_validate == [(first, 7, 9)]
    assert gc.get_threshold() == (first, 7, 9)
