"""An IR file's reference to a family of several members without an index names no member, except in a step
family's own expressions (budget, chunk, cost, serve keys), where a family of the stage's size without an
index is the member paired with the stage's (serq_ir/nodes.py, PoolRef and StageRef; the linker's rule).
serq check said OK of a gauge reading ``used(reqs)`` or a session running ``svc`` with the index taken out
of the IR, and the simulator read member 0 of them in silence; now each is the linker's message at its JSON
path, and what the linker writes itself still passes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
from serq_ir.errors import IRError

pytestmark = pytest.mark.timeout(60)

SRC = """pool reqs[2] { cap 4; admit via e; }
pool big[3] { cap 4; }
stage e[2] : step { budget 8 + holders(reqs); cost 1; }
stage svc[2] : delay;
gauge u = used(reqs[1]);
workload { arrive batch(2); }
session {
  hold reqs[serial % 2] (1) {
    run e[serial % 2] decode (3);
  }
  run svc[1] (1);
}
run { horizon 100; }
"""


def _ir() -> dict:
    return json.loads(serq_ir.encode(serq_frontend.compile(source=SRC)))


def _check(d: dict):
    return serq_ir.decode(json.dumps(d).encode())


def test_the_linkers_program_passes_with_its_own_unindexed_family():
    d = _ir()
    # the step family's budget reads `holders(reqs)` without an index: each member its own reqs member
    assert "index" not in d["stages"][0]["kind"]["budget"]["rhs"]["target"]
    _check(d)


@pytest.mark.parametrize("where, path", [
    (lambda d: d["gauges"][0]["value"]["target"], "$.gauges[0].value.target"),
    (lambda d: d["session"][1]["stages"][0], "$.session[1].stages[0]"),
    (lambda d: d["session"][0]["pools"][0]["pool"], "$.session[0].pools[0].pool"),
    (lambda d: d["session"][0]["body"][0]["stages"][0], "$.session[0].body[0].stages[0]"),
])
def test_a_family_named_without_an_index_outside_its_own_expressions_is_refused(where, path):
    d = _ir()
    ref = where(d)
    del ref["index"]
    fam = "reqs" if ref["kind"] == "PoolRef" else ("svc" if ref["stage"] == 1 else "e")
    with pytest.raises(IRError) as info:
        _check(d)
    assert f"`{fam}` is a family of 2; index it, `{fam}[j]`" in str(info.value)
    assert path in str(info.value)


def test_a_step_familys_own_expression_may_not_name_a_family_of_another_size_without_an_index():
    d = _ir()
    d["stages"][0]["kind"]["budget"]["rhs"]["target"]["pool"] = 1  # big[3] beside e[2]
    with pytest.raises(IRError) as info:
        _check(d)
    assert "`big` is a family of 3 and this step stage one of 2" in str(info.value)
    assert "$.stages[0].kind.budget.rhs.target" in str(info.value)


def test_serq_check_of_such_an_ir_file_is_one_message(tmp_path):
    import subprocess

    d = _ir()
    del d["gauges"][0]["value"]["target"]["index"]
    f = tmp_path / "p.ir.json"
    f.write_text(json.dumps(d))
    serq = Path(sys.executable).parent / "serq"
    r = subprocess.run([str(serq), "check", str(f)], capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "`reqs` is a family of 2; index it, `reqs[j]`" in r.stderr
