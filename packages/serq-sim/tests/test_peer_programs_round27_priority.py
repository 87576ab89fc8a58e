"""A scheduling researcher's priority scheduling with aging (`queue by (prio - waited)`), preemption by
priority with `requeue tail`, and `reserve held`, against first come first served: three requests by hand
on the step clock (peer_programs27/prio.sq), and on a longer run (aging.sq, one server at load 0.9) the
order aging gives, earliest deadline first, checked at every admission, and the starvation of the last
class under strict priority that aging removes. Both tiers give the same reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from serq_report.json import encode_json

HERE = Path(__file__).parent / "peer_programs27"


def both(path: Path, monkeypatch, *, sets=None, defs=None, text=None):
    """The program (``text`` in place of the file's, when given) on the tier serQ picks and on the general
    engine: the same JSON report. Returns the report."""
    if text is None:
        prog = serq_frontend.compile(path=str(path), sets=sets or {}, defs=defs or {})
    else:
        prog = serq_frontend.compile(source=text, sets=sets or {}, defs=defs or {})
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier) if tier else monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        out.append(serq_sim.run(prog))
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert encode_json(out[0]) == encode_json(out[1])
    return out[1]


def requests(report) -> dict[int, tuple]:
    """Per session: (last admission, first token, last token, preemptions)."""
    r = report.records("request")
    return {int(r["session"][k]): (r["admitted"][k], r["first_token"][k], r["last_token"][k],
                                   int(r["preemptions"][k])) for k in range(len(r["session"]))}


def kv(report):
    (p,) = report.result.pools
    return p


def test_priority_with_aging_and_preemption_by_priority(monkeypatch):
    # A (serial 0, prio 2), B (1, prio 1), C (2, prio 0) at 0, keys 2, 1, 0: admitted C, B, A (2 each of 8).
    # Step [0, 1]: three prefills. [1, 2]: C and B grow to 3 (8 used), A finds no room: the victim of the
    # least -prio is A itself (-2), requeued. [2, 3]: C, B to 4. [3, 4]: C to 5 finds no room, the victim is
    # B (-1 < 0), requeued at 3; no admission in a step that preempted. C's last token at 4.
    # At 4: A waited 3 (key -1), B 1 (key 0): A, then B (2 + 2 of 8). [4, 5] prefills, [5, 6] to 3, [6, 7]
    # to 4, [7, 8]: A to 5 finds no room, A (-2) is the victim again; B ends at 8. A alone from 8: 9, 12.
    report = both(HERE / "prio.sq", monkeypatch)
    assert requests(report) == {2: (0, 1, 4, 0), 1: (4, 5, 8, 1), 0: (8, 9, 12, 2)}
    p = kv(report)
    # waits: 0, 0, 0, then A 4 - 1, B 4 - 3, A 8 - 7: 5 over 6 admissions; the queue 5 over the horizon 100
    assert (p.admissions, p.preemptions) == (6, 3)
    assert p.wait == pytest.approx(5 / 6) and p.queue == pytest.approx(5 / 100)


def test_first_come_first_served_on_the_same_requests(monkeypatch):
    # Keys 0 (ties in the order joined: A, B, C), the victim the last admitted. [1, 2]: C finds no room and
    # is its own victim (requeued at 1); [3, 4]: A to 5, the victim B (requeued at 3). A ends at 4; C (joined
    # at 1) then B at 4; [7, 8]: C to 5, the victim B, the last admitted; C ends at 8, B alone from 8.
    report = both(HERE / "prio.sq", monkeypatch, defs={"qkey": "0", "pkey": "-admission"})
    assert requests(report) == {0: (0, 1, 4, 0), 2: (4, 5, 8, 1), 1: (8, 9, 12, 2)}
    # the most urgent request (C, prio 0) ends at 8 here, at 4 under priority; the mean latency is the same
    ttft = report.result.requests.ttft
    assert ttft.mean == pytest.approx((1 + 5 + 9) / 3)


def test_a_reservation_checked_at_admission_only_and_held(monkeypatch):
    # reserve (6) without `reserve held`: C (6 <= 8, 2 used), B (2 + 6 <= 8), A (4 + 6 > 8) waits. [3, 4]: C
    # to 5 preempts B (requeued at 3). At 4: A (waited 4, key -2) then B (key 0); [7, 8]: A to 5 is its own
    # victim, B ends at 8, A from 8.
    report = both(HERE / "prio.sq", monkeypatch, sets={"R": 4})
    assert requests(report) == {2: (0, 1, 4, 0), 1: (4, 5, 8, 1), 0: (8, 9, 12, 1)}
    assert kv(report).preemptions == 2
    # `reserve held`: C's 4 units reserved and not yet allocated count against B (2 + 4 + 6 > 8), so one
    # request at a time and no preemption: C [0, 4], then B (waited 4, key -3; A's -2), then A.
    text = (HERE / "prio.sq").read_text().replace("  admit via E;", "  reserve held;\n  admit via E;")
    report = both(HERE / "prio.sq", monkeypatch, sets={"R": 4}, text=text)
    assert requests(report) == {2: (0, 1, 4, 0), 1: (4, 5, 8, 0), 0: (8, 9, 12, 0)}
    p = kv(report)
    assert (p.admissions, p.preemptions) == (3, 0)
    # used: each request 2, 3, 4, 5 over its four steps, 14 a request, over the horizon 100
    assert p.used == pytest.approx(42 / 100)
    # reserve (3) held: C (r 3, 1 unreserved), B (2 + 1 + 3 <= 8), A (4 + 2 + 3 > 8) waits. A growth within
    # the grower's reservation counts the others' alone: [1, 2] C and B to 3 (6, none left reserved), [2, 3]
    # to 4 (8); [3, 4] C to 5 finds no room, B (-1) the victim. At 4 A (key -2, r 3) then B (2 + 1 + 3 <= 8);
    # [7, 8] A to 5 is its own victim; B ends at 8, A from 8.
    report = both(HERE / "prio.sq", monkeypatch, sets={"R": 1}, text=text)
    assert requests(report) == {2: (0, 1, 4, 0), 1: (4, 5, 8, 1), 0: (8, 9, 12, 1)}
    assert kv(report).preemptions == 2


def jobs(report):
    r = report.records("job")
    order = np.argsort(np.asarray(r["session"]))  # the records come in the order the requests ended
    return tuple(np.asarray(r[c])[order] for c in ("sent", "admitted", "done", "prio"))


def late(sent, admitted, done, prio, spread: float) -> int:
    """The requests that waited longer than aging allows. Under keys prio - waited (A = 1) a request r sent
    at s waits for no request that arrives after s + spread (its deadline s' + prio' is later than r's,
    s + prio <= s + spread), so from s + spread on the one server (work-conserving) serves r before it is
    idle or takes one of those: r waits at most spread + V(s + spread) - S_r, V(t) the work in the system
    at t (its requests' services left, the one in service's remainder), S_r its own service. V is the same
    under every order that keeps the server busy, and is read from the records."""
    service = done - admitted
    count = 0
    for r in range(len(sent)):
        t = sent[r] + spread
        if admitted[r] <= t:
            continue
        work = np.where(sent <= t, np.maximum(0.0, done - np.maximum(t, admitted)), 0.0).sum()
        if admitted[r] - sent[r] > spread + work - service[r] + 1e-9:
            count += 1
    return count


def test_aging_is_earliest_deadline_first_and_no_class_starves(monkeypatch):
    # 3 000 requests (run { arrivals 3000; }: every one is served, so the records hold all the work)
    aging = both(HERE / "aging.sq", monkeypatch)
    sent, admitted, done, prio = jobs(aging)
    assert len(sent) == 3000
    deadline = sent + prio  # A = 1
    # at every admission no request that was waiting then had an earlier deadline (ties: the order joined)
    for k in np.argsort(admitted, kind="stable"):
        waiting = (sent <= admitted[k]) & (admitted > admitted[k])
        assert not (deadline[waiting] < deadline[k] - 1e-9).any(), k
    assert late(sent, admitted, done, prio, 2) == 0
    # strict priority (--def qkey=prio) on the same requests breaks the bound: the last class starves
    # while the others keep the server busy
    strict = both(HERE / "aging.sq", monkeypatch, defs={"qkey": "prio"})
    s_sent, s_admitted, s_done, s_prio = jobs(strict)
    # the same requests (common random numbers: each session's draws are its own)
    assert (s_sent == sent).all() and (s_prio == prio).all()
    assert np.allclose(s_done - s_admitted, done - admitted, rtol=0, atol=1e-9)
    assert late(s_sent, s_admitted, s_done, s_prio, 2) > 100
    assert (s_admitted - s_sent)[s_prio == 2].max() > 1.5 * (admitted - sent)[prio == 2].max()
