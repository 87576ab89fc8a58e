"""serq_ir.decode of bytes that are not UTF-8 where the JSON breaks, and of a version too long to print.

* IR saved as UTF-16 was "JSON is malformed: invalid character (at offset 0)": msgspec reports the byte
  where the JSON breaks, and only text it could not decode as UTF-8 inside a string was called so. A byte
  that is not UTF-8 at or before the break is now named as the other readers name it, with the byte-order
  mark of a file saved as UTF-16 or UTF-32.
* ``"version": 1000…0`` (401 digits) was printed whole in the one-line error.
"""

from __future__ import annotations

import json

import pytest
import serq_ir
from ir_programs import mm1
from serq_ir import IRError

IR = json.loads(serq_ir.encode(mm1()))


def test_the_ir_decodes():
    assert serq_ir.decode(json.dumps(IR), name="p.ir.json").stages[0].name == "server"


@pytest.mark.parametrize(("encoding", "mark"), [("utf-16", "UTF-16 byte-order mark (FF FE)"),
                                                ("utf-32", "UTF-32 byte-order mark (FF FE 00 00)")])
def test_utf16_and_utf32_are_named(encoding, mark):
    with pytest.raises(IRError) as info:
        serq_ir.decode(json.dumps(IR).encode(encoding), name="p.ir.json")
    first = str(info.value).splitlines()[0]
    assert first.startswith("p.ir.json:1:1: error: the file is not UTF-8 text (byte 0xFF at offset 0); it begins "
                            f"with a {mark}: serQ reads UTF-8 text"), first


def test_latin1_where_the_json_breaks_is_named_at_its_byte():
    data = json.dumps(IR).encode().replace(b'"name": "server"', b'"name": \xe9"server"')
    with pytest.raises(IRError) as info:
        serq_ir.decode(data, name="p.ir.json")
    assert "error: the file is not UTF-8 text (byte 0xE9 at offset " in str(info.value).splitlines()[0]


def test_malformed_utf8_json_is_still_malformed_json():
    with pytest.raises(IRError) as info:
        serq_ir.decode(json.dumps(IR).replace('"rate": 0.8', '"rate": NaN'), name="p.ir.json")
    assert "error: JSON is malformed: invalid character" in str(info.value)
    data = json.dumps(IR).replace('"server"', '"serv\u00e9r"', 1).replace('"rate": 0.8', '"rate": NaN').encode()
    with pytest.raises(IRError) as info:  # (UTF-8 before the break: still the JSON's fault)
        serq_ir.decode(data, name="p.ir.json")
    assert "error: JSON is malformed: invalid character" in str(info.value)


def test_a_version_of_many_digits_is_cut():
    text = json.dumps(IR).replace(f'"version": {serq_ir.IR_VERSION}', '"version": 1' + "0" * 400)
    with pytest.raises(IRError) as info:
        serq_ir.decode(text, name="p.ir.json")
    assert str(info.value) == ("error: p.ir.json: IR version 10000000000000000000… (401 characters) is not supported "
                               f"(this serq-ir reads version {serq_ir.IR_VERSION}) - at '$.version'")
