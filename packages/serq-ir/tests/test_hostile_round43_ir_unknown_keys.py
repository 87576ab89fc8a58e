"""An IR file's unknown key is offered the field it may be, and one with a look-alike letter names the letter.

``"horizоn"`` (a Cyrillic ``о``) in the run settings was ``Object contains unknown field 'horizоn'``, a key that
prints as the field it is not, and a misspelt ``"severs"`` of a fifo stage had no word of ``servers``. The
refusal now adds serq.errors' did-you-mean of the fields of the node at that place (the node told by its tag:
serq_ir.codec._field_names), with the look-alike letter by code point and name. A key like no field is as
before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_ir
from serq_ir.errors import IRError

SERQ = str(Path(sys.executable).parent / "serq")
SOURCE = """\
stage svc : fifo;
workload { arrive poisson(0.5); }
session { run svc (1); }
run { horizon 10; }
"""


def program(tmp_path: Path) -> dict:
    import serq_frontend

    (tmp_path / "p.sq").write_text(SOURCE)
    return json.loads(serq_ir.encode(serq_ir.strip_spans(serq_frontend.compile(tmp_path / "p.sq"))))


def refusal(tmp_path: Path, edit) -> str:
    d = program(tmp_path)
    edit(d)
    with pytest.raises(IRError) as e:
        serq_ir.decode(json.dumps(d, ensure_ascii=False).encode())
    return str(e.value).splitlines()[0]


def test_the_program_decodes(tmp_path):
    assert serq_ir.decode(json.dumps(program(tmp_path)).encode()).run.horizon == 10.0


def test_a_look_alike_letter_in_a_key_is_named(tmp_path):
    line = refusal(tmp_path, lambda d: d["run"].update({"horiz\u043en": d["run"].pop("horizon")}))
    assert line == ("error: <ir>: Object contains unknown field 'horiz\u043en' (did you mean `horizon`? the name "
                    "given is not ASCII: its `\u043e` is U+043E CYRILLIC SMALL LETTER O) - at '$.run'"), line


def test_a_misspelt_key_of_a_tagged_node_is_offered_its_field(tmp_path):
    line = refusal(tmp_path, lambda d: d["stages"][0]["kind"].update({"severs": d["stages"][0]["kind"].pop("servers")}))
    assert line == ("error: <ir>: Object contains unknown field 'severs' (did you mean `servers`?) - at "
                    "'$.stages[0].kind'"), line


def test_a_key_like_no_field_is_as_before(tmp_path):
    line = refusal(tmp_path, lambda d: d["run"].update({"colour": 1}))
    assert line == "error: <ir>: Object contains unknown field 'colour' - at '$.run'", line


def test_serq_check_says_it_at_the_key(tmp_path):
    d = program(tmp_path)
    d["workload"]["arrive"]["rat"] = d["workload"]["arrive"].pop("rate")
    (tmp_path / "p.ir.json").write_text(json.dumps(d, indent=1))
    r = subprocess.run([SERQ, "check", "p.ir.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith("p.ir.json:") and first.endswith(
        ": error: Object contains unknown field 'rat' (did you mean `rate`?) - at '$.workload.arrive.rat'"), r.stderr
    assert r.stderr.splitlines()[1].strip() == '"rat": 0.5', r.stderr


def test_a_node_kind_not_of_the_ir_lists_the_kinds_of_that_place(tmp_path):
    # msgspec said "Invalid value 'fifo'", and neither the kinds a stage's kind may be nor the one meant
    line = refusal(tmp_path, lambda d: d["stages"][0]["kind"].update(kind="fifo"))
    assert line == ("error: <ir>: 'fifo' is not a kind of node here (one of Fifo, Ps, Delay, Step, Extension) "
                    "(did you mean `Fifo`?) - at '$.stages[0].kind.kind'"), line
    line = refusal(tmp_path, lambda d: d["workload"]["arrive"].update(kind="Poiss\u043en"))
    assert line == ("error: <ir>: 'Poiss\u043en' is not a kind of node here (one of Poisson, Renewal, Closed, Batch, "
                    "NoArrivals) (did you mean `Poisson`? the name given is not ASCII: its `\u043e` is U+043E "
                    "CYRILLIC SMALL LETTER O) - at '$.workload.arrive.kind'"), line


def test_a_name_of_the_ir_with_a_look_alike_letter(tmp_path):
    def edit(d):
        d["session"][0]["work"] = {"kind": "Draw", "dist": "\u0435xp", "args": [{"kind": "Num", "value": 1.0}]}

    line = refusal(tmp_path, edit)
    assert line == ("error: <ir>: '\u0435xp' is not one of bernoulli, det, erlang, exp, h2, uniform (did you mean "
                    "`exp`? the name given is not ASCII: its `\u0435` is U+0435 CYRILLIC SMALL LETTER IE) - at "
                    "'$.session[0].work.dist'"), line
