"""Malformed IR gives one line naming the file and the place, never a traceback."""

from __future__ import annotations

import pytest
import serq_ir
from ir_programs import mm1

GOOD = serq_ir.encode(mm1()).decode()

CASES = {
    "truncated": (GOOD[: len(GOOD) // 2], "error: bad.ir.json: Input data was truncated"),
    "wrong type": (GOOD.replace('"horizon":100000.0', '"horizon":"long"'),
                   "error: bad.ir.json: Invalid enum value 'long' - at '$.run.horizon'"),
    "wrong type in list": (GOOD.replace('"servers":1.0', '"servers":[1]'),
                           "error: bad.ir.json: Expected 'float | str', got 'array' - at '$.stages[0].kind.servers'"),
    "unknown field": (GOOD.replace('"version":2', '"version":2,"colour":"red"'),
                      "error: bad.ir.json: Object contains unknown field 'colour'"),
    "another version": (GOOD.replace('"version":2', '"version":99'),
                        "error: bad.ir.json: IR version 99 is not supported (this serq-ir reads version 2)"
                        " - at '$.version'"),
    "missing version": ("{}", "error: bad.ir.json: IR version null is not supported"
                        " (this serq-ir reads version 2) - at '$.version'"),
    "unknown node kind": (GOOD.replace('"kind":"Fifo"', '"kind":"Lifo"'),
                          "error: bad.ir.json: Invalid value 'Lifo' - at '$.stages[0].kind.kind'"),
    "not json": ("hello", "error: bad.ir.json: JSON is malformed: invalid character (byte 0)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_line_error(case):
    data, message = CASES[case]
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(data, name="bad.ir.json")
    assert str(info.value) == message
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(serq_ir.IRError, match=r"^error: .*nope.ir.json: cannot read"):
        serq_ir.load(tmp_path / "nope.ir.json")
