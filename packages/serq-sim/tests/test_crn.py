"""Common random numbers: a session's init and turn draws depend only on the seed, its serial, its turn and
the draw's place, so two programs that differ only in the deployment draw the same workload under one seed
(both tiers)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_sim import rand

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
# a fast-tier program: an init draw, two turn draws, a FIFO server whose speed is the deployment
TURNS = HERE / "crn_turns.sq"


def per_turn(report, *names):
    obs = [report.observe(n) for n in names]
    keys = zip(obs[0].sessions.tolist(), obs[0].turns.tolist())
    return {k: tuple(o.values[i] for o in obs) for i, k in enumerate(keys)}


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_faster_server_sees_the_same_sessions(tier, monkeypatch):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    runs = []
    for mu in (1.0, 1.9):
        r = serq_sim.run(serq_frontend.compile(str(TURNS), sets={"mu": mu}), seed=3)
        assert r.tier == tier
        runs.append(per_turn(r, "n_tok", "k0"))
    a, b = runs
    common = set(a) & set(b)
    assert len(common) > 1000
    assert all(a[k] == b[k] for k in common)
    # the first turn of session 7 draws what its key says, whatever ran before
    rnd = random.Random(rand.workload_key(3, 7, 1))
    assert a[(7, 1)][0] == 1 + int(-10 * math.log(1.0 - rnd.random()))
    rnd = random.Random(rand.workload_key(3, 7, 0))
    assert a[(7, 1)][1] == rnd.random()


def test_keys_are_distinct():
    keys = {rand.workload_key(s, n, t) for s in (0, 1, 2**64 - 1) for n in (0, 1, 2**40) for t in (0, 1, 2**31)}
    assert len(keys) == 27
    assert rand.workload_key(1, 0, 0) != 1 and rand.workload_key(-1, 0, 0) == rand.workload_key(2**64 - 1, 0, 0)


def test_budgets_8192_and_512_draw_the_same_prompt_and_output_lengths(tmp_path):
    src = (ROOT / "examples/multi-turn/vllm.sq").read_text().replace(
        "    set prompt = K + n;", "    set prompt = K + n;\n    observe n_tok = n;\n    observe o_tok = o;")
    prog = tmp_path / "vllm_lengths.sq"
    prog.write_text(src)
    runs = []
    for budget in (8192, 512):
        program = serq_frontend.compile(str(prog), sets={"B": budget})
        runs.append(per_turn(serq_sim.run(program, seed=1, horizon=600, warmup=0), "n_tok", "o_tok"))
    a, b = runs
    common = set(a) & set(b)
    assert len(common) > 500
    assert all(a[k] == b[k] for k in common)
