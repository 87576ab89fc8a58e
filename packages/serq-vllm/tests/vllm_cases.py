"""What the vLLM block-model tests share (test_vllm_round45_blocks.py, test_vllm_round46_served_victim.py): an
answer's fields keyed by request id, the scenario program with its KV pool's `cache computed`, and the priority
program's answer on a scenario (vLLM's priority policy, peer_programs2/vllm_priority.sq)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import serq_frontend
import serq_sim
import serq_vllm.scenarios
from serq_ir import nodes as N

#: the fields of an answer the block model and serQ both give
FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")


def fields(answer: dict, fields=FIELDS) -> dict:
    return {k: ({str(i): v for i, v in answer[k].items()} if isinstance(answer[k], dict) else answer[k])
            for k in fields if k in answer}


def computed_only(tmp_path, monkeypatch) -> None:
    """The scenario program with its KV pool's `cache computed` (the language's default) for `cache
    scheduled`: a victim caches its computed prefix alone."""
    text = Path(serq_vllm.scenarios._PROGRAM).read_text()
    assert text.count("cache scheduled;") == 1
    program = tmp_path / "computed_scenario.sq"
    program.write_text(text.replace("cache scheduled;", "cache computed;"))
    monkeypatch.setattr(serq_vllm.scenarios, "_PROGRAM", str(program))


def priority_answer(sc: dict, tmp_path, cache: str = "scheduled") -> dict:
    """peer_programs2/vllm_priority.sq with prefix caching and the long-prefill threshold, each request a
    preset session at its arrival (as test_peer_programs2 runs it): first, done, preempted, cached. ``cache``:
    the KV pool's `cache` option (the program's `scheduled`, or the language's default, `computed`)."""
    text = (Path(__file__).parent / "peer_programs2" / "vllm_priority.sq").read_text()
    for old, new in (("let blocks = 8;", "let blocks = 8;\nlet C = 0;"),
                     ("cache scheduled;", f"cache {cache};"),
                     ("step { budget B; cost 1; memory kv; }",
                      "step { budget B; cost 1; chunk long_prefill(reqs, C); memory kv; }"),
                     ("t0, -1, inf);", "t0, inf, C);")):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "priority_caching.sq"
    path.write_text(text)
    sets = {"B": sc["budget"], "max_seqs": sc["max_seqs"], "bs": sc["block_size"], "blocks": sc["num_blocks"] - 1,
            "C": sc["chunk"]}
    prog = serq_frontend.compile(path=str(path), sets={k: float(v) for k, v in sets.items()})
    slot = {a.name: i for i, a in enumerate(prog.attributes)}
    reqs = sc["requests"]
    order = sorted(range(len(reqs)), key=lambda i: (reqs[i].get("arrive", 0), i))
    rid = {i: k for k, i in enumerate(sorted(range(len(reqs)), key=str))}  # vLLM's order of the ids str(i)
    presets = [N.Preset(at=float(reqs[i].get("arrive", 0)),
                        turns=[[N.SlotValue(slot=slot[a], value=float(v)) for a, v in
                                (("idx", i), ("prompt", reqs[i]["prompt"]), ("o", reqs[i]["out"]),
                                 ("prio", reqs[i]["priority"]), ("rid", rid[i]))]])
               for i in order]
    prog = msgspec.structs.replace(prog, workload=msgspec.structs.replace(prog.workload, presets=presets))
    rec = serq_sim.run(prog).records("request", kind="numpy")
    out: dict = {"first": {}, "done": {}, "preempted": {}, "cached": {}}
    for s, f, la, p, c in zip(rec["session"], rec["first_token"], rec["last_token"], rec["preemptions"],
                              rec["cached"]):
        i = str(order[int(s)])
        out["first"][i], out["done"][i], out["preempted"][i], out["cached"][i] = int(f), int(la), int(p), int(c)
    return out
