"""docs/vllm.md's CPU offload tier (tests/peer_programs21/offload_resume.sq, the snippet written out): a
request preempted on the GPU keeps the outputs it had, as vLLM's does and lib/vllm.sq's vllm_request does,
so its decode after the recompute samples only the tokens still to come. The snippet was written with
`kv (prompt)` and `decode on engine (o - 1)`, which sample every output token again after a preemption: two
requests of 4 prompt and 6 output tokens in 14 tokens ended at 6 and 11 with 14 inter-token gaps, where a
trace by hand and vllm_request give 6 and 8 with 10.

The trace by hand (block 1, budget 100, cost 1 a step, both requests at 0, lifo): at 0-1 both prefill 4 (8
held) and sample their first token; at 1-2, 2-3, 3-4 both decode (10, 12, 14 held; positions 7 each, four
tokens sampled each); at 4 both must grow past 14: request 1, the later admitted, is preempted at position 7
with 8 tokens (4 prompt and 4 outputs) and its 7 computed tokens cached; no admission in that step. Request 0
decodes at 4-5 and 5-6 (its fifth and sixth token) and ends at 6. Request 1, admitted at 6 with known 8 and 7
of them cached, recomputes 1 token at 6-7 (sampling its fifth output) and decodes its sixth at 7-8."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

PROGRAM = Path(__file__).resolve().parent / "peer_programs21" / "offload_resume.sq"
DOCS = Path(__file__).resolve().parents[3] / "docs" / "vllm.md"
pytestmark = pytest.mark.timeout(60)

LIB_PROGRAM = """use "vllm.sq";

pool reqs { cap 8; admit via engine; }
pool kv { cap 14; block 1; evict lru; preempt lifo; }
stage engine : step {
  budget 100;
  cost 1;
  memory kv;
}

workload {
  arrive batch(2);
  hidden o;
}

session {
  set prompt = 4;
  set o = 6;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}

run { horizon inf; seed 1; }
"""

# the snippet as docs/vllm.md wrote it before: every output sampled again after a preemption
RESTARTS = [("kv (known) reserve (known)", "kv (prompt) reserve (prompt)"),
            ("reusable(known, bs)", "reusable(prompt, bs)"),
            ("prefill on engine (known - gpu_hit - cpu_hit)", "prefill on engine (prompt - gpu_hit - cpu_hit)"),
            ("decode on engine (o - 1 - (known - prompt))", "decode on engine (o - 1)")]


def rows(report) -> list[dict]:
    rec = report.records("request", kind="numpy")
    return [{k: rec[k][i].item() for k in rec} for i in range(len(rec["session"]))]


def run_text(text: str, tmp_path: Path, tier: str, monkeypatch, sets: dict | None = None):
    path = tmp_path / "p.sq"
    path.write_text(text)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(path=str(path), sets=sets or {}))


@pytest.mark.parametrize("tier", ["general", ""])
def test_a_preempted_request_keeps_its_outputs_by_hand(tmp_path, monkeypatch, tier):
    r = run_text(PROGRAM.read_text(), tmp_path, tier, monkeypatch)
    got = [(x["session"], x["first_token"], x["last_token"], x["preemptions"]) for x in rows(r)]
    assert got == [(0, 1.0, 6.0, 0), (1, 1.0, 8.0, 1)]
    assert r.result.requests.itl.count == 2 * (6 - 1)
    lib = run_text(LIB_PROGRAM, tmp_path, tier, monkeypatch)
    assert [(x["session"], x["first_token"], x["last_token"], x["preemptions"]) for x in rows(lib)] == got
    assert lib.result.requests.itl.count == r.result.requests.itl.count


@pytest.mark.parametrize("tier", ["general", ""])
def test_the_snippet_written_as_before_samples_the_outputs_again(tmp_path, monkeypatch, tier):
    text = PROGRAM.read_text()
    for new, old in RESTARTS:
        assert new in text
        text = text.replace(new, old)
    r = run_text(text, tmp_path, tier, monkeypatch)
    # request 1, preempted at 4 and admitted again at 5 (its 4 prompt tokens fit beside request 0 then), samples its
    # first token again at 6 and its other five at 7 … 11. It ended at 12 while the tier's pool was admitted at
    # the settle after the engine's planning: the re-admitted request's prefill missed the iteration at 5
    assert [(x["session"], x["last_token"]) for x in rows(r)] == [(0, 6.0), (1, 11.0)]
    assert r.result.requests.itl.count == 14


# conversations of three turns over a GPU of 40 blocks of 4 tokens that spills to the CPU tier: requests are
# preempted and turns read their history back from the tier, and every request samples each of its output
# tokens once (a drained run's inter-token gaps are the rows' output - 1), where the form before sampled more
SCALE = {"sessions": 6, "n": 20, "out": 30, "turns": 3, "blocks": 40, "bs": 4, "Z": 5, "write": 0.01, "read": 0.01}


@pytest.mark.parametrize("tier", ["general", ""])
def test_every_output_token_is_sampled_once_with_preemptions_and_tier_hits(tmp_path, monkeypatch, tier):
    r = run_text(PROGRAM.read_text(), tmp_path, tier, monkeypatch, SCALE)
    got = rows(r)
    assert len(got) == 18
    assert sum(x["preemptions"] for x in got) > 0 and sum(x["cpu"] for x in got) > 0
    assert r.result.requests.itl.count == sum(x["output"] - 1 for x in got) == 18 * 29
    text = PROGRAM.read_text()
    for new, old in RESTARTS:
        text = text.replace(new, old)
    before = run_text(text, tmp_path, tier, monkeypatch, SCALE)
    assert before.result.requests.itl.count > 18 * 29


def test_the_docs_snippet_is_the_program_s_hold():
    """docs/vllm.md's snippet is this program's hold, line for line, but for the first execution's records."""
    doc = DOCS.read_text()
    start = doc.index("## A CPU offload tier")
    block = doc[doc.index("```\n", start) + 4:]
    block = block[:block.index("```")]
    program = [line.strip() for line in PROGRAM.read_text().splitlines()]
    for line in block.splitlines():
        line = line.strip()
        if line.startswith(("pool ", "stage ")) or not line:
            continue
        assert line in program, line
