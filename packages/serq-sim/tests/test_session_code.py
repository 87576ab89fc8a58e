"""The lean session code (compile.Compiler.lean: comparison guards tested as bools, a run of observes under one
test of the warm-up, a record appended column by column, a step stage's run in one call, a hold's pools
found once) gives what the reference code gives (SERQ_SIM_TIER=general): the same JSON report byte for
byte (records included), the same observe samples, the same error, on programs built to reach every
variant: draws and observables in observes before and after the warm-up, records with draws, NaN
guards and conditions, logic operators, holds rejected for a constant demand beyond the capacity,
holds and runs on members named by an index, runs of zero and NaN work on a step stage."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_sim.api import registries
from serq_sim.engine import Simulation
from tiers import run_on_tier

HERE = Path(__file__).resolve().parent
STRESS = HERE / "lazy" / "vllm_stress.sq"


def assert_same(program, **kw):
    _ref_sim, ref, ref_samples = run_on_tier(program, "general", **kw)
    sim, got, got_samples = run_on_tier(program, "", **kw)
    assert got == ref
    assert got_samples == ref_samples
    return sim, got


def source_of(program) -> str:
    return Simulation(program, registries()).session_fn.__serq_source__


# observes in a row whose values draw, read an observable or are plain; a record with a draw in it; guards
# that are comparisons, logic operators, negations, NaN; conditions on NaN; every session's observes
# before the warm-up's end are drawn all the same (the draws of a place are counted per session and turn)
OBSERVES = """
stage d : delay;
stage f : fifo;
workload { arrive poisson(2); }
session {
  set z = (serial - serial) / (serial - serial);
  set u = ~uniform(0, 1);
  loop {
    observe a = ~exp(1);
    observe b = queue(f);
    observe c = u + serial;
    observe e = ~exp(2);
    run f (~exp(0.2));
    set g = z ? 1 : 2;
    set h = !(u < 0.5) || z > 0;
    branch (u < 0.5 && ~bernoulli(0.5)) { observe lo = ~exp(1); } else { observe hi = u; }
    branch (!(u > 0.3)) { run d (~exp(1)); }
    branch (z == z) { observe never = 1; }
    branch (h) { observe hh = h + g; }
    record row { x = ~exp(1); y = queue(f); w = u; k = g; }
    branch (~bernoulli(0.4)) { end; }
  }
}
run { horizon 60; warmup 20; seed 3; }
"""


def test_observes_records_and_guards_agree():
    program = serq_frontend.compile(source=OBSERVES)
    _sim, got = assert_same(program)
    assert got[0] == "report"


# a hold of a pool family member by index, two pools named without one, a constant demand beyond a cap
# (those sessions are rejected when they queue), a step family's member by index
HOLDS = """
pool slots[2] { cap 3; }
pool big { cap 2; }
pool kv { cap 64; block 4; evict lru; }
pool reqs { cap 4; admit via E; }
stage E : step { budget 8; cost 1; memory kv; }
stage F[2] : step { budget 4; cost 0.5; }
stage d : delay;
workload { arrive poisson(1); }
session {
  set n = 1 + floor(~exp(6));
  branch (serial % 5 == 4) {
    hold big (3) { run d (1); }
  }
  hold slots[serial % 2] (1), big (1) {
    run d (~exp(1));
    run F[serial % 2] prefill (n);
  }
  hold reqs (1), kv (n) reserve (n + 2) {
    run E prefill (n) growing kv;
    run E decode (serial % 3 == 0 ? 0 : 3) growing kv;
    run E decode (2);
  } cache (n);
  observe done = now;
}
run { horizon 80; warmup 5; seed 2; }
"""


def test_holds_and_step_runs_agree():
    program = serq_frontend.compile(source=HOLDS)
    sim, got = assert_same(program)
    assert got[0] == "report"
    assert sim.pools[2].rejections > 0  # the constant demand beyond big's cap was met


def test_a_step_run_of_nan_work_is_the_same_error():
    src = HOLDS.replace("run E decode (2);", "run E decode (serial == 3 ? (serial - 3) / (serial - 3) : 2);")
    _sim, got = assert_same(serq_frontend.compile(source=src))
    assert got[0] == "error" and "NaN" in got[2]


@pytest.mark.parametrize("sets", [{}, {"blocks": 120, "max_seqs": 6}, {"blocks": 60, "rate": 9}])
def test_vllm_requests_agree(sets):
    program = serq_frontend.compile(str(STRESS), sets={k: float(v) for k, v in sets.items()})
    assert_same(program, horizon=40.0)


def test_the_lean_code_of_a_vllm_request():
    # lib/vllm.sq's request, as the benchmark runs it: its guards are comparisons tested as bools, its
    # runs start on the step stage in one call, its three observes in a row test the warm-up once, and its
    # record appends each column (no tuple of the row, no loop over it)
    program = serq_frontend.compile(str(HERE.parents[2] / "bench" / "vllm_single.sq")) if (
        HERE.parents[2] / "bench" / "vllm_single.sq").exists() else serq_frontend.compile(str(STRESS))
    src = source_of(program)
    assert "E.run_job" not in src and ".guard_error" not in src
    assert "start_run" not in src  # the bound method is a name of the program's globals
    assert src.count("E.warm:") == 3  # the hit, first token + ttft, and done + response + preempted
    assert ", (" not in src.split("E.end_hold(s)")[1]  # no row tuple


def test_the_reference_code_is_the_plain_one(monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    src = source_of(serq_frontend.compile(str(STRESS)))
    assert "E.run_job" in src and ".guard_error" in src


# two-argument min and max, floor and ceil written out (Compiler.inline): NaN, ±inf, -0.0, ints (work() of an
# empty stage is the int 0), draws and observables as operands, nested, in the session block, a hold's
# header, a workload turn block and a step stage's cost; every value is an observe's sample (compared as
# bytes: -0.0 is not 0.0)
CALLS = """
pool reqs { cap 3; admit via E; }
pool kv { cap 96; block 4; evict lru; }
stage E : step { budget 8; cost 0.5 + max(decoders, 1) * 0.1 + min(kv_decode, 40) * 0.001 + floor(prefilled / 3) * 0.01; memory kv; }
stage f : fifo;
stage idle : fifo;
workload {
  arrive poisson(2);
  turn { set n = 1 + max(floor(~exp(5)), ceil(~uniform(-2, 2))); }
}
session {
  turn;
  set z = (serial - serial) / (serial - serial);
  set i = 1 / (serial - serial);
  set nz = -(serial - serial);
  set u = ~uniform(-3, 3);
  observe fl = floor(u);
  observe ce = ceil(u);
  observe fz = floor(z);
  observe cz = ceil(z);
  observe fi = floor(i);
  observe ci = ceil(-i);
  observe fn = floor(nz);
  observe cn = ceil(nz);
  observe cs = ceil(-0.25 * (1 + u * u));
  observe big = floor(9007199254740993 * (1 + u * u));
  observe mx = max(~exp(1), ~exp(2));
  observe mn = min(~uniform(0, 1), z);
  observe mz = max(z, u);
  observe m0 = min(nz, 0);
  observe m1 = max(0, nz);
  observe m2 = max(nz, 0);
  observe mw = max(work(idle), nz);
  observe mq = min(queue(f), work(idle));
  observe nest = max(min(u, 1), floor(max(u, -1)));
  run f (~exp(0.3));
  hold reqs (1), kv (min(known, max(n, 4))) reserve (max(known, 1)) at admission (known = max(n, computed + 1)) {
    prefill on E (n) growing kv;
    decode on E (max(1, floor(u + 4))) growing kv;
  } cache (max(n, 1));
  observe done = max(now, 0);
}
run { horizon 60; warmup 4; seed 7; }
"""


def test_min_max_floor_ceil_written_out_agree():
    program = serq_frontend.compile(source=CALLS)
    _sim, got = assert_same(program)
    assert got[0] == "report"
    src = source_of(program)
    assert "max(" not in src and "min(" not in src and "_floor(" not in src and "_ceil(" not in src


def test_min_max_evaluate_their_operands_in_order():
    # both operands fail: the first one's error is the one reported, as with the call
    src = CALLS.replace("observe mx = max(~exp(1), ~exp(2));",
                        "observe mx = max(~exp(z + serial), ~uniform(u + 1, u));")
    _sim, got = assert_same(serq_frontend.compile(source=src))
    assert got[0] == "error" and "exp" in got[2]
