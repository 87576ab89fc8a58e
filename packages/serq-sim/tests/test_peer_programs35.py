"""Round 35 of programs as vLLM and llm-d engineers and capacity planners write them (peer_programs35/), each
run to its horizon on both simulator tiers and checked against an independent truth: the long-prefill
threshold on a long and a short prompt traced iteration by iteration, and under load the short prompts'
TTFT paired against no threshold; block_size at equal KV bytes by hand, a larger cache that preempts more
(vLLM admits on the prompt alone) by hand, and the least cache without preemptions by ``find``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sweep
from peers import run_both

HERE = Path(__file__).parent / "peer_programs35"


def compiled(name: str, *, sets=None, defs=None):
    return serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})


def run(name: str, monkeypatch, *, sets=None, defs=None, **kw):
    """(JSON report, records as numpy columns or None) of peer_programs35/NAME on the default tier and the
    general engine, which must give the same bytes and the same records."""
    return run_both(compiled(name, sets=sets, defs=defs), monkeypatch, **kw)


def stage(doc: dict, name: str) -> dict:
    (s,) = [s for s in doc["stages"] if s["name"] == name]
    return s


def pool(doc: dict, name: str) -> dict:
    (p,) = [p for p in doc["pools"] if p["name"] == name]
    return p


def conserved(doc: dict) -> float:
    """The tokens the engine computed less the prompts and outputs of the completed requests (every output
    token but the last is fed back once): 0 when nothing was recomputed and nothing was a hit."""
    eng = stage(doc, "engine")
    req = doc["requests"]
    return eng["tokens"] * eng["iterations"] - (req["total_input_tokens"] + req["total_output_tokens"]
                                                - req["completed"])


# long_prefill.sq

PAIR = {"gap": "~det(0.001)", "is_long": "serial == 0"}


@pytest.mark.parametrize(("c", "first_tokens", "iterations"), [
    # no threshold: the long prompt's 2048 + 1952 tokens; the short one gets 96 beside them, 4 more after
    (0, [0.4306, 0.4411], 12),
    # C = 512: iteration 1 is the long prompt's alone (2048: no cut for a lone request); in iteration 2 the
    # long chunk is 512 and the short prompt is prefilled whole (612 tokens, 71.2 ms); then 513, 513, 417
    (512, [0.4613, 0.2870], 14),
])
def test_long_prefill_pair_by_hand(monkeypatch, c, first_tokens, iterations):
    doc, recs = run("long_prefill.sq", monkeypatch, sets={"C": c}, defs=PAIR, arrivals=2, warmup=0)
    order = np.argsort(recs["session"])
    assert np.allclose(recs["sent"][order], [0.001, 0.002])
    assert np.allclose(recs["first_token"][order], first_tokens, atol=1e-9)
    assert recs["prompt"][order].tolist() == [4000, 100]
    assert stage(doc, "engine")["iterations"] == iterations
    assert conserved(doc) == pytest.approx(0, abs=1e-6)
    assert doc["observes"]["ttft_short"]["mean"] == pytest.approx(first_tokens[1] - 0.002, abs=1e-9)
    assert doc["observes"]["ttft_long"]["mean"] == pytest.approx(first_tokens[0] - 0.001, abs=1e-9)


def test_long_prefill_under_load_each_arm(monkeypatch):
    got = {}
    for c in (0, 512):
        doc, recs = run("long_prefill.sq", monkeypatch, sets={"C": c}, horizon=300, warmup=30)
        assert pool(doc, "kv")["preemptions"] == 0
        # single-turn: no hit, no recompute: every token computed once (the runs in flight at the end
        # aside, which the report's completed requests leave out: the bound is theirs)
        assert recs["cached"].sum() == 0
        o = doc["observes"]
        got[c] = (o["ttft_short"]["mean"], o["ttft_long"]["mean"])
        # the observes split the library's ttft by kind
        assert o["ttft_short"]["count"] + o["ttft_long"]["count"] == o["ttft"]["count"]
    assert got[512][0] < 0.8 * got[0][0]  # the short prompts' first token sooner
    assert got[512][1] > got[0][1]        # the long ones' later


def test_long_prefill_paired_short_ttft():
    table = serq_sweep.compare(str(HERE / "long_prefill.sq"), sets={"C": [0, 512]}, seeds="1..4", horizon=300,
                               warmup=30, workers=0, progress=False, figures=["ttft_short.mean"])
    (row,) = table.to_dict("records")
    assert row["diff"] < 0 and abs(row["diff"]) > row["ci_paired"], row


# block_size.sq

PAIR_BS = {"gap": "~det(0.001)", "prompt_len": "20", "output_len": "20"}


@pytest.mark.parametrize(("bs", "iterations", "preemptions", "last"), [(16, 21, 0, [0.201, 0.211]),
                                                                        (32, 27, 1, [0.201, 0.271])])
def test_block_size_pair_by_hand(monkeypatch, bs, iterations, preemptions, last):
    doc, recs = run("block_size.sq", monkeypatch, sets={"bs": bs, "kv_tokens": 96, "a_tok": 0}, defs=PAIR_BS,
                    arrivals=2, warmup=0)
    order = np.argsort(recs["session"])
    assert np.allclose(recs["last_token"][order], last, atol=1e-9)
    assert recs["preemptions"][order].tolist() == [0, preemptions]
    kv = pool(doc, "kv")
    assert kv["preemptions"] == preemptions and kv["admissions"] == 2 + preemptions
    assert stage(doc, "engine")["iterations"] == iterations
    # at block 32 the victim's 32 computed tokens, one full block, are its readmission's hit: it computes its
    # 33rd again (1 token) and nothing is computed twice
    assert conserved(doc) == pytest.approx(0, abs=1e-6)
    assert doc["observes"]["hit"]["mean"] == 0  # the first admissions' hits


OPTIMISTIC = {"gap": "~det(0.05)", "prompt_len": "serial == 0 ? 16 : 48", "output_len": "serial == 0 ? 49 : 17"}


@pytest.mark.parametrize(("kv_tokens", "preemptions", "admitted"), [(64, 0, 0.54), (80, 1, 0.11)])
def test_block_size_more_blocks_can_preempt_more(monkeypatch, kv_tokens, preemptions, admitted):
    doc, recs = run("block_size.sq", monkeypatch, sets={"kv_tokens": kv_tokens, "a_tok": 0}, defs=OPTIMISTIC,
                    arrivals=2, warmup=0)
    order = np.argsort(recs["session"])
    assert pool(doc, "kv")["preemptions"] == preemptions
    assert recs["preemptions"][order].tolist() == [0, preemptions]
    assert recs["admitted"][order][1] == pytest.approx(admitted)
    assert recs["last_token"][order][0] == pytest.approx(0.54)


def test_block_size_preemptions_not_monotone_under_load(monkeypatch):
    got = []
    for kv_tokens in (6144, 6656, 8192):
        doc, recs = run("block_size.sq", monkeypatch, sets={"kv_tokens": kv_tokens}, horizon=300, warmup=0, seed=3)
        kv = pool(doc, "kv")
        assert int(recs["preemptions"].sum()) <= kv["preemptions"]
        got.append(kv["preemptions"])
    assert got == [1, 6, 0]


def test_block_size_find_least_cache():
    cols, rows = serq_sweep.find(str(HERE / "block_size.sq"), "pools.kv.preemptions <= 0", ("kv_tokens", "2048:16384:512"),
                                 sets={"bs": [16, 32]}, seeds="1..3", horizon=300, warmup=0, workers=0,
                                 progress=False)
    assert [(r["bs"], r["outcome"], r["kv_tokens"], r["fails"]) for r in rows] == [
        (16, "found_smallest", 8192, 7680), (32, "found_smallest", 8192, 7680)]


@pytest.mark.parametrize(("bs", "kv_tokens", "blocks"), [(16, 8192, 512), (32, 8192, 256), (32, 8200, 256)])
def test_block_size_target_counts_whole_blocks(bs, kv_tokens, blocks):
    from serq_vllm.target import target

    prog = compiled("block_size.sq", sets={"bs": bs, "kv_tokens": kv_tokens})
    config = target(prog)["config"]
    # the cache's whole blocks and vLLM's null block: the 8 tokens past 256 blocks of 32 are no block
    assert (config["block_size"], config["num_gpu_blocks"]) == (bs, blocks + 1)


def test_long_prefill_target_threshold():
    from serq_vllm.target import target

    for c in (0, 512):
        answer = target(compiled("long_prefill.sq", sets={"C": c}))
        assert answer["config"]["long_prefill_token_threshold"] == c
        assert "warnings" not in answer  # vllm_request_at passes the engine's threshold
