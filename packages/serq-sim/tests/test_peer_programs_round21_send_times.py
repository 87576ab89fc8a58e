"""Requests sent at the times a log gives, a trace-driven arrival process (docs/language.md, Workload): the
workload has no arrival kind that reads a trace, so the program starts every session at 0 (`arrive
batch(N)`), replays the log's row i in session i (`trace … ordered`) and waits until the row's send time
(`turn; run until (think);`) before it sends. peer_programs21/send_times.sq, a log of four requests
(sends.csv: sent at 0.5, 0.5, 2 and 7.25, needing 3, 1, 2 and 1 s of one server), by hand:

    session 0  sent 0.5   admitted 0.5   done 3.5
    session 1  sent 0.5   admitted 3.5   done 4.5   (behind 0, sent at the same instant, first in the log)
    session 2  sent 2     admitted 4.5   done 6.5
    session 3  sent 7.25  admitted 7.25  done 8.25  (the server idle from 6.5)

and the run line's mean live counts the sessions waiting for their send time: every session is live from 0 to
its end, (3.5 + 4.5 + 6.5 + 8.25) / 8.25."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

PROGRAM = Path(__file__).resolve().parent / "peer_programs21" / "send_times.sq"
pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("tier", ["general", ""])
def test_each_request_is_sent_at_its_log_time_by_hand(monkeypatch, tier):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    r = serq_sim.run(serq_frontend.compile(path=str(PROGRAM)))
    rec = r.records("request", kind="numpy")
    got = [tuple(float(rec[k][i]) for k in ("session", "sent", "admitted", "done")) for i in range(len(rec["session"]))]
    assert got == [(0, 0.5, 0.5, 3.5), (1, 0.5, 3.5, 4.5), (2, 2.0, 4.5, 6.5), (3, 7.25, 7.25, 8.25)]
    assert r.result.end == 8.25 and r.result.arrivals == r.result.ended == 4
    assert r.result.mean_live == pytest.approx((3.5 + 4.5 + 6.5 + 8.25) / 8.25, rel=1e-12)


def test_a_warm_up_leaves_out_the_requests_sent_before_its_end():
    """The records are kept by their send time, the `sent` column, not by the session's start at 0."""
    r = serq_sim.run(serq_frontend.compile(path=str(PROGRAM)), warmup=1)
    assert list(r.records("request", kind="numpy")["session"]) == [2, 3]


def test_more_sessions_than_the_log_has_send_its_requests_again():
    """`ordered` replays session serial mod the log's four: sessions 4 and 5 are rows 0 and 1 again."""
    r = serq_sim.run(serq_frontend.compile(path=str(PROGRAM), sets={"n": 6}))
    rec = r.records("request", kind="numpy")
    sent = dict(zip(rec["session"].tolist(), rec["sent"].tolist()))
    assert sent == {0: 0.5, 1: 0.5, 2: 2.0, 3: 7.25, 4: 0.5, 5: 0.5}
