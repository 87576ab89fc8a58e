"""Conformance of language.txt §3 (Configuration, Pools, Ties, Statistics) and pool-reference.txt's `preempt by …
requeue`, `queue by` with `waited` and `reserve held` on random small programs of one pool whose holders grow,
against pool_model44.model, an independent model written from the spec's words: growers that wait (`preempt
none`) and are retried before the queue, victims by `lifo` or by keys (ties to the last admitted, the grower
its own victim too) re-queued at the head or the tail, queue keys that read `waited` (reset when a victim
joins again), reservations that count against admissions and other holders' growth, and `stuck`; each session
holds twice with `cache`, so a hold consumes the prefix the last one left (or a victim's), and admissions and
growths evict (in LRU order or by keys, per entry or by blocks); some bodies give the allocation back early
(`release p`), some sessions drop their prefix, some holds bound what they reuse; in some programs each hold
ends into a lease that no preemption takes, ended by its time or the session's end (a hold ending into a lease
kept its preemption's position for the next hold, which counted the session stuck: 4 of 80 such programs found
it), some of them ended by a `release p` between the holds. The model has no event where the simulator's heap
holds a completion or a timer left behind (a victim's, an ended lease's): admissions were attempted there too,
and 2 of 700 programs whose queue keys read `waited` found it. Half the programs put their times on a grid of
0.5, so that events tie and the settle order decides.

Every program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples); each session's admission times, the prefix each admission consumed (`cached`), its growths and
its end, and the pool's admissions, preemptions, rejections, evictions, stuck and time-average used and
cached, are the model's.
"""

from __future__ import annotations

import random

import pool_model44 as pm
import pytest
from conform import pool_json, run

HORIZON = 40.0
SEEDS = range(20)


def _draws(seed):
    rng = random.Random(4400 + seed)
    return [pm.draw(rng) for _ in range(3)]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_growing_pool_against_the_model(monkeypatch, seed):
    for c in _draws(seed):
        src = pm.program(c, HORIZON)
        want_obs, want = pm.model(c, HORIZON)
        r, got = run(src, monkeypatch)
        for name, samples in want_obs.items():
            if name == "c":
                assert got.get(name, []) == samples, (name, src)
            else:
                assert [(s, t) for s, t, _v in got.get(name, [])] == samples, (name, src)
        p = pool_json(r, "p")
        assert {k: p[k] for k in want} == pytest.approx(want, rel=1e-9, abs=1e-12), src


def test_the_draws_reach_the_rules():
    """Over the 60 programs of the test: every preempt, queue and evict option, reserve held and not, leases,
    blocks, a release in the body, a drop, a reuse bound and a release that ends a lease, each and not; some
    programs
    preempt, some under `requeue tail`, some have a session stuck, some a grower that waits (`preempt
    none`), some a session that has not ended by the horizon, some an admission that consumes a prefix, some
    an eviction, and some leases beside preemptions."""
    seen = dict(preempted=0, at_the_tail=0, stuck=0, waited_to_grow=0, unfinished=0, consumed=0, evicted=0,
                leased_and_preempted=0)
    options = set()
    for seed in SEEDS:
        for c in _draws(seed):
            obs, fig = pm.model(c, HORIZON)
            options.add(("preempt", c["preempt"]))
            options.add(("queue", c["queue"]))
            options.add(("held", c["held"]))
            options.add(("lease", c["lease"]))
            options.add(("evict", c["evict"]))
            options.add(("block", c["block"] > 1))
            options.add(("release", c["rel"]))
            options.add(("drop", c["drop"]))
            options.add(("reuse", c["reuse"]))
            options.add(("release a lease", c["unlease"] and c["lease"]))
            seen["preempted"] += fig["preemptions"] > 0
            seen["at_the_tail"] += "tail" in c["preempt"] and fig["preemptions"] > 0
            seen["stuck"] += fig["stuck"] > 0
            grew = dict(((s, t) for s, t in obs["g"]))
            admitted = {}
            for s, t in obs["a"]:
                admitted.setdefault(s, t)
            seen["waited_to_grow"] += c["preempt"] == "" and any(
                t > admitted[s] + c["sessions"][s]["B"] + 1e-9 for s, t in grew.items())
            seen["unfinished"] += len(obs["e"]) < len(c["sessions"])
            seen["consumed"] += any(v > 0 for _s, _t, v in obs["c"])
            seen["evicted"] += fig["evicted_entries"] > 0
            seen["leased_and_preempted"] += c["lease"] and fig["preemptions"] > 0
    assert len(options) == len(pm.PREEMPTS) + len(pm.QUEUES) + len(pm.EVICTS) + 14, options
    assert all(v >= 3 for v in seen.values()), seen
