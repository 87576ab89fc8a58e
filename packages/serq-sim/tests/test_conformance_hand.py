"""Conformance cases computed by hand: one small deterministic program per rule of language.txt §2-§3 and
pool-reference.txt, with the exact times, orders and counts the rule gives. Each program runs on the tier
serQ picks and on the general engine (SERQ_SIM_TIER=general), which must agree."""

from __future__ import annotations

import serq_frontend
import serq_sim
from serq_report.json import encode_json


def _run(src: str, monkeypatch, tier: str):
    if tier:
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
    else:
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return serq_sim.run(prog)


def run(src: str, monkeypatch):
    """``(report, {observe: [(session, time, value), …] in time then session order})``, the same on both
    tiers."""
    picked = _run(src, monkeypatch, "")
    general = _run(src, monkeypatch, "general")
    assert encode_json(picked) == encode_json(general)
    obs = {}
    for name, o in general.observes.items():
        rows = zip(o.sessions.tolist(), o.times.tolist(), o.values.tolist())
        obs[name] = sorted(((s, t, v) for s, t, v in rows), key=lambda r: (r[1], r[0]))
    return general, obs


def pool(report, name):
    return next(p for p in report.result.pools if p.name == name)


# --- pools -----------------------------------------------------------------------------------------------


def test_head_of_line_blocking(monkeypatch):
    # §3 Pools: the first that does not fit blocks the rest. cap 3; s0 takes 2 for 5 s, s1 wants 2 (1 free:
    # waits), s2 wants 1 (would fit) but waits behind s1: both admitted at 5.
    _, o = run("""
pool m { cap 3; }
stage svc : delay;
workload { arrive batch(3); }
session {
  set u = serial == 2 ? 1 : 2;
  set w = serial == 0 ? 5 : 1;
  hold m (u) { observe adm = now; run svc (w); }
}
run { horizon 100; }
""", monkeypatch)
    assert o["adm"] == [(0, 0.0, 0.0), (1, 5.0, 5.0), (2, 5.0, 5.0)]


RESERVE = """
pool m { cap 3; HELD }
stage svc : delay;
workload { arrive batch(3); }
session {
  set r = serial == 0 ? 3 : 1;
  hold m (1) reserve (r) { observe adm = now; run svc (2); }
}
run { horizon 100; }
"""


def test_reserve_is_checked_at_admission_only(monkeypatch):
    # §3 Pools: admitted when used + max(u, reserve) <= cap. s0: 0 + 3 <= 3, takes 1; s1: 1 + 1 <= 3;
    # s2: 2 + 1 <= 3: all at 0 (s0's unallocated 2 count for nobody without reserve held).
    _, o = run(RESERVE.replace("HELD", ""), monkeypatch)
    assert [t for _, t, _ in o["adm"]] == [0.0, 0.0, 0.0]


def test_reserve_held_counts_against_later_admissions(monkeypatch):
    # pool-reference `reserve held`: s0's u = 3 - 1 = 2 counts; s1 needs 1 + 2 + 1 = 4 > 3, waits for s0's
    # end at 2; then s1 and s2 (1 + 1 <= 3) at 2.
    _, o = run(RESERVE.replace("HELD", "reserve held;"), monkeypatch)
    assert o["adm"] == [(0, 0.0, 0.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]


def test_reserve_held_growth_uses_own_reservation(monkeypatch):
    # pool-reference `reserve held`: cap 4. s0 holds 1 reserve 3 (u0 = 2); s1 admitted: 1 + 2 + 1 <= 4.
    # At 1 s0 grows 2: used 2 + (others' u: 0) + 2 = 4 <= 4, fits at once. At 1 s1 grows 1:
    # used 4 + 0 + 1 > 4, waits for s0's end at 6.
    _, o = run("""
pool m { cap 4; reserve held; }
stage svc : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (1) reserve (3) { run svc (1); grow m (2); observe g = now; run svc (5); }
  } else {
    hold m (1) { observe adm = now; run svc (1); grow m (1); observe g2 = now; run svc (1); }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["g"] == [(0, 1.0, 1.0)]
    assert o["adm"] == [(1, 0.0, 0.0)]
    assert o["g2"] == [(1, 6.0, 6.0)]


def test_a_lease_retains_no_reservation(monkeypatch):
    # pool-reference `reserve held`: "Reservations end with the hold's scope, release or preemption; leases
    # retain none." cap 10: s0 holds 2 reserve 8 (u = 6) and leases its 2 past the scope (t = 1) until its
    # end at 11. s1 asks for 7 at 2: used 2 + reserved 0 + 7 = 9 <= 10, admitted at 2 (the lease kept its 6
    # reserved, and s1 waited for s0's end at 11).
    r, o = run("""
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (2) reserve (8) { run d (1); } lease kv (inf);
    run d (10);
  } else {
    run d (2);
    hold kv (7) { observe t = now; run d (1); }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["t"] == [(1, 2.0, 2.0)]
