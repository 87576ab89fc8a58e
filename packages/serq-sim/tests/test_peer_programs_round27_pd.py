"""An llm-d engineer's prefill/decode disaggregation, checked by hand on a tiny deterministic workload
(peer_programs27/pd_tiny.sq and pd_offload.sq): two prefill and two decode engines (queues P[2], D[2], each
step 10 ms, budget 32 tokens), a router choosing each by load, the decoder's read of the KV (`D pull P
latency 0.005`, 6 400 tokens/s through each NIC), and in pd_offload.sq a CPU tier each decoder's GPU KV
spills to and a later turn reads back. Every request's send, first and last token and hit, the report's
TTFT, TPOT, ITL and E2E latency, its prefix-cache hit rate and the tier's spills follow from language.txt §3
by the derivations below; both tiers give the same reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conform import both_tiers

HERE = Path(__file__).parent / "peer_programs27"


def rows(report) -> list[tuple]:
    r = report.records("request")
    cols = ("session", "turn", "sent", "first_token", "last_token", "prompt", "cached")
    extra = [c for c in ("gpu", "cpu", "pm", "dm") if c in r]
    return [tuple(r[c][k] for c in (*cols, *extra)) for k in range(len(r["session"]))]


def close(got: list[tuple], want: list[tuple]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, abs=1e-12), (g, w)


def test_the_router_by_load_and_the_pull(monkeypatch):
    # Sends at 0.015 k. A prefill of 64 at budget 32 is two steps (20 ms); the decoder is admitted when it
    # ends (no token: no step), waits 5 ms, reads 64 tokens at 6 400/s (10 ms), then one step for the last
    # prompt token (the first token) and 4 decode steps: alone, TTFT 45 ms and last token 40 ms after it.
    # Routing at the send (decode by queued + holders of D.kv, prefill by those of P.reqs, ties to 0):
    #   s0 0.015: all idle -> D0, P0; P0 [0.015, 0.035], D0 admitted 0.035, read to 0.05, first 0.06, last 0.10
    #   s1 0.030: s0 still prefilling (D0 empty) -> D0; P0 busy -> P1 [0.03, 0.05]; D0 read [0.055, 0.065],
    #             then D0's next step starts 0.07 (s0's decode step [0.06, 0.07]): first 0.08, last 0.12
    #   s2 0.045: D0 holds s0 -> D1; P1 busy, P0's slot free (the lease keeps only KV) -> P0 [0.045, 0.065];
    #             D1 read [0.07, 0.08], first 0.09, last 0.13
    #   s3 0.060: D0 holds s0 and s1, D1 none (s2 prefilling) -> D1; P0 busy -> P1 [0.06, 0.08]; D1 read
    #             [0.085, 0.095], D1's steps for s2 run [0.08, 0.13], so s3's first step [0.10, 0.11]: last 0.15
    report = both_tiers(HERE / "pd_tiny.sq", monkeypatch)
    close(rows(report), [
        (0, 1, 0.015, 0.06, 0.10, 64, 0, 0, 0),
        (1, 1, 0.030, 0.08, 0.12, 64, 0, 1, 0),
        (2, 1, 0.045, 0.09, 0.13, 64, 0, 0, 1),
        (3, 1, 0.060, 0.11, 0.15, 64, 0, 1, 1),
    ])
    q = report.result.requests
    # TTFT 45, 50, 45, 50 ms (numpy's std, over n; p99 between the two of 50); TPOT 10 ms each; 16 gaps
    # of 10 ms; E2E 85, 90, 85, 90 ms
    assert q.ttft.mean == pytest.approx(0.0475) and q.ttft.std == pytest.approx(0.0025)
    assert q.ttft.median == pytest.approx(0.0475) and q.ttft.p99 == pytest.approx(0.05)
    assert q.tpot.mean == pytest.approx(0.01) and q.itl.count == 16
    assert q.e2el.mean == pytest.approx(0.0875)
    assert q.prefix_cache_hit_rate == 0
    # D0's steps: s0's prefill alone [0.05, 0.06], its decode [0.06, 0.07], s1's prefill beside it [0.07,
    # 0.08], then [0.08, 0.12] four steps: 7, one of them mixed; busy 0.07 of the 0.15 the run lasts
    d0 = next(s for s in report.result.stages if (s.name, s.index) == ("D", 0))
    assert d0.iterations == 7 and d0.utilisation == pytest.approx(0.07 / 0.15)
    # D.reqs[0]: the reqs (0) reserve (1) admissions wait in D.kv's queue, the slot holds of s0 at 0.05 (no
    # wait) and s1 at 0.065 (admitted at the step of 0.07): a wait of 0.005 over 4 admissions
    reqs = next(p for p in report.result.pools if (p.name, p.index) == ("D.reqs", 0))
    assert reqs.admissions == 4 and reqs.wait == pytest.approx(0.005 / 4)


def test_the_offload_tier_spills_and_lands(monkeypatch):
    # Turn 1 (48 tokens) of s0 at 0.2: P0 [0.2, 0.22] (32 + 16), D0 admitted 0.22, read 48 at 6 400/s after
    # 5 ms: 0.2325, first 0.2425, last 0.2825; D0 keeps 52 computed -> 48 cached (3 blocks). s1 the same
    # 0.2 later; D0 then caches 48 of each (6 of its 8 blocks).
    # Turn 2 of s0 at 0.7825 (0.5 s think): prompt 53 + 48 = 101, reusable 96. D0 by its hit 48; P0 hits its
    # own 48 and prefills 53 [0.7825, 0.8025]. D0's hold of 101 (7 blocks, the 3 reused among them) beside
    # s1's 3 cached blocks evicts 2 of them, spilled to the tier (4 ms each, landing 0.8065). The read: 53
    # tokens after 5 ms, 0.815781 25; first 0.825781 25, last 0.865781 25; D0 caches 96 of s0's 105.
    # Turn 2 of s1 at 0.9825: D0 holds 16 of its prefix (hit 16, c), the tier 32 (landed): the tier's hold
    # within the GPU's takes min(32, 96 - c) = 32. P0 [0.9825, 1.0025]; D0's hold of 7 blocks evicts 5 of
    # s0's 6 (spilled); the tier read 2 blocks at 2 ms [1.0025, 1.0065], the NIC read 101 - 16 - 32 = 53
    # after 5 ms: 1.019781 25; first 1.029781 25, last 1.069781 25.
    report = both_tiers(HERE / "pd_offload.sq", monkeypatch)
    close(rows(report), [
        (0, 1, 0.2, 0.2425, 0.2825, 48, 0, 0, 0, 0, 0),
        (1, 1, 0.4, 0.4425, 0.4825, 48, 0, 0, 0, 0, 0),
        (0, 2, 0.7825, 0.82578125, 0.86578125, 101, 48, 48, 0, 0, 0),
        (1, 2, 0.9825, 1.02978125, 1.06978125, 101, 48, 16, 32, 0, 0),
    ])
    q = report.result.requests
    assert q.ttft.mean == pytest.approx((0.0425 * 2 + 0.04328125 + 0.04728125) / 4)
    assert q.tpot.mean == pytest.approx(0.01)
    # the hit rate: the GPU's and the tier's tokens over the prompts, (48 + 48) / (48 + 48 + 101 + 101)
    assert q.prefix_cache_hit_rate == pytest.approx(96 / 298)
    pools = {f"{p.name}[{p.index}]": p for p in report.result.pools}
    # 2 + 5 blocks evicted from D0's GPU, each a spill of its own; no entry evicted whole
    assert pools["D.kv[0]"].spills == 7 and pools["D.kv[0]"].evicted_units == 112
    assert pools["D.kv[0]"].evicted_entries == 0
    # the tier's cached units from each eviction (they take their room there at once): 32 over [0.8025,
    # 1.0025] (then read back, cache (0)), 80 from 1.0025 to the end, 1.069 781 25
    end = 1.06978125
    assert report.result.end == pytest.approx(end)
    assert pools["D.cpu[0]"].cached == pytest.approx((32 * 0.2 + 80 * (end - 1.0025)) / end)
    # the tier's hold of 32 over its read, [1.0025, 1.0065], the only units it allocated
    assert pools["D.cpu[0]"].used == pytest.approx(32 * 0.004 / end)


def test_a_preempted_gpu_hold_reads_the_tier_again(monkeypatch):
    # Under load the decoders' GPU holds are preempted after their tier read; each execution of the hold
    # reads the GPU (its own prefix, what the preempted run computed included) and then the tier for what
    # the GPU lacks, so a request's hits never exceed the history it may reuse, floor((prompt - 1) / 16) 16.
    # (Written with the tier's hold first, binding the GPU's hit from cachedin(kv) itself, the hold executed
    # again found on the GPU what the tier's read had loaded there and read nothing from the tier again:
    # a load past the hold's allocation stopped the run.)
    report = both_tiers(HERE / "pd_offload_load.sq", monkeypatch)
    r = report.records("request")
    gpu, cpu, prompt, pre = (np.asarray(r[c]) for c in ("gpu", "cpu", "prompt", "preemptions"))
    assert ((pre > 0) & (cpu > 0)).sum() >= 5
    assert (gpu + cpu <= (prompt - 1) // 16 * 16).all()
    assert report.result.requests.prefix_cache_hit_rate == pytest.approx((gpu + cpu).sum() / prompt.sum())


def test_one_prefill_engine_and_the_decoders_admissions_at_their_steps(tmp_path, monkeypatch):
    # pd_tiny.sq with one prefill engine (a family of one): the prefills queue at P[0], and a decoder's KV
    # hold (admit via D) is admitted at the start of the decoder's next step, not mid-step.
    #   s0 P [0.015, 0.035]; D0 idle: admitted 0.035, read to 0.05, first 0.06, last 0.10
    #   s1 (0.03: D0 empty -> D0) P [0.035, 0.055]; D0 mid-step (s0's [0.05, 0.06]): admitted 0.06, read
    #      [0.065, 0.075], its slot at D0's step of 0.08: first 0.09, last 0.13
    #   s2 (0.045: D0 holds s0 -> D1) P [0.055, 0.075]; D1 idle: read [0.08, 0.09], first 0.10, last 0.14
    #   s3 (0.06: D0 holds s0 and s1 waits there, D1 none -> D1) P [0.075, 0.095]; D1 mid-step: admitted
    #      0.10, read [0.105, 0.115], its slot at D1's step of 0.12: first 0.13, last 0.17
    text = (HERE / "pd_tiny.sq").read_text()
    text = text.replace("queue P[2] : prefill", "queue P[1] : prefill").replace("choose i in 2 by", "choose i in 1 by")
    path = tmp_path / "pd_one_prefill.sq"
    path.write_text(text)
    report = both_tiers(path, monkeypatch)
    close(rows(report), [
        (0, 1, 0.015, 0.06, 0.10, 64, 0, 0, 0),
        (1, 1, 0.030, 0.09, 0.13, 64, 0, 0, 0),
        (2, 1, 0.045, 0.10, 0.14, 64, 0, 0, 1),
        (3, 1, 0.060, 0.13, 0.17, 64, 0, 0, 1),
    ])
    # P's slots: s1 waits 0.005, s2 0.01, s3 0.015 for the engine's step with budget left
    reqs = next(p for p in report.result.pools if (p.name, p.index) == ("P.reqs", 0))
    assert reqs.wait == pytest.approx(0.03 / 4)
