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
from counting import CountedIndexed, count_resident_lists
from serq_sim.pools import growth
from tiers import on_both_tiers

N = 1000

PROGRAM = """
pool kv {{ cap 16 * {n} + 32; block 16; {preempt} }}
pool reqs {{ cap 1e9; admit via engine; }}
stage engine : step {{ budget 1e12; cost 0.01; memory kv; {serve} }}
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


@pytest.fixture
def counted(monkeypatch):
    walk = growth.resident_slots
    counted = count_resident_lists(monkeypatch, CountedIndexed)

    def counting_walk(pool):
        for c in walk(pool):
            counted.looks += 1
            yield c

    monkeypatch.setattr(growth, "resident_slots", counting_walk)
    return counted


@pytest.mark.timeout(60)
@pytest.mark.parametrize("preempt", ["preempt lifo;", "preempt lifo; queue by (serial);"])
def test_a_burst_of_preemptions_looks_at_each_resident_a_bounded_number_of_times(tmp_path, counted, preempt):
    src = tmp_path / "preempt.sq"
    src.write_text(PROGRAM.format(n=N, preempt=preempt, serve=""))
    program = serq_frontend.compile(str(src), sets={}, defs={})

    def check(tier, sim):
        assert sim.ended == N
        # the first iteration prefills all N (a block each, 32 units, two blocks, to spare); in the second
        # every one grows into its second block in admission order: the first two take the spare blocks,
        # and each later grower preempts the last admitted, whose block it takes: k growers and v victims
        # with k = 2 + v and k + v = N, so v = (N - 2) / 2; the victims come back when the rest have ended,
        # with room for all
        assert sim.preempt_count == (N - 2) // 2
        # a walk over the candidates per victim would be about N * N / 2 = 500 000 looks
        assert counted.looks < 40 * N, (tier, counted.looks)

    on_both_tiers(program, check, lambda: setattr(counted, "looks", 0))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("serve", ["serve by (serial % 7);", "serve by (-serial);", "serve by (decoding, serial % 3);"])
def test_a_burst_of_preemptions_under_kept_serve_keys_looks_at_each_resident_a_bounded_number_of_times(
        tmp_path, counted, serve):
    """The residents of a stage ranked by kept serve keys are not in admission order, so the victim
    (the candidate admitted last) is not the last resident: it is found from the end of the stage's
    residents in admission order (serq_sim.orders.admission_order, kept as jobs join and leave), not by walking every
    holder for each victim (N * N / 2 looks: 20 000 sessions took 18 s); the walk of a planning finds a
    preempted lazy decoder's place, and the lazy tables drop it, without walking the residents each."""
    src = tmp_path / "preempt.sq"
    src.write_text(PROGRAM.format(n=N, preempt="preempt lifo;", serve=serve))
    program = serq_frontend.compile(str(src), sets={}, defs={})

    def check(tier, sim):
        assert sim.ended == N
        # every grower beyond the two spare blocks frees a block by a preemption (of a session holding one
        # block, or two when it has grown): at least (N - 2) / 2 and at most N - 2 of them
        assert (N - 2) // 2 <= sim.preempt_count <= N - 2, sim.preempt_count
        # (the bisections on the ranks count their looks: about log2 N each; a walk per victim, as before,
        # is N * N / 2 = 500 000)
        assert counted.looks < 100 * N, (tier, counted.looks)

    on_both_tiers(program, check, lambda: setattr(counted, "looks", 0))
