"""An IR file whose value has the wrong type or shape is told so in the JSON's terms: msgspec's own words, with
Python's names of the types, were the message ("Expected 'str', got 'int'", "Expected 'int' >= 1", "Expected
'array' of length 3", "Object missing required field 'kind'"); they are now "a string is wanted, not a whole
number", "a whole number at least 1 is wanted", "a list of 3 items is wanted", "the field 'kind' is missing",
at the same JSON path.
"""

from __future__ import annotations

import json

import pytest
import serq_ir
from ir_programs import mm1


def _said(change) -> str:
    data = json.loads(serq_ir.encode(mm1(), spans=False))
    change(data)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.decode(json.dumps(data), name="x")
    said = str(info.value)
    assert said.startswith("error: x: ") and "\n" not in said, said
    return said.removeprefix("error: x: ")


def _set(path, value):
    def change(d):
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return change


@pytest.mark.parametrize("path, value, said", [
    (["stages", 0, "name"], 7, "a string is wanted, not a whole number - at '$.stages[0].name'"),
    (["stages", 0, "name"], None, "a string is wanted, not null - at '$.stages[0].name'"),
    (["stages", 0, "kind"], True, "an object is wanted, not a boolean - at '$.stages[0].kind'"),
    (["stages", 0, "kind"], [1], "an object is wanted, not a list - at '$.stages[0].kind'"),
    (["session"], None, "a list is wanted, not null - at '$.session'"),
    (["session", 0, "slot"], 1.5, "a whole number is wanted, not a number - at '$.session[0].slot'"),
    (["session", 0, "slot"], "4", "a whole number is wanted, not a string - at '$.session[0].slot'"),
    (["stages", 0, "span"], {"file": "p.sq", "line": 0, "col": 1},
     "a whole number at least 1 is wanted - at '$.stages[0].span.line'"),
])
def test_a_value_of_another_type_is_told_in_the_jsons_terms(path, value, said):
    assert _said(_set(path, value)) == said


def test_a_missing_field_is_named():
    assert _said(lambda d: d["session"][1].pop("stages")) == "the field 'stages' is missing - at '$.session[1]'"
    assert _said(lambda d: d["session"][0].pop("kind")) == "the field 'kind' is missing - at '$.session[0]'"


def test_the_words_of_each_shape():
    from serq_ir.codec import _schema_words

    assert _schema_words("Expected 'array' of length 4") == "a list of 4 items is wanted"
    assert _schema_words("Expected 'array' of length >= 1") == "a list of at least 1 item is wanted"
    assert _schema_words("Expected 'array' of at most length 3") == "a list of at most 3 items is wanted"
    assert _schema_words("Expected 'array' of at least length 2, got 1") == "a list of at least 2 items is wanted, not 1"
    assert _schema_words("Expected 'int | null', got 'bool'") == "a whole number or null is wanted, not a boolean"
    assert _schema_words("Expected 'str' of length <= 9") == "a string of at most 9 characters is wanted"
    assert _schema_words("the horizon is above 0 (or inf), not -1") == "the horizon is above 0 (or inf), not -1"
