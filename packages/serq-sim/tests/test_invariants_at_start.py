"""``--check-invariants`` (``check_invariants=True``) checks the pools' books after every event, and after the first
settle too: a batch's sessions may run from their arrival to their end in it, with no event after, and a defect of
the books there (a growth that left units booked on an exact pool, found in that very shape) went unseen."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_sim.pools import check

pytestmark = pytest.mark.timeout(60)

# one session that holds, grows and releases at t=0: every statement in the first settle, no event after it
PROGRAM = """pool kv { cap 100; }
workload { arrive batch(1); }
session { hold kv (1) { grow kv (2); } }
run { horizon 10; }
"""


def test_the_books_the_first_settle_leaves_are_checked(monkeypatch):
    seen = []
    real = check.check_invariants

    def spy(sim):
        seen.append((sim.now, [(p.used, p.cached) for p in sim.pools]))
        real(sim)

    monkeypatch.setattr(check, "check_invariants", spy)
    serq_sim.run(serq_frontend.compile(source=PROGRAM), check_invariants=True)
    # the session held 3 units and gave them back (cached nothing) within the first settle, at t=0
    assert seen and seen[0] == (0.0, [(0.0, 0.0)]), seen


def test_a_defect_of_the_books_in_the_first_settle_is_told(monkeypatch):
    from serq_sim.pools import release

    # a release that forgets to give back the units of the hold it ends: the books say 3 in use, the holders 0
    real = release.release_slot

    def leaky(sim, s, slot, *a, **k):
        pool = slot.pool
        before = pool.used
        out = real(sim, s, slot, *a, **k)
        pool.used = before
        return out

    monkeypatch.setattr(release, "release_slot", leaky)
    with pytest.raises(check.InvariantError, match="t=0: pool kv.*used 3.0 but the holders hold 0"):
        serq_sim.run(serq_frontend.compile(source=PROGRAM), check_invariants=True)
