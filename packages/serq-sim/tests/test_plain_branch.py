"""A workload's ``init`` and ``turn`` blocks take ``branch`` over ``set`` and ``observe`` (docs/language.md):
``serq check`` accepted such a program and the run refused it ("a workload init block only sets and
observes, not Branch"). Hand-counted cases on both tiers' reach (a program with such a block runs on the
general engine), a guard that is not 0 or 1 as a run-time error naming its statement, and nests deeper
than Python allows in one function."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_sim.errors import SimError


def _run(src: str):
    return serq_sim.run(serq_frontend.compile(source=src))


PARITY = """
stage d : delay;
workload {
  arrive poisson(1); hidden k;
  init { branch (serial % 2 == 0) { set k = 2; observe even = serial; } else { set k = 3; observe odd = serial; } }
  turn { branch (k == 3) { set k = 0; observe again = serial; } }
}
session { run d (0.001); branch (k == 3) { turn; } observe k_end = k; end; }
run { horizon 1e9; arrivals 40; seed 3; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_init_and_turn_branch(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = _run(PARITY)
    even = sorted(r.observe("even").values.tolist())
    odd = sorted(r.observe("odd").values.tolist())
    # serials 0..39 (or 1..40): half take each arm of the init block, by their parity
    assert len(even) == len(odd) == 20
    assert all(v % 2 == 0 for v in even) and all(v % 2 == 1 for v in odd)
    # the odd ones take a turn, whose block takes its own branch; every session ends with k = 2 or 0
    assert sorted(r.observe("again").values.tolist()) == odd
    ks = r.observe("k_end").values.tolist()
    assert sorted(ks) == [0.0] * 20 + [2.0] * 20


def test_a_guard_that_is_not_0_or_1_is_the_statements_error():
    src = """
stage d : delay;
workload { arrive poisson(1); hidden k; init { set k = 2; branch (k) { set k = 0; } } }
session { run d (1); end; }
run { horizon 100; seed 1; }
"""
    with pytest.raises(SimError) as e:
        _run(src)
    msg = str(e.value)
    assert "branch guard is 2, not 0 or 1" in msg and "session" in msg


def test_a_draw_in_an_init_branch():
    # branch with (p): about p of the sessions; 4 000 sessions, p = 0.25: 1 000 +- 3 sd (27)
    src = """
stage d : delay;
workload { arrive poisson(100); init { branch with (0.25) { observe hit = 1; } } }
session { run d (0.001); end; }
run { horizon 1e9; arrivals 4000; seed 11; warmup 0; }
"""
    n = len(_run(src).observe("hit").values)
    assert 1000 - 82 < n < 1000 + 82, n


def test_a_deep_nest_of_branches():
    # 30 nested branches (Python refuses more than 20 nested blocks in one function; a program nests at
    # most rules.MAX_BLOCK_DEPTH = 32): each level sets
    # its own depth when the guard holds; every guard holds, so k ends at 30
    depth = 30
    body = "set k = 30;"
    for level in range(depth - 1, -1, -1):
        body = f"set k = {level}; branch (k == {level}) {{ {body} }} else {{ set k = -1; }}"
    src = f"""
stage d : delay;
workload {{ arrive poisson(1); hidden k; init {{ {body} observe deep = k; }} }}
session {{ run d (1); end; }}
run {{ horizon 1e9; arrivals 5; seed 1; warmup 0; }}
"""
    assert _run(src).observe("deep").values.tolist() == [30.0] * 5
