"""A pool's mean units in use or cached beyond the largest double, told as its evicted units are.

A pool of cap inf counts its units exactly (pools/exact.py), so four holds of 1e308 are 4e308 between them,
and the pool's mean over the run may be beyond the doubles: the report's ``used`` or ``cached`` is then inf,
``null`` in JSON, and nothing said what it was (the units it evicted beyond the doubles have had a note since
e0e3c0e). A note now gives the mean to six digits, as that one does.
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(60)

PROGRAM = """pool kv { cap inf; }
stage d : delay;
workload {
  arrive batch(4);
}
session {
  hold kv (1e308) {
    run d (5);
  } cache (1e308);
}
run { horizon 10; WARMUP }
"""


def report(warmup: str, monkeypatch) -> dict:
    """The JSON report on the default tier and on the general engine, which must be the same bytes."""
    prog = serq_frontend.compile(source=PROGRAM.replace("WARMUP", warmup), sets={}, defs={})
    return same_json(prog, monkeypatch)


def test_used_and_cached_beyond_the_doubles_are_noted(monkeypatch):
    # four sessions hold 1e308 each from 0 to 5 and cache it from 5 to 10: used 4e308 for half the run, cached
    # 4e308 for the other half, each a mean of 2e308 over 10
    r = report("", monkeypatch)
    kv = r["pools"][0]
    assert (kv["used"], kv["cached"], kv["evicted_entries"]) == (None, None, 0)
    assert r["notes"] == [
        "note: pool kv held 2e+308 units on average after the warm-up, beyond the largest double: its used is "
        "inf (null in JSON)",
        "note: pool kv cached 2e+308 units on average after the warm-up, beyond the largest double: its cached "
        "is inf (null in JSON)"]


def test_a_mean_within_the_doubles_has_no_note(monkeypatch):
    # after a warm-up of 5 nothing is held (used 0) and 4e308 is cached throughout: only cached is beyond
    r = report("warmup 5;", monkeypatch)
    kv = r["pools"][0]
    assert (kv["used"], kv["cached"]) == (0.0, None)
    assert [n for n in r["notes"] if "on average" in n] == [
        "note: pool kv cached 4e+308 units on average after the warm-up, beyond the largest double: its cached "
        "is inf (null in JSON)"]
