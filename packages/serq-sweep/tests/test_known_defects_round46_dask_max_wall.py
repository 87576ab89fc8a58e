"""``serq sweep --dask local --max-wall S`` bounds each run as a local worker does. A run of serQ's own code was
bounded on Dask already (its countdown reads the clock); a run inside a plugin's code was not: a local worker
runs its task in its main thread, where the alarm of --max-wall stops a plugin's loop
(serq_sim.engine._wall_in_plugins), and a Dask worker in a thread of its own, where no signal reaches. A stage
kind whose ``attach`` loops for ever kept the sweep running until it was killed. Now each row is partial,
max-wall, on Dask as on local workers, for a run in a plugin's loop and for a run of a horizon it would take
hours to reach."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(400)

SERQ = str(Path(sys.executable).with_name("serq"))

KIND = '''from serq import hookimpl
from serq_sim.stages import StageKind


class Forever(StageKind):
    """Takes its job and works on it in a loop that never ends."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        while True:
            pass

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("forever", Forever)
'''

PROGRAMS = {
    "spin.sq": "stage s : @forever;\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon 10; }\n",
    "long.sq": "stage d : delay;\nworkload { arrive poisson(1); }\nsession { run d (1); }\nrun { horizon 1e15; }\n",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("engine", [["--dask", "local"], []])
def test_each_run_ends_partial_at_max_wall(tmp_path, name, engine):
    site = tmp_path / "site"
    info = site / "serq_acme46d-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme46d\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme46d = acme46d_kind\n")
    (site / "acme46d_kind.py").write_text(KIND)
    (tmp_path / name).write_text(PROGRAMS[name])
    env = {k: v for k, v in os.environ.items() if k not in ("SERQ_DISABLED_PLUGINS", "SERQ_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    r = subprocess.run([SERQ, "sweep", name, "--seeds", "1,2", "--workers", "2", *engine, "--max-wall", "2",
                        "--no-progress"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    rows = [line.split(",") for line in r.stdout.splitlines()]
    status, message, partial = (rows[0].index(c) for c in ("status", "message", "partial"))
    assert [(row[status], row[message], row[partial]) for row in rows[1:]] == [("partial", "max-wall", "max-wall")] * 2
