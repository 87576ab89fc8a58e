"""--max-wall stops a run inside a third party's code off the main thread too. The alarm that does it on the
main thread (serq_sim.engine._wall_in_plugins, SIGALRM) reaches no other thread, and a Dask worker runs its
tasks in a thread of its own: a stage kind whose ``attach`` loops for ever ran on past the bound, and the run
never ended. A thread of the run's own now stands for the alarm there (engine._WallWatch): the run stops,
partial, its note naming the plugin, and the thread goes on with nothing of the stop left behind."""

from __future__ import annotations

import sys
import threading

import pytest
import serq_frontend
import serq_sim
from serq.errors import PluginError
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(120)

KINDS = '''from serq import hookimpl
from serq_sim.stages import StageKind


class Forever(StageKind):
    """Takes its job and works on it in a loop that never ends."""

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        n = 0
        while True:
            n += 1

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None


class Stubborn(Forever):
    """Its loop catches whatever interrupts it, twice, then goes on looping."""

    def attach(self, job):
        for _ in range(2):
            try:
                super().attach(job)
            except BaseException:
                pass
        super().attach(job)


class Built(Forever):
    """Its factory never returns."""

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        while True:
            pass


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("forever", Forever)
    register("stubborn", Stubborn)
    register("built", Built)
'''


@pytest.fixture
def pm(tmp_path, monkeypatch):
    info = tmp_path / "serq_acme46-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme46\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme46 = acme46_kinds\n")
    (tmp_path / "acme46_kinds.py").write_text(KINDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield get_plugin_manager()
    for name in set(sys.modules) - before:
        if name.startswith("acme46_"):
            del sys.modules[name]


def _program(kind: str) -> str:
    return f"stage s : @{kind};\nworkload {{ arrive batch(1); }}\nsession {{ run s (1); }}\nrun {{ horizon 10; }}\n"


def _in_a_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(90)
    assert not t.is_alive(), "the run did not end"
    assert len(out) == 1
    return out[0]


@pytest.mark.parametrize("kind, name", [("forever", "Forever.attach"), ("stubborn", "Forever.attach")])
def test_a_plugins_loop_is_stopped_at_the_bound_off_the_main_thread(pm, kind, name):
    program = serq_frontend.compile(source=_program(kind), pm=pm)

    def run_twice():
        first = serq_sim.run(program, pm=pm, seed=1, max_wall=0.3)
        # the same thread runs on: no stop of the first run is left to come in the second, unbounded one
        second = serq_sim.run(serq_frontend.compile(source=_program("forever").replace("@forever", "delay"),
                                                    pm=pm), pm=pm, seed=1)
        return first, second

    first, second = _in_a_thread(run_twice)
    res = first.result
    assert res.partial == "max-wall", res.notes
    note = next(n for n in res.notes if "wall time" in n)
    assert "(--max-wall 0.3) within the code of plugin 'acme46' (from serq-acme46 0.1.0): " + name in note, note
    assert (res.arrivals, res.ended) == (1, 0)
    assert (second.result.partial, second.result.ended, second.result.end) == (None, 1, 10.0)


def test_a_factory_that_never_returns_is_stopped_at_the_bound_off_the_main_thread(pm):
    """The simulation's set-up is bounded the same way: the plugin's failure, naming its factory."""
    program = serq_frontend.compile(source=_program("built"), pm=pm)

    def run():
        try:
            serq_sim.run(program, pm=pm, seed=1, max_wall=0.3)
        except PluginError as e:
            return str(e)
        return None

    said = _in_a_thread(run)
    assert said is not None and said.startswith(
        "error: plugin 'acme46' (from serq-acme46 0.1.0) failed in Built.__init__ during the run: WallAtSetUp: it "
        "did not return within --max-wall 0.3 while the simulation was built (its factory's code), so the run "
        "never began at "), said


def test_a_run_off_the_main_thread_with_no_plugin_running_ends_by_its_countdown(pm):
    """A run of serQ's own code only, bound 0.3 s of a horizon it would take hours to reach: partial, with the
    countdown's note (no plugin named)."""
    program = serq_frontend.compile(source="stage d : delay;\nworkload { arrive poisson(1); }\n"
                                           "session { run d (1); }\nrun { horizon 1e12; }\n", pm=pm)
    report = _in_a_thread(lambda: serq_sim.run(program, pm=pm, seed=1, max_wall=0.3))
    note = next(n for n in report.result.notes if "wall time" in n)
    assert report.result.partial == "max-wall"
    assert "(--max-wall 0.3)" in note and "within the code" not in note, note
