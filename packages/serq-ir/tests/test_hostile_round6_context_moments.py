"""A context variable in an IR file is read at its moment only (serq_ir.rules.CONTEXT, the table the linker's
moments are made of): ``decoders`` in a session's observe, ``waited`` in a ps capacity, ``now`` in a gauge
passed ``serq check`` and ran, the simulator reading the variable as NaN, silently (every sample NaN).
The linker refuses them in a program's text (docs/language.md, Moments)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_ir
from serq_ir.errors import IRError

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = """pool kv { cap 100; block 4; evict by (age); preempt by (-admission); queue by (waited); }
stage E : step { budget 8; cost 1 + tokens; memory kv; serve by (remaining); }
stage cpu : ps(present + 1);
gauge g = used(kv);
workload { arrive renewal(1 + now); }
session { set t0 = now; hold kv (2) { run E prefill (2); } run cpu (1); observe r = now - t0; end; }
run { horizon 20; }
"""
NOW = {"kind": "Ctx", "name": "now"}


def _ir(change) -> bytes:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=PROGRAM), spans=False))
    change(d)
    return json.dumps(d).encode()


def _ctx(name: str) -> dict:
    return {"kind": "Ctx", "name": name}


def _observe(d) -> dict:
    return next(s for s in d["session"] if s["kind"] == "Observe")


@pytest.mark.parametrize("change, said", [
    (lambda d: _observe(d).update(value=_ctx("decoders")),
     "the context variable 'decoders' does not exist at the Session moment (which has now) - at "
     "'$.session[3].value.name'"),
    (lambda d: d["stages"][1]["kind"].update(capacity=_ctx("waited")),
     "the context variable 'waited' does not exist at the Ps moment (which has present, now) - at "
     "'$.stages[1].kind.capacity.name'"),
    (lambda d: d["gauges"][0].update(value=NOW),
     "the context variable 'now' does not exist at the Gauge moment (which has none) - at '$.gauges[0].value.name'"),
    (lambda d: d["pools"][0]["queue"].update(keys=[_ctx("admission")]),
     "the context variable 'admission' does not exist at the Queue moment (which has now, waited) - at "
     "'$.pools[0].queue.keys[0].name'"),
    (lambda d: d["stages"][0]["kind"].update(budget=_ctx("tokens")),
     "the context variable 'tokens' does not exist at the Budget moment (which has residents, decoders, "
     "kv_decode, kv_prefill, now) - at '$.stages[0].kind.budget.name'"),
    (lambda d: d["workload"]["arrive"].update(gap=_ctx("size")),
     "the context variable 'size' does not exist at the Arrival moment (which has now) - at "
     "'$.workload.arrive.gap.name'"),
])
def test_a_context_variable_outside_its_moment_is_refused(change, said):
    with pytest.raises(IRError) as info:
        serq_ir.decode(_ir(change), name="p.ir.json")
    assert str(info.value) == f"error: p.ir.json: {said}"


def test_every_moment_reads_its_own():
    program = serq_ir.decode(_ir(lambda d: None))
    assert program.pools[0].queue.keys[0].name == "waited"


@pytest.mark.timeout(60)
def test_check_refuses_it(tmp_path):
    (tmp_path / "p.ir.json").write_bytes(_ir(lambda d: _observe(d).update(value=_ctx("decoders"))))
    r = subprocess.run([SERQ, "check", "p.ir.json"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert "the context variable 'decoders' does not exist at the Session moment" in r.stderr
