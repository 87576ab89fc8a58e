"""Several vLLM engines in one program: lib/vllm.sq's request serves on the engine it is given, and
examples/multi-turn/vllm_replicas.sq puts N replicas behind a router."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim

ROOT = Path(__file__).resolve().parents[3]
REPLICAS = ROOT / "examples" / "multi-turn" / "vllm_replicas.sq"
LIB = ROOT / "packages" / "serq-vllm" / "src" / "serq_vllm" / "lib" / "vllm.sq"
VLLM_PROGRAMS = ["multi-turn/vllm.sq", "multi-turn/vllm_chat.sq", "multi-turn/vllm_single_turn.sq",
                 "multi-turn/vllm_subagents.sq", "replay/vllm_replay.sq", "multi-turn/twins/vllm_twosides.sq"]


def _bare(program) -> bytes:
    p = serq_ir.strip_spans(program)
    return msgspec.json.encode(msgspec.structs.replace(p, source=None))


@pytest.mark.parametrize("name", VLLM_PROGRAMS)
def test_a_single_engine_program_compiles_as_with_the_one_engine_rule(tmp_path, name):
    """The library names the engine it is given (`prefill on engine`); in a program of one step engine
    that is the stage the which-stage rule finds, so the IR is the one a library without `on` gives."""
    src = ROOT / "examples" / name
    shutil.copytree(src.parent, tmp_path / "p")
    text = LIB.read_text()
    assert text.count("prefill on engine (") == 1 and text.count("decode on engine (") == 1
    lib = text.replace("prefill on engine (", "prefill (").replace("decode on engine (", "decode (")
    program = src.read_text()
    assert program.count('use "vllm.sq";') == 1
    inlined = tmp_path / "p" / "inlined.sq"
    inlined.write_text(program.replace('use "vllm.sq";', lib))
    assert _bare(serq_frontend.compile(inlined)) == _bare(serq_frontend.compile(src))


@pytest.fixture
def _run(serq_in_process):
    """``_run(*args)``: the JSON report of ``serq run ARGS`` (in this process: what is checked is its figures)."""

    def call(*args: str) -> dict:
        r = serq_in_process("run", *args, "--no-progress", "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    return call


@pytest.mark.parametrize("policy", [0, 1, 2])
def test_one_replica_is_vllm_sq(policy, _run):
    """With N = 1 every policy routes to the one replica, and the figures are vllm.sq's, sample for
    sample (the same engine, the same workload, the same draws)."""
    short = ["--horizon", "400", "--warmup", "40"]
    one = _run(str(REPLICAS), "--set", "N=1", "--set", f"policy={policy}", *short)
    single = _run(str(ROOT / "examples" / "multi-turn" / "vllm.sq"), *short)
    assert one["observes"] == single["observes"]
    assert one["observes"]["ttft"]["count"] > 100


def _report(policy: int, horizon: float = 600):
    program = serq_frontend.compile(REPLICAS, sets={"policy": float(policy)})
    return serq_sim.run(program, horizon=horizon, warmup=0)


def test_round_robin_sends_each_request_where_the_rule_says():
    """Under round robin request k of session s goes to replica (s + k - 1) % 2: each replica admits
    exactly the requests the rule sends it (nothing is preempted at this load), and the two loads are
    symmetric (the rule alternates, so the counts differ by a few requests at most)."""
    r = _report(0)
    hit = r.observe("hit")  # one sample per request, at its first admission
    want = Counter((int(s) + int(t) - 1) % 2 for s, t in zip(hit.sessions.tolist(), hit.turns.tolist()))
    assert sum(r.observe("preempted").values.tolist()) == 0
    got = {p.index: p.admissions for p in r.result.pools if p.name == "reqs"}
    assert got == {0: want[0], 1: want[1]}
    assert abs(got[0] - got[1]) <= 0.05 * (got[0] + got[1])
    util = [st.utilisation for st in r.result.stages if st.name == "engine"]
    assert len(util) == 2 and abs(util[0] - util[1]) <= 0.15 * max(util)


def test_prefix_affinity_finds_the_previous_turn_and_round_robin_does_not():
    """Prefix affinity sends every later turn where its previous sequence is cached: every request is a
    full hit at this load. Round robin sends it to the other replica, so first turns (which have nothing
    to find) are full hits and later ones almost never."""
    aff, rr = _report(2), _report(0)
    assert aff.observe("full_hit").values.mean() == 1.0
    full = rr.observe("full_hit")
    firsts = [v for v, t in zip(full.values.tolist(), full.turns.tolist()) if t == 1]
    later = [v for v, t in zip(full.values.tolist(), full.turns.tolist()) if t > 1]
    assert firsts and all(v == 1.0 for v in firsts)
    # a later turn is a full hit only where its previous sequence fits the blocks cached two turns back
    # (a turn of a few tokens): a handful
    assert len(later) > 500 and sum(later) <= 0.02 * len(later)
    assert aff.observe("hit").values.mean() > rr.observe("hit").values.mean()
