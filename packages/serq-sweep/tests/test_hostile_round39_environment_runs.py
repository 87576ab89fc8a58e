"""A value of an environment variable every run reads that it does not take (`SERQ_SIM_TIER=abc`,
`SERQ_MEMORY_SHARE=2`, `SERQ_MEMORY_WORKERS=x`) is one error before a sweep, a comparison or a search runs
anything. Each run refused it alone: a sweep ran every point to that error, wrote a table of error rows
under --out, said the first as its point's fault (`note: `lambda` is 0.5, given by --set lambda`), and once
the variable was mended a resume took those rows for the runs' own failures (status 1 again, until
--fresh). Nothing is now written, and the one message is the variable's (serq_sim.tier_env.check_environment)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UserError

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = ("let lambda = 0.8;\nstage svc : fifo;\nworkload { arrive poisson(lambda); }\n"
           "session { set t0 = now; run svc (~exp(1)); observe response = now - t0; end; }\n"
           "run { horizon 5; seed 1; }\n")
TIER = ("error: the environment variable SERQ_SIM_TIER is 'abc': it is 'general' (every run on the general "
        "engine) or unset, empty or 'fast' (the fast tier where a program allows it), either word in any case\n")
SHARE = ("error: the environment variable SERQ_MEMORY_SHARE is '2': it is the share of the memory available when a "
         "run begins that the run may grow by, a number above 0 and at most 1 (unset or empty: 0.5), or 'off' in any "
         "case (no bound but a ulimit's)\n")


def _serq(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args, "--no-progress"], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("env", "said"), [({"SERQ_SIM_TIER": "abc"}, TIER), ({"SERQ_MEMORY_SHARE": "2"}, SHARE)])
@pytest.mark.parametrize("args", [
    ("sweep", "p.sq", "--set", "lambda=0.5,0.6", "--workers", "0", "-o", "t.csv"),
    ("sweep", "p.sq", "--set", "lambda=0.5,0.6", "--workers", "2", "-o", "t.csv", "--fresh"),
    ("compare", "p.sq", "--set", "lambda=0.5,0.6", "--seeds", "1..3", "--workers", "0", "-o", "c.csv"),
    ("sweep", "p.sq", "--find", "response.mean < 3", "--over", "lambda", "0.1:0.9", "--workers", "0", "-o", "f.csv"),
], ids=["sweep", "sweep-workers", "compare", "find"])
def test_one_error_before_any_run_and_nothing_written(tmp_path, env, said, args):
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _serq(tmp_path, env, *args)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", said)
    assert [p.name for p in tmp_path.iterdir()] == ["p.sq"]


def test_a_resume_after_the_variable_is_mended_runs_every_run(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    args = ("sweep", "p.sq", "--set", "lambda=0.5,0.6", "--workers", "0", "-o", "t.csv")
    assert _serq(tmp_path, {"SERQ_SIM_TIER": "abc"}, *args).returncode == 1
    r = _serq(tmp_path, {}, *args)
    assert r.returncode == 0, r.stderr
    assert "(2 run now, 0 resumed)" in r.stderr
    statuses = [line.split(",")[3] for line in (tmp_path / "t.csv").read_text().splitlines()[1:]]
    assert statuses == ["ok", "ok"]


def test_the_api_refuses_it_too(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.setenv("SERQ_SIM_TIER", "abc")
    with pytest.raises(UserError) as e:
        serq_sweep.sweep(str(tmp_path / "p.sq"), sets={"lambda": [0.5, 0.6]}, workers=0, progress=False)
    assert str(e.value) == TIER.strip()
