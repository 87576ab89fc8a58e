"""``serq vllm target`` of a step family ``stage engine[N]`` whose members share one memory pool (``pool kv``, not
``pool kv[N]``) is refused at the pool: each vLLM instance has a KV cache of its own, so no configuration of N
instances runs such a program. It gave each instance the whole pool's num_gpu_blocks (N times the memory) with a
warning; a share each (the blocks over N) would be another program, whose members cannot lend each other room."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq import UserError
from serq_vllm.target import target

SERQ = str(Path(sys.executable).parent / "serq")
REPLICAS = Path(__file__).resolve().parents[3] / "examples" / "multi-turn" / "vllm_replicas.sq"


def _shared(tmp_path: Path) -> Path:
    f = tmp_path / "shared.sq"
    text = REPLICAS.read_text()
    assert text.count("pool kv[N] {") == 1
    # (the session names the one pool without an index: a pool declared without a size takes none,
    # test_fleet_round47_not_a_family)
    f.write_text(text.replace("pool kv[N] {", "pool kv {").replace("kv[j], engine[j]", "kv, engine[j]"))
    return f


@pytest.mark.parametrize("size", [2, 3, 8])
def test_members_sharing_one_memory_pool_are_refused_at_the_pool(tmp_path, size):
    f = _shared(tmp_path)
    program = serq_frontend.compile(str(f), sets={"N": float(size)})
    with pytest.raises(UserError) as e:
        target(program, str(f))
    line = next(i for i, t in enumerate(f.read_text().splitlines(), 1) if t.startswith("pool kv {"))
    first = str(e.value).splitlines()[0]
    assert first == (f"{f}:{line}:1: error: the {size} members of step family `engine` share memory pool `kv` (one "
                     f"pool, not `pool kv[{size}]`), while each vLLM instance has a KV cache of its own: no "
                     f"configuration of {size} instances runs them on one cache (the whole pool each is {size} times "
                     "its memory, a share each is a cache one member cannot lend another); declare "
                     f"`pool kv[{size}]` for a cache a member")


def test_the_program_does_share_its_pool(tmp_path):
    # what is refused is a program of its own: one pool both engines' requests hold, which serq check takes
    program = serq_frontend.compile(str(_shared(tmp_path)))
    kv = [p for p in program.pools if p.name == "kv"]
    assert len(kv) == 1 and not kv[0].array
    assert [s.size for s in program.stages if s.name == "engine"] == [2]
    r = subprocess.run([SERQ, "check", str(tmp_path / "shared.sq")], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr


def test_a_family_of_one_and_a_pool_a_member_are_targets_as_before(tmp_path):
    # engine[1] beside one pool kv: one instance, one cache (the configuration as one engine's)
    f = _shared(tmp_path)
    one = target(serq_frontend.compile(str(f), sets={"N": 1.0}), str(f))
    assert one["config"]["num_gpu_blocks"] == 8011 and "replicas" not in one and "warnings" not in one
    own = target(serq_frontend.compile(str(REPLICAS)), str(REPLICAS))
    assert own["config"]["num_gpu_blocks"] == 8011 and own["replicas"]["count"] == 2 and "warnings" not in own


def test_the_command_refuses_it(tmp_path):
    _shared(tmp_path)
    r = subprocess.run([SERQ, "vllm", "target", "shared.sq", "--set", "N=3"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].startswith("shared.sq:") and "share memory pool `kv` (one pool, not `pool kv[3]`)" in lines[0]
    assert lines[1] == "  pool kv { cap blocks * bs; block bs; evict lru; preempt lifo; }" and lines[2] == "  ^"
    assert "note: `N` is 3, given by --set N" in r.stderr
