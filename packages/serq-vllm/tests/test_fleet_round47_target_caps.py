"""``serq vllm target`` of a fleet whose memory pool's members' caps differ (`cap member(kv) == 0 ? … : …`,
docs/language.md, "A family's members' caps") refuses it as it refuses members of unlike budgets: a target is
one configuration for every engine. A cap that reads the member but gives every member one value is that one
cap, and the configuration is as before."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

REPLICAS = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm_replicas.sq"


def _program(tmp_path, cap: str):
    src = REPLICAS.read_text()
    old = "pool kv[N] { cap blocks * bs;"
    assert old in src
    p = tmp_path / "fleet.sq"
    p.write_text(src.replace(old, f"pool kv[N] {{ cap {cap};"))
    return serq_frontend.compile(str(p))


def test_members_of_unlike_caps_are_refused_naming_each(tmp_path):
    with pytest.raises(UserError) as e:
        target(_program(tmp_path, "member(kv) == 0 ? blocks * bs : 2000 * bs"), "fleet.sq")
    assert ("the engine's memory cap differs between the members of pool family `kv` (kv[0] 128160, kv[1] "
            "32000), and a vLLM target is one configuration for every engine") in str(e.value)


def test_a_cap_of_one_value_is_the_configuration_as_before(tmp_path):
    out = target(_program(tmp_path, "member(kv) >= 0 ? blocks * bs : 1"), "fleet.sq")
    assert out == target(serq_frontend.compile(str(REPLICAS)), "fleet.sq")
