"""A sweep told to start far more worker processes than the machine has cores says so before they start:
``serq sweep --workers 1024 --dask local`` on 2 cores spent minutes starting 1 024 processes without a word,
to run no faster than 2. More than serq_sweep.engines.CROWDED (4) times the cores is warned of, once, for a
local pool (which starts no more than the runs it has) and for --dask local's cluster; the count is the
user's, not capped (docs/sweep.md)."""

from __future__ import annotations

import pytest
import serq_sweep.engines as engines
from serq.loading import argument_given
from serq_sweep import sweep

PROGRAM = ("let a = 1;\nstage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (a); }\n"
           "run { horizon 5; seed 1; }\n")


def _warning(n: int, have: int, whose: str = "a local pool", named: str = "--workers") -> str:
    sep = "=" if named.endswith("workers") and not named.startswith("-") else " "
    return (f"warning: {named}{sep}{n}: {whose} of {n} worker processes on this machine's {have} core(s) takes long "
            f"to start (a Python process each, some 100 MB) and runs no faster than {have} (a run is one core's "
            f"work); {named}{sep}{have} runs as fast\n")


def test_more_than_four_times_the_cores_is_warned(monkeypatch, capsys):
    monkeypatch.setattr(engines, "cores", lambda: 2)
    assert engines._crowded(8) is False and capsys.readouterr().err == ""
    assert engines._crowded(9) is True
    assert capsys.readouterr().err == _warning(9, 2)
    assert engines._crowded(1024, argument_given, "--dask local's cluster") is True
    assert capsys.readouterr().err == _warning(1024, 2, "--dask local's cluster", "workers")


def test_a_local_pool_says_it_once_before_its_workers_start(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(engines, "cores", lambda: 1)
    (tmp_path / "p.sq").write_text(PROGRAM)
    frame = sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2, 3, 4, 5]}, workers=5, progress=False)
    assert sorted(frame["a"]) == [1, 2, 3, 4, 5]
    assert capsys.readouterr().err == _warning(5, 1, named="workers")
    # no more workers than runs start: 3 runs under workers=5 start 3, which is no crowd of 1 core's 4
    sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2, 3]}, workers=5, progress=False)
    assert capsys.readouterr().err == ""


def test_dask_local_says_it_before_its_cluster_starts(tmp_path, monkeypatch, capsys):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(engines, "cores", lambda: 2)

    def refused(*args, **kw):  # (the cluster itself is not started: what is said before it is the test)
        assert kw["n_workers"] == 1024
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(distributed, "LocalCluster", refused)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(Exception, match="could not start"):
        sweep(str(tmp_path / "p.sq"), sets={"a": [1, 2]}, workers=1024, dask="local", progress=False)
    assert capsys.readouterr().err.startswith(_warning(1024, 2, "--dask local's cluster", "workers"))
