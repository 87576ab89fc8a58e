"""``serq run`` ends as soon as its report is out, however many sessions the run left live.

A run leaves its simulation behind as garbage in reference cycles (every session, its generator, its job,
the engine). The collection at the process's exit (``serq.cli._exit_quickly``) walked all of it: with
millions of sessions live, 6-14 s between the report and the end of the process, after a SIGTERM too
(whose sender waits for the process). ``serq.cli`` now freezes what exists once the command is done, when
``serq`` is the process's own command, so the collection at exit walks only what came after."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# 20 000 sessions arrive and stay (a delay of 10⁹): all live at the horizon, on the general engine
LIVE = """stage d : delay;
workload { arrive poisson(1000); }
session { run d (1e9); }
run { horizon 20; }
"""

# the ``serq`` command as its script runs it (serq.cli.entry), with the collection at exit told to say how
# many objects it would walk
PROBE = """import gc, sys
import serq.cli as c
orig = c._exit_quickly
def probe():
    sys.stderr.write(f"walked {len(gc.get_objects())}\\n")
    orig()
c._exit_quickly = probe
sys.argv = ["serq", "run", sys.argv[1], "--no-progress"]
c.entry()
"""


@pytest.mark.timeout(60)
def test_the_collection_at_exit_does_not_walk_the_finished_run(tmp_path):
    prog = tmp_path / "live.sq"
    prog.write_text(LIVE)
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    env = dict(os.environ, SERQ_SIM_TIER="general")
    p = subprocess.run([sys.executable, str(probe), str(prog)], capture_output=True, text=True, timeout=60,
                       env=env)
    assert p.returncode == 0, p.stderr
    assert "arrivals 20" in p.stdout and "ended 0" in p.stdout, p.stdout
    walked = [int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("walked ")]
    assert len(walked) == 1, p.stderr
    # the run's 20 000 sessions, each several objects, are not among them (147 000 objects were walked)
    assert walked[0] < 5000, walked
