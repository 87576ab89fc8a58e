"""Same program, same seed: the same bytes on every path a user can take to them (the determinism audit).

Each file ``serq run`` writes (the JSON report on stdout, the text report through ``-o``, the records
through ``--records``, the dump through ``--dump``) is compared byte for byte across child processes that
differ in what must not matter: the string hash seed (``PYTHONHASHSEED``: a set of names iterated into an
output would show), the engine's tier (``SERQ_SIM_TIER=general``), a compile-cache hit against a compile
with the cache off (``SERQ_COMPILE_CACHE=0``), and the order the flags give the same ``--set`` values in.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gauged
import pytest

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]
#: a step engine, a KV pool with prefix caching and preemption, records (lib/vllm.sq's), a tool delay
VLLM = str(ROOT / "examples/multi-turn/vllm.sq")

#: pools, a gauge, a ps stage, draws: the general engine's and the fast tier's paths
POOLED = gauged.PROGRAM.replace("run { horizon 2000; warmup 100; seed 3; }", "run { horizon 300; warmup 10; seed 3; }")
assert POOLED != gauged.PROGRAM


def _child(env: dict[str, str]):
    """``serq ARGS…`` as a child process of the environment ``env`` (over this one's): its status and output."""

    def call(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([SERQ, *args], capture_output=True, timeout=240, env={**os.environ, **env})

    return call


def outputs(tmp_path: Path, program: str, serq, *args: str) -> dict[str, bytes]:
    """Every file one ``serq run`` writes (and its stdout, stderr), by name; ``serq(*args)`` runs the command
    (:func:`_child`, or serq_in_process)."""
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    records = ["--records", str(out / "records.csv")] if "vllm" in program else []
    r = serq("run", program, "--no-progress", "-o", str(out / "report.txt"), "--dump", str(out / "dump"), *records,
             *args)
    assert r.returncode == 0, r.stderr
    j = serq("run", program, "--no-progress", "--json", *args)
    assert j.returncode == 0, j.stderr
    got = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    got["stdout (--json)"] = _bytes(j.stdout)
    got["stderr"] = _bytes(r.stderr) + _bytes(j.stderr)
    return got


def _bytes(text: bytes | str) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


def digest(files: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest()[:16] for k, v in files.items()}


@pytest.mark.timeout(280)
@pytest.mark.parametrize("which", ["vllm", "pooled"])
def test_the_bytes_do_not_depend_on_the_hash_seed_the_tier_or_the_compile_cache(tmp_path, which):
    if which == "vllm":
        program, args = VLLM, ("--horizon", "240", "--seed", "5")
    else:
        program, args = str(tmp_path / "pooled.sq"), ()
        Path(program).write_text(POOLED)
    cache = str(tmp_path / "cache")  # this test's own compile cache: the first run fills it, the others hit it
    first = outputs(tmp_path, program, _child({"PYTHONHASHSEED": "0", "SERQ_CACHE_DIR": cache}), *args)
    assert "report.txt" in first and any(k.startswith("dump/") for k in first)
    if which == "vllm":
        assert first["records.csv"].count(b"\n") > 20
    for env in ({"PYTHONHASHSEED": "1", "SERQ_CACHE_DIR": cache},
                {"PYTHONHASHSEED": "2", "SERQ_CACHE_DIR": cache, "SERQ_COMPILE_CACHE": "0"},
                {"PYTHONHASHSEED": "3", "SERQ_CACHE_DIR": cache, "SERQ_SIM_TIER": "general"}):
        assert digest(outputs(tmp_path, program, _child(env), *args)) == digest(first), env


def test_the_order_of_the_set_flags_is_not_in_the_report(tmp_path, serq_in_process):
    # the report records every --set (and --def): in the order the flags came, the same run gave two reports.
    # (The two runs are in this process: what differs between them is the command line alone.)
    args = ("--horizon", "200", "--seed", "2")
    a = outputs(tmp_path, VLLM, serq_in_process, *args, "--set", "Lambda=0.2", "--set", "Z=3")
    b = outputs(tmp_path, VLLM, serq_in_process, *args, "--set", "Z=3", "--set", "Lambda=0.2")
    assert digest(a) == digest(b)
    assert b'"sets":{"Lambda":0.2,"Z":3.0}' in a["stdout (--json)"].replace(b" ", b"").replace(b"\n", b"")
