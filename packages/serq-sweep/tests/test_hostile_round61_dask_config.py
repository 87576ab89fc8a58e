"""``serq sweep --dask`` under a Dask configuration it cannot read.

Dask reads its configuration (the YAML files of ``DASK_CONFIG``, ``~/.config/dask`` and ``/etc/dask``) when it is
first imported. A file there that is no YAML mapping (``DASK_CONFIG=/etc/passwd``) or not YAML at all (a bracket
left open in the user's ``dask.yaml``) ended ``serq sweep --dask local`` in Dask's traceback, ``ValueError: A dask
config file at '…' is malformed``. It is one error naming the file, status 1, before any run; a sweep without
``--dask`` never reads Dask's configuration and runs as before. Truth: the files are written by hand here, and the
runs' rows are the local pool's (the same points and seeds without ``--dask``). A process of its own: Dask reads its
configuration once a process, at its first import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = "let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\nsession { run s (0.5); }\nrun { horizon 5; }\n"


def _sweep(tmp_path, config, *more):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")} | {"DASK_CONFIG": str(config)}
    return subprocess.run([sys.executable, "-m", "serq", "sweep", "p.sq", "--set", "rate=1,2", "--no-progress",
                           *more], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


@pytest.mark.parametrize(("text", "said"), [
    ("root:x:0:0:root:/root:/bin/bash\n", "config files must have a dict as the top level object, got a str instead"),
    ("distributed: [unclosed\n", "while parsing a flow sequence"),
])
def test_a_configuration_dask_cannot_read_is_one_error(tmp_path, text, said):
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "conf").mkdir()
    config = tmp_path / "conf" / "dask.yaml"
    config.write_text(text)
    r = _sweep(tmp_path, tmp_path / "conf", "--dask", "local", "--workers", "1")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"error: --dask: Dask's configuration cannot be read: A dask config file at '{config}' "
                               "is malformed")
    assert said in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "mend or move the file" in r.stderr
    # a sweep on the local pool reads no Dask configuration: it runs, its table the points and seed asked for
    ok = _sweep(tmp_path, tmp_path / "conf", "--workers", "0")
    assert ok.returncode == 0, ok.stderr
    rows = ok.stdout.splitlines()
    assert rows[0].startswith("point,rate,seed,status") and [r.split(",")[:4] for r in rows[1:]] == [
        ["0", "1", "1", "ok"], ["1", "2", "1", "ok"]]


def _sweep_env(tmp_path, **variables):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")} | variables | {"TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "serq", "sweep", "p.sq", "--set", "rate=1,2", "--no-progress", "--dask",
                           "local", "--workers", "1"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_a_setting_the_cluster_cannot_read_is_one_error(tmp_path):
    # a timeout that is no duration: Dask's KeyError('Invalid time unit: abc. …') was a traceback
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep_env(tmp_path, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="abc")
    assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: dask local: the LocalCluster could not start (KeyError: 'Invalid time unit: abc.")
    assert "a setting of Dask's configuration (a DASK_* variable" in r.stderr
    assert os.listdir(tmp_path / "tmp") == []  # the half-started cluster's scratch folder removed


def test_a_worker_a_setting_ends_is_not_said_to_be_a_scripts(tmp_path):
    # from the command line no script of the user's runs the sweep: the unguarded script was named all the same
    (tmp_path / "p.sq").write_text(PROGRAM)
    r = _sweep_env(tmp_path, DASK_DISTRIBUTED__WORKER__PRELOAD="no_such_module_here")
    assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: dask local: a worker process of the LocalCluster could not start (Nanny failed "
                               "to start.): a worker reads Dask's configuration as it starts")
    assert "__main__" not in r.stderr and "script" not in r.stderr
