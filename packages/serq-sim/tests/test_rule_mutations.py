"""Mutation spot-checks: each §3 rule is one function (docs/simulator.md, "The rules of §3"), so a wrong
variant of that one function, patched in, must change the answer of a scenario whose answer is known
(computed by hand below, or recorded from the real vLLM scheduler: serq-vllm's oracle), while the
function as it is gives that answer. A second copy of a rule somewhere else would keep the answer and
fail the check."""

from __future__ import annotations

import json
from collections import deque

import pytest
import serq_frontend
import serq_sim
from serq_sim.pools import admission, cache, growth
from serq_sim.pools.model import NONE_YET
from serq_sim.step import StepStage
from serq_vllm.scenarios import ORACLE, answer_path, compare, run_scenario

#: the bound that stops a wrong variant that never ends (its partial report is a different answer)
MAX_EVENTS = 20_000


def done(source: str) -> dict[int, float]:
    """Each session's ``done`` time (the check of the pools' invariants on)."""
    r = serq_sim.run(serq_frontend.compile(source=source), check_invariants=True, max_events=MAX_EVENTS)
    o = r.observe("done")
    return dict(zip(o.sessions.tolist(), o.values.tolist()))


def oracle_ok(name: str) -> bool:
    """Whether lib/vllm.sq's vllm_request gives the real scheduler's answers on oracle scenario ``name``."""
    path = ORACLE / f"{name}.json"
    expected = json.loads(answer_path(path).read_text())
    try:
        answer = run_scenario(json.loads(path.read_text()))
    except serq_sim.SimError:
        return False
    return compare(answer, expected) == [] and answer["steps"] == expected["steps"]


# One step engine E (budget 10, cost 1 an iteration) with memory kv (cap 4); reqs admitted by E.
# Session 0 decodes 2 tokens from an allocation of 1 (it grows at its second), session 1 decodes 3 from
# 3 (it never grows), session 2 arrives at 0.5 and decodes 1 from 1.
ENGINE = """
pool reqs {{ cap 10; admit via E; }}
pool kv {{ cap 4; block 1; {preempt} }}
stage E : step {{ budget 10; cost 1; memory kv; }}
stage d : delay;
workload {{ arrive batch(3); }}
session {{
  branch (serial == 2) {{ run d (0.5); }}
  set u = serial == 0 ? 1 : (serial == 1 ? 3 : {late});
  set w = serial == 0 ? 2 : (serial == 1 ? 3 : 1);
  hold reqs (1), kv (u) {{ run E decode (w) growing kv; }}
  observe done = now;
}}
"""

# preempt by (-admission) requeue tail, session 2 needing 1: [0,1] serves 0 and 1 (used 4). At 1 session 0's
# growth does not fit: the last admitted resident, 1, is preempted (released: used 1; to the queue's tail,
# behind 2); 0 grows (used 2) and is served. The iteration preempted, so 2 is not admitted although it
# fits. [1,2] 0 alone: done 2 (used 0). At 2, 2 and then 1 are admitted (used 4): 2 done 3, 1 decodes
# [2,5]: done 5.
GATE = ENGINE.format(preempt="preempt by (-admission) requeue tail;", late=1)
GATE_TRUTH = {0: 2.0, 2: 3.0, 1: 5.0}

# preempt lifo (requeue head), session 2 needing 2: at 1 session 1 is preempted as above and goes back at
# the head, ahead of 2. [1,2] 0 alone: done 2. At 2, 1 is admitted (used 3); 2 (2 more) does not fit and
# blocks. 1 decodes [2,5]: done 5 (used 0); 2 is admitted at 5: done 6.
HEAD = ENGINE.format(preempt="preempt lifo;", late=2)
HEAD_TRUTH = {0: 2.0, 1: 5.0, 2: 6.0}


def gate_ignored(self, p0: int) -> bool:
    """Admission while budget is left, whether or not the planning preempted."""
    return self.left > 0


def requeue_tail(pool, s) -> None:
    """A victim re-enters at the tail whatever its policy says."""
    s.requeue = None
    if pool.queue is NONE_YET:  # (no session joined it yet: admission.enqueue makes its deque)
        pool.queue = deque()
    pool.queue.append(s)


def head_after_keys(sim, pool):
    """The head among the queue proper first: the sessions re-queued at the head wait behind it."""
    if pool.queue:
        front = pool.front
        pool.front = NONE_YET
        try:
            return admission_head(sim, pool)
        finally:
            pool.front = front
    return admission_head(sim, pool)


admission_head = admission.head


def whole_entries(pool, e, short: float) -> float:
    """Evict a whole entry at a time, block or no block (not from its tail)."""
    return e.size


def first_admitted(self, pool, grower):
    """The victim is the candidate admitted first (not the last)."""
    cands = growth.preempt_candidates(self.sim, pool)
    return cands[0][0] if cands else None


def test_the_scenarios_give_their_answers():
    assert done(GATE) == GATE_TRUTH
    assert done(HEAD) == HEAD_TRUTH
    for name in ("vllm/preempt", "vllm/alone", "generated/turns_evict", "generated/preempt_victims"):
        assert oracle_ok(name), name


def test_the_preemption_gate(monkeypatch):
    """No admission in an iteration that preempted (one gate for the per-job, lazy and exclusive plannings)."""
    monkeypatch.setattr(StepStage, "_admission_open", gate_ignored)
    assert done(GATE) != GATE_TRUTH


def test_requeue_at_the_head(monkeypatch):
    monkeypatch.setattr(admission, "enqueue", requeue_tail)
    assert done(HEAD) != HEAD_TRUTH


def test_admission_of_the_preempted_at_the_head(monkeypatch):
    monkeypatch.setattr(admission, "head", head_after_keys)
    assert done(HEAD) != HEAD_TRUTH
    assert not oracle_ok("vllm/alone")


def test_eviction_from_the_tail_of_an_entry(monkeypatch):
    """LRU takes an entry block by block from its tail, so a prefix of it stays cached."""
    monkeypatch.setattr(cache, "evict_amount", whole_entries)
    assert not oracle_ok("generated/turns_evict")


@pytest.mark.parametrize("name", ["vllm/preempt", "generated/preempt_victims"])
def test_the_victim_choice(monkeypatch, name):
    from serq_sim.policies import preemption

    monkeypatch.setattr(preemption.PreemptByKeys, "victim", first_admitted)
    assert not oracle_ok(name)
