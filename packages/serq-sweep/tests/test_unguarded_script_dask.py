"""A script that runs ``serq_sweep.sweep(…, dask="local")`` without the ``if __name__ == "__main__":`` guard:
each LocalCluster worker imports the script as it starts and ran the sweep again; the sweep ended in
Dask's ``RuntimeError: Nanny failed to start.``, saying nothing of why. Now it is serQ's one error saying
what to do, as on the local pool (test_unguarded_script.py); the guarded script runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")

CALL = (f'serq_sweep.sweep({MG1!r}, sets={{"lambda": "0.5"}}, seeds="1..2", horizon=float("inf"), warmup=0, '
        'arrivals=200, workers=1, dask="local", progress=False)')


def _script(tmp_path, guarded: bool):
    body = (f'import serq_sweep\nif __name__ == "__main__":\n    print(len({CALL}))\n' if guarded else
            f"import serq_sweep\nprint(len({CALL}))\n")
    p = tmp_path / "s.py"
    p.write_text(body)
    return subprocess.run([sys.executable, str(p)], capture_output=True, text=True, timeout=150, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)


@pytest.mark.timeout(180)
def test_an_unguarded_dask_local_script_fails_saying_why(tmp_path):
    r = _script(tmp_path, guarded=False)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("serq.errors.UserError: error: dask local: a worker process of the LocalCluster could "
                           "not start"), last
    assert 'if __name__ == "__main__":' in last


@pytest.mark.timeout(180)
def test_the_guarded_dask_local_script_runs(tmp_path):
    r = _script(tmp_path, guarded=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "2"
