"""A `choose` writes its loop over the candidates out (compile.Compiler.choose_fn): each candidate's keys
evaluated inline, a family member named by the candidate (`reqs[j]`) read from the family's list without
the checked lookup, and a pool's observable of it written out. A router over a family of engines
evaluates its keys for every member on every request (llm-d's least-queue over 1 000 engines: 3 000
requests took 1.6 s, most of it the chooses; 0.6 s now).

The per-candidate reference (SERQ_SIM_TIER=general: the keys' function called for each) gives the same
reports and samples byte for byte, and the same errors, on keys of every kind: one key or several, ties
(the first least), NaN, the candidate read as a number, indices that are not the candidate, stage
observables, families of other sizes than the count (a count past a family's end is the reference's
index error), `cachedin` of the choosing session."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import run_on_tier

BASE = """
let R = 12;
pool reqs[R] {{ cap 2; admit via e; }}
pool kv[R] {{ cap 4096; block 16; evict lru; }}
pool side[16] {{ cap 3; }}
stage e[R] : step {{ budget 64; cost 0.01 + 0.001 * residents; memory kv; }}
stage d[16] : fifo;
workload {{ arrive poisson(40); }}
session {{
  set p = serial % 5;
  choose j in {n} by {keys};
  hold side[serial % 16] (1) {{ run d[serial % 16] (0.01); }}
  hold reqs[j % R] (1), kv[j % R] (32) reuse (min(cachedin(kv[j % R]), 16)) {{
    prefill on e[j % R] (32) growing kv[j % R];
    decode on e[j % R] (3 + serial % 5) growing kv[j % R];
  }} cache (48);
  observe picked = j;
}}
run {{ horizon 20; seed 7; }}
"""

KEYS = [
    "(holders(reqs[j]) + queued(reqs[j]))",
    "(queued(reqs[j]), used(kv[j]), j)",
    "(free(kv[j]) < 4000 ? 1 : 0, -j)",
    "(-cachedin(kv[j]), holders(reqs[j]))",
    "(0)",  # every candidate ties: the first
    "(j == 3 ? (p - p) / (p - p) : j)",  # a NaN key never wins against a number (the comparison is false)
    "(queue(e[j]) + busy(e[j]), p == j % 5 ? 0 : 1)",
    "(holders(side[j]) + queued(side[j]), j)",  # a family of 16, a count of 12
    "(used(kv[(j + 1) % R]), holders(reqs[R - 1 - j]))",  # indices that are not the candidate itself
    "(~exp(1), j)",  # a draw per candidate, in the same order
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("keys", KEYS)
def test_the_written_out_loop_gives_the_references_choice(tmp_path, keys):
    src = tmp_path / "choose.sq"
    src.write_text(BASE.format(n="R", keys=keys))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    _, quick, qs = run_on_tier(program, "")
    _, ref, rs = run_on_tier(program, "general")
    assert quick[0] == "report", quick
    assert quick == ref and qs == rs
    assert len(qs["picked"][0]) > 400  # (the sessions chose)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n,keys", [
    ("16", "(holders(reqs[j]), j)"),  # past the family of 12: the index error at its end
    ("14", "(used(side[j]) + holders(reqs[j]))"),
    ("13", "(queue(e[j]))"),
])
def test_a_count_past_a_family_indexed_is_the_references_error(tmp_path, n, keys):
    src = tmp_path / "choose.sq"
    src.write_text(BASE.format(n=n, keys=keys))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    _, quick, _ = run_on_tier(program, "")
    _, ref, _ = run_on_tier(program, "general")
    assert quick[0] == "error" and "out of range (the family has 12)" in quick[2], quick
    assert quick == ref


@pytest.mark.timeout(60)
def test_the_loop_reads_the_candidates_members_without_a_checked_lookup_each(tmp_path, monkeypatch):
    from serq_sim.engine import Simulation

    looked = [0]
    pool_at = Simulation.pool_at

    def counting(self, *a):
        looked[0] += 1
        return pool_at(self, *a)

    monkeypatch.setattr(Simulation, "pool_at", counting)
    src = tmp_path / "choose.sq"
    src.write_text(BASE.format(n="R", keys="(holders(reqs[j]) + queued(reqs[j]))"))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    per = {}
    for tier in ("", "general"):
        looked[0] = 0
        sim, outcome, _ = run_on_tier(program, tier)
        assert outcome[0] == "report"
        per[tier] = looked[0] / sim.arrivals
    # the session's own holds look up their members (side, reqs, kv, each a few times); the reference's
    # choose also looks up reqs[j] twice for each of the 12 candidates
    assert per[""] < 12, per
    assert per["general"] > per[""] + 2 * 12 - 1, per


FAST = """
let R = 12;
pool gpu[R] {{ cap 1; }}
pool side[16] {{ cap 2; }}
stage svc[R] : fifo;
stage d[16] : delay;
workload {{ arrive poisson(9); }}
session {{
  set t0 = now;
  set p = serial % 5;
  choose j in {n} by {keys};
  hold gpu[j % R] (1) {{ run svc[j % R] (~exp(1)); }}
  hold side[serial % 16] (1) {{ run d[serial % 16] (0.01); }}
  observe picked = j;
  observe response = now - t0;
}}
run {{ horizon 300; seed 5; }}
"""

FAST_KEYS = [
    "(holders(gpu[j]) + queued(gpu[j]))",
    "(queued(gpu[j]), j)",
    "(used(gpu[j]) + queue(svc[j]), -j)",
    "(free(gpu[j]) > 0 ? 0 : 1, p == j % 5 ? 0 : 1)",
    "(holders(side[j]) + busy(d[j]))",  # a family of 16, a count of 12
    "(queued(gpu[(j + 3) % R]), j)",  # an index that is not the candidate itself: checked
    "(j == 3 ? (p - p) / (p - p) : holders(gpu[j]))",
    "(~exp(1))",
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("keys", FAST_KEYS)
def test_the_fast_tiers_loop_gives_the_general_engines_choice(tmp_path, monkeypatch, keys):
    """The fast tier writes the loop out too (fast.py): a member named by the candidate read as the loop's
    index, one key compared as a number. JSQ over 64 replicas, 50 000 requests: 1.41 s, 0.46 s now (SimPy's
    0.56, bench/jsq.sq)."""
    from tiers import assert_same

    src = tmp_path / "fast.sq"
    src.write_text(FAST.format(n="R", keys=keys))
    assert_same(serq_frontend.compile(str(src), sets={}, defs={}), monkeypatch)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", ["13", "17"])
def test_the_fast_tiers_count_past_a_family_is_the_general_engines_error(tmp_path, monkeypatch, n):
    from tiers import _outcome

    src = tmp_path / "fast.sq"
    src.write_text(FAST.format(n=n, keys="(holders(gpu[j]), holders(side[j]))"))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    quick, _ = _outcome(program, monkeypatch, "")
    general, _ = _outcome(program, monkeypatch, "general")
    assert quick[0] == "error" and "out of range (the family has 12)" in quick[2], quick
    assert quick == general


@pytest.mark.timeout(60)
def test_the_benchmarks_router_gives_the_same_samples_on_both_engines():
    """bench/jsq.sq (the fast tier) and bench/jsq_blocks.sq (the same with its pools in blocks of one unit:
    the general engine's lean code) are one program for the benchmark's two rows: the same samples."""
    from pathlib import Path

    import serq_sim

    bench = Path(__file__).resolve().parents[3] / "bench"
    out = []
    for name in ("jsq.sq", "jsq_blocks.sq"):
        r = serq_sim.run(serq_frontend.compile(str(bench / name), sets={}, defs={}), arrivals=3000)
        out.append((r.tier, r.observes["response"].values.tobytes()))
    assert [t for t, _ in out] == ["fast", "general"]
    assert out[0][1] == out[1][1] and len(out[0][1]) == 3000 * 8
