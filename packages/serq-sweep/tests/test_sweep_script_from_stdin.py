"""A script read from standard input (``python - < script.py``, a heredoc) runs a sweep on worker processes,
the local pool's or a Dask LocalCluster's, as ``python -c`` does: its main module's ``__file__`` is
``<stdin>``, which each worker tried to run as a path as it started (FileNotFoundError), and the sweep
failed saying the script lacked its ``if __name__ == "__main__":`` guard, which it had (under
``dask="local"``: a traceback, the nanny failed to start)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")

SCRIPT = f"""import serq_sweep
if __name__ == "__main__":
    rows = serq_sweep.sweep({MG1!r}, sets={{"lambda": "0.5"}}, seeds="1..2", horizon=float("inf"), warmup=0,
                            arrivals=200, workers=2, progress=False)
    print(len(rows), list(rows["status"]))
"""


@pytest.mark.timeout(120)
def test_a_sweep_runs_from_a_script_on_stdin(tmp_path):
    r = subprocess.run([sys.executable, "-"], input=SCRIPT, capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "2 ['ok', 'ok']"
    assert "Traceback" not in r.stderr


@pytest.mark.timeout(180)
def test_a_dask_local_sweep_runs_from_a_script_on_stdin(tmp_path):
    script = SCRIPT.replace("workers=2,", 'workers=1, dask="local",')
    assert script != SCRIPT
    r = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=180,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]  # the nanny failed to start: RuntimeError, a traceback
    assert r.stdout.strip() == "2 ['ok', 'ok']"
