"""Known defects, round 38, in serq-ir.

15. A preset's row (``SlotValue``, written ``[slot, value]``) is checked as a ``Set`` of its slot is: a trace
    column beside a trace is taken, a built-in attribute refused in the same words. That refusal, at
    ``$.workload.presets[0].attrs[0].slot``, was told without its line and column: the file has no key
    ``slot`` (the row is an array), so the path was not found in it. A field of a struct written as an array
    (a preset's row, a constant's ``[name, value]``) is now found at its index: the value at its line and
    column, the line quoted with a caret.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir
from serq_ir.codec import _as_written

pytestmark = pytest.mark.timeout(60)

SOURCE = ('stage s : delay;\nworkload { arrive none; trace "t.csv" ordered; session { turn; request; end; } }\n'
          "server { observe b = new; run s (1); }\nrun { horizon 10; }\n")
BUILTIN = "the built-in attribute '{}' is kept by the simulator; a program does not write it"


def _ir(change) -> dict:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=SOURCE), spans=False))
    change(d)
    return d


def _load(tmp_path, d: dict, indent=None) -> str:
    p = tmp_path / "p.ir.json"
    p.write_text(json.dumps(d, indent=indent))
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.load(p)
    return str(e.value).replace(str(p), "p.ir.json")


@pytest.mark.parametrize("row, path", [
    ({"at": 0.5, "attrs": [[0, 100.0]]}, "$.workload.presets[0].attrs[0].slot"),
    ({"at": 0.5, "attrs": [[4, 1.0], [1, 100.0]]}, "$.workload.presets[0].attrs[1].slot"),
    ({"at": 0.5, "turns": [[[4, 2.0]], [[2, 3.0]]]}, "$.workload.presets[0].turns[1][0].slot"),
])
def test_a_presets_built_in_slot_is_told_at_its_line_and_column(tmp_path, row, path):
    d = _ir(lambda d: d["workload"].update(presets=[row]))
    said = _load(tmp_path, d, indent=1)
    first, quoted, caret = said.splitlines()[:3]
    assert first.startswith("p.ir.json:") and first.endswith(f" - at '{path}'"), first
    name = {0: "serial", 1: "turn_no", 2: "cached"}[json.loads(quoted.strip().rstrip(",") or "0")]
    assert BUILTIN.format(name) in first
    # the caret under the slot's number, the line quoted (indented by 1: one value a line)
    line, col = map(int, first.split(":")[1:3])
    text = (tmp_path / "p.ir.json").read_text().splitlines()
    assert text[line - 1][col - 1].isdigit() and caret.index("^") == quoted.index(text[line - 1].strip())


def test_the_same_on_one_line(tmp_path):
    d = _ir(lambda d: d["workload"].update(presets=[{"at": 0.5, "attrs": [[0, 100.0]]}]))
    said = _load(tmp_path, d)
    text = (tmp_path / "p.ir.json").read_text()
    col = text.index('"attrs": [[0') + len('"attrs": [[') + 1
    assert said.startswith(f"p.ir.json:1:{col}: error: {BUILTIN.format('serial')} - at "
                           "'$.workload.presets[0].attrs[0].slot'")


def test_a_set_of_the_slot_says_the_same():
    # the rule of a Set, whose message the preset's is
    d = _ir(lambda d: d["session"][0].update(kind="Set", slot=0, value={"kind": "Num", "value": 1.0}))
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(json.dumps(d), name="p.ir.json")
    assert BUILTIN.format("serial") in str(e.value)


def test_a_trace_column_in_a_preset_beside_a_trace_is_taken():
    new = 4  # the first slot after the four built-ins (serial, turn_no, cached, computed): new
    d = _ir(lambda d: d["workload"].update(presets=[{"at": 0.5, "attrs": [[new, 100.0]]}]))
    assert [a["name"] for a in d["attributes"]][new] == "new"
    program = serq_ir.decode(json.dumps(d), name="p.ir.json")
    assert program.workload.presets[0].attrs[0].value == 100.0


@pytest.mark.parametrize("steps, written", [
    (("workload", "presets", 3, "attrs", 2, "slot"), ("workload", "presets", 3, "attrs", 2, 0)),
    (("workload", "presets", 0, "turns", 1, 4, "value"), ("workload", "presets", 0, "turns", 1, 4, 1)),
    (("constants", 2, "name"), ("constants", 2, 0)),
    (("constants", 2, "value"), ("constants", 2, 1)),
    # a key of an object stays a key
    (("workload", "presets", 0, "at"), ("workload", "presets", 0, "at")),
    (("session", 0, "slot"), ("session", 0, "slot")),
    (("pools", 1, "name"), ("pools", 1, "name")),
])
def test_the_path_of_an_array_written_struct_is_its_index(steps, written):
    assert _as_written(steps) == written
