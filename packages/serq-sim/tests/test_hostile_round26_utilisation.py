"""A stage's utilisation is at most 1 (serq_sim.report: the time average of StageKind.busy_level, which is in
[0, 1]).

A fifo(3) stage whose three servers are busy from before the warm-up's end to the horizon (every job's work is
inf, or 1e308) has the utilisation 1. The report summed the busy level times each span between changes one
span at a time; those lengths, each rounded, came to the run's span only up to their rounding, and the figure
was 1.0000000000000002 on both tiers."""

from __future__ import annotations

import pytest
from tiers import both

pytestmark = pytest.mark.timeout(60)


def program(servers: int, work: str, seed: int) -> str:
    return f"""stage svc : fifo({servers});
workload {{
  arrive poisson(1);
}}
session {{
  run svc ({work});
  end;
}}
run {{ horizon 100; warmup 10; seed {seed}; }}
"""


@pytest.mark.parametrize("work", ["inf", "1e308"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_servers_busy_throughout_are_utilised_1(work, seed, monkeypatch):
    r = both(program(3, work, seed), monkeypatch)
    st = r.stage("svc")
    assert st.completions == 0
    # some 100 arrivals at rate 1 by t = 100: three of them long before t = 10 (the live count at the warm-up's
    # end is in the not-steady warning's words), so all three servers are busy over [10, 100]
    assert st.utilisation == 1.0


def test_a_part_busy_stage_keeps_its_figure(monkeypatch):
    # M/M/3 at a load of 1 (a third of each server): a figure well below 1, which the bound leaves as it is;
    # the servers busy are at most the jobs present
    r = both(program(3, "~exp(1)", 1), monkeypatch)
    st = r.stage("svc")
    assert 0.2 < st.utilisation < 0.5
    assert st.utilisation <= st.present / 3
