"""A sweep's local worker processes divide the memory guard's share of the machine's available memory among
them (serq_sim.memguard.machine_share): each read the same free memory when its run began, and N workers each
growing by half of it ran the machine out. The pool starts them with ``SERQ_MEMORY_WORKERS`` = its size."""

from __future__ import annotations

import os

from serq_sim import memguard
from serq_sweep.engines import LocalPool


def test_the_pools_workers_know_how_many_run_at_once():
    with LocalPool(2) as pool:
        pool._start(2)
        seen = {pool._pool.apply(os.getenv, (memguard.WORKERS_VAR,)) for _ in range(4)}
        share = pool._pool.apply(memguard.machine_share)
    assert seen == {"2"}
    assert share == memguard.SHARE / 2
    assert memguard.WORKERS_VAR not in os.environ  # (this process runs alone)


def test_a_local_dask_clusters_workers_know_too():
    from serq_sweep.engines import Dask

    with Dask("local", workers=2) as d:
        seen = d._client.run(os.getenv, memguard.WORKERS_VAR)
    assert sorted(seen.values()) == ["2", "2"]
