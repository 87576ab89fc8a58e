"""A hold's ``lease`` of a pool family the hold does not hold, the lease's member chosen by a computed index
(``lease a[i]`` on ``hold b``), in an IR file or a program built in Python.

The linker refuses it in source ("`lease a`: the hold does not hold `a`"); serq_ir.validate found the same
fault and, naming the member for its message, read the computed index as a number: ``serq check``,
``serq run`` and ``serq_sim.run`` ended in a traceback (AttributeError: 'Attr' object has no attribute
'value'). The member is now named by its family, as the linker names it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
import serq_sim
from serq_frontend import CompileError
from serq_ir.errors import IRError
from serq_ir.validate import validate

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
# a valid program: each session holds a member of the family a, chosen by its serial, and leases it
PROGRAM = """pool a[2] { cap 4; }
pool b { cap 4; }
stage svc : delay;

workload {
  arrive poisson(1);
}

session {
  set i = serial % 2;
  hold a[i] (1) { run svc (1); } lease a[i] (1);
  end;
}

run { horizon 50; }
"""
# the same with the hold on b: the lease names a family the hold does not hold
UNHELD = PROGRAM.replace("hold a[i] (1)", "hold b (1)")


def _linker_message() -> str:
    """The linker's message for UNHELD in source, the independent statement of the rule."""
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=UNHELD)
    first = str(info.value).splitlines()[0]
    return first[first.index("error: ") + len("error: "):]


def _ir() -> dict:
    """PROGRAM's IR with the hold's pool turned into b (pool 1, no index): UNHELD written as IR."""
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=PROGRAM)))
    assert [p["name"] for p in d["pools"]] == ["a", "b"]
    hold = d["session"][1]
    assert hold["kind"] == "Hold" and hold["lease"]["pool"]["index"]["kind"] == "Attr"
    hold["pools"][0]["pool"] = {"kind": "PoolRef", "pool": 1}
    return d


def test_the_program_is_valid_and_the_linker_refuses_the_unheld_lease():
    validate(serq_frontend.compile(source=PROGRAM))
    assert _linker_message() == "`lease a`: the hold does not hold `a`; a lease names one of its pools"


def test_an_ir_file_is_refused_as_the_linker_refuses_the_source():
    with pytest.raises(IRError) as info:
        serq_ir.decode(json.dumps(_ir()), name="p.ir.json")
    msg = str(info.value)
    assert f"p.ir.json: {_linker_message()} - at '$.session[1].lease.pool'" in msg, msg


def test_serq_check_and_run_say_it_at_the_lease_in_the_file(tmp_path):
    f = tmp_path / "p.ir.json"
    f.write_text(json.dumps(_ir(), indent=1))
    line = next(k for k, text in enumerate(f.read_text().splitlines(), 1) if '"lease"' in text)
    for cmd in ("check", "run"):
        r = subprocess.run([SERQ, cmd, str(f)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1, (cmd, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == "", (cmd, r.stderr)
        first = r.stderr.splitlines()[0]
        # at the lease's pool: the line after "lease": { holds "pool": {
        assert first.startswith(f"{f}:{line + 1}:"), (cmd, first)
        assert first.endswith(f"error: {_linker_message()} - at '$.session[1].lease.pool'"), (cmd, first)
        assert r.stderr.splitlines()[2].strip() == "^", (cmd, r.stderr)


def test_a_program_built_in_python_is_refused_by_serq_sim_run():
    program = serq_ir.decode(json.dumps(_ir()), check=False)
    with pytest.raises(IRError) as info:
        serq_sim.run(program)
    assert _linker_message() in str(info.value)


def test_a_lease_of_a_numbered_member_is_still_named_with_its_number():
    # the family held, another member leased by number: that member, as the linker names it in source
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=PROGRAM.replace("hold a[i] (1)", "hold a[0] (1)")
                                                        .replace("lease a[i]", "lease a[0]"))))
    d["session"][1]["lease"]["pool"]["index"] = {"kind": "Num", "value": 1.0}
    with pytest.raises(IRError) as info:
        serq_ir.decode(json.dumps(d), name="p.ir.json")
    with pytest.raises(CompileError) as src:
        serq_frontend.compile(source=PROGRAM.replace("hold a[i] (1)", "hold a[0] (1)").replace("lease a[i]", "lease a[1]"))
    said = str(src.value).splitlines()[0]
    said = said[said.index("error: ") + len("error: "):]
    assert said == "`lease a[1]`: the hold does not hold `a[1]`; a lease names one of its pools"
    assert f"p.ir.json: {said} - at '$.session[1].lease.pool'" in str(info.value)
