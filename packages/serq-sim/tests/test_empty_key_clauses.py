"""A key clause of no keys, as an IR file may write one (``"keys": []`` on a choose, a pool's ``queue by``,
``evict by``, ``preempt by``, a step stage's ``serve by``): every candidate's keys are the empty tuple, all
equal, so the clause ranks as one constant key does (``by (0)``). The generated code of such a clause was no
code: the NaN check of no keys wrote ``(() if  else …)`` and ``if :``, a SyntaxError traceback out of
``serq run x.ir.json`` on both tiers. Checked against the same program with the key ``0`` in its place, whose
report must be the same bytes, on the default tier and on the general engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import serq_frontend
from serq_ir import codec
from tiers import run_on_tier

ROOT = Path(__file__).resolve().parents[3]

# each program has key clauses of the kinds named (the count of clauses its IR has, all emptied below)
PROGRAMS = [
    ("bench/jsq.sq", 1),  # choose (the fast tier's and the general engine's)
    ("bench/prio_pool.sq", 1),  # queue by, scanned (the fast tier's keyed queue)
    ("examples/multi-turn/offload.sq", 2),  # evict by
    ("examples/single-turn/vllm_priority.sq", 2),  # queue by and preempt by on a step engine's pools
    ("bench/vllm_single.sq", 2),  # serve by (written into it below), and the kv pool's preempt lifo (by (-admission) in the IR)
]


def source_of(path: str) -> str:
    text = (ROOT / path).read_text()
    if path == "bench/vllm_single.sq":  # its engine served newest first: a serve by clause of one key
        text = text.replace("  memory kv;\n", "  serve by (-admission);\n  memory kv;\n")
        assert "serve by" in text
    return text


def with_keys(ir: dict, keys: list) -> tuple[dict, int]:
    """``ir`` with every non-empty ``keys`` list replaced by ``keys``, and how many were."""
    n = 0

    def walk(x):
        nonlocal n
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "keys" and isinstance(v, list) and v:
                    x[k] = json.loads(json.dumps(keys))
                    n += 1
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(ir)
    return ir, n


@pytest.mark.parametrize(("path", "clauses"), PROGRAMS)
def test_a_clause_of_no_keys_ranks_as_a_constant_key(path, clauses):
    base = json.loads(codec.encode(serq_frontend.compile(source=source_of(path))))
    empty, n = with_keys(json.loads(json.dumps(base)), [])
    assert n == clauses
    zero, _ = with_keys(json.loads(json.dumps(base)), [{"kind": "Num", "value": 0.0}])
    outcomes = []
    for ir in (empty, zero):
        program = codec.decode(json.dumps(ir).encode())
        for tier in ("", "general"):
            _sim, outcome, _samples = run_on_tier(program, tier, max_events=20_000, seed=2)
            assert outcome[0] == "report", outcome
            outcomes.append(outcome[1])
    assert outcomes[0] == outcomes[1] == outcomes[2] == outcomes[3]
