"""Every example runs to its own end (the full default horizon, or its `arrivals N` drained) with seeds 1, 2
and 3, without hanging, and reports sane figures; the no-progress guard is nowhere near tripping on any of
them (the most events any instant makes is far below its limit); and every figure of its JSON report is
exactly the one pinned in ``golden_runs/`` (a change of the simulator that moves any output by one bit
fails here).

The golden files hold the JSON report without its ``program`` section (paths and hashes) and versions.
A figure the report gains later is allowed (the golden file's figures must all be present and equal);
a changed or lost figure (or a list of another length) is not. Regenerate with ``SERQ_UPDATE_GOLDEN=1`` only when an output
is meant to change, and say which and why in the commit.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
import serq_frontend
import serq_report
import serq_sim
from serq_sim import engine

ROOT = Path(__file__).resolve().parents[3]
# every example program (examples/plugins/ holds plugin distributions; a .sq there is a plugin's library of
# defs, its programs are in the READMEs, run by packages/serq/tests/test_example_plugins.py)
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").rglob("*.sq")
                  if p.relative_to(ROOT / "examples").parts[0] != "plugins")
# a regression that makes an example spin stops here with a partial report (which fails the test) instead
# of running until the suite's timeout
WALL = 600.0
GOLDEN = Path(__file__).parent / "golden_runs"
UPDATE = bool(os.environ.get("SERQ_UPDATE_GOLDEN"))
UNPINNED = ("program", "serq_version", "report_version")


def pinned(report) -> dict:
    data = json.loads(serq_report.render(report, "json"))
    return {k: v for k, v in data.items() if k not in UNPINNED}


def differences(want, got, path="") -> list[str]:
    """Where ``got`` differs from the golden ``want`` (keys ``got`` adds are fine; floats compare exactly)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: {got!r} is not an object"]
        out = []
        for k, v in want.items():
            out += differences(v, got[k], f"{path}.{k}") if k in got else [f"{path}.{k}: missing"]
        return out
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {got!r} is not a list of {len(want)}"]
        return [d for i, (w, g) in enumerate(zip(want, got)) for d in differences(w, g, f"{path}[{i}]")]
    same = (
        want == got
        and type(want) is type(got)
        or (isinstance(want, float) and isinstance(got, float) and math.isnan(want) and math.isnan(got))
    )
    return [] if same else [f"{path}: {got!r}, golden {want!r}"]


def check_golden(example: str, seed: int, report) -> None:
    path = GOLDEN / f"{example.replace('/', '__').removesuffix('.sq')}.seed{seed}.json"
    got = pinned(report)
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert path.exists(), f"missing golden file {path}; run with SERQ_UPDATE_GOLDEN=1"
    diff = differences(json.loads(path.read_text()), got)
    assert not diff, f"{example} seed {seed} differs from {path.name}:\n" + "\n".join(diff[:20])


@pytest.fixture
def stall_watch(monkeypatch):
    """The most events the no-progress guard saw at one instant (its ticks: every 20 000 events)."""
    seen = {"max": 0}
    original = engine.Simulation.tick

    def tick(self, events):
        if self.now == self.stall_t:
            seen["max"] = max(seen["max"], events - self.stall_ev)
        return original(self, events)

    monkeypatch.setattr(engine.Simulation, "tick", tick)
    return seen


def test_every_example_is_here():
    assert len(EXAMPLES) >= 14 and "pd-disaggregation/llmd_nixl_pull.sq" in EXAMPLES


@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_to_its_end(example, seed, stall_watch):
    program = serq_frontend.compile(ROOT / "examples" / example)
    r = serq_sim.run(program, seed=seed, max_wall=WALL)
    res = r.result
    assert r.partial is None, res.notes
    # no warning at all: not steady, too few samples, rejections, stuck sessions, waiting for ever (the
    # not-steady test reads the backlog; the chat workload's live conversations, whose latencies drift
    # with its heavy-tailed sessions, are steady)
    assert r.warnings == [], res.notes
    assert res.seed == seed
    if program.run.arrivals is None and res.horizon < math.inf:
        assert res.end == res.horizon
    elif program.run.arrivals is None:  # horizon inf: a finite workload (arrive batch) that drains, every session ended
        assert res.end < math.inf and res.ended == res.arrivals
    else:  # `arrivals N`: every arrival made and drained before the horizon
        assert res.arrivals == program.run.arrivals and res.end <= res.horizon
    assert res.events > 0 and res.arrivals > 0
    assert 0 <= res.ended <= res.arrivals
    assert res.mean_live >= 0
    for name, o in res.observes.items():
        assert o.count > 0, name
        assert math.isfinite(o.mean), name
    for st in res.stages:
        assert st.completions >= 0 and -1e-9 <= st.utilisation <= 1 + 1e-9, st
    for pl in res.pools:
        assert pl.used >= -1e-9 and pl.admissions >= 0, pl
    # the guard allows 1 000 000 events at one instant (more with many live sessions); no example comes
    # within a hundredth of it
    assert stall_watch["max"] < engine.STALL_EVENTS // 100
    check_golden(example, seed, r)


def test_differences_sees_one_bit():
    """The comparison itself: one ulp, a lost key, a shorter list, an int for a float all count."""
    golden = {"a": 1.0, "b": [1, 2], "c": {"d": 0.1}}
    assert differences(golden, {"a": 1.0, "b": [1, 2], "c": {"d": 0.1}, "new": 3}) == []
    assert differences(golden, {"a": math.nextafter(1.0, 2), "b": [1, 2], "c": {"d": 0.1}})
    assert differences(golden, {"a": 1.0, "b": [1], "c": {"d": 0.1}})
    assert differences(golden, {"a": 1.0, "b": [1, 2], "c": {}})
    assert differences(golden, {"a": 1, "b": [1, 2], "c": {"d": 0.1}})
