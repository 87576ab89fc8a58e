"""A plugin registered in this process (not installed) in a sweep, a comparison and a capacity search.

``serq_sweep.sweep(..., pm=pm)`` (and ``compare``, ``find``) compiled every point with ``pm`` but ran it
without: each run used the installed plugins, so a program naming a stage kind that ``pm`` alone knows was
"unknown stage kind" in every row, also with ``workers=0``. The runs in this process now use the plan's
plugin manager; a worker process (local or Dask) loads the installed plugins only, so a sweep over such a
plugin with workers is refused before any run, naming the plugin, instead of failing in every row.
"""

from __future__ import annotations

import pytest
import serq_sweep
from serq import hookimpl
from serq.errors import UserError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

pytestmark = pytest.mark.timeout(120)


class Slow(StageKind):
    """``@slow(k)``: every job on its own (a delay stage) for ``k`` times its work."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self.k = float(node.kind.params[0])
        self.jobs: dict = {}

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        job.started = self.sim.now
        self.jobs[job] = None
        self.sim.at(self.sim.now + self.k * job.work, self._end, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        self.jobs.pop(job, None)

    def _end(self, job):
        if job not in self.jobs:
            return
        self.acc()
        del self.jobs[job]
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)

    def busy_level(self):
        return 1.0 if self.present else 0.0


class SlowPlugin:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("slow", Slow)


PROGRAM = """
let w = 1;
stage s : @slow(2);
workload { arrive poisson(1); }
session { set t0 = now; run s (w); observe r = now - t0; end; }
run { horizon 50; }
"""


@pytest.fixture
def program(tmp_path):
    p = tmp_path / "slow.sq"
    p.write_text(PROGRAM)
    return str(p)


def pm():
    return get_plugin_manager(plugins=[SlowPlugin()])


def test_a_sweep_in_this_process_runs_with_the_plugin(program):
    # every response is 2 w exactly (a job takes k = 2 times its work, alone): w = 1 gives 2, w = 3 gives 6
    df = serq_sweep.sweep(program, sets={"w": [1, 3]}, seeds=[1, 2], workers=0, progress=False, pm=pm())
    assert list(df["status"]) == ["ok"] * 4, list(df["message"])
    by_w = {float(w): sorted(set(df[df["w"] == w]["observes.r.mean"])) for w in (1, 3)}
    assert by_w == {1.0: [2.0], 3.0: [6.0]}


def test_compare_and_find_in_this_process_run_with_the_plugin(program):
    table = serq_sweep.compare(program, sets={"w": [1, 3]}, seeds="1..2", figures=["r.mean"], workers=0,
                               progress=False, pm=pm())
    assert list(table["figure"]) == ["observes.r.mean"] and list(table["diff"]) == [4.0]
    # the largest w whose mean response is at most 5: 2 w <= 5, w = 2.5 (bisection over 1:4 to its tolerance)
    _cols, rows = serq_sweep.find(program, "r.mean <= 5", ("w", "1:4"), seeds=[1], tol=0.01, workers=0,
                                  progress=False, pm=pm())
    assert len(rows) == 1
    assert abs(rows[0]["w"] - 2.5) <= 0.01


@pytest.mark.parametrize("workers", [None, 2])
def test_workers_are_refused_before_any_run_naming_the_plugin(program, workers):
    for call in (lambda: serq_sweep.sweep(program, sets={"w": [1, 3]}, workers=workers, progress=False, pm=pm()),
                 lambda: serq_sweep.compare(program, sets={"w": [1, 3]}, seeds="1..2", workers=workers,
                                            progress=False, pm=pm()),
                 lambda: serq_sweep.find(program, "r.mean <= 5", ("w", "1:4"), seeds=[1], workers=workers,
                                         progress=False, pm=pm())):
        with pytest.raises(UserError) as info:
            call()
        said = str(info.value)
        assert "registered in this process and not installed" in said and "SlowPlugin" in said, said
        assert "workers=0" in said


def test_the_installed_plugins_run_with_workers_as_before(program):
    # a pm of the installed plugins only (what serq's commands pass) is no reason to refuse workers
    plain = PROGRAM.replace("@slow(2)", "delay").replace("run s (w)", "run s (2 * w)")
    p = program.replace("slow.sq", "plain.sq")
    with open(p, "w") as f:
        f.write(plain)
    df = serq_sweep.sweep(p, sets={"w": [1, 3]}, seeds=[1], workers=2, progress=False, pm=get_plugin_manager())
    assert sorted(df["observes.r.mean"]) == [2.0, 6.0]
