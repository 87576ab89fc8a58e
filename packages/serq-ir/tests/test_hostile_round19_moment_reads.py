"""What an IR file's expressions may read at their moment, as the linker rules it (serq_ir.rules'
OBSERVABLE_REFUSED, ATTRIBUTE_REFUSED and budget_left_message, one rule for both).

* ``budget_left(S)`` of a stage that is no step stage: the linker refuses it; in an IR file, read in a
  hold's units, ``serq run`` ended in a traceback (AttributeError: 'DelayStage' object has no attribute
  'budget_left'), and in a gauge it was a run-time error at t=0 that named no place in the file.
* A gauge reading ``work``, ``cachedin`` or ``budget_left``, a preemption key reading ``budget_left`` or the
  attribute ``computed``: refused in source, each ran from an IR file (``serq check``: OK).

Each IR file is a valid program's IR with one expression replaced; its message is the linker's for the
same program written in source.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
from serq_frontend import CompileError
from serq_ir.errors import IRError

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """pool kv { cap 64; block 4; preempt by (position); }
stage E : step { budget 16; cost 1; memory kv; }
stage t : delay;
gauge g = used(kv);

workload {
  arrive poisson(0.5);
}

session {
  hold kv (min(8, budget_left(E))) { run E prefill (8); run E decode (4) growing kv; }
  run t (1);
  end;
}

run { horizon 50; }
"""
KV, E, T = 0, 0, 1  # the pool's and the stages' indices
COMPUTED = 3  # the slot of the built-in attribute computed (serial, turn_no, cached, computed)


def observable(name: str, target: dict) -> dict:
    return {"kind": "Observable", "name": name, "target": target}


def budget_left_of_t(d: dict) -> str:
    d["session"][0]["pools"][0]["units"]["args"][1] = observable("budget_left", {"kind": "StageRef", "stage": T})
    return "$.session[0].pools[0].units.args[1].target"


def gauge(name: str, target: dict):
    def edit(d: dict) -> str:
        d["gauges"][0]["value"] = observable(name, target)
        return "$.gauges[0].value"
    return edit


def preempt_key(key: dict, at: str = ""):
    def edit(d: dict) -> str:
        d["pools"][KV]["preempt"]["keys"] = [key]
        return "$.pools[0].preempt.keys[0]" + at
    return edit


# (the source's edit, the IR's edit, the linker's message)
CASES = {
    "budget_left of a delay stage": (("budget_left(E)))", "budget_left(t)))"), budget_left_of_t,
                                     "`budget_left(t)`: `t` is no step stage"),
    "a gauge of work": (("gauge g = used(kv)", "gauge g = work(t)"), gauge("work", {"kind": "StageRef", "stage": T}),
                        "a gauge may not read `work(…)` (it moves between events)"),
    "a gauge of cachedin": (("gauge g = used(kv)", "gauge g = cachedin(kv)"),
                            gauge("cachedin", {"kind": "PoolRef", "pool": KV}),
                            "a gauge may not read `cachedin(…)` (the session's own prefix)"),
    "a gauge of budget_left": (("gauge g = used(kv)", "gauge g = budget_left(E)"),
                               gauge("budget_left", {"kind": "StageRef", "stage": E}),
                               "a gauge may not read `budget_left(…)` (it plans an iteration)"),
    "a preemption key of budget_left": (("preempt by (position)", "preempt by (budget_left(E))"),
                                        preempt_key(observable("budget_left", {"kind": "StageRef", "stage": E})),
                                        "a preemption key may not read `budget_left(…)`"),
    "a preemption key of computed": (("preempt by (position)", "preempt by (computed)"),
                                     preempt_key({"kind": "Attr", "slot": COMPUTED}, ".slot"),
                                     "a preemption key may not read `computed` (the position at the session's "
                                     "last preemption); `position` is where the candidate is now"),
}


def _ir(edit) -> tuple[dict, str]:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=PROGRAM)))
    assert [p["name"] for p in d["pools"]] == ["kv"] and [s["name"] for s in d["stages"]] == ["E", "t"]
    assert [a["name"] for a in d["attributes"]][COMPUTED] == "computed"
    return d, edit(d)


def test_the_program_compiles_and_its_ir_decodes():
    serq_ir.decode(serq_ir.encode(serq_frontend.compile(source=PROGRAM)), name="p.ir.json")


@pytest.mark.parametrize("case", CASES)
def test_the_linker_refuses_the_source(case):
    (old, new), _edit, message = CASES[case]
    assert PROGRAM.count(old) == 1
    with pytest.raises(CompileError) as info:
        serq_frontend.compile(source=PROGRAM.replace(old, new))
    assert str(info.value).splitlines()[0].endswith(f"error: {message}")


@pytest.mark.parametrize("case", CASES)
def test_an_ir_file_is_refused_with_the_linkers_message_at_its_path(case):
    _src, edit, message = CASES[case]
    d, path = _ir(edit)
    with pytest.raises(IRError) as info:
        serq_ir.decode(json.dumps(d), name="p.ir.json")
    assert str(info.value).splitlines()[0] == f"error: p.ir.json: {message} - at '{path}'"


def test_serq_run_of_budget_left_of_a_delay_stage_is_one_located_message(tmp_path):
    d, path = _ir(budget_left_of_t)
    f = tmp_path / "p.ir.json"
    f.write_text(json.dumps(d, indent=1))
    for cmd in ("check", "run"):
        r = subprocess.run([SERQ, cmd, str(f)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and r.stdout == "", (cmd, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr, r.stderr
        first = r.stderr.splitlines()[0]
        assert first.startswith(f"{f}:") and first.endswith(
            f"error: `budget_left(t)`: `t` is no step stage - at '{path}'"), first
