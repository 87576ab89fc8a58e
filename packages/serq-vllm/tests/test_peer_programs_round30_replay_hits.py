"""The repository's replay (examples/replay/vllm_replay.sq) on a three-session slice of its trace, at two block
sizes: with a cache that holds every session, each request's cached tokens are its reusable prefix, the whole
blocks of min(previous prompt, prompt - 1) (a first turn 0), computed by hand from the trace's rows; the report's
prefix-cache hit rate is the records' cached tokens over their prompt tokens; on both tiers."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import serq_frontend
import serq_sim

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay"


def slice3(tmp_path: Path) -> tuple[Path, list[dict[str, str]]]:
    with open(REPLAY / "short_base.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["session"]) < 3]
    path = tmp_path / "slice3.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path, rows


def by_hand(rows: list[dict[str, str]], bs: int) -> dict[tuple[int, int], int]:
    """The cached tokens of each (session, turn): a prompt shares the previous prompt of its session."""
    prev: dict[int, int] = {}
    cached = {}
    for r in rows:
        s, t, n = int(r["session"]), int(r["turn"]), int(r["new"])
        cached[(s, t)] = (0 if s not in prev or r["forced"] != "0" else min(prev[s], n - 1) // bs * bs)
        prev[s] = n
    return cached


@pytest.mark.parametrize("tier", ["general", ""])
@pytest.mark.parametrize("bs", [16, 32])
def test_hits_per_request_and_per_turn(tmp_path, monkeypatch, tier, bs):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    trace, rows = slice3(tmp_path)
    program = serq_frontend.compile(str(REPLAY / "vllm_replay.sq"), sets={"bs": bs, "spacing": 5})
    report = serq_sim.run(program, trace=str(trace), horizon=math.inf, arrivals=3)
    recs = report.records()
    got = {(int(s), int(t)): int(c) for s, t, c in zip(recs["session"], recs["turn"], recs["cached"])}
    truth = by_hand(rows, bs)
    assert got == truth
    assert sum(truth.values()) > 0.8 * sum(int(r["new"]) for r in rows)  # the slice does reuse its prefixes
    prompt = {(int(s), int(t)): int(p) for s, t, p in zip(recs["session"], recs["turn"], recs["prompt"])}
    assert prompt == {(int(r["session"]), int(r["turn"])): int(r["new"]) for r in rows}
    rate = report.result.requests.prefix_cache_hit_rate
    assert rate == pytest.approx(sum(truth.values()) / sum(prompt.values()), rel=1e-12)
