"""An IR program of many preset sessions runs on the fast tier in a generated function of one size.

The fast tier wrote two lines of its generated function for each preset (``push(heap, (at, seq, 2, k))``,
``seq += 1``), and CPython's compiler takes memory out of proportion to a function's size: 200 000 presets
(an IR file of 4 MB, horizon 1) took 14 s and 1.7 GB on the fast tier against 4.8 s and 0.27 GB on the
general engine, and 2 000 000 (34 MB, within an IR file's 256 MiB) were still compiling after 125 s, on
their way to some 17 GB. The presets' times are now a list the function loops over, the same events with the
same sequence numbers: 200 000 presets take 4.7 s and 0.27 GB, 2 000 000 58 s and 2.4 GB."""

from __future__ import annotations

import msgspec
import pytest
import serq_frontend
from serq_ir import nodes as N
from serq_sim import fast
from serq_sim.api import registries
from serq_sim.engine import Simulation
from tiers import assert_same

pytestmark = pytest.mark.timeout(60)

SOURCE = ("stage s : fifo(2);\nworkload { arrive none; }\nsession { set t0 = now; run s (0.3); "
          "observe response = now - t0; }\nrun { horizon 40; seed 3; }\n")


def _with_presets(times: list[float]) -> N.Program:
    program = serq_frontend.compile(source=SOURCE)
    workload = msgspec.structs.replace(program.workload, presets=[N.Preset(at=t) for t in times])
    return msgspec.structs.replace(program, workload=workload)


def _source(program: N.Program) -> str:
    return fast._Gen(Simulation(program, registries(None), seed=1, horizon=40.0, warmup=0.0)).source(False)


def test_the_generated_function_is_the_same_size_for_ten_presets_and_fifty_thousand():
    assert len(_source(_with_presets([0.5] * 10))) == len(_source(_with_presets([0.5] * 50_000)))


@pytest.mark.parametrize("times", [
    [0.0],
    [1.0, 1.0, 1.0, 0.5, 39.9, 41.0],  # ties (in the order given), one out of order, one after the horizon
    [k * 0.01 for k in range(3000)],  # a queue that builds: 100 a second into a fifo of 2 at 0.3 each
])
def test_presets_run_alike_on_both_tiers(times, monkeypatch):
    # the same report and the same samples, byte for byte, as the general engine, which schedules presets itself
    assert_same(_with_presets(times), monkeypatch)


def test_each_preset_is_one_session_served_as_a_fifo_serves_it(monkeypatch):
    # three presets at 0, 0 and 0.1 into a fifo of 2 servers of 0.3: responses 0.3, 0.3 and 0.5 (it waits
    # for the first server to free at 0.3, then 0.3 of service)
    from serq_sim import run

    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    report = run(_with_presets([0.0, 0.0, 0.1]))
    assert report.tier == "fast"
    assert report.observe("response").values.tolist() == pytest.approx([0.3, 0.3, 0.5])
