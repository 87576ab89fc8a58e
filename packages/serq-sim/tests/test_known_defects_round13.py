"""Known defects of the simulator, round 13.

1. A closed workload whose sessions end at the instant they start is replaced at that instant for ever; the
   guard against it counted the replacements (more than 100 000 + 100·n at one instant is an error), which
   for sessions that each draw ``~erlang(100000, 1)`` (some 60 ms a draw: an Erlang draw is the sum of its k
   exponentials) came after 100 100 × 60 ms, well over an hour of CPU, and ``--max-wall`` did not stop it
   sooner (the loop makes no event). Past as many replacements at one instant as the workload has members
   (then some member's session started and ended there), the guard also reads the CPU time spent at the
   instant, and more than :data:`serq_sim.workload.REPLACE_SECONDS` is the same error. A run that replaces
   no more than its members at any instant never reads the clock, and reading it draws nothing."""

from __future__ import annotations

import time

import pytest
import serq_sim
from conform import _run, samples
from serq_report.json import encode_json
from serq_sim import workload

pytestmark = pytest.mark.timeout(60)

ERLANG = """stage d : delay;
workload { arrive closed(1); }
session { set x = ~erlang(100000, 1); observe v = x; }
run { horizon 10; }
"""

ENDLESS = ("(sessions ended at the instant they started, having reached no run, hold or grow that took time or "
           "met a hold rejected as never fitting, and each was replaced at once)")


def test_the_allowance_is_a_few_seconds():
    assert 0 < workload.REPLACE_SECONDS <= 5


@pytest.mark.parametrize("tier", ["", "general"])
def test_slow_zero_time_sessions_meet_the_guard_within_the_cpu_time_allowed(monkeypatch, tier):
    """The brief's program on both tiers, with 0.3 s allowed: the error at the workload's `arrive` (line 2,
    column 12), naming the member count and the allowance, after about 0.3 s of CPU time (a few draws),
    not 100 100 draws."""
    monkeypatch.setattr(workload, "REPLACE_SECONDS", 0.3)
    t0 = time.process_time()
    with pytest.raises(serq_sim.SimError) as e:
        _run(ERLANG, monkeypatch, tier)
    spent = time.process_time() - t0
    first = str(e.value).splitlines()[0]
    head, _, rest = first.partition(", session ")
    assert head == "<source>:2:12: error: at t=0"
    serial, _, message = rest.partition(": ")
    assert 2 <= int(serial) < 1000
    assert message == ("no progress: the closed workload replaced more ended sessions at one instant than its 1 "
                       f"member and spent more than 0.3 s of CPU time there without simulated time passing {ENDLESS}")
    assert spent < 4


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_population_of_three_is_told_as_three_members(monkeypatch, tier):
    monkeypatch.setattr(workload, "REPLACE_SECONDS", 0.1)
    src = ERLANG.replace("closed(1)", "closed(3)")
    with pytest.raises(serq_sim.SimError) as e:
        _run(src, monkeypatch, tier)
    assert "than its 3 members and spent more than 0.1 s of CPU time there" in str(e.value)


@pytest.mark.parametrize("tier", ["", "general"])
def test_fast_zero_time_sessions_still_meet_the_count_first(monkeypatch, tier):
    """Cheap sessions reach the count (100 100 for one member) in well under a second: the error and the session
    it names are as before, whatever the CPU time allowed beyond 0.5 s."""
    monkeypatch.setattr(workload, "REPLACE_SECONDS", 30.0)
    src = ERLANG.replace("~erlang(100000, 1)", "~exp(1)")
    with pytest.raises(serq_sim.SimError) as e:
        _run(src, monkeypatch, tier)
    assert str(e.value).splitlines()[0] == (
        "<source>:2:12: error: at t=0, session 100100: no progress: the closed workload replaced more than 100100 "
        f"ended sessions at one instant without simulated time passing {ENDLESS}")


PROGRESSING = """stage d : delay;
workload { arrive closed(3); }
session { set x = ~erlang(1000, 1); observe v = x; branch (x > 1) { run d (x); } }
run { horizon 20; }
"""

TOGETHER = """stage d : delay;
workload { arrive closed(3); }
session { set x = ~erlang(1000, 1); observe v = x; run d (1); }
run { horizon 10; }
"""


@pytest.mark.parametrize("src", [PROGRESSING, TOGETHER], ids=["zero-time-sometimes", "ending-together"])
def test_a_run_that_progresses_is_the_same_with_the_guard_and_without(monkeypatch, src):
    """The same report and samples, byte for byte, on both tiers, with the CPU time allowed and with no guard
    (inf): reading the clock draws nothing. PROGRESSING's sessions end at once about half the time, so some
    instant sees more ended sessions than its three members and the guard reads the clock there (an
    allowance below 0 s trips it); TOGETHER's three members end together at 1, 2, …, 10 and are replaced once
    each, never more than its members at one instant, so the clock is never read (that allowance leaves it
    untouched)."""
    reports = {}
    for seconds in (workload.REPLACE_SECONDS, float("inf")):
        monkeypatch.setattr(workload, "REPLACE_SECONDS", seconds)
        for tier in ("", "general"):
            r = _run(src, monkeypatch, tier)
            assert r.tier == ("fast" if tier == "" else "general")
            assert len(set(r.observes["v"].times.tolist())) > 5  # samples at several instants up to the horizon
            reports.setdefault(tier, []).append((encode_json(r), samples(r)))
    for tier, got in reports.items():
        assert got[0] == got[1], tier
    monkeypatch.setattr(workload, "REPLACE_SECONDS", -1.0)
    for tier in ("", "general"):
        if src is PROGRESSING:
            with pytest.raises(serq_sim.SimError, match="spent more than -1 s of CPU time"):
                _run(src, monkeypatch, tier)
        else:
            assert (encode_json(r := _run(src, monkeypatch, tier)), samples(r)) == reports[tier][0]
