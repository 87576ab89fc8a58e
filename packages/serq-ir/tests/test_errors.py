"""Malformed IR gives one line naming the file and the place, never a traceback."""

from __future__ import annotations

import pytest
import serq_ir
from ir_programs import mm1

GOOD = serq_ir.encode(mm1()).decode()

CASES = {
    "wrong type": (GOOD.replace('"horizon":100000.0', '"horizon":"long"'),
                   'error: bad.ir.json: a number is wanted (or "-inf", "inf"), not the text "long"'
                   " - at '$.run.horizon'"),
    "wrong type in list": (GOOD.replace('"servers":1.0', '"servers":[1]'),
                           'error: bad.ir.json: a number is wanted (or "-inf", "inf"), not a list'
                           " - at '$.stages[0].kind.servers'"),
    "unknown field": (GOOD.replace('"version":2', '"version":2,"colour":"red"'),
                      "error: bad.ir.json: Object contains unknown field 'colour'"),
    "another version": (GOOD.replace('"version":2', '"version":99'),
                        "error: bad.ir.json: IR version 99 is not supported (this serq-ir reads version 2)"
                        " - at '$.version'"),
    "missing version": ("{}", "error: bad.ir.json: IR version null is not supported"
                        " (this serq-ir reads version 2) - at '$.version'"),
    "unknown node kind": (GOOD.replace('"kind":"Fifo"', '"kind":"Lifo"'),
                          "error: bad.ir.json: 'Lifo' is not a kind of node here (one of Fifo, Ps, Delay, Step, "
                          "Extension) (did you mean `Fifo`?) - at '$.stages[0].kind.kind'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_line_error(case):
    data, message = CASES[case]
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(data, name="bad.ir.json")
    assert str(info.value) == message
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("data", "expected"), [
    # malformed JSON and bytes that are not UTF-8: at their line and column, the line quoted, a caret
    (b"hello", "bad.ir.json:1:1: error: JSON is malformed: invalid character (at offset 0)\n  hello\n  ^"),
    (b'{\n  "version": 2,\n  "attributes": [1,, 2]\n}',
     'bad.ir.json:3:20: error: JSON is malformed: invalid character (at offset 37)\n'
     '    "attributes": [1,, 2]\n                     ^'),
    (b'{"version": 2,\n "pools": [{"name": "k\xc3\xa9v\xff"}]}',
     # column 25 counts characters (é is one), the offset bytes: 15 on line 1, 25 before the 0xFF
     'bad.ir.json:2:25: error: the file is not UTF-8 text (byte 0xFF at offset 40)\n'
     '   "pools": [{"name": "k\u00e9v\\xff"}]}\n                          ^'),
    # text that ends inside a value (a file cut short, an empty file): at its end, not "Input data was
    # truncated" without a place
    (b'{\n  "version": 2,\n  "attributes": [\n', 'bad.ir.json:3:18: error: JSON is malformed: the text ends '
     'before the value does (a bracket, a brace or a quote is missing)\n    "attributes": [\n'
     '                   ^'),
    (b'{"version": 2, "x": "ab', 'bad.ir.json:1:24: error: JSON is malformed: the text ends before the value '
     'does (a bracket, a brace or a quote is missing)\n  {"version": 2, "x": "ab\n'
     '                         ^'),
    (b"", "bad.ir.json:1:1: error: the file is empty (an IR file is a JSON object)\n  \n  ^"),
    (b"\n \n", "bad.ir.json:1:1: error: the file is empty (an IR file is a JSON object)\n  \n  ^"),
])
def test_malformed_text_is_located(data, expected):
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(data, name="bad.ir.json")
    assert str(info.value) == expected


def test_a_long_compact_line_is_quoted_around_the_fault():
    data = b'{"version": 2, "pools": [' + b'{"name": "k"}, ' * 100 + b'{"name": "\x80"}]}'
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(data, name="bad.ir.json")
    head, line, caret = str(info.value).split("\n")
    off = data.index(b"\x80")
    assert head == f"bad.ir.json:1:{off + 1}: error: the file is not UTF-8 text (byte 0x80 at offset {off})"
    # the line's last 200 characters (the fault is 4 from its end), the cut before them marked ... as a
    # source's long line's is
    # (its escape, \x80, takes 4 columns of the 200: 3 characters fewer shown)
    assert line == "  ..." + data[-197:].decode("utf-8", "replace").replace("\ufffd", "\\x80")
    assert line[len(caret) - 1:].startswith("\\x80")


def test_missing_file(tmp_path):
    with pytest.raises(serq_ir.IRError, match=r"^error: .*nope.ir.json: cannot read"):
        serq_ir.load(tmp_path / "nope.ir.json")


def test_a_byte_order_mark_is_ignored_and_unprintable_characters_are_not_quoted():
    assert serq_ir.decode(b"\xef\xbb\xbf" + GOOD.encode()) == serq_ir.decode(GOOD)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode('{"version": 2, \u200e\x1b[2J x}'.encode(), name="bad.ir.json")
    head, line, caret = str(info.value).split("\n")
    assert head == "bad.ir.json:1:16: error: JSON is malformed: object keys must be strings (at offset 15)"
    assert line == '  {"version": 2, \\u200e\\x1b[2J x}' and caret == "  " + " " * 15 + "^"
