"""What a plugin's code writes to standard output while ``serq run`` simulates (a stage kind's ``print``, an
``os.write(1, …)``) goes to standard error, as a loader's does (serq.loading.stdout_to_stderr around the run):
``serq run --json`` writes the report alone to standard output. Before, the stage kind's lines came ahead of
the report, which no JSON reader took. The figures are the run's: ``@batch(2)`` (examples/plugins/
serq-example-batch, its README's case by hand) gives ``t`` the samples 2, 2 and 5, mean 3; on both tiers (a
plugin's stage kind runs on the general engine whatever SERQ_SIM_TIER says)."""

from __future__ import annotations

import json
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
    info = site / "serq_chatstage51-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-chatstage51\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nchatstage51 = chatstage51\n")
    code = BATCH.read_text()
    marker = "    def attach(self, job):\n"
    assert code.count(marker) == 1
    code = code.replace(marker, marker + "        print('attach', job.work)\n"
                                         "        import os\n        os.write(1, b'fd attach\\n')\n")
    (site / "chatstage51.py").write_text(code)
    (tmp_path / "p.sq").write_text(PROGRAM)
    return site


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("command", [["--json"], ["--format", "json"], []], ids=["--json", "--format json", "text"])
def test_the_report_is_alone_on_standard_output(tmp_path, site, tier, command):
    env = {**os.environ, "PYTHONPATH": str(site), "SERQ_COMPILE_CACHE": "0", "SERQ_SIM_TIER": tier}
    r = subprocess.run([sys.executable, "-m", "serq", "run", *command, "p.sq", "--no-progress"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "attach" not in r.stdout
    if command:
        doc = json.loads(r.stdout)
        assert (doc["observes"]["t"]["count"], doc["observes"]["t"]["mean"]) == (3, 3.0)
    else:
        assert r.stdout.startswith("run: horizon 100")
    assert r.stderr.splitlines() == ["attach 1.0", "fd attach", "attach 2.0", "fd attach", "attach 3.0",
                                     "fd attach"]
