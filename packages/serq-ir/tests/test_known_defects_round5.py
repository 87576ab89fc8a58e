"""A name an IR message quotes is cut as every message cuts one (serq.errors.clipped: its first 60 and last 59
characters around ``…`` past 120; serq_ir.errors.quoted), where validation quoted it whole by its repr: a
stage of a 5 000-character name given twice made a first line of 5 141 characters. The key or value msgspec
quotes (an unknown field, an invalid kind) is cut alike, in the message and in the path it is at."""

from __future__ import annotations

import json

import pytest
import serq_ir
from serq_ir import IRError
from serq_ir import nodes as n

pytestmark = pytest.mark.timeout(60)


def cut(text: str) -> str:
    return text[:60] + "…" + text[-59:]


def program_json(stage: str) -> dict:
    attrs = [n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES]
    program = n.Program(version=n.IR_VERSION, attributes=attrs, stages=[n.Stage(name=stage, kind=n.Fifo())],
                        workload=n.Workload(arrive=n.Poisson(rate=1.0)),
                        session=[n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=1.0))],
                        run=n.RunSettings(horizon=10.0))
    return json.loads(serq_ir.encode(program, spans=False))


def first_line(tmp_path, doc: dict) -> str:
    path = tmp_path / "p.ir.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(IRError) as info:
        serq_ir.load(path)
    return str(info.value).splitlines()[0]


def test_a_long_stage_name_given_twice(tmp_path):
    name = "a" + "s" * 1_022 + "z"  # (an IR file's name is at most 1024 characters: serq_ir.validate.MAX_IR_NAME)
    doc = program_json(name)
    doc["stages"].append(dict(doc["stages"][0]))
    line = first_line(tmp_path, doc)
    assert line.endswith(f": error: the name '{cut(name)}' is given twice (first at $.stages[0].name); every stage "
                         "has a name of its own - at '$.stages[1].name'"), line[:300]
    assert len(line) < len(str(tmp_path)) + 260


def test_a_short_name_is_quoted_whole(tmp_path):
    name = "s" * 120
    doc = program_json(name)
    doc["stages"].append(dict(doc["stages"][0]))
    assert f"the name '{name}' is given twice" in first_line(tmp_path, doc)


def test_an_unknown_field_of_a_long_key(tmp_path):
    key = "k" + "x" * 4_998 + "y"
    doc = program_json("s")
    doc["stages"][0][key] = 1
    line = first_line(tmp_path, doc)
    assert line.endswith(f": error: Object contains unknown field '{cut(key)}' - at '{cut('$.stages[0].' + key)}'")


def test_an_invalid_kind_of_a_long_text(tmp_path):
    kind = "K" * 5_000
    doc = program_json("s")
    doc["stages"][0]["kind"]["kind"] = kind
    line = first_line(tmp_path, doc)
    assert line.endswith(f": error: '{cut(kind)}' is not a kind of node here (one of Fifo, Ps, Delay, Step, "
                         "Extension) - at '$.stages[0].kind.kind'"), line[:300]


def test_quoted_is_the_repr_of_the_clipped_text():
    from serq_ir.errors import quoted

    assert quoted("a'b") == repr("a'b") and quoted(3) == "3"
    assert quoted("q" * 121) == "'" + "q" * 60 + "…" + "q" * 59 + "'"
