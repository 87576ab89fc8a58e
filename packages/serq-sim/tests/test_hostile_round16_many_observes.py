"""The fast tier makes room for an observe's samples in time that does not grow with the number of observes.

Each time an observe's buffers were full the fast tier summed the buffer sizes of every observe (for
``--max-samples``), so a program of K observes took K * K steps to make room for their first samples:
10 000 observes ran 3 s, 40 000 40 s, where the general engine takes under one and four. The room is
now kept as it grows. The count below is of the sizes read, not of a clock; the figures and the bound
are the general engine's and as before.
"""

from __future__ import annotations

import builtins

import pytest
import serq_frontend
import serq_sim
from serq_sim import fast


def _program(k: int) -> str:
    return ("stage s : fifo;\nworkload { arrive poisson(1); }\n"
            "session { run s (0.5); " + "".join(f"observe o{i} = {i};" for i in range(k)) + " end; }\n"
            "run { horizon 3; seed 1; }\n")


@pytest.mark.timeout(120)
def test_room_for_many_observes_is_made_without_reading_every_observe_each_time(monkeypatch):
    k = 400
    read = [0]

    def counted_sum(items, *start):
        items = list(items)
        read[0] += len(items)
        return builtins.sum(items, *start)

    monkeypatch.setattr(fast, "sum", counted_sum, raising=False)
    program = serq_frontend.compile(source=_program(k))
    report = serq_sim.run(program, progress=False)
    # every observe grew its buffers once (3 sessions, a few samples each): before, each growth read the
    # K observes' sizes, K * K = 160 000 in all; now the K sizes are read once
    assert read[0] <= 2 * k, read[0]
    general = serq_sim.run(program, progress=False, check_invariants=True)  # (the general engine)
    for i in (0, k // 2, k - 1):
        assert list(report.observe(f"o{i}").buffer("values")) == list(general.observe(f"o{i}").buffer("values"))
        assert len(report.observe(f"o{i}").buffer("values")) == 3
        assert set(report.observe(f"o{i}").buffer("values")) == {float(i)}


@pytest.mark.timeout(120)
def test_max_samples_still_stops_the_fast_tier_at_its_bound():
    # 1 observe, one sample a session: the buffers grow by 1 024 samples at least, so a bound of 2 000
    # stops the run at its third growth, the room of 2 048 samples at or past the bound (as before)
    src = ("stage s : delay;\nworkload { arrive poisson(1000); }\n"
           "session { run s (0.001); observe x = 1; end; }\nrun { horizon 100; seed 1; }\n")
    report = serq_sim.run(serq_frontend.compile(source=src), progress=False, max_samples=2_000)
    assert report.result.partial == "max-samples"
    assert len(report.observe("x").buffer("values")) == 2_048
