"""A record table of requests whose `cached` is above its `prompt`: pd_tiny.sq recording its prefill
engine's hit plus 100 (a miscount, as a hit counted at two tiers is) gave a prefix-cache hit rate of 1.5625
without a word. The report warns of such rows (code `cached-beyond-prompt`), naming the first; the figures
are as recorded. A program whose hits stay within its prompts (pd_offload.sq) is not warned of."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from serq_sim.notes import warning_code

HERE = Path(__file__).parent / "peer_programs27"


def run(text: str, monkeypatch, tier: str):
    monkeypatch.setenv("SERQ_SIM_TIER", tier) if tier else monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    return serq_sim.run(serq_frontend.compile(source=text, sets={}, defs={}))


@pytest.mark.parametrize("tier", ["", "general"])
def test_rows_cached_beyond_their_prompt_are_warned_of(monkeypatch, tier):
    text = (HERE / "pd_tiny.sq").read_text().replace("cached = P.c;", "cached = P.c + 100;")
    r = run(text, monkeypatch, tier)
    # 4 rows of 64 prompt tokens, each 100 cached: 400 / 256
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(400 / 256)
    (note,) = [n for n in r.notes if warning_code(n) == "cached-beyond-prompt"]
    # the first row kept: session 0 (its request ends first)
    assert note.startswith("warning: table `request` has 4 rows whose `cached` is above their `prompt` (the "
                           "first: session 0, turn 1, cached 100 of a prompt of 64)")


@pytest.mark.parametrize("name", ["pd_tiny.sq", "pd_offload.sq"])
def test_hits_within_the_prompt_are_not(monkeypatch, name):
    r = run((HERE / name).read_text(), monkeypatch, "")
    assert "cached-beyond-prompt" not in [warning_code(n) for n in r.notes]
