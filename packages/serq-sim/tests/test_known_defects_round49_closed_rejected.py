"""A closed workload whose hold is rejected as never fitting its pool (language.txt §3: the session ends) is
replaced at once by a session that is rejected again, for ever, and the no-progress guard of the closed
workload stops it. Its error was located at ``arrive closed``, which is not what the user must change: it is
now located at the hold that rejected the session whose end tripped the guard, naming the pool, the amount
it asked (or reserved, or that in the pool's blocks) and the pool's capacity, with the simulated time and the
session as before. A closed workload whose sessions end at once for another reason is told as before, at
``arrive closed``. Both tiers."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import _run
from serq_sim import fast, workload

pytestmark = pytest.mark.timeout(120)

ADVICE = "(give the pool a larger capacity, or the hold an amount within it)"

SRC = """stage cpu : fifo;
pool mem { cap 10; }

workload {
  arrive closed(3);
}

session {
  hold mem (20) {
    run cpu (1);
  }
}

run { horizon 100; seed 1; }
"""


def _error(src, monkeypatch, tier):
    with pytest.raises(serq_sim.SimError) as e:
        _run(src, monkeypatch, tier)
    return str(e.value).splitlines()


def _count_message(limit, hold):
    return (f"no progress: the hold {hold}, so it is rejected as never fitting and its session ends at the instant "
            f"it started; the closed workload replaced more than {limit} ended sessions at one instant without "
            f"simulated time passing, the last of them ended by this rejection {ADVICE}")


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_guard_is_located_at_the_rejecting_hold(monkeypatch, tier):
    """Three members: the guard allows 100 000 + 3 × 100 replacements at one instant (sessions 0 … 100 300
    end at t = 0, the 100 301st end trips it: session 100 300); the hold is line 9, column 3."""
    assert fast.tier(serq_frontend.compile(source=SRC, sets={}, defs={})) == "fast"
    lines = _error(SRC, monkeypatch, tier)
    assert lines[0] == ("<source>:9:3: error: at t=0, session 100300: "
                        + _count_message(100300, "asks 20 units of pool mem, above its capacity 10"))
    assert lines[1:3] == ["    hold mem (20) {", "    ^"]


FAMILY = """stage cpu : fifo;
pool kv[3] { cap 8; }
pool reqs { cap 4; }

workload {
  arrive closed(2);
}

session {
  set k = serial % 2;
  run cpu (1);
  hold reqs (1), kv[k + 1] (6 + serial % 5) {
    run cpu (1);
  }
}

run { horizon 1000; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_rejections_where_time_passes_are_counted_as_before(monkeypatch, tier):
    """The hold's second pool rejects the sessions whose units, 6 + serial % 5, are 9 or 10 (above kv's 8); the
    others are served for time at cpu. Time passes, so no guard trips: every rejection is counted, on the
    member each asked (kv[1] for an even serial, kv[2] for an odd one), and the same on both tiers."""
    prog = serq_frontend.compile(source=FAMILY, sets={}, defs={})
    assert fast.tier(prog) == "fast"
    r = _run(FAMILY, monkeypatch, tier)
    rejected = {m: r.pool("kv", m).rejections for m in range(3)}
    assert rejected[0] == 0 and rejected[1] > 0 and rejected[2] > 0


ZERO = FAMILY.replace("  run cpu (1);\n  hold", "  hold").replace("6 + serial % 5", "9 + serial % 2")


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_member_of_a_family_is_named(monkeypatch, tier):
    """Every session asks 9 or 10 of kv[k + 1] (cap 8) with nothing before the hold: two members, 100 200
    replacements allowed; session 100 200 is even, so it asked kv[1] for 9 units."""
    assert fast.tier(serq_frontend.compile(source=ZERO, sets={}, defs={})) == "fast"
    lines = _error(ZERO, monkeypatch, tier)
    assert lines[0] == ("<source>:11:3: error: at t=0, session 100200: "
                        + _count_message(100200, "asks 9 units of pool kv[1], above its capacity 8"))


def test_a_reserve_and_blocks_are_said():
    """The fast tier takes neither a reserve nor blocks: the general engine's words for both."""
    reserve = SRC.replace("hold mem (20)", "hold mem (5) reserve (12)")
    assert fast.tier(serq_frontend.compile(source=reserve, sets={}, defs={})) == "general"
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=reserve, sets={}, defs={}))
    assert str(e.value).splitlines()[0] == (
        "<source>:9:3: error: at t=0, session 100300: "
        + _count_message(100300, "reserves 12 units of pool mem, above its capacity 10"))
    blocks = SRC.replace("pool mem { cap 10; }", "pool mem { cap 10; block 4; }").replace("mem (20)", "mem (11)")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=blocks, sets={}, defs={}))
    # 11 units are 3 blocks of 4: 12, above 10
    assert str(e.value).splitlines()[0] == (
        "<source>:9:3: error: at t=0, session 100300: "
        + _count_message(100300, "asks 11 units of pool mem (12 in its blocks), above its capacity 10"))


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_cpu_time_guard_is_located_there_too(monkeypatch, tier):
    """With no CPU time allowed, the guard trips at the first replacement past the 3 members that reads the
    clock a second time: the 5th end at t = 0, session 4."""
    monkeypatch.setattr(workload, "REPLACE_SECONDS", -1.0)
    lines = _error(SRC, monkeypatch, tier)
    assert lines[0] == (
        "<source>:9:3: error: at t=0, session 4: no progress: the hold asks 20 units of pool mem, above its "
        "capacity 10, so it is rejected as never fitting and its session ends at the instant it started; the "
        "closed workload replaced more ended sessions at one instant than its 3 members and spent more than -1 s "
        f"of CPU time there without simulated time passing, the last of them ended by this rejection {ADVICE}")


@pytest.mark.parametrize("tier", ["", "general"])
def test_sessions_that_end_at_once_otherwise_are_told_at_arrive_closed(monkeypatch, tier):
    """A hold that fits and a run of no time: no rejection, the error where it was (line 5, column 3)."""
    src = SRC.replace("mem (20)", "mem (2)").replace("cpu (1)", "cpu (0)")
    lines = _error(src, monkeypatch, tier)
    assert lines[0].startswith("<source>:5:3: error: at t=0, session 100300: no progress: the closed workload "
                               "replaced more than 100300 ended sessions at one instant without simulated time "
                               "passing (sessions ended")


def test_the_command_exits_with_the_message(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "rej.sq"
    path.write_text(SRC)
    p = subprocess.run([sys.executable, "-m", "serq", "run", str(path)], capture_output=True, text=True,
                       timeout=100)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert p.stderr.splitlines()[0].startswith(f"{path}:9:3: error: at t=0, session 100300: no progress: the hold "
                                               "asks 20 units of pool mem")
