"""An IR file's ``admit_via`` names a step stage, as the frontend's ``admit via`` does (serq_ir.validate).

A pool admitted via a delay or fifo stage (an IR file written by hand or by another tool) passed ``serq
check`` ("OK") and ``serq run`` ran it with no scheduler admitting the pool's queue: every session that
reached the pool waited for ever, found only by the end-of-run warning.
"""

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
PROGRAM = """pool reqs { cap 4; admit via E; }
pool kv { cap 100; block 4; }
stage E : step { budget 8; cost 1; memory kv; }
stage t : delay;
workload { arrive poisson(1); }
session { hold reqs (1) { hold kv (2) { run E prefill (2); } } run t (1); end; }
run { horizon 20; }
"""


def _ir(admit_via: int) -> bytes:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=PROGRAM), spans=False))
    assert [s["name"] for s in d["stages"]] == ["E", "t"]
    d["pools"][0]["admit_via"] = admit_via
    return json.dumps(d).encode()


def test_a_pool_admitted_via_a_stage_that_is_no_step_is_refused():
    with pytest.raises(IRError) as info:
        serq_ir.decode(_ir(1), name="p.ir.json")
    assert str(info.value) == ("error: p.ir.json: a pool is admitted by a step stage's scheduler, and stage 't' is "
                               "no step - at '$.pools[0].admit_via'")


def test_a_pool_admitted_via_a_step_stage_is_taken():
    assert serq_ir.decode(_ir(0)).pools[0].admit_via == 0


@pytest.mark.timeout(60)
def test_check_and_run_refuse_it(tmp_path):
    (tmp_path / "p.ir.json").write_bytes(_ir(1))
    for cmd in ("check", "run"):
        r = subprocess.run([SERQ, cmd, "p.ir.json", "--no-progress"][: 3 if cmd == "check" else 4],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == 1, (cmd, r.stdout)
        assert "is no step - at '$.pools[0].admit_via'" in r.stderr


FAMILIES = """pool reqs[2] { cap 4; admit via E; }
pool kv[2] { cap 100; block 4; }
stage E[2] : step { budget 8; cost 1; memory kv; }
workload { arrive poisson(1); }
session { choose j in 2 by (queued(reqs[0])); hold reqs[j] (1) { hold kv[j] (2) { run E[j] prefill (2); } } end; }
run { horizon 20; }
"""


#: the rule in words (serq_ir.rules.PAIRING), written out: the message says which way a family may pair
PAIRING = ("(a declaration names a family of its own size (member for member) or one of a single member (which "
           "every member shares))")


def _families(change) -> bytes:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=FAMILIES), spans=False))
    change(d)
    return json.dumps(d).encode()


@pytest.mark.parametrize("change, said", [
    (lambda d: d["pools"][1].update(size=3),
     f"stage E (a family of 2) names pool kv (a family of 3) as its memory, and the two cannot be paired {PAIRING} "
     "- at '$.stages[0].kind.memory'"),
    (lambda d: d["pools"][0].update(size=3),
     f"pool reqs (a family of 3) is admitted via stage E (a family of 2), and the two cannot be paired {PAIRING} - "
     "at '$.pools[0].admit_via'"),
    (lambda d: d["pools"][0].update(size=1),
     f"pool reqs (a family of 1) is admitted via stage E (a family of 2), and the two cannot be paired {PAIRING} - "
     "at '$.pools[0].admit_via'"),
])
def test_families_that_do_not_pair_are_refused_by_check_as_by_run(change, said):
    """``serq check`` said OK of families ``serq run`` refused to pair (the simulator's build said so)."""
    with pytest.raises(IRError) as info:
        serq_ir.decode(_families(change), name="p.ir.json")
    assert str(info.value) == f"error: p.ir.json: {said}"


def test_families_that_pair_are_taken():
    assert serq_ir.decode(_families(lambda d: None)) is not None
    assert serq_ir.decode(_families(lambda d: d["pools"][1].update(size=1))) is not None  # a memory of one
