"""A run off the main thread under --max-wall with a plugin installed (a Dask worker's: serq_sim.engine._WallWatch)
leaves its process as it found it. The watch took back a stop it might have raised with
``PyThreadState_SetAsyncExc(tid, NULL)`` at every run's end, which on CPython 3.11 marks the interpreter as
holding an asynchronous exception that no thread then takes: every thread checked for one at every call from
then on, and a thread that profiled (``sys.setprofile``: a test counting calls, cProfile, coverage) spun for ever
at the first instruction of the next function it called, holding the GIL (the test suite's worker hung at the end
of the run, where pytest-timeout's thread never got to run). Each case runs in a process of its own, whose end
within the timeout is the proof."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

KIND = '''from serq import hookimpl
from serq_sim.stages import StageKind


class Forever(StageKind):
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

CHILD = '''
import sys, threading
sys.path.insert(0, {folder!r})
import serq_frontend, serq_sim
from serq.plugins import get_plugin_manager

pm = get_plugin_manager()
kind = {kind!r}
source = "stage s : " + kind + ";\\nworkload {{ arrive batch(1); }}\\nsession {{ run s (1); }}\\nrun {{ horizon 10; }}\\n"
program = serq_frontend.compile(source=source, pm=pm)
out = []
t = threading.Thread(target=lambda: out.append(serq_sim.run(program, pm=pm, seed=1, max_wall={wall})))
t.start()
t.join()
print(out[0].result.partial, flush=True)
calls = []
sys.setprofile(lambda frame, event, arg: calls.append(event))
(lambda: 1)()
sys.setprofile(None)
print("profiled", "call" in calls, flush=True)
'''


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind, wall, partial", [
    ("@forever", 0.3, "max-wall"),  # the watch raised its stop in the plugin's loop
    ("delay", 5, "None"),  # the watch ended with nothing raised
])
def test_the_process_profiles_after_a_run_under_the_watch(tmp_path, kind, wall, partial):
    info = tmp_path / "serq_acmewatch-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acmewatch\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacmewatch = acmewatch_kinds\n")
    (tmp_path / "acmewatch_kinds.py").write_text(KIND)
    child = textwrap.dedent(CHILD.format(folder=str(tmp_path), kind=kind, wall=wall))
    try:
        r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the process hung after the run: the first call under sys.setprofile never returned")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [partial, "profiled True"], (r.stdout, r.stderr)
