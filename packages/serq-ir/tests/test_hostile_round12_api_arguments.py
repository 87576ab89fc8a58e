"""``serq_ir.load`` and ``serq_ir.strip_spans`` check their argument at the call: a wrong type is a
TypeError naming it, the empty path a ValueError. ``load(None)`` and ``load(b"p.json")`` were pathlib's
TypeErrors, ``load("")`` read the current folder ("error: .: cannot read"), and ``strip_spans(None)`` was
msgspec's ValidationError "Expected `object`, got `null`" (the class of a bad IR, not of a bad call).
The switches ``decode(check=)`` and ``encode(spans=)`` are True or False (serq.numbers.switch): they were
taken by their truth (``check="no"`` checked, ``spans=None`` left the spans out), and ``decode``'s ``name``,
which every message names, is a str."""

from __future__ import annotations

import numpy as np
import pytest
import serq_frontend
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


@pytest.fixture(scope="module")
def program():
    return serq_frontend.compile(source="stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n")


@pytest.mark.parametrize("call, said", [
    (lambda p: serq_ir.decode(serq_ir.encode(p), check="no"), "check must be True or False, not 'no'"),
    (lambda p: serq_ir.decode(serq_ir.encode(p), check=None), "check must be True or False, not None"),
    (lambda p: serq_ir.decode(serq_ir.encode(p), name=3), "decode()'s name is a str, not int"),
    (lambda p: serq_ir.encode(p, spans=None), "spans must be True or False, not None"),
    (lambda p: serq_ir.encode_pretty(p, spans="no"), "spans must be True or False, not 'no'"),
])
def test_a_switch_or_name_of_the_wrong_type_is_a_type_error(program, call, said):
    with pytest.raises(TypeError) as info:
        call(program)
    assert str(info.value) == said


def test_a_bool_is_a_switch(program):
    stripped = serq_ir.encode(program, spans=np.bool_(False))
    assert b'"span"' in serq_ir.encode(program) and b'"span"' not in stripped
    assert serq_ir.decode(stripped, check=np.bool_(True)) == serq_ir.strip_spans(program)
