"""A Dask scheduler without a worker is one error, not Dask's traceback. ``--dask ADDRESS`` (or a scheduler
file) of a scheduler that no worker joins within ``Dask.WORKER_WAIT`` seconds (10) is refused before any run,
the client closed and no journal left (``the scheduler at tcp://… has no worker (none joined in 10 s); start
workers for it …``); a ``distributed.Client`` of the caller's whose scheduler has none, or whose workers are
gone, is refused where the first point's IR is sent, as its client's timeout runs out. Both were ``TimeoutError:
No valid workers found`` from the scatter, with a traceback, after 10 s."""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sweep import engines, sweep

pytestmark = pytest.mark.timeout(120)

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

PROGRAM = """let a = 1;
stage s : delay;
workload { arrive poisson(1); }
session { run s (a); }
run { horizon 5; seed 1; }
"""


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A scheduler of no worker (a LocalCluster of none), its address; its scratch folder in a temporary folder of
    the tests' (Dask's own choice is $TMPDIR/dask-scratch-space, which it leaves behind)."""
    with dask.config.set({"temporary-directory": str(tmp_path_factory.mktemp("scratch"))}), distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                  silence_logs=engines.QUIET) as cluster:
        yield cluster.scheduler_address


def test_an_address_of_no_worker_is_refused_before_any_run(tmp_path, scheduler, monkeypatch):
    monkeypatch.setattr(engines.Dask, "WORKER_WAIT", 0.5)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError) as info:
        sweep(str(tmp_path / "p.sq"), dask=scheduler, out=str(tmp_path / "t.csv"), progress=False)
    assert str(info.value) == (f"error: --dask {scheduler}: the scheduler at {scheduler} has no worker (none joined "
                               f"in 0.5 s); start workers for it (dask worker {scheduler}), or give --dask local")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq"]  # no table, no journal


def test_a_scheduler_file_of_no_worker_is_refused_too(tmp_path, scheduler, monkeypatch):
    monkeypatch.setattr(engines.Dask, "WORKER_WAIT", 0.5)
    (tmp_path / "p.sq").write_text(PROGRAM)
    (tmp_path / "s.json").write_text(f'{{"type": "Scheduler", "address": "{scheduler}"}}')
    with pytest.raises(UserError, match=r"s\.json: the scheduler at tcp://127\.0\.0\.1:\d+ has no worker"):
        sweep(str(tmp_path / "p.sq"), dask=str(tmp_path / "s.json"), progress=False)


def test_a_callers_client_of_no_worker_is_refused_at_the_first_point(tmp_path, scheduler):
    (tmp_path / "p.sq").write_text(PROGRAM)
    with distributed.Client(scheduler, timeout="1s") as client:
        with pytest.raises(UserError) as info:
            sweep(str(tmp_path / "p.sq"), dask=client, progress=False)
        assert str(info.value) == (f"error: dask ({scheduler}): the scheduler has no worker left to send the runs "
                                   f"of {tmp_path / 'p.sq'} to; start workers for it, or give --dask local")
        assert client.status == "running"  # the caller's, left open


class _Waiting:
    """An as_completed of runs that never finish (Dask keeps them for a worker), ``ready`` results first."""

    def __init__(self, ready=(), waiting=3):
        self.ready, self.waiting = list(ready), waiting

    def has_ready(self):
        return bool(self.ready)

    def next_batch(self, block=True):
        out, self.ready = self.ready, []
        return out

    def is_empty(self):
        return not self.ready and not self.waiting

    def count(self):
        return len(self.ready) + self.waiting


class _Client:
    def __init__(self, workers):
        self.workers, self.asked = workers, 0

    def nthreads(self):
        self.asked += 1
        return {w: 1 for w in self.workers}


def _engine(client, monkeypatch):
    monkeypatch.setattr(engines.Dask, "WORKER_WAIT", 0.3)
    monkeypatch.setattr(engines.Dask, "_WORKER_POLL", 0.05)
    e = engines.Dask("tcp://127.0.0.1:1")
    e._client, e.name = client, "dask (tcp://127.0.0.1:1)"
    return e


def test_runs_that_wait_for_a_worker_that_never_comes_are_an_error(monkeypatch):
    # every worker ended and none joined: Dask keeps the runs, and the sweep waited for ever
    e = _engine(_Client([]), monkeypatch)
    got = []
    with pytest.raises(UserError) as info:
        for item in e._watched(_Waiting(ready=[("f", {"status": "ok"})], waiting=3)):
            got.append(item)
    assert got == [("f", {"status": "ok"})]  # what finished came out first
    assert str(info.value) == (
        "error: dask (tcp://127.0.0.1:1): every worker of the scheduler ended, and none joined in 0.3 s: 3 run(s) "
        "wait for one (a sweep's --out keeps the runs that finished in its journal, for the sweep run again to "
        "resume); start workers for it, or give --dask local")


def test_runs_that_wait_on_a_scheduler_with_workers_are_waited_for(monkeypatch):
    client = _Client(["tcp://127.0.0.1:2"])
    e = _engine(client, monkeypatch)
    waiting = _Waiting(waiting=1)
    real = waiting.has_ready

    def has_ready():
        # the run finishes once the workers were asked after twice the bound: they were there all along
        if client.asked >= 12 and waiting.waiting:
            waiting.ready, waiting.waiting = [("f", 1)], 0
        return real()

    waiting.has_ready = has_ready
    assert list(e._watched(waiting)) == [("f", 1)]
    assert client.asked >= 12
