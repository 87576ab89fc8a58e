"""A third party's stage kind (serq-acme4, written from docs/hooks.md, installed as a wheel leaves it: a
``*.dist-info`` on ``PYTHONPATH``) in ``serq sweep``: a server whose random vacations are drawn from the run's
session stream gives the same table, byte for byte, run in this process, on a local pool's worker processes
and on a Dask LocalCluster (whose workers load the installed plugin themselves)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(200)

SERQ = str(Path(sys.executable).parent / "serq")

PLUGIN = 'import math\nfrom collections import deque\n\nfrom serq import hookimpl\nfrom serq_sim import SimError\nfrom serq_sim.stages import StageKind\n\n\nclass RVac(StageKind):\n    """``@rvac(V)``: one server, jobs in arrival order; after each job a vacation of mean V (exponential,\n    the run\'s session stream). ``work()`` is the work of the jobs present."""\n\n    def __init__(self, sim, node, member, flat):\n        super().__init__(sim, node, member, flat)\n        p = node.kind.params\n        if not isinstance(p, list) or len(p) != 1 or not 0 <= float(p[0]) < float("inf"):\n            raise SimError(f"stage {node.name}: @rvac takes one mean vacation, a number at least 0, not {p}")\n        self.mean = float(p[0])\n        self.rng = sim.rngs["session"]\n        self.waiting = deque()\n        self.serving = None\n        self.away = False\n\n    def attach(self, job):\n        self.acc()\n        job.stage = self\n        self.present += 1\n        self.waiting.append(job)\n        self._next()\n\n    def detach(self, job):\n        self.acc()\n        job.stage = None\n        self.present -= 1\n        if job is self.serving:\n            self.serving = None\n            self._next()\n        else:\n            self.waiting.remove(job)\n\n    def _next(self):\n        if self.serving is None and not self.away and self.waiting:\n            job = self.serving = self.waiting.popleft()\n            job.started = self.sim.now\n            self.sim.at(self.sim.now + job.work, self._done, job)\n\n    def _done(self, job):\n        if job.stage is not self:\n            return\n        self.acc()\n        self.serving = None\n        self.present -= 1\n        job.stage = None\n        self.sim.job_done(self, job)\n        if self.mean > 0:\n            self.away = True\n            self.sim.at(self.sim.now + self.rng.expovariate(1 / self.mean), self._back, None)\n        else:\n            self._next()\n\n    def _back(self, _):\n        self.away = False\n        self._next()\n\n    def busy_level(self):\n        return 0.0 if self.serving is None else 1.0\n\n    def work(self):\n        return sum(j.work for j in self.waiting) + (0.0 if self.serving is None else self.serving.work)\n\n\nclass Stall(RVac):\n    """``@stall(V)``: a factory whose set-up never ends."""\n\n    def __init__(self, sim, node, member, flat):\n        while True: pass\n\n\n@hookimpl\ndef serq_sim_register_stage_kinds(register):\n    register("rvac", RVac)\n    register("stall", Stall)\n'

VAC = """let V = 1;
stage s : @rvac(V);
workload { arrive poisson(0.5); }
session { set t0 = now; run s (1); observe t = now - t0; }
run { horizon 200; }
"""


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    info = root / "serq_acme4-0.4.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme4\nVersion: 0.4.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme4 = acme4_sweep_kinds\n")
    (root / "acme4_sweep_kinds.py").write_text(PLUGIN)
    (tmp_path / "V.sq").write_text(VAC)
    return root


def sweep(site, cwd, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("SERQ_DISABLED_PLUGINS", "SERQ_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = str(site)
    return subprocess.run([SERQ, "sweep", *args, "--no-progress"], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=200, stdin=subprocess.DEVNULL)


def test_same_table_in_process_on_workers_and_on_dask(site, tmp_path):
    tables = []
    for where in (["--workers", "0"], ["--workers", "2"], ["--dask", "local", "--workers", "2"]):
        out = tmp_path / f"t{len(tables)}.csv"
        r = sweep(site, tmp_path, "V.sq", "--set", "V=0,0.5,2", "--seeds", "1,2", "-o", str(out), *where)
        assert r.returncode == 0, r.stderr
        assert r.stderr == f"6 run(s) of 3 point(s) x 2 seed(s) (6 run now, 0 resumed): {out}; per point: " \
                           f"{out.with_suffix('.points.csv')}\n"
        tables.append(out.read_bytes())
    assert tables[0] == tables[1] == tables[2]
    with (tmp_path / "t0.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["V"], r["seed"], r["status"]) for r in rows] == [
        (v, s, "ok") for v in ("0", "0.5", "2") for s in ("1", "2")]
    # longer vacations, longer times in the system, seed by seed (the arrivals are the same: common random numbers)
    for s in ("1", "2"):
        means = [float(r["observes.t.mean"]) for r in rows if r["seed"] == s]
        assert means[0] < means[1] < means[2]
