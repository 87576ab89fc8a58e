"""The failure of a local pool's thread that starts workers (``Pool._worker_handler``) when the sweep's fork
server was killed (``kill -9``, the OOM killer). A killed server closes its socket as it exits, before the
system shows it ended: the thread's read of a new worker's pid met the end of the socket (``EOFError``) in
that moment, the server still looked alive, and the thread's traceback was printed above the sweep's table
(test_hostile_round56_fork_server_killed failed so once under load). The thread's failure now waits a moment
for its cause to show (the server seen ended, or the command's signal), so the race is told as the killed
server it was. Here the race is made on purpose: the hook is called while the "server" (a child process)
still runs, and the child is killed a moment later."""

from __future__ import annotations

import subprocess
import sys
import threading
import types
from multiprocessing import forkserver

import pytest
from serq_sweep import engines


@pytest.fixture
def starter(monkeypatch):
    """A thread registered as a pool's starter whose fork server is a child process (sleeping), made the
    process's fork server; the hook Python would call after ours, recorded."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    told = []
    thread = threading.Thread(target=lambda: None)
    pool = types.SimpleNamespace(_worker_handler=thread)
    monkeypatch.setattr(forkserver._forkserver, "_forkserver_pid", child.pid)
    monkeypatch.setattr(engines, "_STARTERS", None)
    monkeypatch.setattr(engines, "_previous_hook", None)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    engines._quiet_when_stopped(pool, child.pid)
    assert threading.excepthook is engines._starter_failed
    monkeypatch.setattr(engines, "_previous_hook", told.append)  # (what Python would print: recorded)
    try:
        yield thread, child, told
    finally:
        child.kill()
        child.wait()


def _failure(thread, exc):
    return types.SimpleNamespace(exc_type=type(exc), exc_value=exc, exc_traceback=None, thread=thread)


def test_the_server_seen_ended_after_the_failure_is_quiet(starter):
    thread, child, told = starter
    killer = threading.Timer(0.3, child.kill)
    killer.start()
    try:
        engines._starter_failed(_failure(thread, EOFError()))
    finally:
        killer.join()
    assert told == []
    assert engines._server_lost(child.pid)


def test_a_server_that_runs_on_has_the_failure_told(starter, monkeypatch):
    thread, child, told = starter
    monkeypatch.setattr(engines, "_STARTER_GRACE", 0.2)
    failure = _failure(thread, EOFError())
    engines._starter_failed(failure)
    assert told == [failure]
    assert child.poll() is None


def test_another_failure_is_told_at_once(starter):
    thread, child, told = starter
    child.kill()
    child.wait()
    failure = _failure(thread, ValueError("not the server's"))
    engines._starter_failed(failure)
    assert told == [failure]


def test_another_thread_is_told(starter):
    thread, child, told = starter
    child.kill()
    child.wait()
    failure = _failure(threading.Thread(target=lambda: None), EOFError())
    engines._starter_failed(failure)
    assert told == [failure]
