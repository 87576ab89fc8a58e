"""A spill to a tier of larger blocks than the pool evicts (peer programs, round 20: a researcher modelling
LMCache's 256-token chunks wrote `pool cpu { block 256; }` beside a GPU pool of blocks of 16).

A pool with `block` evicts a block at a time, each a spill of its own, and the tier takes what reaches it in
whole blocks of its own, rounded down (docs/language.md, "A spill's work is what it writes"): a block of 16
is no block of 256, so the spill never wrote anything, and the report said only `spills 0`. The report now
warns at such a spill (`spill-unused`, notes.coarse_tier), and not where the tier's blocks are no larger. The
rounding itself is checked by hand on one traced program (two sessions, blocks of 16 on a GPU of 96 units;
the second session's return finds 16 units on the GPU and reads the rest of its history from the tier) at
tier blocks of 16, 8, 10 and 256, on both tiers."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim.notes import warning_code
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let tb = 16;  // the tier's block

def reusable(x) = floor((x - 1) / 16) * 16;

pool kv { cap 96; block 16; evict lru; spill cpu via pcie (size / 16 * 0.5) when (1); }
pool cpu { cap 1600; block tb; evict lru; }
stage engine : step { budget 1000; cost 1 + 0.01 * prefilled; memory kv; }
stage pcie : delay;
stage think : delay;

workload {
  arrive renewal(50);
  init {
    set K = 0;
  }
}

session {
  set n = serial == 0 ? 32 : 64;
  turn;
  loop {
    set prompt = K + n;
    set t0 = now;
    hold kv (prompt) reuse (hg) at admission (hg = min(cachedin(kv), reusable(prompt))) {
      set gpu_hit = cached;
      hold cpu (hc) reuse (hc) at admission (hc = max(0, min(cachedin(cpu), reusable(K) - gpu_hit))) {
        set cpu_hit = cached;
        run pcie (cpu_hit / 16 * 0.25);
        load kv (cpu_hit);
      } cache (0);
      prefill on engine (prompt - gpu_hit - cpu_hit) growing kv;
      observe ttft = now - t0;
      observe cpu_hit = cpu_hit;
      decode on engine (15) growing kv;
    } cache (prompt + 16);
    set K = prompt + 16;
    branch (turn_no < 2 && serial == 0) {
      run think (100);
      set n = 16;
      turn;
    } else {
      end;
    }
  }
}

run { horizon inf; warmup 0; seed 1; arrivals 2; }
"""


def report(monkeypatch, tb: float) -> dict:
    return same_json(serq_frontend.compile(source=PROGRAM, sets={"tb": tb}), monkeypatch)


def coarse(r: dict) -> list[str]:
    return [n for n in r["notes"] if "which no such block fills" in n]


# By hand. Session 0 (sent at 50, prompt 32) prefills in [50, 51.32], decodes 15 tokens to 66.32 and caches
# its 47 computed tokens as 32 (two blocks). Session 1 (sent at 100, prompt 64) fits beside them; its 65th
# token grows it to 5 blocks, 7 with session 0's 2 of a pool of 6: session 0's tail block is evicted, a spill
# of 16 units. Session 0 returns at 166.32 (prompt 48 + 16 = 64): it takes its own 16 left on the GPU, its
# 4 blocks and session 1's 4 cached are 2 too many (two more spills, of session 1's), and its decode's 65th
# token one more: 4 spills of a block each. What session 0 finds in the tier is its one spilled block as the
# tier keeps it: a block of 16 in blocks of 16 or 8 is 16 units, in blocks of 10 it is 10, in blocks of 256
# none. Its second TTFT is the read (cpu_hit / 16 * 0.25) and a prefill of 64 - 16 - cpu_hit tokens
# (1 + 0.01 each).
@pytest.mark.parametrize(("tb", "cpu_hit", "warned"), [(16, 16, False), (8, 16, False), (10, 10, False),
                                                      (256, 0, True)])
def test_what_the_tier_keeps_of_each_block(monkeypatch, tb, cpu_hit, warned):
    r = report(monkeypatch, tb)
    kv = next(p for p in r["pools"] if p["name"] == "kv")
    assert kv["spills"] == (0 if warned else 4) and kv["evicted_units"] == 64
    second = r["observes"]["ttft"]
    ttft2 = cpu_hit / 16 * 0.25 + 1 + 0.01 * (64 - 16 - cpu_hit)
    assert second["count"] == 3
    assert second["mean"] == pytest.approx((1.32 + 1.64 + ttft2) / 3, abs=1e-12)
    assert r["observes"]["cpu_hit"]["mean"] == pytest.approx(cpu_hit / 3)
    assert len(coarse(r)) == (1 if warned else 0)


def test_the_warning_words_and_code(monkeypatch):
    r = report(monkeypatch, 256)
    (note,) = coarse(r)
    assert note == ("warning: pool kv's `spill` writes nothing: kv evicts a block of 16 units at a time, each a spill "
                    "of its own, and its tier cpu keeps whole blocks of 256, which no such block fills; give cpu a "
                    "block of at most 16 (one that divides it keeps every unit written)")
    # the JSON report's code beside it (the words are never read: as text alone it is no kind of the simulator's)
    assert r["codes"][r["notes"].index(note)] == "spill-unused"
    assert warning_code(note) == "plugin"
