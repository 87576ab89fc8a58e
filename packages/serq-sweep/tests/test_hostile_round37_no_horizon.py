"""A run without a horizon is one message for serq run and a sweep alike (serq.loading.no_horizon), pointed
at the program's run block when it has one: `run { arrivals 5; }` was `p.sq: error: the run has no horizon`
at no line (and a sweep's message had other words); a program without a run block is headed by its file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UserError

SERQ = str(Path(sys.executable).parent / "serq")
OPEN = "stage d : delay;\nworkload { arrive poisson(1); }\nsession { run d (1); end; }\n"
HINT = "(`inf`: until no event is left)"


def _serq(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args, "--no-progress"], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", [["run", "p.sq"], ["sweep", "p.sq", "--seeds", "1", "--workers", "0"]])
def test_a_run_block_without_a_horizon_is_pointed_at(tmp_path, args):
    (tmp_path / "p.sq").write_text(OPEN + "run {\n  warmup 2;\n  seed 4;\n}\n")
    r = _serq(tmp_path, *args)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("p.sq:5:3: error: the run block gives no horizon: write `horizon T;` in it, or give "
                        f"--horizon T {HINT}\n    warmup 2;\n    ^\n"), r.stderr


@pytest.mark.parametrize("args", [["run", "p.sq"], ["sweep", "p.sq", "--seeds", "1", "--workers", "0"]])
def test_a_program_without_a_run_block_is_headed_by_its_file(tmp_path, args):
    (tmp_path / "p.sq").write_text(OPEN)
    r = _serq(tmp_path, *args)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("p.sq: error: the run has no horizon: give the program `run { horizon T; }` or --horizon T "
                        f"{HINT}\n"), r.stderr


def test_the_python_api_names_its_argument(tmp_path):
    (tmp_path / "p.sq").write_text(OPEN + "run { seed 4; }\n")
    with pytest.raises(UserError) as e:
        serq_sweep.sweep(str(tmp_path / "p.sq"), workers=0, progress=False)
    assert str(e.value).splitlines()[0] == (f"{tmp_path / 'p.sq'}:4:7: error: the run block gives no horizon: write "
                                            f"`horizon T;` in it, or give horizon=T {HINT}")
