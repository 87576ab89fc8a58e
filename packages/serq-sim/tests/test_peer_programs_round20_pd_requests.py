"""Which engine a disaggregated request counts on, and its first gap (peer programs, round 20: an llm-d
engineer's P/D fleet whose decode engines showed `requests 0` in the engine table).

A prefill that completes opens a request (its first token); the request counts on the stage of its first
token when it ends, and a later decode token of it is a gap after the token before (docs/language.md, "ITL",
docs/simulator.md, "Engine statistics"). vLLM's decode instance samples the request's first token itself,
recomputing the last prompt token (a `prefill (1)` on the decoder, as examples/pd-disaggregation/
llmd_nixl_pull.sq writes), and then the request counts on the prefiller (vLLM's prefill instance finishes a
request of max_tokens 1) and on the decoder, each gap on the decoder. A decoder that only decodes the loaded
KV continues the prefiller's request: it counts on the prefiller alone, and its first decode token is a gap
after the prefiller's token, across the transfer. Both by hand on the step clock (every iteration 1 s), on
both tiers; docs/vllm.md says it where its metrics table sets vllm:request_success_total beside the engine
table's requests."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

PROGRAM = """let recompute = 1;  // 1: the decoder samples the first token by recomputing the last prompt token

pool kvP { cap 1000; }
pool kvD { cap 1000; }
stage P : step { budget 100; cost 1; memory kvP; }
stage D : step { budget 100; cost 1; memory kvD; }
stage nic : delay;

workload {
  arrive renewal(1);
}

session {
  set t0 = now;
  hold kvP (32) {
    prefill on P (32) growing kvP;
  }
  hold kvD (32) {
    run nic (2);
    load kvD (32 - recompute);
    branch (recompute == 1) {
      prefill on D (1) growing kvD;
    }
    set t1 = now;
    decode on D (3) growing kvD;
  }
  record request {
    sent = t0;
    first_token = t1;
    last_token = now;
    output = 4;
  }
}

run { horizon inf; warmup 0; arrivals 1; }
"""


def report(monkeypatch, recompute: int) -> dict:
    prog = serq_frontend.compile(source=PROGRAM, sets={"recompute": recompute})
    return same_json(prog, monkeypatch)


def requests_by_engine(r: dict) -> dict[str, int]:
    return {s["name"]: s["requests"] for s in r["stages"] if s["name"] in ("P", "D")}


def test_a_decoder_that_samples_the_first_token_counts_the_request_too(monkeypatch):
    r = report(monkeypatch, 1)
    # sent at 1; P prefills 32 tokens in [1, 2] (its token opens a request, which it finishes); the read takes
    # [2, 4]; D recomputes the last prompt token in [4, 5], the client's first token, and decodes 3 more at 6,
    # 7 and 8: three gaps of 1, adding up to last_token - first_token
    assert requests_by_engine(r) == {"P": 1, "D": 1}
    q = r["requests"]
    assert q["ttft"]["mean"] == 4.0 and q["e2el"]["mean"] == 7.0
    assert q["itl"]["count"] == 3 and q["itl"]["mean"] == 1.0 and q["tpot"]["mean"] == 1.0


def test_a_decoder_that_only_decodes_continues_the_prefillers_request(monkeypatch):
    r = report(monkeypatch, 0)
    # the same request without the recompute: D decodes 3 tokens at 5, 6 and 7 after the read; the first is a
    # gap of 5 - 2 = 3 after the prefiller's token at 2 (across the transfer), then 1 and 1; the request counts
    # on P, where its first token was, and D completes none
    assert requests_by_engine(r) == {"P": 1, "D": 0}
    q = r["requests"]
    assert q["itl"]["count"] == 3 and q["itl"]["mean"] == 5 / 3 and q["itl"]["p99"] == pytest.approx(2.96)
    # the records' TPOT reads the program's own first_token (t1, when the read ended, 4): (7 - 4) / 3
    assert q["ttft"]["mean"] == 3.0 and q["tpot"]["mean"] == 1.0
