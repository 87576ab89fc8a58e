"""``serq_sim.run``'s ``trace_digest`` and the quoting of a refused argument.

The trace's own SHA-256 in capitals as ``trace_digest`` was told ``the trace changed since the sweep
started``, of a trace that had not changed (a digest that is no SHA-256 at all stands for bytes a sweep
could not read: serq_sweep.core.trace_digest). A refused argument of a million characters (``horizon="x" * 10**6``) was quoted
whole."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import serq_frontend
import serq_sim

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay" / "vllm_replay.sq"
TRACE = ROOT / "examples" / "replay" / "short_base.csv"


@pytest.fixture(scope="module")
def replay():
    return serq_frontend.compile(str(REPLAY))


@pytest.mark.parametrize("case", [str.lower, str.upper])
def test_the_traces_digest_in_either_case_runs(replay, case):
    digest = hashlib.sha256(TRACE.read_bytes()).hexdigest()
    plain = serq_sim.run(replay, arrivals=5)
    checked = serq_sim.run(replay, arrivals=5, trace_digest=case(digest))
    assert checked.result == plain.result and plain.result.arrivals == 5


def test_another_traces_digest_is_still_the_trace_changed(replay):
    with pytest.raises(serq_sim.SimError, match="the trace changed since the sweep started"):
        serq_sim.run(replay, arrivals=5, trace_digest=hashlib.sha256(b"other bytes").hexdigest())


@pytest.mark.parametrize("name", ["horizon", "max_wall", "seed"])
def test_a_long_refused_value_is_quoted_clipped(replay, name):
    with pytest.raises((TypeError, ValueError)) as e:
        serq_sim.run(replay, **{name: "x" * 10**6})
    message = str(e.value)
    assert message.startswith(f"{name} must be ") and len(message) < 300
    assert message.endswith("…" + "x" * 58 + "'")
