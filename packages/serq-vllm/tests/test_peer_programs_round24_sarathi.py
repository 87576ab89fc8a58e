"""Sarathi-Serve's claim on one vLLM engine (examples/single-turn/vllm_sarathi.sq): the token budget of an
iteration is the chunk a prefill is cut to beside the decodes; a small one takes the stall out of the decodes
(the ITL tail) and delays the first token.

Two requests traced by hand (cost 1 + 0.01 per prefill token, blocks to spare): r0, 10 prompt tokens and 5
output, sent at 0; r1, 300 and 3, sent at 2.5.

* budget 1000: [0, 1.1] r0's prefill (first token 1.1); decodes end at 2.1 and 3.1; r1 waits for the
  iteration under way and is admitted at 3.1 beside r0's decode: 1 + 3 = 4 s, [3.1, 7.1] (r0's 4th token
  and r1's first at 7.1: r0 stalls 4 s); r0's last at 8.1, r1's 2nd at 8.1 and 3rd at 9.1.
  r0's gaps 1, 1, 4, 1 (TPOT 7 / 4), r1's 1, 1; TTFT 1.1 and 4.6.
* budget 101: r1 takes the 100 tokens r0's decode leaves: [3.1, 5.1], [5.1, 7.1] (r0 done at 7.1), then
  its last 100 alone [7.1, 9.1] (first token), decodes at 10.1 and 11.1. r0's gaps 1, 1, 2, 2 (TPOT 1.5);
  TTFT 1.1 and 6.6.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "single-turn" / "vllm_sarathi.sq"

TWO = """use "vllm.sq";

let B = 1000;

pool reqs { cap 4; admit via engine; }
pool kv { cap 1000 * 16; block 16; evict lru; preempt lifo; }
stage engine : step {
  budget B;
  cost 1 + 0.01 * prefilled;
  memory kv;
}
stage wait : delay;

workload {
  arrive batch(2);
  hidden o;
}

session {
  run wait (serial * 2.5);
  set prompt = serial == 0 ? 10 : 300;
  set o = serial == 0 ? 5 : 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}

run { horizon inf; }
"""

# budget: {session: (sent, admitted, first_token, last_token)}, r0's gaps, the mean TPOT
BY_HAND = {
    1000: ({0: (0.0, 0.0, 1.1, 8.1), 1: (2.5, 3.1, 7.1, 9.1)}, [1, 1, 4, 1], (7 / 4 + 1) / 2),
    101: ({0: (0.0, 0.0, 1.1, 7.1), 1: (2.5, 3.1, 9.1, 11.1)}, [1, 1, 2, 2], (6 / 4 + 1) / 2),
}


@pytest.fixture
def run(serq_in_process):
    """``run(tmp_path, program, *args)``: the JSON report and the request records of ``serq run`` (in this
    process: what is checked is their figures)."""

    def call(tmp_path: Path, program: Path, *args: str) -> tuple[dict, list[dict]]:
        out = tmp_path / "r.csv"
        r = serq_in_process("run", str(program), "--no-progress", "--json", "--records", str(out), *args)
        assert r.returncode == 0, r.stderr
        with out.open() as f:
            return json.loads(r.stdout), list(csv.DictReader(f))

    return call


# vLLM's long_prefill_token_threshold instead of a small budget: budget 1000 and chunk long_prefill(reqs, 100),
# the first chunk cut at admission too (vllm_request_at's threshold): r1 takes 100 a step while r0 runs,
# [3.1, 5.1] and [5.1, 7.1], and alone the cap lifts, its last 100 [7.1, 9.1]: budget 101's trace
THRESHOLD = (TWO.replace("let B = 1000;", "let B = 1000;\nlet C = 100;")
             .replace("  memory kv;", "  chunk long_prefill(reqs, C);\n  memory kv;")
             .replace("vllm_request(reqs, kv, engine, prompt, o, t0);",
                      "vllm_request_at(reqs, kv, engine, prompt, o, t0, inf, C);"))


@pytest.mark.parametrize(("budget", "source"), [(1000, TWO), (101, TWO), (101, THRESHOLD)])
def test_two_requests_give_the_hand_trace(tmp_path, budget, source, run):
    p = tmp_path / "two.sq"
    p.write_text(source)
    report, rows = run(tmp_path, p, *(["--set", f"B={budget}"] if source is TWO else []))
    times, gaps, tpot = BY_HAND[budget]
    got = {int(r["session"]): tuple(float(r[k]) for k in ("sent", "admitted", "first_token", "last_token"))
           for r in rows}
    assert got.keys() == times.keys()
    for s, want in times.items():
        assert got[s] == pytest.approx(want, abs=1e-9), s
    req = report["requests"]
    assert req["ttft"]["mean"] == pytest.approx((times[0][2] - times[0][0] + times[1][2] - times[1][0]) / 2)
    assert req["tpot"]["mean"] == pytest.approx(tpot)
    # every gap between consecutive tokens: r0's four and r1's two (1 s each)
    assert req["itl"]["count"] == 6
    assert req["itl"]["mean"] == pytest.approx((sum(gaps) + 2) / 6)


def test_the_example_trades_the_first_token_for_the_decodes_on_the_same_requests(tmp_path, run):
    small, rows_small = run(tmp_path, EXAMPLE, "--set", "B=256", "--horizon", "200", "--warmup", "20")
    large, rows_large = run(tmp_path, EXAMPLE, "--set", "B=2048", "--horizon", "200", "--warmup", "20")
    # common random numbers: the budgets see the same requests (send times, prompts, outputs)
    same = {r["session"]: (r["sent"], r["prompt"], r["output"]) for r in rows_large}
    both = [r for r in rows_small if r["session"] in same]
    assert len(both) > 400
    assert all(same[r["session"]] == (r["sent"], r["prompt"], r["output"]) for r in both)
    s, g = small["requests"], large["requests"]
    assert s["itl"]["p99"] < 0.5 * g["itl"]["p99"]
    assert s["ttft"]["mean"] > 1.5 * g["ttft"]["mean"]
    assert not small["notes"] and not large["notes"]
