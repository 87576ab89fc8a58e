"""The report of a run: :class:`serq_ir.report.Result` plus each observe's samples and each gauge's change
points as numpy arrays."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from serq_ir.report import GaugeStats, ObserveStats, PoolStats, Result, StageStats

from .stats import MIN_SAMPLES, observe_stats, time_stats


@dataclass(frozen=True)
class ObserveData:
    """One observe's samples (after warm-up), in the order they were taken."""

    name: str
    values: np.ndarray
    times: np.ndarray
    sessions: np.ndarray
    turns: np.ndarray

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class GaugeData:
    """One gauge's change points: ``values[i]`` holds from ``times[i]`` to the next change."""

    name: str
    times: np.ndarray
    values: np.ndarray


class Report:
    """What :func:`serq_sim.run` returns."""

    #: Which simulator made it: ``"fast"`` (the fast tier, :mod:`serq_sim.fast`) or ``"general"``.
    tier = "general"

    def __init__(self, result: Result, observes: dict[str, ObserveData], gauges: dict[str, GaugeData]):
        self.result = result
        self._observes = observes
        self._gauges = gauges

    # typed accessors
    def observe(self, name: str) -> ObserveData:
        try:
            return self._observes[name]
        except KeyError:
            raise KeyError(f"no observe {name!r} (the program has: {', '.join(self._observes) or 'none'})"
                           ) from None

    def gauge(self, name: str) -> GaugeData:
        try:
            return self._gauges[name]
        except KeyError:
            raise KeyError(f"no gauge {name!r} (the program has: {', '.join(self._gauges) or 'none'})"
                           ) from None

    @property
    def observes(self) -> dict[str, ObserveData]:
        return dict(self._observes)

    @property
    def gauges(self) -> dict[str, GaugeData]:
        return dict(self._gauges)

    def stats(self, name: str) -> ObserveStats:
        return self.result.observes[name]

    def pool(self, name: str, index: int = 0) -> PoolStats:
        for p in self.result.pools:
            if p.name == name and p.index == index:
                return p
        raise KeyError(f"no pool {name}[{index}]")

    def stage(self, name: str, index: int = 0) -> StageStats:
        for s in self.result.stages:
            if s.name == name and s.index == index:
                return s
        raise KeyError(f"no stage {name}[{index}]")

    @property
    def interrupted(self) -> bool:
        return self.result.interrupted

    def __repr__(self) -> str:
        r = self.result
        return (f"<Report end={r.end:g} events={r.events} arrivals={r.arrivals} ended={r.ended} "
                f"observes={list(self._observes)}>")


def _div(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def _array(buf, dtype) -> np.ndarray:
    """The samples in ``buf`` (an ``array.array``) as a numpy array over the same memory; a fresh empty
    one when there are none."""
    return np.frombuffer(buf, dtype=dtype) if len(buf) else np.zeros(0, dtype)


def build_report(sim) -> Report:
    p = sim.program
    start = sim.warmup
    end = sim.end
    span = end - start
    observes: dict[str, ObserveData] = {}
    ostats: dict[str, ObserveStats] = {}
    notes: list[str] = []
    for decl, o in zip(p.observes, sim.obs):
        values = _array(o.values, np.float64)
        data = ObserveData(decl.name, values, _array(o.times, np.float64), _array(o.sessions, np.int64),
                           _array(o.turns, np.int32))
        observes[decl.name] = data
        n, mean, ci, cv2, p99 = observe_stats(values)
        ostats[decl.name] = ObserveStats(count=n, mean=mean, ci=ci, cv2=cv2, p99=p99)
        if decl.test and n >= MIN_SAMPLES and not np.any(values != 0):
            notes.append(f"note: observe {decl.name} is constant 0 over {n} samples")
    stages = []
    for st in sim.stages:
        completions = st.completions
        stages.append(StageStats(
            name=st.name, index=st.index,
            present=_div(st.a_present, span),
            utilisation=_div(st.a_busy / getattr(st, "c", 1.0), span),
            completions=completions,
            throughput=_div(completions, span),
            wait=st.wait_sum / completions if completions else math.nan,
            service=st.service_sum / completions if completions else math.nan,
            iterations=st.iterations,
        ))
    pools = []
    for pl in sim.pools:
        pools.append(PoolStats(
            name=pl.name, index=pl.index,
            used=_div(pl.a_used, span), cached=_div(pl.a_cached, span),
            queue=_div(pl.a_queue, span), holders=_div(pl.a_holders, span),
            wait=pl.wait_sum / pl.admissions if pl.admissions else math.nan,
            admissions=pl.admissions, evicted_entries=pl.evicted_entries, evicted_units=pl.evicted_units,
            preemptions=pl.preemptions, spills=pl.spills, rejections=pl.rejections, stuck=pl.stuck,
            over_cap=pl.over_cap,
        ))
    gauges: dict[str, GaugeData] = {}
    gstats: dict[str, GaugeStats] = {}
    for (name, _fn), (ts, vs) in zip(sim.gauges, sim.gauge_points):
        t = _array(ts, np.float64)
        v = _array(vs, np.float64)
        gauges[name] = GaugeData(name, t, v)
        mean, ci, lo, hi = time_stats(t, v, start, end)
        gstats[name] = GaugeStats(mean=mean, ci=ci, min=lo, max=hi)
    stuck = sum(pl.stuck for pl in sim.pools)
    if stuck:
        names = ", ".join(f"{pl.name}[{pl.index}]" if pl.node.size > 1 else pl.name
                          for pl in sim.pools if pl.stuck)
        notes.append(f"note: {stuck} session(s) stuck (preempted again without progress) at {names}")
    if sim.interrupted:
        notes.append(f"note: interrupted at t={end:g}; the figures cover what was simulated")
    result = Result(
        horizon=sim.horizon, end=end, warmup=sim.warmup, seed=sim.seed, events=sim.events,
        arrivals=sim.arrivals, ended=sim.ended, turns=sim.turns,
        mean_live=_div(sim.a_live, span), interrupted=sim.interrupted,
        observes=ostats, stages=stages, pools=pools, gauges=gstats, notes=notes,
    )
    return Report(result, observes, gauges)
