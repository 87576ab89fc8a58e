"""Many preemptions at one instant cost work in proportion to them, not to their product with the
residents: under preempt lifo the victim is the candidate admitted last, found by walking the step
stage's residents (in admission order) from the last (growth.last_candidate), not every holder of the pool
for each victim; and a victim leaves the residents by bisection on its rank (step.stage._take), not by a
walk from the front of the list to its end. Before, N sessions of which half were preempted in one
iteration took about N * N / 2 looks, and 20 000 of them 14 s.

The looks are counted from the lists themselves (every item an iteration, a removal, a membership test or
an index hands out, over the residents and eager) and from the candidates' walk over the pool's holders;
the reports are the general engine's (SERQ_SIM_TIER=general) byte for byte, and the preemptions the
hand count."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.pools import growth
from serq_sim.step import StepStage
from tiers import run_on_tier

N = 1000

PROGRAM = """
pool kv {{ cap 16 * {n} + 32; block 16; {preempt} }}
pool reqs {{ cap 1e9; admit via engine; }}
stage engine : step {{ budget 1e12; cost 0.01; memory kv; }}
workload {{ arrive batch({n}); }}
session {{
  hold reqs (1), kv (16) {{
    prefill on engine (16) growing kv;
    decode on engine (2) growing kv;
  }}
  end;
}}
run {{ horizon 1e7; seed 1; }}
"""


class Counted(list):
    """A list that counts the items every iteration over it (either way) hands out, those a removal or a
    membership test walks, and every index read."""

    looks = 0

    def __iter__(self):
        for x in super().__iter__():
            Counted.looks += 1
            yield x

    def __reversed__(self):
        for x in super().__reversed__():
            Counted.looks += 1
            yield x

    def __getitem__(self, i):
        Counted.looks += 1
        return super().__getitem__(i)

    def remove(self, x):
        i = next((k for k, y in enumerate(super().__iter__()) if y is x), len(self) - 1)
        Counted.looks += i + 1
        super().remove(x)

    def __contains__(self, x):
        Counted.looks += len(self)
        return super().__contains__(x)


@pytest.fixture
def counted(monkeypatch):
    join = StepStage._join
    walk = growth.resident_slots

    def counting_join(self, job):
        if type(self.residents) is list:
            self.residents = Counted(self.residents)
        if type(self.eager) is list:
            self.eager = Counted(self.eager)
        join(self, job)

    def counting_walk(pool):
        for c in walk(pool):
            Counted.looks += 1
            yield c

    monkeypatch.setattr(StepStage, "_join", counting_join)
    monkeypatch.setattr(growth, "resident_slots", counting_walk)
    Counted.looks = 0
    return Counted


@pytest.mark.timeout(60)
@pytest.mark.parametrize("preempt", ["preempt lifo;", "preempt lifo; queue by (serial);"])
def test_a_burst_of_preemptions_looks_at_each_resident_a_bounded_number_of_times(tmp_path, counted, preempt):
    src = tmp_path / "preempt.sq"
    src.write_text(PROGRAM.format(n=N, preempt=preempt))
    program = serq_frontend.compile(str(src), sets={}, defs={})
    reports = {}
    for tier in ("", "general"):
        counted.looks = 0
        sim, outcome, samples = run_on_tier(program, tier)
        assert outcome[0] == "report", outcome
        assert sim.ended == N
        # the first iteration prefills all N (a block each, 32 units, two blocks, to spare); in the second
        # every one grows into its second block in admission order: the first two take the spare blocks,
        # and each later grower preempts the last admitted, whose block it takes: k growers and v victims
        # with k = 2 + v and k + v = N, so v = (N - 2) / 2; the victims come back when the rest have ended,
        # with room for all
        assert sim.preempt_count == (N - 2) // 2
        # a walk over the candidates per victim would be about N * N / 2 = 500 000 looks
        assert counted.looks < 40 * N, (tier, counted.looks)
        reports[tier] = (outcome, samples)
    assert reports[""] == reports["general"]
