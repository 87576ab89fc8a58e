"""What a plugin's code writes to standard output while a sweep's run simulates (a stage kind's ``print``, an
``os.write(1, …)``) goes to standard error (serq_sweep.worker.run_task: the run under
serq.loading.stdout_to_stderr, as serq run's): ``serq sweep`` without ``--out`` writes its CSV table alone to
standard output, from the local pool's workers and from its own process (``--workers 0``). Before, the stage
kind's lines were among the table's rows. The figures are the runs': ``@batch(2)`` (examples/plugins/
serq-example-batch, its README's case by hand) gives ``t`` the mean 3 under every seed; on both tiers."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BATCH = ROOT / "examples" / "plugins" / "serq-example-batch" / "src" / "serq_example_batch" / "__init__.py"
PROGRAM = ("stage svc : @batch(2);\nworkload { arrive batch(3); }\n"
           "session { set t0 = now; run svc (1 + serial); observe t = now - t0; }\nrun { horizon 100; }\n")


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    info = site / "serq_chatsweep51-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-chatsweep51\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nchatsweep51 = chatsweep51\n")
    code = BATCH.read_text()
    marker = "    def attach(self, job):\n"
    assert code.count(marker) == 1
    code = code.replace(marker, marker + "        print('attach', job.work)\n"
                                         "        import os\n        os.write(1, b'fd attach\\n')\n")
    (site / "chatsweep51.py").write_text(code)
    (tmp_path / "p.sq").write_text(PROGRAM)
    return site


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("workers", [[], ["--workers", "0"]], ids=["a pool", "its own process"])
def test_the_table_is_alone_on_standard_output(tmp_path, site, tier, workers):
    env = {**os.environ, "PYTHONPATH": str(site), "SERQ_COMPILE_CACHE": "0", "SERQ_SIM_TIER": tier}
    r = subprocess.run([sys.executable, "-m", "serq", "sweep", "p.sq", "--seeds", "1..3", "--no-progress",
                        *workers], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(row["seed"], row["status"], row["observes.t.count"], row["observes.t.mean"]) for row in rows] == [
        (str(seed), "ok", "3", "3.0") for seed in (1, 2, 3)]
    # (the workers' lines may interleave on standard error: counted, not read as lines)
    assert "attach" not in r.stdout
    assert (r.stderr.count("fd attach"), r.stderr.count("attach")) == (9, 18)
