"""A sweep's worker processes run the installed plugins the sweep's plugin manager holds, not those the
worker's environment would choose: two distributions register the stage kind ``@k``, serq-acme a FIFO
server and serq-dup an infinite server, and a manager that blocks one of them (``get_plugin_manager(
disabled=[...])``, or built under another ``SERQ_DISABLED_PLUGINS`` than the one the pool's processes
started with) ran the other one in this process and both in the workers: every row was the error ``stage
kind 'k' is registered twice``, or, with the pool started while the other was disabled, the figures of the
kind the manager blocked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ACME = '''from collections import deque

from serq import hookimpl
from serq_sim.stages import StageKind


class One(StageKind):
    """One server, jobs in arrival order."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self.waiting = deque()
        self.serving = None

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.waiting.append(job)
        if self.serving is None:
            self._next()

    def _next(self):
        if self.waiting:
            self.acc()
            job = self.serving = self.waiting.popleft()
            job.started = self.sim.now
            self.sim.at(self.sim.now + job.work, self._done, job)

    def _done(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.serving = None
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)
        self._next()

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        if job is self.serving:
            self.serving = None
            self._next()
        else:
            self.waiting.remove(job)

    def busy_level(self):
        return 1.0 if self.serving is not None else 0.0


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("k", One)
'''

DUP = '''from serq import hookimpl
from serq_sim.stages import StageKind


class Everyone(StageKind):
    """An infinite server: every job served at once, for its work."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        job.started = self.sim.now
        self.sim.at(self.sim.now + job.work, self._done, job)

    def _done(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("k", Everyone)
'''

# two sessions at 0, each a job of 1 at @k: one FIFO server ends them at 1 and 2 (mean response 1.5), an
# infinite server both at 1 (mean 1)
PROGRAM = """let W = 1;
stage s : @k;
workload { arrive batch(2); }
session { set t0 = now; run s (W); observe resp = now - t0; }
run { horizon 10; }
"""

SCRIPT = """import json, os, sys
import serq_sweep
from serq.plugins import get_plugin_manager


def means(pm, workers):
    t = serq_sweep.sweep("p.sq", sets={"W": [1.0]}, seeds=[1, 2], workers=workers, pm=pm, progress=False)
    return [[r["status"], r.get("observes.resp.mean"), r["message"]] for r in t.to_dict("records")]


if __name__ == "__main__":
    out = {}
    os.environ["SERQ_DISABLED_PLUGINS"] = "dup"
    out["env dup"] = means(None, 2)  # (the pool's processes start here, under this environment)
    os.environ["SERQ_DISABLED_PLUGINS"] = "acme"
    out["env acme"] = means(get_plugin_manager(), 2)
    del os.environ["SERQ_DISABLED_PLUGINS"]
    for name in ("acme", "dup"):
        pm = get_plugin_manager(disabled=[name])
        out["pm " + name] = means(pm, 2)
        out["pm " + name + " here"] = means(pm, 0)
    print(json.dumps(out))
"""


def _install(site: Path, dist: str, name: str, module: str, source: str) -> None:
    info = site / f"{dist.replace('-', '_')}-0.2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.2.0\n")
    (info / "entry_points.txt").write_text(f"[serq]\n{name} = {module}\n")
    (site / f"{module}.py").write_text(source)


def test_workers_run_the_installed_plugins_the_sweeps_manager_holds(tmp_path):
    site = tmp_path / "site"
    _install(site, "serq-acme", "acme", "acme2_sweep_one", ACME)
    _install(site, "serq-dup", "dup", "acme2_sweep_all", DUP)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "s.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("SERQ_DISABLED_PLUGINS", "SERQ_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, "s.py"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=100,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    fifo, everyone = [["ok", 1.5, ""]] * 2, [["ok", 1.0, ""]] * 2
    assert out == {"env dup": fifo, "env acme": everyone,
                   "pm acme": everyone, "pm acme here": everyone, "pm dup": fifo, "pm dup here": fifo}, out


SPIN = '''import time

from serq import hookimpl
from serq_sim.stages import StageKind


class Spin(StageKind):
    """Works on its job in a loop of its own that never ends (only the run's --max-wall stops it), and never
    completes it."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        while True:
            time.monotonic()

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("spin", Spin)
'''


def test_max_wall_stops_a_workers_run_inside_a_plugins_code(tmp_path):
    """A worker process runs in its main thread, where the run's alarm at --max-wall stops a plugin's loop
    (serq_sim.engine._wall_in_plugins): each row partial, max-wall. The plugin's loop never ends by itself: a run
    it is not stopped in keeps the sweep until the subprocess's timeout, which fails the test."""
    site = tmp_path / "site"
    _install(site, "serq-acme", "acme", "acme2_sweep_spin", SPIN)
    (tmp_path / "p.sq").write_text("stage s : @spin;\nworkload { arrive batch(1); }\nsession { run s (1); }\n"
                                   "run { horizon 10; }\n")
    env = {k: v for k, v in os.environ.items() if k not in ("SERQ_DISABLED_PLUGINS", "SERQ_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    r = subprocess.run([str(Path(sys.executable).parent / "serq"), "sweep", "p.sq", "--seeds", "1,2", "--workers", "2",
                        "--max-wall", "0.5", "--no-progress"], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    rows = [line.split(",") for line in r.stdout.splitlines()]
    status, message = rows[0].index("status"), rows[0].index("message")
    assert [(row[status], row[message]) for row in rows[1:]] == [("partial", "max-wall")] * 2
