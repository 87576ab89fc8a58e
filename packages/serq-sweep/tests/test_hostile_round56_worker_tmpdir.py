"""A sweep's workers and the temporary folder (TMPDIR).

`serq sweep --dask local` made `$TMPDIR/dask-scratch-space` (Dask's scratch folder of its scheduler, nannies and
workers) and left it behind after every sweep, its two lock files in it: a folder the user did not name. The
cluster's scratch folders are now made in a temporary folder of the sweep's own, removed with the cluster.

`serq sweep --workers N` under a TMPDIR whose path is longer than a Unix socket's name may be (107 bytes on
Linux): the fork server listens on a socket there, and its start was an `AF_UNIX path too long` traceback,
status 1, nothing run. The workers are spawned instead, as where there is no fork server. Either way the table
is the one `--workers 0` writes, and the temporary folder is left empty."""

from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
ARGS = ["sweep", "p.sq", "--set", "rate=1,1.5", "--seeds", "1..2", "--no-progress"]


def _sweep(tmp_path, tmp, *args):
    env = os.environ | {"TMPDIR": str(tmp)}
    env.pop("DASK_TEMPORARY_DIRECTORY", None)
    return subprocess.run([sys.executable, "-m", "serq", *ARGS, *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)


def _alone(tmp_path, out):
    r = subprocess.run([sys.executable, "-m", "serq", *ARGS, "--workers", "0", "-o", out], capture_output=True,
                       text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    table = (tmp_path / out).read_bytes()
    assert len(table.splitlines()) == 5  # (a head, 4 runs)
    return table


def test_a_local_cluster_leaves_no_scratch_folder(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "tmp").mkdir()
    r = _sweep(tmp_path, tmp_path / "tmp", "--workers", "2", "--dask", "local", "-o", "d.csv")
    assert r.returncode == 0, r.stderr
    assert os.listdir(tmp_path / "tmp") == []  # (it held dask-scratch-space/global.lock and purge.lock)
    assert sorted(os.listdir(tmp_path)) == ["d.csv", "d.points.csv", "p.sq", "tmp"]
    assert (tmp_path / "d.csv").read_bytes() == _alone(tmp_path, "a.csv")


def test_workers_start_under_a_temporary_folder_too_long_for_a_socket(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    tmp = tmp_path / ("t" * 120)
    tmp.mkdir()
    r = _sweep(tmp_path, tmp, "--workers", "2", "-o", "w.csv")
    assert (r.returncode, "Traceback" in r.stderr) == (0, False), r.stderr
    assert os.listdir(tmp) == []
    assert (tmp_path / "w.csv").read_bytes() == _alone(tmp_path, "a.csv")
