"""`--workers N` with `--dask ADDRESS` (a scheduler's address or file, or a Client given to the Python API) is
refused before any run: the scheduler's workers run the runs, so the count was dropped without a word
(`--workers 0`, "in this process", ran every run on the scheduler). With `--dask local` it counts the
LocalCluster's processes, as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sweep
from serq.errors import UsageError
from serq_sweep import engines

SERQ = str(Path(sys.executable).parent / "serq")
PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); end; }\nrun { horizon 5; }\n"
RULE = "the scheduler's workers run the runs, and {w} counts the processes of a local pool (or of {l}'s cluster); give one of them"


@pytest.mark.parametrize("command", ["sweep", "compare"])
@pytest.mark.parametrize("workers, dask", [("0", "tcp://127.0.0.1:1"), ("3", "s.json")])
def test_the_command_line_giving_both_is_a_usage_error(tmp_path, command, workers, dask):
    (tmp_path / "p.sq").write_text(PROGRAM)
    args = [SERQ, command, "p.sq", "--seeds", "1..2", "--no-progress", "--workers", workers, "--dask", dask]
    if command == "compare":
        args += ["--set", "x=1,2"]
        (tmp_path / "p.sq").write_text("let x = 1;\n" + PROGRAM.replace("run s (1)", "run s (x)"))  # (x read)
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr == (f"error: --workers {workers} and --dask {dask}: "
                        + RULE.format(w="--workers N", l="--dask local") + "\n"), r.stderr
    assert not (tmp_path / "s.json").exists()  # (no scheduler file was read or made)


def test_the_python_api_giving_both_is_refused(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UsageError) as e:
        serq_sweep.sweep(str(tmp_path / "p.sq"), workers=0, dask="tcp://127.0.0.1:1", progress=False)
    assert str(e.value) == ("error: workers=0 and dask=tcp://127.0.0.1:1: "
                            + RULE.format(w="workers=N", l="dask=local"))


def test_a_count_for_dask_local_or_no_count_is_taken():
    # the engines are made, not started: a LocalCluster of 2, and a scheduler's address with no count
    local = engines.engine(workers=2, dask="local")
    assert isinstance(local, engines.Dask) and local.workers == 2
    remote = engines.engine(dask="tcp://127.0.0.1:1")
    assert isinstance(remote, engines.Dask) and remote.workers is None
