"""Known defects, round 27 (serq-sim)."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(120)

# 1. a head of an `admit via` queue that never fits waits for ever, and so do the sessions behind it, when its
# units read the clock (no admission attempt keeps such a demand) or its queue is ordered by keys read at the
# join; one whose units fall as time passes is not told. Arrivals at t = 1, ..., 10 (sessions 0 to 9); session
# 0 holds 8 of kv's 10 for ever (a run of infinite work) when WORK is inf; session 1 needs 5 (u)
QUEUE = """pool reqs {{ cap 4; queue by ({key}); admit via E; }}
pool kv {{ cap 10; }}
stage E : step {{ budget 8; cost 0.25; }}
stage d : delay;
workload {{ arrive renewal(1); }}
session {{
  set u = serial == 0 ? 8 : (serial == 1 ? 5 : 1);
  set w = serial == 0 ? {work} : 0;
  hold reqs ({reqs}), kv ({kv}) {{
    run E prefill (2);
    run d (w);
  }}
}}
run {{ horizon {horizon}; }}
"""


def _run(monkeypatch, key: str, reqs: str, kv: str, work: str = "inf", horizon: str = "10.5") -> dict:
    src = QUEUE.format(key=key, reqs=reqs, kv=kv, work=work, horizon=horizon)
    return same_json(serq_frontend.compile(source=src), monkeypatch)


def _forever(r: dict) -> list[str]:
    return [n for n, c in zip(r["notes"], r["codes"]) if c == "waits-for-ever"]


HELD = "for pools that only sessions that never release them hold: session 0, whose run of infinite work never completes"


def test_a_head_whose_units_read_the_clock_and_never_fit_waits_for_ever(monkeypatch):
    # queue by (-serial): each newcomer is the head and fits (1 of the 2 free units), so session 1 is left alone;
    # its units max(5, now / 100) are at least 5 from the end on, beside 2 free that only session 0 holds
    r = _run(monkeypatch, "-serial", "1", "max(u, now / 100)")
    assert (r["arrivals"], r["ended"]) == (10, 8)
    assert _forever(r) == [f"warning: 1 session(s) wait for ever at the end of the run (each waits {HELD}): "
                           "1 queued at reqs (session 1)"]


@pytest.mark.parametrize("kv", ["u", "max(u, now / 100)"])
def test_the_sessions_behind_a_head_of_keys_read_at_the_join_wait_for_ever(monkeypatch, kv):
    # queue by (-u): session 1 (u = 5) is the head from its join on, and every later session (u = 1) joins behind
    # it; a newcomer of lesser keys could pass it, none lifts those behind it past it
    r = _run(monkeypatch, "-u", "1", kv)
    assert (r["arrivals"], r["ended"]) == (10, 0)
    assert _forever(r) == [
        "warning: 9 session(s) wait for ever at the end of the run (each waits in the queue of reqs behind a head "
        f"that waits for ever and so blocks the rest: head-of-line blocking; or {HELD}): 9 queued at reqs "
        "(sessions 1, 2, 3, 4, 5, …)"]


def test_a_head_that_needs_more_than_the_capacity_waits_for_ever_whatever_frees(monkeypatch):
    # reqs of 4, session 1's units max(5, now / 100): never rejected at its join (they read the clock), never
    # admitted; at t = 10.1 session 9 holds reqs and will release it, which frees room but never 5
    r = _run(monkeypatch, "-serial", "serial == 1 ? max(5, now / 100) : 1", "1", work="0", horizon="10.1")
    assert (r["arrivals"], r["ended"]) == (10, 8)
    assert _forever(r) == ["warning: 1 session(s) wait for ever at the end of the run (each waits for pools that "
                           "only they hold: a deadlock, or a demand beyond the capacity): 1 queued at reqs "
                           "(session 1)"]


def test_a_head_whose_units_fall_as_time_passes_is_not_told(monkeypatch):
    # session 1 needs 5 until t = 20, then 1: at the end (t = 10.5) it waits, not for ever; a run to t = 30.5
    # admits it at the arrival after t = 20
    kv = "serial == 1 ? (now > 20 ? 1 : 5) : u"
    early = _run(monkeypatch, "-serial", "1", kv)
    assert (early["arrivals"], early["ended"]) == (10, 8)
    assert _forever(early) == []
    late = _run(monkeypatch, "-serial", "1", kv, horizon="30.5")
    assert (late["arrivals"], late["ended"]) == (30, 29)
    assert _forever(late) == []
