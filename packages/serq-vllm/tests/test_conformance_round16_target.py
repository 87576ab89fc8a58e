"""serq vllm target and a chunk of 0: in serQ a step stage's chunk of 0 gives a prefill no token
(language.txt §3, "up to chunk to a prefilling one"; docs/simulator.md), where vLLM's
long_prefill_token_threshold 0 is no cap, so a program whose chunk can be 0 has no vLLM setting and is one
error at the chunk; a branch of 0 that the test never takes (`C > 0 && … ? C : inf` with C 0, the peer
programs' spelling of the threshold) is no cap, threshold 0.

Power: with the target reading any chunk of 0 as threshold 0 (as it did) `--set C=0` printed a config
whose engine vLLM runs uncut while serQ pauses its prefills; with every branch of 0 refused, kernel.sq's
C = 0 was an error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")
ROOT = Path(__file__).resolve().parents[3]


def _target(program: Path, *sets: str) -> subprocess.CompletedProcess:
    args = [a for s in sets for a in ("--set", s)]
    return subprocess.run([SERQ, "vllm", "target", program.name, *args], capture_output=True, text=True,
                          cwd=program.parent, timeout=120, stdin=subprocess.DEVNULL)


def test_long_prefill_of_0_is_no_cap_as_vllms_threshold_0():
    """lib/vllm.sq's long_prefill(reqs, c) is vLLM's long_prefill_token_threshold c, whose 0 is no cap (vLLM
    cuts where 0 < threshold < tokens): `--set C=0` is threshold 0, as C=inf is (the def's `c > 0 && …` test
    never takes the branch of 0, as kernel.sq's below)."""
    for c in ("0", "inf"):
        r = _target(ROOT / "examples" / "multi-turn" / "vllm.sq", f"C={c}")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["config"]["long_prefill_token_threshold"] == 0
    r = _target(ROOT / "examples" / "multi-turn" / "vllm.sq", "C=256")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["config"]["long_prefill_token_threshold"] == 256


def test_a_branch_of_0_the_test_never_takes_is_no_cap():
    r = _target(Path(__file__).parent / "peer_programs" / "kernel.sq")  # let C = 0
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["config"]["long_prefill_token_threshold"] == 0
    r = _target(Path(__file__).parent / "peer_programs" / "kernel.sq", "C=64")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["config"]["long_prefill_token_threshold"] == 64
