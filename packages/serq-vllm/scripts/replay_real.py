#!/usr/bin/env python
"""Replay examples/replay/short_base.csv through the real vLLM v1 scheduler on the A100 cost clock,
and compare it request for request with a `serq run --dump` of examples/replay/vllm_replay.sq.

Runs in an interpreter that imports vLLM (docs/vllm-oracle.md), e.g.

    ~/vllm-venv/bin/python packages/serq-vllm/scripts/replay_real.py --spacing 5 \\
        --out /tmp/real5.csv --serq-dump /tmp/serq5      # after: serq run vllm_replay.sq \\
                                                         #   --set spacing=5 --dump /tmp/serq5

What runs is vLLM's own Scheduler, KVCacheManager and BlockPool (no patch), with the testbed's
settings (block 16, max_num_batched_tokens 512, max_num_seqs 64, chunked prefill, prefix caching,
--blocks usable blocks plus vLLM's null block) and a fake model runner that samples one token for
every request whose prefill is complete. The clock is continuous: a step starts when the previous
one ends (or, with nothing to run, at the next arrival), sees every request that reached the
scheduler by then, and lasts

    c_it + c_fixed + d * decoders + e * kv_decode + a * prefilled + b * attention

(a100_step_fit.json; decoders: the scheduled requests past their prompt; kv_decode: the blocks they
hold after the step's allocation, in tokens; prefilled: the other scheduled tokens; attention: the
sum of n * (K + n/2) over those, K the request's computed tokens before the step). c_fixed is 0 by
default, as vllm_replay.sq writes it (c_it in place of the fit's c); --c-fixed fit adds the fit's c.
Session i (0-based) sends its first turn at (i + 1) * spacing (vllm_replay.sq's renewal arrivals),
turn k + 1 think seconds after turn k's last token; a request reaches the scheduler c0 after it is
sent. A turn's token ids are the previous turn's prompt ids, then fresh ids up to its length (a
forced turn: all fresh), so the prefix cache can serve the previous prompt and nothing else; no
two sessions share ids.
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay"


def scheduler(blocks: int, block_size: int, budget: int, max_seqs: int):
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from vllm.config import CacheConfig, DeviceConfig, ModelConfig, SchedulerConfig, VllmConfig
    from vllm.v1.core.kv_cache_utils import (
        get_request_block_hasher,
        init_none_hash,
        resolve_kv_cache_block_sizes,
    )
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
    from vllm.v1.structured_output import StructuredOutputManager

    try:
        from vllm.utils.hashing import get_hash_fn_by_name
    except ImportError:  # older layouts
        from vllm.utils import get_hash_fn_by_name  # type: ignore[no-redef]

    d = tempfile.mkdtemp(prefix="serq-replay-model-")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
                   "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 4,
                   "num_hidden_layers": 1, "vocab_size": 32000, "max_position_embeddings": 1 << 20,
                   "rms_norm_eps": 1e-6, "torch_dtype": "float32"}, f)
    max_len = 65536
    mc = ModelConfig(model=d, skip_tokenizer_init=True, max_model_len=max_len, dtype="float32")
    cc = CacheConfig(block_size=block_size, enable_prefix_caching=True)
    sc = SchedulerConfig(max_num_batched_tokens=budget, max_num_seqs=max_seqs,
                         long_prefill_token_threshold=0, max_model_len=max_len,
                         is_encoder_decoder=False, enable_chunked_prefill=True, async_scheduling=False)
    vc = VllmConfig(model_config=mc, cache_config=cc, scheduler_config=sc,
                    device_config=DeviceConfig(device="cpu"))
    nb = blocks + 1  # vLLM keeps one block as its null block
    vc.cache_config.num_gpu_blocks = nb
    kvc = KVCacheConfig(num_blocks=nb, kv_cache_tensors=[], kv_cache_groups=[KVCacheGroupSpec(
        ["model.layers.0.self_attn.attn"],
        FullAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=64, dtype=torch.float32))])
    sbs, hbs = resolve_kv_cache_block_sizes(kvc, vc)
    s = Scheduler(vllm_config=vc, kv_cache_config=kvc, structured_output_manager=StructuredOutputManager(vc),
                  block_size=sbs, hash_block_size=hbs, log_stats=False)
    hf = get_hash_fn_by_name(vc.cache_config.prefix_caching_hash_algo)
    init_none_hash(hf)
    return s, get_request_block_hasher(hbs, hf, getattr(vc, "num_hash_lookahead_tokens", 0))


def replay(args) -> dict[tuple[int, int], dict]:
    from vllm.sampling_params import SamplingParams
    from vllm.v1.outputs import ModelRunnerOutput
    from vllm.v1.request import Request

    fit = json.loads((REPLAY / "a100_step_fit.json").read_text())["sum"]
    c_fixed = fit["c"] if args.c_fixed == "fit" else float(args.c_fixed)
    sessions: dict[int, list[dict]] = {}
    with open(args.trace, newline="", encoding="utf-8-sig") as f:  # (a byte-order mark skipped)
        for r in csv.DictReader(f):
            if int(r["session"]) < args.sessions:
                sessions.setdefault(int(r["session"]), []).append(r)
    for turns in sessions.values():
        turns.sort(key=lambda r: int(r["turn"]))
    s, hasher = scheduler(args.blocks, 16, 512, 64)
    blocks_of = s.kv_cache_manager.coordinator.single_type_managers[0].req_to_blocks
    fresh = iter(range(1000, 1 << 62))
    prev_ids: dict[int, list[int]] = {}
    events: list = []  # (reaches the scheduler, seq, session, turn index, sent)
    seq = 0
    for i in sorted(sessions):
        sent = (i + 1) * args.spacing
        heapq.heappush(events, (sent + args.c0, seq, i, 0, sent))
        seq += 1
    rows: dict[str, dict] = {}
    reqs: dict[str, object] = {}
    total = sum(len(t) for t in sessions.values())
    done = 0
    now = 0.0
    while done < total:
        if not s.has_requests():
            now = max(now, events[0][0])
        while events and events[0][0] <= now:
            _at, _, i, k, sent = heapq.heappop(events)
            r = sessions[i][k]
            p = int(r["new"])
            ids = [] if k == 0 or int(r["forced"]) else prev_ids[i][:p]
            ids = ids + [next(fresh) for _ in range(p - len(ids))]
            prev_ids[i] = ids
            rid = f"{i}:{k}"
            req = Request(request_id=rid, prompt_token_ids=list(ids),
                          sampling_params=SamplingParams(max_tokens=int(r["out"]), ignore_eos=True,
                                                         detokenize=False),
                          pooling_params=None, arrival_time=sent + args.c0, block_hasher=hasher)
            reqs[rid] = req
            rows[rid] = dict(session=i, turn=int(r["turn"]), sent=sent, prompt=p)
            s.add_request(req)
        out = s.schedule()
        if not out.num_scheduled_tokens:
            if not events:
                raise RuntimeError(f"nothing schedulable and nothing to come at {now:.3f} s")
            now = max(now, events[0][0])
            continue
        dec = kvd = pre = att = 0.0
        ids_, sampled = [], []
        for rid, n in out.num_scheduled_tokens.items():
            req = s.requests[rid]
            k0 = req.num_computed_tokens - n
            rows[rid].setdefault("cached", k0)
            if k0 >= req.num_prompt_tokens:
                dec += 1
                kvd += len(blocks_of[rid]) * 16
            else:
                pre += n
                att += n * (k0 + n / 2)
            ids_.append(rid)
            sampled.append([next(fresh)] if req.num_computed_tokens >= req.num_tokens else [])
        now += args.c_it + c_fixed + fit["d"] * dec + fit["e"] * kvd + fit["a"] * pre + fit["b"] * att
        s.update_from_output(out, ModelRunnerOutput(req_ids=ids_, req_id_to_index={r: j for j, r in enumerate(ids_)},
                                                    sampled_token_ids=sampled))
        for rid, tok in zip(ids_, sampled):
            row = rows[rid]
            if tok and "first" not in row:
                row["first"] = now
            if tok and reqs[rid].is_finished() and "done" not in row:
                row["done"] = now
                done += 1
                i, k = map(int, rid.split(":"))
                if k + 1 < len(sessions[i]):
                    sent = now + float(sessions[i][k]["think"])
                    heapq.heappush(events, (sent + args.c0, seq, i, k + 1, sent))
                    seq += 1
    return {(r["session"], r["turn"]): r for r in rows.values()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spacing", type=float, required=True)
    ap.add_argument("--sessions", type=int, default=333)
    ap.add_argument("--trace", default=str(REPLAY / "short_base.csv"))
    ap.add_argument("--blocks", type=int, default=8010, help="usable KV blocks")
    ap.add_argument("--c-it", type=float, default=0.004)
    ap.add_argument("--c0", type=float, default=0.040)
    ap.add_argument("--c-fixed", default="0", help="a number, or 'fit' for the fit's c")
    ap.add_argument("--out", help="CSV: session,turn,sent,first,done,prompt,cached")
    ap.add_argument("--serq-dump", help="a `serq run --dump` directory to compare with")
    args = ap.parse_args()
    rows = replay(args)
    ttft = [r["first"] - r["sent"] for r in rows.values()]
    print(f"vLLM: {len(rows)} requests, mean TTFT {sum(ttft) / len(ttft):.6f} s")
    if args.out:
        with open(args.out, "w") as f:
            f.write("session,turn,sent,first,done,prompt,cached\n")
            for key in sorted(rows):
                r = rows[key]
                f.write(",".join(str(r[c]) for c in ("session", "turn", "sent", "first", "done", "prompt",
                                                     "cached")) + "\n")
    if args.serq_dump:
        def load(name):
            with open(os.path.join(args.serq_dump, f"{name}.csv"), newline="", encoding="utf-8-sig") as f:
                return {(int(r["session"]), int(r["turn"])): float(r["value"]) for r in csv.DictReader(f)}
        first, hit = load("first_token"), load("hit")
        same = [k for k in rows if k in first and abs(first[k] - rows[k]["first"]) < 1e-6
                and int(hit[k]) == rows[k]["cached"]]
        print(f"serQ: {len(first)} requests; first-token time and cached tokens equal: {len(same)} of {len(rows)}")
        return 0 if len(same) == len(rows) == len(first) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
