"""A hold takes one amount of each pool member (docs/language.md, "Rules chosen where the spec is silent").

``hold m (1), m (1)`` once allocated 2 units on a pool of cap 1 (the admission test compared each amount
with the cap on its own): the linker refuses it written out, an IR file naming one member twice is refused
at its JSON path, and members chosen by computed indices that meet are a run-time error at the hold.
An internal check the user asked for (``--check-invariants``) that fails is one message and exit 70.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import serq_frontend
import serq_ir
import serq_sim

MSG = "twice; a hold takes one amount of each pool (write one amount, the sum)"

FAMILY = """pool server[2] { cap 1; }
stage svc : delay;
workload { arrive poisson(0.5); }
session {
  set i = 1;
  hold server[0] (1), server[i - 1] (1) { run svc (1); }
  end;
}
run { horizon 100; seed 1; }
"""


@pytest.mark.parametrize("tier", ["general", ""])
def test_computed_members_that_meet_are_a_runtime_error(tmp_path, monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    f = tmp_path / "fam.sq"
    f.write_text(FAMILY)
    prog = serq_frontend.compile(path=str(f))
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    first = str(e.value).splitlines()[0]
    assert first == f"{f}:6:3: error: at t=0, session 0: the hold names pool server[0] {MSG}"
    # distinct members are one unit each: both admitted, nothing over the cap
    ok = serq_frontend.compile(source=FAMILY.replace("server[i - 1]", "server[i]"))
    r = serq_sim.run(ok, check_invariants=True)
    assert r.pool("server", 0).admissions == r.pool("server", 1).admissions > 0


def _ir_naming_one_member_twice() -> str:
    prog = serq_frontend.compile(source=FAMILY.replace("server[i - 1]", "server[i]"))
    d = json.loads(serq_ir.encode(prog, spans=False))
    hold = next(st for st in d["session"] if st["kind"] == "Hold")
    hold["pools"][1]["pool"]["index"] = {"kind": "Num", "value": 0.0}
    return json.dumps(d)


def test_an_ir_file_naming_one_member_twice_is_refused_at_its_path():
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(_ir_naming_one_member_twice())
    assert str(e.value) == f"error: <ir>: the hold names pool server[0] {MSG} - at '$.session[1].pools[1]'"


def test_a_failed_invariant_check_is_one_message_and_exit_70(tmp_path):
    # a broken bookkeeping (patched in: the simulator has no known one) under --check-invariants
    f = tmp_path / "p.sq"
    f.write_text(FAMILY.replace("server[i - 1]", "server[i]"))
    code = ("import sys, serq.cli, serq_sim.pools.check as c\n"
            "def broken(sim):\n"
            "    raise serq_sim.InvariantError(f't={sim.now:g}: pool server[0]: used 2 but the holders hold 1')\n"
            "import serq_sim\n"
            "c.check_invariants = broken\n"
            "sys.argv = ['serq', 'run', sys.argv[1], '--no-progress', '--check-invariants']\n"
            "serq.cli.main()\n")
    r = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 70, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0] == "error: t=0: pool server[0]: used 2 but the holders hold 1"
    assert "a bug in serQ, not in the program" in r.stderr
