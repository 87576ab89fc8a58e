"""docs/vllm.md's CPU offload tier, traced by hand on a tiny engine: when an evicted block counts in the tier.

Blocks of 4 tokens, a GPU pool of 4 blocks, a tier of 8, an engine of budget 100 whose iteration takes 1 s, a
write of ``write`` seconds a block and a read of 0.25 s a block, the snippet's hold as docs/vllm.md writes it.
Session 0 sends 8 tokens at 1 (prefilled [1, 2], 8 tokens cached on the GPU: 9 less the part block), session 1
sends 16 at 2 and takes the whole GPU, evicting session 0's 2 blocks at 2 (2 spills), and session 0 comes back
at 7 (5 s of think) with 13 tokens, K = 9: its GPU hold takes the whole GPU again, evicting session 1's 4 blocks
at 7 (4 spills), and its tier hold finds what it came for only if its blocks have landed:

* write 0.5: they landed at 2.5; the read of 2 blocks [7, 7.5], the prefill of 13 - 8 = 5 tokens [7.5, 8.5].
* write 6: they land at 8, after the look at 7: no tier hit, the prefill of 13 tokens [7, 8].

The tier's ``cached`` (the pool table's time average) counts a spill from the eviction, not from its landing:
the units written take their room there at once, as a dead entry (docs/simulator.md). With write 0.5 that is
session 0's 8 units [2, 7] (consumed at 7 by the hold, ``cache (0)``) and session 1's 16 units [7, 8.5]: 40 + 24
= 64 unit-seconds over 8.5 s, where counting from the landings would give 8 x 4.5 + 16 x 1 = 52. docs/vllm.md
said only that a spilled block counts in the tier when its write ends, which is what a hit reads
(``cachedin``), and not what the pool's figures count."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

PROGRAM = """
def reusable(x, bs) = floor((x - 1) / bs) * bs;

let bs = 4;
let write = 0.5;
let read = 0.25;

pool reqs { cap 8; admit via engine; }
pool kv { cap 16; block bs; evict lru; preempt lifo; spill cpu via pcie (size / bs * write) when (1); }
pool cpu { cap 32; block bs; evict lru; }
stage pcie : delay;
stage engine : step { budget 100; cost 1; memory kv; }
stage think : delay;

workload {
  arrive renewal(~det(1));
  hidden o;
}

session {
  set K = 0;
  set k = 0;
  loop {
    set prompt = serial == 1 ? 16 : k == 0 ? 8 : 13;
    set o = 1;
    set t0 = now;
    set had = prompt;
    hold reqs (1), kv (known) reserve (known) reuse (hg)
         at admission (known = max(had, computed < prompt ? prompt : computed + 1),
                       hg = min(cachedin(kv), reusable(known, bs))) {
      set had = known;
      set gpu_hit = cached;
      hold cpu (hc) reuse (hc) at admission (hc = max(0, min(cachedin(cpu), reusable(K, bs) - gpu_hit))) {
        set cpu_hit = cached;
        run pcie (cpu_hit / bs * read);
        load kv (cpu_hit);
      } cache (0);
      set t_loaded = now;
      prefill on engine (known - gpu_hit - cpu_hit) growing kv;
      set t_first = now;
      decode on engine (o - 1 - (known - prompt)) growing kv;
    } cache (prompt + o);
    record request {
      sent = t0;
      first_token = t_first;
      last_token = now;
      prompt = prompt;
      output = o;
      cached = gpu_hit + cpu_hit;
      cpu = cpu_hit;
      loaded = t_loaded;
    }
    set K = prompt + o;
    set k = k + 1;
    branch (serial == 0 && k < 2) { run think (5); } else { end; }
  }
}

run { horizon 100; arrivals 2; seed 1; }
"""

COLUMNS = ["session", "sent", "loaded", "first_token", "prompt", "cached", "cpu"]


def _run(monkeypatch, tier, write):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    report = serq_sim.run(serq_frontend.compile(source=PROGRAM.lstrip(), sets={"write": write}))
    rows = [tuple(r) for r in report.records()[COLUMNS].itertuples(index=False)]
    pools = {p.name: p for p in report.result.pools}
    return report.result, rows, pools


@pytest.mark.parametrize("tier", ["default", "general"])
def test_a_block_landed_is_read_and_the_tier_counts_it_from_its_eviction(monkeypatch, tier):
    result, rows, pools = _run(monkeypatch, tier, 0.5)
    assert result.end == 8.5
    assert rows == [(0, 1.0, 1.0, 2.0, 8, 0, 0), (1, 2.0, 2.0, 3.0, 16, 0, 0), (0, 7.0, 7.5, 8.5, 13, 8, 8)]
    kv, cpu = pools["kv"], pools["cpu"]
    assert (kv.spills, kv.evicted_entries, kv.evicted_units) == (6, 2, 24)
    assert cpu.used == pytest.approx(8 * 0.5 / 8.5, rel=1e-12)  # the read's hold of 8 units [7, 7.5]
    assert cpu.cached == pytest.approx((8 * (7 - 2) + 16 * (8.5 - 7)) / 8.5, rel=1e-12)  # not 52 / 8.5


@pytest.mark.parametrize("tier", ["default", "general"])
def test_a_block_still_on_the_link_is_no_hit(monkeypatch, tier):
    result, rows, pools = _run(monkeypatch, tier, 6)
    assert result.end == 8.0
    assert rows[2] == (0, 7.0, 7.0, 8.0, 13, 0, 0)  # session 0's blocks land at 8: the prefill is whole
    # session 0's 8 units from their eviction at 2 to the end, session 1's 16 from 7: both still writing
    assert pools["cpu"].cached == pytest.approx((8 * (8 - 2) + 16 * (8 - 7)) / 8, rel=1e-12)
    assert pools["cpu"].used == 0
