"""What ``serq run`` refuses of an IR file, ``serq check`` refuses too (serq_ir.validate), and ``serq ir``
does not write it:

* a run over several stages in a program of no ``share`` (the build said "declares no share");
* a ``run.arrivals`` count of a workload that is not open (closed, batch, none): the build said "needs an
  open workload"; ``serq ir --arrivals 5`` of such a program wrote that IR, ``serq check`` took it
  (serq_ir.rules.arrivals_problem, which serq.loading.apply_run_overrides asks for ``--arrivals``);
* a constant index that names no member of its family (serq_ir.rules.member_problem, the simulator's rule).
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
SHARED = "stage a : ps(1);\nstage b : ps(1);\nshare maxmin;\nworkload { arrive poisson(1); }\n" \
         "session { run a, b (1); end; }\nrun { horizon 10; }\n"
CLOSED = "stage a : fifo;\nworkload { arrive closed(3); }\nsession { run a (1); end; }\nrun { horizon 10; }\n"


def _ir(source: str, change) -> bytes:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=source), spans=False))
    change(d)
    return json.dumps(d).encode()


def test_a_run_over_several_stages_without_a_share_is_refused():
    with pytest.raises(IRError) as info:
        serq_ir.decode(_ir(SHARED, lambda d: d.update(share=None)), name="p.ir.json")
    assert str(info.value) == ("error: p.ir.json: a run holds several stages but the program declares no share "
                               "(share maxmin; or share bottleneck;) - at '$.session[0].stages'")
    assert serq_ir.decode(_ir(SHARED, lambda d: None)).share == "maxmin"


#: what works instead, said after the refusal: a closed population of 3 ends by a horizon or is a batch behind a
#: pool of its 3 slots; a batch ends by its horizon; either keeps its count with an open workload instead; `arrive
#: none` has nothing to say
CLOSED_3 = ("; `arrive closed(3)` starts a session again as each one ends, so no count of arrivals ends it: remove "
            "the count and bound the run by its horizon (`--horizon T`, `run { horizon T; }`), or run M sessions, "
            "3 at a time, as `arrive batch(M);` behind a pool of 3 slots (`pool slots { cap 3; }`, the session "
            "inside `hold slots (1) { … }`; `--horizon inf` runs them to the end), or keep the count and make the "
            "workload open (`arrive poisson(RATE);` with a horizon)")


@pytest.mark.parametrize("arrive, advice", [
    ({"kind": "Closed", "n": 3}, CLOSED_3),
    ({"kind": "Batch", "n": 3}, "; `arrive batch(3)` starts its 3 sessions at time 0 and no more, so no count of "
                                "arrivals ends it: remove the count and bound the run by its horizon (`--horizon "
                                "inf`, `run { horizon inf; }`, runs the 3 to the end), or keep the count and make "
                                "the workload open (`arrive poisson(RATE);` with a horizon)"),
    ({"kind": "NoArrivals"}, "")])
def test_an_arrivals_count_of_a_workload_that_is_not_open_is_refused(arrive, advice):
    def change(d):
        d["workload"]["arrive"] = arrive
        d["run"]["arrivals"] = 5
    with pytest.raises(IRError) as info:
        serq_ir.decode(_ir(CLOSED, change), name="p.ir.json")
    assert str(info.value) == (f"error: p.ir.json: arrivals N needs an open workload (arrive poisson or renewal)"
                               f"{advice} - at '$.run.arrivals'")


@pytest.mark.timeout(60)
def test_serq_ir_does_not_write_it_and_run_says_the_same(tmp_path):
    (tmp_path / "c.sq").write_text(CLOSED)
    for args in (["ir", "c.sq", "--arrivals", "5"], ["run", "c.sq", "--arrivals", "5", "--no-progress"],
                 ["check", "c.sq"]):
        r = subprocess.run([SERQ, *args], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           stdin=subprocess.DEVNULL)
        if args[0] == "check":
            assert r.returncode == 0, r.stderr
            continue
        assert r.returncode == 1, (args, r.stdout)
        assert r.stdout == ""
        assert r.stderr.strip() == "c.sq: error: --arrivals 5: needs an open workload (arrive poisson or " \
                                   "renewal)" + CLOSED_3


def test_an_open_workload_takes_an_arrivals_count():
    def change(d):
        d["run"]["arrivals"] = 5
    assert serq_ir.decode(_ir(SHARED, change)).run.arrivals == 5


SPILL = """pool kv { cap 10; evict lru; spill tier[1] via link (size) when (1); }
pool tier[2] { cap 100; }
stage link : delay;
stage s : fifo;
workload { arrive poisson(1); }
session { hold kv (2) { run s (1); } cache (5); end; }
run { horizon 10; }
"""


@pytest.mark.parametrize("change, said", [
    (lambda d: d["pools"][0]["spill"]["tier"].update(index={"kind": "Num", "value": 5.0}),
     "pool tier: index 5 out of range (the family has 2) - at '$.pools[0].spill.tier.index'"),
    (lambda d: d["pools"][0]["spill"]["tier"].update(index={"kind": "Num", "value": 0.5}),
     "pool tier: index 0.5 is not a whole number (the family has 2) - at '$.pools[0].spill.tier.index'"),
    (lambda d: d["session"][0]["pools"][0]["pool"].update(index={"kind": "Num", "value": 1.0}),
     "pool kv: index 1 out of range (the family has 1) - at '$.session[0].pools[0].pool.index'"),
    (lambda d: d["session"][0]["body"][0]["stages"][0].update(index={"kind": "Num", "value": -1.0}),
     "stage s: index -1 out of range (the family has 1) - at '$.session[0].body[0].stages[0].index'"),
])
def test_a_constant_index_that_names_no_member_is_refused(change, said):
    """serq check took kv[5] of a family of 2 (a spill's tier: serq run refused it at its build; a hold's
    pool: a run-time error at t=0)."""
    with pytest.raises(IRError) as info:
        serq_ir.decode(_ir(SPILL, change), name="p.ir.json")
    assert str(info.value) == f"error: p.ir.json: {said}"


def test_a_constant_index_of_a_member_is_taken():
    assert serq_ir.decode(_ir(SPILL, lambda d: None)).pools[0].spill.tier.index.value == 1.0
