"""A number of an IR file beyond a double's range is told what the range is and how infinity is written.

msgspec refuses `1e309`, `-1e309` and an integer of 400 digits where the IR has a number, and the message
was its own: `p.ir.json:37:15: error: Number out of range - at '$.workload.arrive.rate'`, where the IR
writes an infinite value as the string "inf" (serq_ir.encode, serq ir), which is what `1e309` means."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

SOURCE = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"
WORDS = ('the number is beyond the range of a double (at most about 1.8e308 in size); an infinite value is '
         'written "inf" or "-inf", where the IR allows one')


def _ir() -> str:
    return serq_ir.encode_pretty(serq_frontend.compile(source=SOURCE))


@pytest.mark.parametrize("number", ["1e309", "-1e309", "1" + "0" * 400, "-2.5E+400"])
@pytest.mark.parametrize("field, path", [('"horizon": 5.0', "$.run.horizon"),
                                         ('"rate": 1.0', "$.workload.arrive.rate")])
def test_a_number_beyond_a_double_is_told_at_its_place_with_the_range_and_inf(number, field, path, tmp_path,
                                                                             monkeypatch):
    text = _ir()
    assert text.count(field) == 1
    text = text.replace(field, field.split(":")[0] + ": " + number)
    (tmp_path / "p.ir.json").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(serq_ir.IRError) as info:
        serq_ir.load("p.ir.json")
    lines = str(info.value).splitlines()
    at = text.index(number)
    line, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    assert lines[0] == f"p.ir.json:{line}:{col}: error: {WORDS} - at '{path}'"
    assert lines[2].strip() == "^" and len(lines) == 3


def test_the_horizon_written_as_the_message_says_is_the_programs_of_horizon_inf():
    text = _ir().replace('"horizon": 5.0', '"horizon": "inf"')
    assert serq_ir.decode(text, name="p.ir.json") == serq_frontend.compile(source=SOURCE.replace("5;", "inf;"))


def test_the_largest_double_is_a_number():
    text = _ir().replace('"horizon": 5.0', '"horizon": 1.7976931348623157e308')
    assert serq_ir.decode(text, name="p.ir.json").run.horizon == 1.7976931348623157e308
