"""vLLM programs of a seventh round of users (tests/peer_programs7/): a router in front of a family of vLLM
v1 replicas (lib/vllm.sq's request on each), sending R clients' copies of a benchmark round robin, to the
least-loaded replica, or by prefix affinity. Each policy gives every replica one copy of the benchmark, so
every replica must answer each request as the real scheduler answered the benchmark alone: every shipped
oracle scenario without a serving order (single requests and multi-turn conversations, preemptions,
chunked prefills, prefix-cache hits) is the benchmark in turn, and the answers are the oracle's files;
the engine configuration the program implies (`serq vllm target`) is the scenario's, and where nothing
is preempted each replica's request slots keep Little's law exactly against the records.
On the tier serQ picks and the general engine, byte for byte."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json
from serq_vllm.scenarios import ORACLE
from serq_vllm.target import target

HERE = Path(__file__).resolve().parent / "peer_programs7"
R = 2


def scenarios() -> list[Path]:
    out = []
    for path in sorted(ORACLE.glob("*/*.json")):
        answer = path.with_name(path.stem + ".out.json")
        if path.name.endswith((".out.json", ".target.json")) or not answer.exists():
            continue
        sc = json.loads(path.read_text(encoding="utf-8"))
        # (served in admission order, and each conversation's turns listed together: the program walks a
        # conversation by index + 1; a scenario whose turns interleave other requests, as
        # generated/source_free_order's, is not one it can express)
        if "serve" not in sc and _together(sc["requests"]):
            out.append(path)
    return out


def _conversations(reqs: list) -> list[list[int]]:
    """The scenario's conversations (a session's requests in turn order, or a request alone), as indices."""
    convs: dict = {}
    for i, q in enumerate(reqs):
        convs.setdefault(("s", q["session"]) if "session" in q else ("r", i), []).append(i)
    return [sorted(c, key=lambda i: reqs[i].get("turn", 0)) for c in convs.values()]


def _together(reqs: list) -> bool:
    return all(c == list(range(c[0], c[0] + len(c))) for c in _conversations(reqs))


def table(values: list, param: str) -> str:
    """A definition's body that is ``values[param]`` (0 past the end)."""
    body = "0"
    for i in reversed(range(len(values))):
        body = f"({param} == {i} ? {values[i]} : {body})"
    return body


def benchmark(sc: dict) -> tuple[dict, dict, int]:
    """The scenario as replicas.sq's settings and definitions: its conversations (a session's requests, in
    turn order, or a request alone) numbered by arrival, then request index, as the oracle's driver sends
    them; a request keeps its index (the queue's tie key)."""
    reqs = sc["requests"]
    chains = sorted(_conversations(reqs), key=lambda c: (float(reqs[c[0]].get("arrive", 0)), c[0]))
    # the program walks a conversation by index + 1: the scenarios taken list a conversation's turns together
    assert _together(reqs)
    defs = {"prompt_of": table([q["prompt"] for q in reqs], "i"), "out_of": table([q["out"] for q in reqs], "i"),
            "arrive_of": table([q.get("arrive", 0) for q in reqs], "i"),
            "think_of": table([q.get("think", 0) for q in reqs], "i"),
            "first_of": table([c[0] for c in chains], "c"), "len_of": table([len(c) for c in chains], "c")}
    sets = {"R": R, "N": len(chains), "B": sc["budget"], "max_seqs": sc["max_seqs"], "bs": sc["block_size"],
            "blocks": sc["num_blocks"] - 1, "caching": int(bool(sc.get("prefix_caching"))),
            "C": sc.get("chunk") or 0}
    return sets, defs, len(chains)


def run_both(prog, monkeypatch):
    out = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        out.append(serq_sim.run(prog))
    assert encode_json(out[0]) == encode_json(out[1])
    return out[1]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("policy", [0, 1, 2], ids=["round_robin", "least_loaded", "prefix_affinity"])
def test_every_replica_behind_the_router_answers_as_the_real_scheduler(policy, monkeypatch):
    checked = 0
    for path in scenarios():
        sc = json.loads(path.read_text(encoding="utf-8"))
        answer = json.loads(path.with_name(path.stem + ".out.json").read_text(encoding="utf-8"))
        sets, defs, n = benchmark(sc)
        if policy == 1 and any("session" in q for q in sc["requests"]):
            # least-loaded keeps the copies apart only while the copies of each request are sent
            # together with no other request at that instant between them: a conversation's follow-up
            # sent at the instant another's is (turns_preempt: requests 4 and 10 at step 34) takes copy 0
            # of one and copy 0 of the other to different replicas, a legitimate other schedule
            continue
        prog = serq_frontend.compile(path=str(HERE / "replicas.sq"), sets={**sets, "policy": policy}, defs=defs)
        # the engine configuration the replicas imply (`serq vllm target`) is the scenario's
        config = target(prog)["config"]
        assert config == {"block_size": sc["block_size"], "enable_prefix_caching": bool(sc.get("prefix_caching")),
                          "long_prefill_token_threshold": sc.get("chunk") or 0,
                          "max_num_batched_tokens": sc["budget"], "max_num_seqs": sc["max_seqs"],
                          "num_gpu_blocks": sc["num_blocks"]}, path.stem
        r = run_both(prog, monkeypatch)
        rows = r.records("request", kind="numpy")
        turns = r.records("turn", kind="numpy")
        assert rows["session"].tolist() == turns["session"].tolist()
        got = {}
        for s, i, e, first, last, pre, cached in zip(turns["session"].tolist(), turns["request"].tolist(),
                                                     *(rows[k].tolist() for k in ("engine", "first_token",
                                                       "last_token", "preemptions", "cached"))):
            assert e == s % R, (path.stem, s, e)  # the copy's own replica
            got[(i, s % R)] = (first, last, pre, cached)
        assert len(got) == len(sc["requests"]) * R, path.stem
        for (i, _), (first, last, pre, cached) in got.items():
            assert (first, last) == (answer["first"][str(i)], answer["done"][str(i)]), (path.stem, i)
            if "preempted" in answer:
                assert pre == answer["preempted"][str(i)], (path.stem, i)
            if "cached" in answer:
                assert cached == answer["cached"][str(i)], (path.stem, i)
        assert sum(g[2] for g in got.values()) == R * answer["preemptions"], path.stem
        if answer["preemptions"] == 0:
            # Little on each replica's request slots, exactly: a request holds its slot from its admission to
            # its last token (a preempted one gives it back between), so the time-average holders over the
            # run are the holding times summed over the run's length
            for j in range(R):
                on = rows["engine"] == j
                held = float((rows["last_token"][on] - rows["admitted"][on]).sum())
                assert math.isclose(r.pool("reqs", j).holders * r.result.end, held, rel_tol=1e-9), path.stem
        assert r.result.ended == n * R
        checked += 1
    assert checked >= (10 if policy == 1 else 15)
