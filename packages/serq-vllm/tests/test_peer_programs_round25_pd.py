"""P/D disaggregation written as two engine families, traced by hand (peer_programs25/pd_families.sq).

A prefill family `pre[NP]` (its own request slots and KV pool) computes the prompt and keeps its KV leased;
the decode family `dec[ND]` admits the request at an iteration boundary of its engine (`admit via dec`),
reads the KV over `link`, a delay of x0 + prompt / bw, computes the last prompt token and samples the first
token, then decodes. `disagg = 0` runs the same requests on NP + ND co-located engines through lib/vllm.sq's
vllm_request. Every step costs 1 s (`hand = 1`); block 1; two requests sent at 0.7 and 1.4 (renewal gaps of
0.7), prompts 10 and 20, 3 output tokens each, x0 = 0.25, bw = 20 (reads of 0.75 and 1.25 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = Path(__file__).parent / "peer_programs25" / "pd_families.sq"
HAND = {"hand": 1.0, "bs": 1.0, "blocks": 1000.0, "x0": 0.25, "bw": 20.0}
DEFS = {"gap": "0.7", "prompt_len": "10 + 10 * serial", "output_len": "3"}
COLUMNS = ["session", "sent", "admitted", "first_token", "last_token", "prompt", "output", "engine"]


def rows(monkeypatch, tier: str, **sets):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    program = serq_frontend.compile(path=str(PROGRAM), sets={**HAND, **sets}, defs=DEFS)
    report = serq_sim.run(program, horizon=float("inf"), warmup=0, arrivals=2)
    df = report.records()
    return report.result, [tuple(r) for r in df[COLUMNS].itertuples(index=False)]


@pytest.mark.parametrize("tier", ["default", "general"])
def test_two_requests_disaggregated(monkeypatch, tier):
    # A: prefill [0.7, 1.7]; its decode hold admitted at once (dec idle), the read [1.7, 2.45], the last
    # prompt token and the first output [2.45, 3.45], decodes [3.45, 4.45], [4.45, 5.45].
    # B: waits for the prefill engine, prefill [1.7, 2.7]; its decode hold waits for dec's boundary at
    # 3.45, the read [3.45, 4.7], joins dec at its next boundary 5.45: [5.45, 6.45], then 7.45, 8.45.
    result, got = rows(monkeypatch, tier)
    assert got == [(0, 0.7, 0.7, 3.45, 5.45, 10, 3, 0), (1, 1.4, 1.7, 6.45, 8.45, 20, 3, 0)]
    stages = {(s.name, s.index): s for s in result.stages}
    dec, pre, link = stages[("dec", 0)], stages[("pre", 0)], stages[("link", None)]
    assert result.end == 8.45
    assert (dec.iterations, pre.iterations) == (6, 2)
    assert dec.utilisation == pytest.approx(6 / 8.45) and pre.utilisation == pytest.approx(2 / 8.45)
    assert link.present == pytest.approx((0.75 + 1.25) / 8.45)
    pools = {(p.name, p.index): p for p in result.pools}
    assert pools[("dreq", 0)].wait == pytest.approx(0.75 / 2)  # B from 2.7 to 3.45, A none
    # the decode KV: A's 10 from 1.7, 11 and 12 at its decodes (3.45, 4.45), B's 20 from 3.45, 21, 22
    assert pools[("dkv", 0)].used == pytest.approx((10 * 1.75 + 11 + 12 + 20 * 3 + 21 + 22) / 8.45)
    assert result.requests.ttft.mean == pytest.approx((2.75 + 5.05) / 2)


@pytest.mark.parametrize("tier", ["default", "general"])
def test_two_requests_disaggregated_with_chunked_prefill(monkeypatch, tier):
    # budget 8: A's prefill [0.7, 1.7] (8), [1.7, 2.7] (2, and B's first 6), B's [2.7, 3.7] (8), [3.7, 4.7]
    # (6). A's read [2.7, 3.45], first token 4.45, decodes to 6.45. B's decode hold waits for dec's boundary
    # at 5.45, the read [5.45, 6.7]; dec is idle from 6.45, so B starts at 6.7: 7.7, then 8.7, 9.7.
    _, got = rows(monkeypatch, tier, B=8.0)
    assert got == [(0, 0.7, 0.7, 4.45, 6.45, 10, 3, 0), (1, 1.4, 1.7, 7.7, 9.7, 20, 3, 0)]


@pytest.mark.parametrize("tier", ["default", "general"])
def test_the_same_requests_co_located(monkeypatch, tier):
    # two engines: A on co[0] (both idle, the lowest index), B on co[1] (co[0] holds A); each a prefill step
    # sampling the first token, then two decodes
    _, got = rows(monkeypatch, tier, disagg=0.0)
    assert got == [(0, 0.7, 0.7, 1.7, 3.7, 10, 3, 0), (1, 1.4, 1.4, 2.4, 4.4, 20, 3, 1)]
