"""A member of a pool family that no session joins keeps no queue of its own: its front, queue and growers are
one shared empty tuple (pools.model.NONE_YET) until the first session joins it, and so is its set of
livelocked sessions. A family of 100 000 members took about 4.8 KB a member (three empty deques of 760 bytes
each and a set of 216 among them; 470 MB traced at its peak), now about 2.3 KB. Reports are unchanged: the
members used queue, requeue at the head and grow as before, on both tiers."""

from __future__ import annotations

import sys

import pytest
from conform import run

_FAMILY = (
    "import resource, sys\n"
    "import serq_frontend, serq_sim\n"
    "m = int(sys.argv[1])\n"
    "src = ('pool p[' + str(m) + '] { cap 1; }\\nstage d : delay;\\nworkload { arrive poisson(1); }\\n'\n"
    "       'session { hold p[serial % 3] (1) { run d (0.5); } }\\nrun { horizon 10; seed 1; }\\n')\n"
    "r = serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))\n"
    "assert r.result.arrivals > 3, r.result.arrivals\n"
)


@pytest.mark.timeout(600)
def test_a_member_never_held_costs_little_memory(peak_memory):
    code, few = peak_memory([sys.executable, "-c", _FAMILY, 2_000], timeout=300)
    assert code == 0
    code, many = peak_memory([sys.executable, "-c", _FAMILY, 100_000], timeout=300)
    assert code == 0
    # 98 000 members more: 472 MB more (4.8 KB a member) before, about 225 MB (2.3 KB) now
    assert many - few < 98_000 * 3_500, (few, many)


def test_the_members_used_queue_as_before(monkeypatch):
    """batch(4), each session holding p[serial % 2] (cap 1) for 1 on a delay stage: p[0] serves sessions 0 and
    2 (waits 0 and 1), p[1] sessions 1 and 3 (the same); p[2] is never joined. The run ends at 2."""
    report, obs = run("""pool p[3] { cap 1; }
stage d : delay;

workload {
  arrive batch(4);
}

session {
  set t0 = now;
  hold p[serial % 2] (1) {
    observe waited = now - t0;
    run d (1);
  }
}

run { horizon inf; }
""", monkeypatch)
    assert sorted(v for _s, _t, v in obs["waited"]) == [0.0, 0.0, 1.0, 1.0]
    assert report.result.end == 2.0
    members = [p for p in report.result.pools if p.name == "p"]
    assert [(p.index, p.admissions) for p in members] == [(0, 2), (1, 2), (2, 0)]
