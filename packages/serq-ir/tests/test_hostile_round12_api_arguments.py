"""``serq_ir.load`` and ``serq_ir.strip_spans`` check their argument at the call: a wrong type is a
TypeError naming it, the empty path a ValueError. ``load(None)`` and ``load(b"p.json")`` were pathlib's
TypeErrors, ``load("")`` read the current folder ("error: .: cannot read"), and ``strip_spans(None)`` was
msgspec's ValidationError "Expected `object`, got `null`" (the class of a bad IR, not of a bad call)."""

from __future__ import annotations

import pytest
import serq_ir

pytestmark = pytest.mark.timeout(60)


class BytesPath:
    def __fspath__(self):
        return b"p.ir.json"


@pytest.mark.parametrize("call, kind, said", [
    (lambda: serq_ir.load(None), TypeError, "load() takes the IR file's path, a str or os.PathLike, not NoneType"),
    (lambda: serq_ir.load(b"p.ir.json"), TypeError, "load() takes the IR file's path, a str or os.PathLike, not bytes"),
    (lambda: serq_ir.load(BytesPath()), TypeError,
     "load() takes the IR file's path, a str or os.PathLike, not BytesPath naming bytes"),
    (lambda: serq_ir.load(""), ValueError, "load()'s path is empty: it names no file"),
    (lambda: serq_ir.strip_spans(None), TypeError, "strip_spans() takes a serq_ir.Program, not NoneType"),
    (lambda: serq_ir.strip_spans({"version": 2}), TypeError, "strip_spans() takes a serq_ir.Program, not dict"),
])
def test_a_wrong_argument_is_said_naming_it(call, kind, said):
    with pytest.raises(kind) as info:
        call()
    assert type(info.value) is kind and str(info.value) == said
