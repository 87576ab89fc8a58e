"""Programs written from language.txt alone, as an outsider would, with answers computed by hand."""

from __future__ import annotations

import serq_frontend
import serq_sim


def run(src: str, **kw):
    return serq_sim.run(serq_frontend.compile(source=src), check_invariants=True, **kw)


def by_session(report, name: str) -> dict[int, float]:
    o = report.observe(name)
    return {int(s): float(v) for v, s in zip(o.values, o.sessions)}


def test_step_residents_without_a_hold_keep_their_arrival_order():
    # No pool: nothing admits the sessions, so "admission order" is their arrival. Budget 4, cost 1.
    # [0,1] s0 4 of its 6; [1,2] s0 2 (prefill done at 2), s1 2; [2,3] s0's first decode next to
    # s1's 3; [3,4] s0 decodes, s1's last prefill token (done at 4); [4,5] both decode: s0 done at 5;
    # s1 decodes at [5,6], [6,7]: done at 7. (s0's decode job joined after s1's prefill job: served
    # in the order the jobs joined, s1 took the whole budget at [2,3] and both ended at 6.)
    src = """
    stage E : step { budget 4; cost 1; }
    workload { arrive batch(2); }
    session { set t0 = now; run E prefill (6); observe pf = now - t0; run E decode (3); observe r = now - t0; end; }
    run { horizon 100; }
    """
    r = run(src)
    assert by_session(r, "pf") == {0: 2.0, 1: 4.0}
    assert by_session(r, "r") == {0: 5.0, 1: 7.0}
    # the same program with every run inside a hold (admitted in arrival order) agrees
    held = src.replace("stage E", "pool m { cap 10; }\n    stage E").replace(
        "run E prefill (6); observe pf = now - t0; run E decode (3);",
        "hold m (1) { run E prefill (6); observe pf = now - t0; run E decode (3); }")
    r = run(held)
    assert by_session(r, "pf") == {0: 2.0, 1: 4.0}
    assert by_session(r, "r") == {0: 5.0, 1: 7.0}


def test_step_unadmitted_sessions_before_admitted_ones_by_serial():
    # s0 and s2 run without a hold, s1 inside one (admitted at 0). Unadmitted sessions come first
    # (as before), among themselves by arrival: budget 2, each prefills 2 then decodes 2, batch(3).
    # [0,1] s0 2 (done at 1); [1,2] s0 decodes, s2 1 (s2's prefill joined before s0's decode job);
    # by arrival: s0 ahead of s2 ahead of s1.
    src = """
    pool m { cap 10; }
    stage E : step { budget 2; cost 1; }
    workload { arrive batch(3); }
    session {
      set t0 = now;
      branch (serial == 1) { hold m (1) { run E prefill (2); run E decode (2); } }
      else { run E prefill (2); run E decode (2); }
      observe r = now - t0;
      end;
    }
    run { horizon 100; }
    """
    # residents in order s0, s2, s1. [0,1] s0 2 (prefill done at 1). [1,2] s0 decode 1, s2 1.
    # [2,3] s0 decode 1 (done at 3), s2 1 (prefill done at 3). [3,4] s2 decode, s1 1.
    # [4,5] s2 decode (done at 5), s1 1 (prefill done at 5). [5,6], [6,7] s1 decodes: done at 7.
    r = run(src)
    assert by_session(r, "r") == {0: 3.0, 1: 7.0, 2: 5.0}


RELEASE_THEN_HOLD = """
pool m { cap 1; queue by (serial); }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (1) { run d (1); }
    HOLD_AGAIN
  } else {
    run d (0.5);
    hold m (1) { observe got = now; run d (1); }
  }
  end;
}
run { horizon 100; }
"""


def test_a_release_admits_at_the_settle_after_the_ready_sessions():
    # §3: commands take no time; after the event the settle runs every ready session, then retries the
    # admissions. At 1 session 0's hold ends and it holds m again at once, joining the queue where
    # session 1 has waited since 0.5; the settle then admits the least key, serial 0: session 0 again at
    # 1 (until 2), session 1 at 2. (Admitting at the release gave session 1 the pool at 1.)
    again = "hold m (1) { observe again = now; run d (1); }"
    for invariants in (True, False):  # the general engine, and the fast tier that takes this program
        r = serq_sim.run(serq_frontend.compile(source=RELEASE_THEN_HOLD.replace("HOLD_AGAIN", again)),
                         check_invariants=invariants)
        assert by_session(r, "again") == {0: 1.0}
        assert by_session(r, "got") == {1: 2.0}
    # the same with the pool given back by `release` inside a scope that goes on
    src = RELEASE_THEN_HOLD.replace("hold m (1) { run d (1); }\n    HOLD_AGAIN",
                                    "hold m (1) { run d (1); release m; hold m (1) { observe again = now; "
                                    "run d (1); } }")
    r = run(src)
    assert by_session(r, "again") == {0: 1.0}
    assert by_session(r, "got") == {1: 2.0}


def test_a_session_that_ends_frees_its_pool_after_the_ready_sessions_ran():
    # A closed population of 2 with one slot, queue by (-serial): the newest session first. Session 0
    # holds [0,1]; session 1 waits. At 1 session 0 ends and session 2 is spawned; session 2 holds at
    # once, and the settle admits the least key: -2, session 2 (until 2), then session 3 spawned at 2 ...
    # session 1 never gets the slot while newer ones keep coming.
    src = """
    pool m { cap 1; queue by (-serial); }
    stage d : delay;
    workload { arrive closed(2); }
    session { hold m (1) { observe got = now; run d (1); } end; }
    run { horizon 4.5; }
    """
    for invariants in (True, False):
        r = serq_sim.run(serq_frontend.compile(source=src), check_invariants=invariants)
        # t=0: sessions 0 and 1 queue; -1 < 0: session 1 first [0,1]; at 1 session 2 spawned: 2 [1,2],
        # at 2 session 3 [2,3], session 4 [3,4], session 5 from 4; session 0 waits throughout.
        assert by_session(r, "got") == {1: 0.0, 2: 1.0, 3: 2.0, 4: 3.0, 5: 4.0}
