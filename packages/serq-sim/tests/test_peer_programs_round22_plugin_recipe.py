"""docs/hooks.md, "Trying a plugin without installing it": a folder holding the package and its
``NAME-VERSION.dist-info`` (``METADATA`` and ``entry_points.txt``, or ``entry_points.txt`` alone) on
``sys.path`` is a plugin to the Python API's default manager and to ``serq`` under ``PYTHONPATH``. A plugin
author's eviction order (most recently released first) and stage kind (one server, last come first served,
not preemptive), each checked against a small case worked out by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(120)
SERQ = str(Path(sys.executable).parent / "serq")

PLUGIN = '''
from serq import hookimpl
from serq_sim.policies import EvictionOrder
from serq_sim.stages import StageKind


class MostRecent(EvictionOrder):
    fixed_key = True
    needs_snapshot = False

    def key(self, entry):
        return (-entry.seq,)


class Lcfs(StageKind):
    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self.stack = []
        self.current = None

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.stack.append(job)
        if self.current is None:
            self._next()

    def _next(self):
        self.current = self.stack.pop() if self.stack else None
        if self.current is not None:
            self.current.started = self.sim.now
            self.sim.at(self.sim.now + self.current.work, self._done, self.current)

    def _done(self, job):
        if job.stage is not self or job is not self.current:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)
        self._next()

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        if job is self.current:
            self._next()
        else:
            self.stack.remove(job)

    def busy_level(self):
        return 1.0 if self.current is not None else 0.0


@hookimpl
def serq_sim_register_eviction_orders(register):
    register("mru22", MostRecent)


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("lcfs22", Lcfs)
'''

# sessions 0 and 1 cache 32 units each (at 0.6 and 1.6), session 2 needs 32 at 2.5 in a pool of 64: one
# entry is evicted, the most recent (session 1's) under mru22, the oldest (session 0's) under lru; at 10
# sessions 0 and 1 look their prefix up again
CACHE = """pool kv { cap 64; block 16; evict ORDER; }
stage s : delay;
workload { arrive batch(3); }
session {
  run s (serial + 0.5);
  hold kv (32) { run s (0.1); } cache (serial < 2 ? 32 : 0);
  run s (10 - now);
  branch (serial < 2) {
    hold kv (32) reuse (h) at admission (h = min(cachedin(kv), 32)) {
      record hits { who = serial; hit = cached; }
    } cache (0);
  }
}
run { horizon 100; seed 1; }
"""

# jobs of 1 s at 0, 0.1 and 0.2: the first is served at once (0 to 1), then the last come (2: 1 to 2), then
# job 1 (2 to 3): responses 1, 2.9 and 1.8
STACK = """stage s : @lcfs22;
workload { arrive batch(3); }
session {
  run d (serial / 10);
  set t0 = now;
  run s (1);
  record job { response = now - t0; }
}
stage d : delay;
run { horizon 100; seed 1; }
"""


def _install(folder: Path, metadata: bool) -> None:
    (folder / "serq_recipe22").mkdir(parents=True)
    (folder / "serq_recipe22" / "__init__.py").write_text(PLUGIN)
    info = folder / "serq_recipe22-0.1.0.dist-info"
    info.mkdir()
    if metadata:
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-recipe22\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nrecipe22 = serq_recipe22\n")


@pytest.fixture(params=[True, False], ids=["with-metadata", "entry-points-alone"])
def plugin(request, tmp_path, monkeypatch):
    _install(tmp_path / "plug", request.param)
    monkeypatch.syspath_prepend(str(tmp_path / "plug"))
    yield tmp_path / "plug"
    sys.modules.pop("serq_recipe22", None)


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_eviction_order_by_hand(plugin, tier, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    hits = {}
    for order in ("@mru22", "lru"):
        report = serq_sim.run(serq_frontend.compile(source=CACHE.replace("ORDER", order)))
        rows = report.records()
        hits[order] = dict(zip(rows["who"].tolist(), rows["hit"].tolist()))
    assert hits == {"@mru22": {0: 32, 1: 0}, "lru": {0: 0, 1: 32}}


def test_the_stage_kind_by_hand(plugin):
    report = serq_sim.run(serq_frontend.compile(source=STACK))
    rows = report.records()
    assert dict(zip(rows["session"].tolist(), rows["response"].tolist())) == pytest.approx({0: 1, 1: 2.9, 2: 1.8})
    (stage,) = [s for s in report.result.stages if s.name == "s"]
    assert stage.completions == 3 and stage.wait == pytest.approx((0 + 1.9 + 0.8) / 3)


def test_serq_lists_and_runs_it_under_pythonpath(plugin, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(plugin)}
    r = subprocess.run([SERQ, "plugins"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    (mine,) = [p for p in json.loads(r.stdout) if p["name"] == "recipe22"]
    assert mine["registers"] == {"stage kinds": ["lcfs22"], "eviction orders": ["mru22"]}
    (tmp_path / "c.sq").write_text(CACHE.replace("ORDER", "@mru22"))
    r = subprocess.run([SERQ, "run", "c.sq", "--no-progress", "--records", "h.csv"], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "h.csv").read_text().splitlines()[1:] == ["0,0,10.0,0,32", "1,0,10.0,1,0"]
