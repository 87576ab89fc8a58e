"""A sweep's local worker processes divide the memory guard's share of the machine's available memory among
them (serq_sim.memguard.machine_share): each read the same free memory when its run began, and N workers each
growing by half of it ran the machine out. The pool starts them with ``SERQ_MEMORY_WORKERS`` = its size."""

from __future__ import annotations

import os

from serq_sim import memguard
from serq_sweep.engines import LocalPool


def test_the_pools_workers_know_how_many_run_at_once(monkeypatch):
    monkeypatch.delenv(memguard.WORKERS_VAR, raising=False)
    with LocalPool(2) as pool:
        pool._start(2)
        seen = {pool._pool.apply(os.getenv, (memguard.WORKERS_VAR,)) for _ in range(4)}
        share = pool._pool.apply(memguard.machine_share)
    assert seen == {"2"}
    assert share == memguard.SHARE / 2
    assert memguard.WORKERS_VAR not in os.environ  # (this process runs alone)


def test_a_local_dask_clusters_workers_know_too(monkeypatch):
    """And this process's environment is left as it was: Dask's nanny sets the variables its workers are spawned
    with in it, and takes one this process has over its configuration (a Python session's sweep left
    SERQ_MEMORY_WORKERS=2 and Dask's logging at CRITICAL behind, and a later cluster of 3 took the 2)."""
    from serq_sweep.engines import Dask

    monkeypatch.delenv("DASK_LOGGING__DISTRIBUTED", raising=False)
    before = dict(os.environ)
    with Dask("local", workers=2) as d:
        seen = d._client.run(os.getenv, memguard.WORKERS_VAR)
        assert dict(os.environ) == before
    assert sorted(seen.values()) == ["2", "2"]
    assert dict(os.environ) == before
    monkeypatch.setenv(memguard.WORKERS_VAR, "2")  # (as the leak left it, or a user's own)
    with Dask("local", workers=3) as d:
        seen = d._client.run(os.getenv, memguard.WORKERS_VAR)
    assert sorted(seen.values()) == ["3", "3", "3"]
    assert os.environ[memguard.WORKERS_VAR] == "2"
