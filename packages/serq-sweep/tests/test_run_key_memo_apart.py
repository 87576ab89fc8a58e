"""A sweep keeps what it looks up once (the parts' versions) apart from the digests of the traces it read,
whatever a trace is named: the memo was kept in the digests under the key ``""``, so a program whose trace
path is empty (an IR file with no source and ``"path": ""``) found the memo as its trace's digest and the
sweep's planning was an AttributeError traceback (``'dict' object has no attribute 'encode'``) instead of
the run's failing row that names the trace it cannot read."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from serq.loading import LoadOptions, load_program
from serq.plugins import installed_plugin_manager
from serq_sim.trace import resolve_trace
from serq_sweep import core

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[3]
REPLAY = str(ROOT / "examples/replay/vllm_replay.sq")


def _with_trace_path(path: str):
    program = load_program(installed_plugin_manager(), REPLAY, LoadOptions())
    wl = program.workload
    trace = msgspec.structs.replace(wl.trace, path=path)
    return msgspec.structs.replace(program, source=None, workload=msgspec.structs.replace(wl, trace=trace))


def test_an_empty_trace_path_is_keyed_as_any_trace_not_as_the_memo():
    program = _with_trace_path("")
    alone = core.run_hash(program)  # no sweep's digests: the trace read for this key alone
    traces: dict = {}
    assert core.run_hash(program, traces) == alone  # the same key with a sweep's digests, first point
    assert core.run_hash(program, traces) == alone  # and the next point, the memo made
    # the digest of the trace "" (the folder it resolves to: serq_sim.trace.resolve_trace) is its fault's word
    assert traces[resolve_trace("", None)].startswith("unreadable")


def test_a_trace_named_as_the_memo_was_does_not_change_another_programs_key():
    traces: dict = {}
    plain = load_program(installed_plugin_manager(), str(ROOT / "examples/single-turn/mg1.sq"), LoadOptions())
    before = core.run_hash(plain)
    core.run_hash(_with_trace_path(""), traces)
    assert core.run_hash(plain, traces) == before
