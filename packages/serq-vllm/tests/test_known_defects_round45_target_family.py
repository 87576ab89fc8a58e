"""``serq vllm target`` of a program whose engine is a step family ``stage engine[N]`` says how many members the
configuration is for and which (members that share one ``pool kv`` are refused since round 48: each vLLM instance has
a KV cache of its own). It printed
the configuration of examples/multi-turn/vllm_replicas.sq (N = 2) as that of one engine, with no word of N."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

SERQ = str(Path(sys.executable).parent / "serq")
REPLICAS = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm_replicas.sq"
SINGLE = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm.sq"


def _note(size: int) -> str:
    return (f"the configuration is each member's, the same for all {size} (step family `engine[{size}]`): {size} vLLM "
            f"instance{'s' if size != 1 else ''} of it, one a member")


@pytest.mark.parametrize(("size", "members"), [
    (2, "engine[0], engine[1]"),
    (4, "engine[0], engine[1], engine[2], engine[3]"),
    (7, "engine[0], engine[1], …, engine[6]"),
])
def test_the_members_are_said(size, members):
    program = serq_frontend.compile(str(REPLICAS), sets={"N": float(size)})
    out = target(program, "vllm_replicas.sq")
    assert out["replicas"] == {"count": size, "members": members, "note": _note(size), "stage": "engine"}
    # each member's own pools (reqs[N], kv[N]): the configuration as before, no warning
    assert out["config"]["num_gpu_blocks"] == 8011 and out["config"]["max_num_seqs"] == 256
    assert "warnings" not in out


def test_one_engine_says_no_replicas():
    # one engine, or a family of one (engine[1]: one vLLM instance, the configuration as one engine's)
    for program in (serq_frontend.compile(str(SINGLE)), serq_frontend.compile(str(REPLICAS), sets={"N": 1.0})):
        out = target(program, "p.sq")
        assert "replicas" not in out and set(out) == {"config", "engine", "serve_by", "target"}


def test_a_shared_memory_pool_is_refused(tmp_path):
    # one `pool kv` the two engines share: it was warned of, the whole pool's num_gpu_blocks 8011 given each
    # instance; it is refused since round 48 (test_known_defects_round48_target_shared_kv)
    f = tmp_path / "shared.sq"
    f.write_text(REPLICAS.read_text().replace("pool kv[N] {", "pool kv {").replace("kv[j], engine[j]", "kv, engine[j]"))
    with pytest.raises(UserError) as e:
        target(serq_frontend.compile(str(f)), str(f))
    assert "the 2 members of step family `engine` share memory pool `kv` (one pool, not `pool kv[2]`)" in str(e.value)


def test_the_command_says_it():
    r = subprocess.run([SERQ, "vllm", "target", str(REPLICAS), "--set", "N=3"], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert json.loads(r.stdout)["replicas"] == {"count": 3, "members": "engine[0], engine[1], engine[2]",
                                                "note": _note(3), "stage": "engine"}
