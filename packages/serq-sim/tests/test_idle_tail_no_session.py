"""The note on a run that stood idle to its horizon (notes.idle_tail) speaks of sessions that ended, so a run that
started none has no such note: its words, "every session ended before the warm-up's end (t=0)", were said of a
workload of no arrival and no preset under horizon 1e9 (bench/vllm_preset.sq without its presets), beside the
warning that nothing starts a session, which is the one that tells it. A run that started sessions and drained
keeps the note. Both tiers give the same report."""

from __future__ import annotations

import serq_frontend
from tiers import same_json

NONE = """stage s : fifo;
workload { arrive none; }
session { run s (1); }
run { horizon 100; }
"""

BATCH = """stage s : fifo;
workload { arrive batch(2); }
session { run s (1); }
run { horizon 100; }
"""


def notes(src: str, monkeypatch) -> list[str]:
    return same_json(serq_frontend.compile(source=src, sets={}, defs={}), monkeypatch)["notes"]


def test_no_session_started_no_idle_note(monkeypatch):
    got = notes(NONE, monkeypatch)
    assert any(n.startswith("warning: nothing starts a session") for n in got), got
    assert not any("every session ended" in n for n in got), got


def test_a_batch_that_drained_keeps_the_note(monkeypatch):
    # two sessions of 1 s each on one server: the second ends at t=2, then 98 of the 100 s measured are idle
    got = notes(BATCH, monkeypatch)
    (idle,) = [n for n in got if n.startswith("note: every session ended")]
    assert idle.startswith("note: every session ended by t=2 and none was left to arrive") and "98.0 % of them idle" in idle
