"""An IR file's stage or pool name that is the report's label of a member of a family (``s[1]`` beside
``stage s[2]``) is refused by ``serq check`` (serq_ir.validate), at the name.

The report names a member of an array ``NAME[INDEX]``: its rows, ``report.stage``'s look-ups' messages,
and a sweep's figures (``stages.s[1].completions``). The language's names cannot hold a bracket, an IR
file's could: with a stage ``s[1]`` beside the family ``s`` of two, the text report showed two rows
``s[1]`` (50 completions and 0), and a sweep's table kept one column of each figure, the family member's
50 completions replaced by the other stage's 0, silently.
"""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage s[2] : fifo;
pool kv[2] { cap 4; }
workload { arrive poisson(1); }
session { hold kv[serial % 2] (1) { run s[serial % 2] (0.5); } end; }
run { horizon 20; seed 1; }
"""


def with_node(field: str, name: str) -> dict:
    doc = json.loads(serq_ir.encode(serq_frontend.compile(source=PROGRAM)))
    node = dict(doc[field][0], name=name, size=1, array=False)
    doc[field].append(node)
    return doc


@pytest.mark.parametrize("field, name, family", [
    ("stages", "s[1]", "s"), ("stages", "s[0]", "s"), ("pools", "kv[1]", "kv"),
    ("pools", "s[0]", "s"),  # (stages and pools share one name space)
    ("stages", "kv[1]", "kv"),
])
def test_a_name_that_is_a_members_label_is_refused(tmp_path, field, name, family):
    doc = with_node(field, name)
    (tmp_path / "p.ir.json").write_text(json.dumps(doc, indent=1))
    r = subprocess.run([sys.executable, "-m", "serq", "check", "p.ir.json"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    first = r.stderr.splitlines()[0]
    at = "$.stages[0]" if family == "s" else "$.pools[0]"
    index = name[-2]
    assert first.endswith(f": error: the name {name!r} is the report's label of member {index} of the family "
                          f"{family!r} at {at}: the two would be one row of the report and one column of a sweep's "
                          f"table; give it another name - at '$.{field}[{len(doc[field]) - 1}].name'")


def test_a_program_built_in_python_is_held_to_it():
    doc = with_node("stages", "s[1]")
    program = msgspec.convert(doc, serq_ir.Program)
    with pytest.raises(Exception, match="the name 's\\[1\\]' is the report's label of member 1 of the family 's'"):
        serq_sim.run(program)


def test_a_bracketed_name_no_member_has_runs_as_its_own_row(tmp_path):
    # s[2] is no member of s (of two): three rows, each its own; the family's members served every session
    # (serial % 2) and the stage s[2] none
    doc = with_node("stages", "s[2]")
    report = serq_sim.run(msgspec.convert(doc, serq_ir.Program))
    rows = {(st.name, st.index): st.completions for st in report.result.stages}
    assert set(rows) == {("s", 0), ("s", 1), ("s[2]", None)}
    assert rows["s[2]", None] == 0 and rows["s", 0] > 0 and rows["s", 1] > 0
