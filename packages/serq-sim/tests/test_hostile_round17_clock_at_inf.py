"""Without a horizon (``horizon inf``: the run ends when no event is left) an event at inf never happens, as
an event past a finite horizon does not: a job of infinite work never ends (docs/language.md, "Amounts are
not negative"), and a time beyond the largest double (1e308 + 1e308) is no time the clock reaches.

Such an event was popped: the clock went to inf, and the backlog's bins (serq_sim.backlog), 2**-10 time
units wide without a horizon and doubling, were closed up to it until the end of the next bin was an integer
too large for a float: ``OverflowError: integer division result too large for a float``, a traceback on both
tiers (``run s (inf);``, or ``run s (1e308); run s (1e308);``, or ``arrive renewal(1e308)``). Now the run
ends at its last finite event; a session whose only event is at inf waits for ever, and the report says so.
"""

from __future__ import annotations

import array
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
from serq_sim.backlog import Backlog
from tiers import run_on_tier

pytestmark = pytest.mark.timeout(60)

SERQ = str(Path(sys.executable).parent / "serq")
TIERS = ["general", ""]


def _run(src: str, tier: str):
    """The report as JSON and each observe's values."""
    _, outcome, samples = run_on_tier(serq_frontend.compile(source=src), tier)
    assert outcome[0] == "report", outcome
    return json.loads(outcome[1]), {k: array.array("d", v[0]).tolist() for k, v in samples.items()}


def _waits(r, n: int) -> bool:
    said = "1 session waits" if n == 1 else f"{n} sessions wait"
    return any(f"warning: {said} for ever" in w for w in r["notes"])


# session 0 runs 5 s, session 1 a job of infinite work on a delay stage: it never ends
ENDLESS = """stage s : delay;
workload { arrive batch(2); }
session { run s (serial == 0 ? 5 : inf); observe t = now; }
run { horizon inf; seed 1; }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_a_job_of_infinite_work_never_ends_without_a_horizon(tier):
    r, obs = _run(ENDLESS, tier)
    # the run ends at session 0's end, t = 5: the other event, at inf, is never reached
    assert (r["end"], r["arrivals"], r["ended"], obs["t"]) == (5.0, 2, 1, [5.0])
    assert _waits(r, 1), r["notes"]


def test_the_tiers_agree_byte_for_byte():
    program = serq_frontend.compile(source=ENDLESS)
    general, fast = run_on_tier(program, "general")[1:], run_on_tier(program, "")[1:]
    assert general[0][0] == "report" and general == fast


# the second run would end at 1e308 + 1e308, beyond the largest double: inf
FAR = """stage s : fifo;
workload { arrive batch(1); }
session { run s (1e308); observe a = now; run s (1e308); observe b = now; }
run { horizon inf; seed 1; }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_a_clock_past_the_largest_double_is_never_reached(tier):
    r, obs = _run(FAR, tier)
    assert (r["end"], r["ended"], obs["a"], obs["b"]) == (1e308, 0, [1e308], [])
    assert _waits(r, 1), r["notes"]


# a gap of 1e308: the first arrival at 1e308, the next at inf, which never comes
SPARSE = """stage s : delay;
workload { arrive renewal(1e308); }
session { run s (1); observe t = now; end; }
run { horizon inf; seed 1; }
"""


@pytest.mark.parametrize("tier", TIERS)
def test_arrivals_that_would_come_at_inf_never_come(tier):
    r, obs = _run(SPARSE, tier)
    # 1e308 + 1 == 1e308 in doubles: the session ends at its arrival
    assert (r["end"], r["arrivals"], r["ended"], obs["t"]) == (1e308, 1, 1, [1e308])
    assert not _waits(r, 1), r["notes"]


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_serq_run_reports_and_strict_fails_on_the_wait(tmp_path, tier):
    (tmp_path / "p.sq").write_text(ENDLESS)
    env = {**os.environ, "SERQ_SIM_TIER": tier}
    for extra, status in (([], 0), (["--strict"], 4)):
        r = subprocess.run([SERQ, "run", "p.sq", "--no-progress", *extra], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == status and "Traceback" not in r.stderr, r.stderr[-3000:]
        assert r.stdout.startswith("run: horizon inf  end 5  warmup 0  seed 1  events 1  arrivals 2  ended 1"), \
            r.stdout


def test_the_backlog_closes_its_bins_up_to_a_clock_near_the_largest_double():
    b = Backlog(0.0, math.inf)
    now = sys.float_info.max
    nxt = b.cut(now, 1, 0.0, 0.0, 1)
    assert nxt > now  # the next bin's end is past the clock (inf: no double is)
    assert len(b.times) and all(t <= now for t in b.times)
    # the bins are 2**-10 wide, doubled at every merge: the last closed one ends within one width of the clock
    width = b.step / 1024
    assert b.times[-1] <= now < b.times[-1] + width
