"""A scenario's key or serve order with a letter that only looks like an ASCII one is told by that letter.

``{"budgеt": 8, …}`` (a Cyrillic ``е``) was refused as ``'budgеt': unknown scenario key, not modelled (a
scenario has budget, max_seqs, …)``: a list that holds the key it prints as, and no word of why they differ;
a request's ``оut`` and a serve order ``admissiоn`` alike. The refusal now adds the first character that is not
ASCII, by code point and Unicode name (serq_vllm.real._not_ascii: the bridge imports nothing of the project's,
so it has the rule of serq.errors' did-you-mean in its own words). An ASCII key is refused as before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from serq_vllm.real import ScenarioError, check_scenario

SERQ = str(Path(sys.executable).parent / "serq")


def scenario(**change) -> dict:
    sc = {"budget": 8, "max_seqs": 2, "block_size": 4, "num_blocks": 20,
          "requests": [{"prompt": 8, "out": 2, "arrive": 0}]}
    sc.update(change)
    return sc


def refusal(sc: dict) -> str:
    with pytest.raises(ScenarioError) as e:
        check_scenario(sc)
    return str(e.value)


def test_a_scenario_key_with_a_look_alike_letter():
    sc = scenario()
    sc["budg\u0435t"] = sc.pop("budget")
    assert refusal(sc) == ("'budg\u0435t': unknown scenario key, not modelled (a scenario has budget, max_seqs, "
                           "block_size, num_blocks, chunk, prefix_caching, serve, policy, requests); it is not ASCII: its "
                           "`\u0435` is U+0435 CYRILLIC SMALL LETTER IE")


def test_a_request_key_with_a_look_alike_letter():
    sc = scenario(requests=[{"prompt": 8, "\u043eut": 2, "arrive": 0}])
    assert refusal(sc) == ("requests[0].\u043eut: unknown request key, not modelled (a request has prompt, out, "
                           "arrive, session, turn, think, priority); it is not ASCII: its `\u043e` is U+043E CYRILLIC SMALL "
                           "LETTER O")


def test_a_serve_order_with_a_look_alike_letter():
    assert refusal(scenario(serve="admissi\u043en")) == (
        "'serve': serve order 'admissi\u043en' is not supported by the bridge (known: admission, -admission, "
        "decoding, -decoding, decoding ? X : Y); it is not ASCII: its `\u043e` is U+043E CYRILLIC SMALL LETTER O")


def test_an_invisible_character_is_named_by_its_escape():
    sc = scenario()
    sc["budget\u200b"] = 8
    assert refusal(sc).endswith("; it is not ASCII: its `\\u200b` is U+200B ZERO WIDTH SPACE")


def test_an_ascii_key_is_refused_as_before():
    sc = scenario(requests=[{"prompt": 8, "out": 2, "arrive": 0, "hit": 1}])
    assert refusal(sc) == ("requests[0].hit: unknown request key, not modelled (a request has prompt, out, arrive, "
                           "session, turn, think, priority)")


def test_serq_vllm_scenario_says_it_at_the_key(tmp_path):
    sc = scenario()
    sc["budg\u0435t"] = sc.pop("budget")
    (tmp_path / "s.json").write_text(json.dumps(sc, ensure_ascii=False), encoding="utf-8")
    r = subprocess.run([SERQ, "vllm", "scenario", "s.json"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith("s.json:1:") and first.endswith(
        "; it is not ASCII: its `\u0435` is U+0435 CYRILLIC SMALL LETTER IE"), r.stderr
    assert "Traceback" not in r.stderr
