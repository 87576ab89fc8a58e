"""Known defects, round 35, in serq-sim.

5. A run the memory guard stopped (serq_sim.memguard) with ``--records FILE.csv`` imported numpy and the CSV
   writer only after the run, in the room the guard had kept for the report, and numpy's OpenBLAS allocated
   its buffers there: "OpenBLAS error: Memory allocation still failed after 10 retries" under ``ulimit -v
   400000``, the report lost. ``serq run`` imports what the records' writing needs before the run
   (serq_sim.records.writer_loaded), so that the guard's room is measured with it loaded; the chunks the
   writing formats are bounded too (serq-report's test_known_defects_round35). A run under a real limit that
   fills it takes tens of seconds here, so the order of the imports is what is checked.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """\
stage d : delay;
workload { arrive poisson(10); }
session { run d (1); record r { a = now; } end; }
run { horizon 2; warmup 0; seed 1; }
"""

# the run, with what is imported when it begins said on stderr (serq_sim.api.run, which serq run calls)
PROBE = """\
import sys
import serq_sim.api as api
run = api.run
def probe(*args, **kwargs):
    print("loaded at the run:", "numpy" in sys.modules, "serq_report.csv" in sys.modules, file=sys.stderr)
    return run(*args, **kwargs)
api.run = probe
from serq.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("args, loaded", [
    (["--records", "r.csv"], "True True"),
    ([], "False False"),  # (a report alone imports neither: the run's start stays as quick as it was)
])
def test_the_records_writer_is_loaded_before_the_run(tmp_path, args, loaded):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-c", PROBE, "run", "p.sq", "--no-progress", *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"loaded at the run: {loaded}" in r.stderr.splitlines(), r.stderr
    if args:
        assert (tmp_path / "r.csv").read_text().splitlines()[0] == "session,turn,time,a"
