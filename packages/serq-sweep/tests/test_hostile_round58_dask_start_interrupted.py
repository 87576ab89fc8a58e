"""Ctrl-C or SIGTERM while ``--dask local`` starts its LocalCluster (its nannies starting their workers). The
constructor raised, so the sweep had no cluster to close: Dask's exit handler closed it at the interpreter's
exit, met workers not started yet and printed its ``AssertionError: Status.init`` traceback after the sweep's
``terminated`` (or ``Task exception was never retrieved … RuntimeError: Nanny failed to start`` once a worker),
and the sweep's scratch folder (``$TMPDIR/serq-dask-…/dask-scratch-space``) stayed behind. The half-started
cluster is now closed by the sweep, quietly, and its folder removed. The interrupt is made to come while a
nanny starts, as a Ctrl-C does (``_thread.interrupt_main``)."""

from __future__ import annotations

import _thread
import logging
import tempfile

import pytest
from distributed.deploy.spec import SpecCluster
from distributed.nanny import Nanny
from serq_sweep import sweep

pytestmark = pytest.mark.timeout(120)

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; seed 1; }\n"


@pytest.fixture
def loggers():
    """Dask's, tornado's and asyncio's loggers as they were (the interrupted start leaves them quiet)."""
    names = ("distributed", "tornado.application", "asyncio")
    levels = [logging.getLogger(n).level for n in names]
    yield
    for n, lv in zip(names, levels):
        logging.getLogger(n).setLevel(lv)


def test_ctrl_c_while_the_local_cluster_starts_leaves_nothing(tmp_path, monkeypatch, capfd, loggers):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)  # (read from TMPDIR again)
    started = Nanny.start_unsafe

    async def start_interrupted(self):  # the first nanny's start: Ctrl-C comes
        monkeypatch.setattr(Nanny, "start_unsafe", started)
        _thread.interrupt_main()
        return await started(self)

    monkeypatch.setattr(Nanny, "start_unsafe", start_interrupted)
    (tmp_path / "p.sq").write_text(PROGRAM)
    before = set(SpecCluster._instances)
    with pytest.raises(KeyboardInterrupt):
        sweep(str(tmp_path / "p.sq"), dask="local", workers=2, out=str(tmp_path / "t.csv"), progress=False)
    # no cluster left for Dask's exit handler to close, nothing left in TMPDIR, nothing said
    assert set(SpecCluster._instances) <= before
    assert sorted(p.name for p in scratch.iterdir()) == []
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Status.init" not in err and "never retrieved" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sq", "tmp"]  # (no table, no journal)
    # and a sweep after it runs as ever
    monkeypatch.undo()
    table = sweep(str(tmp_path / "p.sq"), dask="local", workers=1, progress=False)
    assert list(table["status"]) == ["ok"]
