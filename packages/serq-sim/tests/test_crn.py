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
from crn_draws import _uniform, per_turn
from serq_sim import rand

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
# a fast-tier program: an init draw, two turn draws, a FIFO server whose speed is the deployment
TURNS = HERE / "crn_turns.sq"


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


# -- the session block's draws: a stream per (serial, turn, place) ------------------------------------
PLACES = HERE / "crn_places.sq"
@pytest.mark.parametrize("tier", ["fast", "general"])
def test_the_session_blocks_draws_do_not_depend_on_the_deployment(tier, monkeypatch):
    """mu changes when everything happens and so which sessions take the branch with the extra draw
    (place 0); the draws after it (places 1 and 2), the `branch with` (place 3) and so the number of
    turns, and every tool time stay."""
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    runs, slow = [], []
    for mu in (0.5, 1.0):
        r = serq_sim.run(serq_frontend.compile(str(PLACES), sets={"mu": mu}), seed=3)
        assert r.tier == tier
        runs.append(per_turn(r, "y", "zt"))
        slow.append(set(per_turn(r, "slow")))
    # the branch is the deployment's: taken by other sessions and turns at the other speed
    assert len(slow[0] ^ slow[1]) > 100
    a, b = runs
    common = set(a) & set(b)
    assert len(common) > 500
    assert all(a[k] == b[k] for k in common)
    # the sessions that arrived in the first half of the run (and ended long before its end) ran the same
    # turns, whatever mu did to their times and to the branch on them
    early = lambda runs_: sorted(k for k in runs_ if k[0] < 150)  # noqa: E731
    assert early(a) == early(b) and len(early(a)) > 300
    assert 0.2 < sum(x[0] for x in a.values()) / len(a) < 0.8
    # the values are the ones the layout of docs/simulator.md gives, by hand: y is place 1, z place 2
    for serial, turn in [(0, 1), (7, 1), (7, 2), (40, 1)]:
        if (serial, turn) in a:
            y, z = a[(serial, turn)]
            assert y == _uniform(3, serial, turn, 1)
            assert z == -3 * math.log(1.0 - _uniform(3, serial, turn, 2))
    assert (7, 1) in a and (0, 1) in a


def test_budgets_8192_and_512_see_the_same_tool_times(tmp_path):
    """vllm.sq's tool time is the session block's draw: the same on every common session and turn."""
    src = (ROOT / "examples/multi-turn/vllm.sq").read_text()
    old = "      tool (~exp(Z));"
    assert old in src
    src = src.replace(old, "      set zt = ~exp(Z);\n      observe z_tool = zt;\n      tool (zt);")
    prog = tmp_path / "vllm_tools.sq"
    prog.write_text(src)
    runs = []
    for budget in (8192, 512):
        program = serq_frontend.compile(str(prog), sets={"B": budget})
        runs.append(per_turn(serq_sim.run(program, seed=1, horizon=600, warmup=0), "z_tool"))
    a, b = runs
    common = set(a) & set(b)
    assert len(common) > 300
    assert all(a[k] == b[k] for k in common)
