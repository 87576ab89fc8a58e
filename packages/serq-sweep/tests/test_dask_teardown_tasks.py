"""A local Dask cluster torn down leaves no report of the tasks its teardown cut short.

A comm's read of a worker that ended fails (``StreamClosedError: Stream is closed``) inside an asyncio task
whose exception nobody retrieves. Such a task reports it, traceback and all, when it is destroyed; its
exception holds its frames, which hold the task, so the cycle collector destroys it whenever it next runs.
``serq sweep --dask local`` with a worker that ended once printed that traceback after its own message (a
loaded machine, the collector running after the loggers' levels were put back). The teardown collects such
tasks while Dask's, tornado's and asyncio's loggers are quiet.
"""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest
from serq_sweep.engines import Dask

pytestmark = pytest.mark.timeout(60)


async def _read_cut_short() -> None:
    me = asyncio.current_task()  # (its frame holds its task: a cycle, as a comm's does)
    assert me is not None
    raise ConnectionResetError("Stream is closed")


class _Client:
    """A client whose close leaves a task that failed, its exception never retrieved, in a cycle."""

    def close(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(_read_cut_short())
            loop.run_until_complete(asyncio.sleep(0))
            assert task.done()
        finally:
            loop.close()
        del task


def _torn_down() -> None:
    engine = Dask.__new__(Dask)
    engine._own = True
    engine._quiet = None
    engine._client = _Client()
    engine._cluster = None
    engine._environ = None
    engine.__exit__(None, None, None)


def test_a_task_cut_short_by_the_teardown_is_not_reported(caplog):
    caplog.set_level(logging.DEBUG)
    was = gc.isenabled()
    gc.disable()  # (the collector runs when this test says)
    try:
        _torn_down()
        gc.collect()  # what a later collection, or the interpreter's exit, would find
    finally:
        if was:
            gc.enable()
    said = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert said == []
    assert logging.getLogger("asyncio").level == logging.NOTSET  # (its level put back)


def test_the_task_would_be_reported_but_for_the_teardown(caplog):
    """The case above is one: the same task, without the teardown, is reported when it is collected."""
    caplog.set_level(logging.DEBUG)
    was = gc.isenabled()
    gc.disable()
    try:
        _Client().close()
        gc.collect()
    finally:
        if was:
            gc.enable()
    said = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert any("never retrieved" in m for m in said), said


def _asyncio_level() -> int:
    return logging.getLogger("asyncio").getEffectiveLevel()


def test_the_workers_asyncio_logger_is_quiet(monkeypatch):
    """A worker process holds such tasks too (its comms to the scheduler and to a worker that ended): its
    asyncio logger is at CRITICAL, as Dask's own loggers there, and this process's environment is left as it
    was."""
    pytest.importorskip("distributed")
    monkeypatch.delenv("DASK_LOGGING__ASYNCIO", raising=False)
    import os

    before = dict(os.environ)
    with Dask("local", workers=1) as d:
        seen = d._client.run(_asyncio_level)
    assert list(seen.values()) == [logging.CRITICAL]
    assert dict(os.environ) == before
