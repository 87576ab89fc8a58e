"""A stand-in for ``serq_sim.Report``: the reporters use only ``result``, ``observe`` and ``gauge``."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from serq_ir.report import GaugeStats, ObserveStats, PoolStats, ProgramInfo, Result, StageStats

NAN = float("nan")
INF = float("inf")


class FakeReport:
    def __init__(self, result: Result, observes: dict | None = None, gauges: dict | None = None):
        self.result = result
        self._observes = observes or {}
        self._gauges = gauges or {}

    def observe(self, name: str):
        times, sessions, turns, values = self._observes[name]
        return SimpleNamespace(
            times=np.asarray(times, dtype=np.float64),
            sessions=np.asarray(sessions, dtype=np.int64),
            turns=np.asarray(turns, dtype=np.int64),
            values=np.asarray(values),
        )

    def gauge(self, name: str):
        times, values = self._gauges[name]
        return SimpleNamespace(times=np.asarray(times, dtype=np.float64), values=np.asarray(values))


def full_result(**overrides) -> Result:
    """A Result with every table: NaN and infinities, a family of one and families of several, a
    gauge, notes, an interrupted run."""
    fields = dict(
        serq_version="1.2.3",
        program=ProgramInfo(path="examples/p.sq", sha256="ab" * 32, ir_sha256="cd" * 32,
                            sets={"N": 2.0, "big": float("inf")}, defs={"service": "~exp(1)"}),
        horizon=1000.0,
        end=532.25,
        warmup=100.0,
        seed=7,
        events=1234567,
        arrivals=500,
        ended=480,
        turns=2001,
        mean_live=19.87654321,
        interrupted=True,
        observes={
            "ttft": ObserveStats(count=5357, mean=0.2530123456, ci=0.001234567, cv2=1.0234, p50=0.17000012,
                                 p90=0.5330123, p95=0.71230099, p99=1.20001234),
            "hit": ObserveStats(count=5357, mean=0.0, ci=0.0, cv2=NAN, p50=-0.0, p90=0.0, p95=0.0, p99=0.0),
            "price": ObserveStats(count=12, mean=1234567.891, ci=INF, cv2=-0.0, p99=NAN),
            "empty": ObserveStats(count=0, mean=NAN, ci=NAN, cv2=NAN, p99=NAN),
        },
        instants={"first_token": 5357, "done": 5300},
        records={"request": 5290},
        stages=[
            StageStats(
                name="router",
                index=None,
                present=0.1,
                utilisation=0.1,
                completions=480,
                throughput=0.9,
                wait=0.0,
                service=0.000123456789,
            ),
            StageStats(
                name="engine",
                index=0,
                present=12.5,
                utilisation=1.0,
                completions=2001,
                throughput=4.7,
                wait=1e-7,
                service=2.5,
                iterations=123456,
            ),
            StageStats(
                name="engine",
                index=1,
                present=11.25,
                utilisation=0.999999,
                completions=1999,
                throughput=4.69,
                wait=NAN,
                service=INF,
                iterations=120000,
            ),
        ],
        pools=[
            PoolStats(
                name="kv",
                index=0,
                used=30123.5,
                cached=1e6,
                queue=0.25,
                holders=8.0,
                wait=0.0125,
                admissions=2001,
                evicted_entries=17,
                evicted_units=2176.0,
                preemptions=3,
                spills=0,
                rejections=0,
                stuck=1,
                over_cap=0,
            ),
            PoolStats(
                name="kv",
                index=1,
                used=29876.0,
                cached=999999.5,
                queue=0.0,
                holders=7.5,
                wait=NAN,
                admissions=1999,
                evicted_entries=0,
                evicted_units=0.0,
                preemptions=0,
                spills=2,
                rejections=5,
                stuck=0,
                over_cap=4,
            ),
            PoolStats(
                name="slots",
                index=None,
                used=3.5,
                cached=0.0,
                queue=1.5,
                holders=3.5,
                wait=0.5,
                admissions=480,
                evicted_entries=0,
                evicted_units=0.0,
                preemptions=0,
                spills=0,
                rejections=0,
                stuck=0,
            ),
        ],
        gauges={
            "full": GaugeStats(mean=0.125, ci=0.0312, min=0.0, max=1.0),
            "spread": GaugeStats(mean=NAN, ci=NAN, min=-INF, max=INF),
        },
        notes=[
            "observe hit is constant 0 over 5357 samples",
            "pool kv: 1 session preempted a second time without progress",
        ],
    )
    fields.update(overrides)
    return Result(**fields)


@pytest.fixture
def result() -> Result:
    return full_result()


@pytest.fixture
def report(result) -> FakeReport:
    return FakeReport(
        result,
        observes={
            "ttft": ([100.5, 101.0, 101.0, 250.125], [1, 2, 2, 17], [0, 0, 1, 3], [0.1, 0.25, 1e-05, 12.0]),
            "hit": ([100.5, 300.0], [1, 3], [0, 2], np.array([False, True])),
            "price": ([0.1 + 0.2, -0.0], [0, 1], [0, 0], [float("nan"), float("-inf")]),
            "empty": ([], [], [], np.array([], dtype=np.float64)),
            "first_token": ([100.5], [1], [0], [100.5]),
            "done": ([101.0], [1], [0], [101.0]),
        },
        gauges={
            "full": ([0.0, 100.0, 123.456], np.array([0, 1, 0], dtype=np.int64)),
            "spread": ([0.0, 1e-9], [2.5, 1e300]),
        },
    )


@pytest.fixture
def minimal_result() -> Result:
    """A run with nothing to tabulate: only the run line."""
    return Result(
        horizon=10.0, end=10.0, warmup=0.0, seed=0, events=0, arrivals=0, ended=0, turns=0, mean_live=0.0
    )


@pytest.fixture
def fake_report():
    """The FakeReport class, to build reports in a test."""
    return FakeReport

