"""``serq_ir.decode`` and ``serq_ir.encode`` say what they take: ``decode(3)`` or ``decode({...})`` was an
AttributeError of ``startswith``, a str holding a lone surrogate a UnicodeEncodeError, a memoryview an
AttributeError; ``encode("x")`` (a str, a dict: anything msgspec encodes) returned JSON of it, silently,
where a program was meant."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir
from serq_ir.errors import IRError

PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"


@pytest.mark.parametrize("data", [3, None, {"version": 2}, [b"{}"]])
def test_decode_of_what_is_no_text_is_a_type_error(data):
    with pytest.raises(TypeError) as info:
        serq_ir.decode(data)
    assert str(info.value) == f"decode() takes the IR's JSON as bytes or str, not {type(data).__name__}"


def test_decode_of_text_that_is_not_unicode_is_an_ir_error():
    with pytest.raises(IRError) as info:
        serq_ir.decode('{"version": "\udc80"}', name="p.ir.json")
    assert str(info.value) == "error: p.ir.json: the text is not Unicode: '\\udc80' at character 14"


def test_decode_takes_bytes_str_bytearray_and_memoryview():
    data = serq_ir.encode(serq_frontend.compile(source=PROGRAM))
    programs = [serq_ir.decode(x) for x in (data, data.decode(), bytearray(data), memoryview(data))]
    assert len({serq_ir.encode(p) for p in programs}) == 1


@pytest.mark.parametrize("value", ["x", {"version": 2}, 3])
def test_encode_of_what_is_no_program_is_a_type_error(value):
    with pytest.raises(TypeError) as info:
        serq_ir.encode(value)
    assert str(info.value) == f"encode() takes a serq_ir.Program, not {type(value).__name__}"
