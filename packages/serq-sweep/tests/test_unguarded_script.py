"""A script that runs ``serq_sweep.sweep`` on worker processes without the ``if __name__ == "__main__":``
guard: each worker imports the script as it starts (forkserver, spawn) and ran the sweep again; the pool
started the failed workers again and again and the sweep waited for ever (a traceback per worker, until
killed). Now a first worker is started and waited for before the pool: the sweep fails at once, saying
what to do; the guarded script runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MG1 = str(ROOT / "examples/single-turn/mg1.sq")

CALL = f'serq_sweep.sweep({MG1!r}, sets={{"lambda": "0.5,0.6"}}, seeds="1..2", horizon=3000, workers=2)'


def _script(tmp_path, guarded: bool):
    body = (f'import serq_sweep\nif __name__ == "__main__":\n    print(len({CALL}))\n' if guarded else
            f"import serq_sweep\nprint(len({CALL}))\n")
    p = tmp_path / "s.py"
    p.write_text(body)
    return subprocess.run([sys.executable, str(p)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)


def test_an_unguarded_script_fails_at_once_saying_why(tmp_path):
    r = _script(tmp_path, guarded=False)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("serq.errors.UserError: error: a sweep's worker process could not start"), last
    assert 'if __name__ == "__main__":' in last and "workers=0" in last


def test_the_guarded_script_runs(tmp_path):
    r = _script(tmp_path, guarded=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "4"
