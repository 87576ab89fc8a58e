"""Known defects, round 28 (serq-vllm): `serq vllm scenario` kept about 3 KB of memory a request (10⁶ requests:
3.2 GB). What it held beyond the answer's needs: the program it built, whose presets are one per session, while
the run held its own typed copy (``serq_ir.codec.checked``), so every preset twice for the whole run; its chains
of requests through the run; and the report (the run's sessions, samples and program) while it made the
answer's objects, from dictionaries of samples. Its answers are the same bytes (test_oracle.py, every shipped
scenario against vLLM's; bench/scenario_1000.json here against the code before)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import serq_sim
from serq_vllm import scenarios

ROOT = Path(__file__).resolve().parents[3]

#: the SHA-256 of `serq vllm scenario bench/scenario_1000.json`'s output, one JSON line, by the code before the change
#: (since round 30 the answer's `config` gives `prefix_caching` and `serve` too: every other byte as before)
DIGEST_1000 = "39baa5ad915c374788cd1d275cff5afb69dd0ab5101e9a4701108af6e3f3eca8"


def _refs(program, **kw):
    return sys.getrefcount(program)


def test_the_run_is_handed_the_program_and_the_runner_keeps_no_reference(monkeypatch):
    # the references a program has in the run's frame when no one else holds it: one handed over from a box, as
    # the runner hands it (the call takes the box's reference over), counted the same way; the runner that kept
    # the program in a name of its own gave one more, so its presets lived beside the run's copy
    box = [object()]
    alone = _refs(box.pop(), pm=None)
    seen = []
    real = serq_sim.run

    def run(program, **kw):
        seen.append(sys.getrefcount(program))
        return real(program, **kw)

    monkeypatch.setattr(serq_sim, "run", run)
    sc = scenarios.read_scenario("vllm/preempt")
    answer = scenarios.run_scenario(sc)
    assert seen == [alone]
    expected = json.loads(Path(scenarios.answer_path(Path(scenarios.scenario_path("vllm/preempt")))).read_text())
    assert scenarios.compare(answer, expected) == []


def test_the_bench_scenario_answers_as_before():
    """bench/scenario_1000.json, 1 000 requests of 400 sessions with preemptions and evictions: the answer, byte
    for byte, that the code before the change gave (and bench/vllm_peer.py, bench/run.py's check)."""
    sc = scenarios.read_scenario(ROOT / "bench" / "scenario_1000.json")
    line = json.dumps(scenarios.run_scenario(sc), sort_keys=False) + "\n"
    assert hashlib.sha256(line.encode()).hexdigest() == DIGEST_1000
