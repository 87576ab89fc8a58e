"""The host's process-wide state under threads (the concurrency audit): what several threads calling the
library at once get is what one call gets alone."""

from __future__ import annotations

import threading

import pytest
from serq import plugins

pytestmark = pytest.mark.timeout(60)


def test_threads_whose_first_calls_overlap_get_one_installed_plugin_manager(monkeypatch):
    # the manager of the installed plugins is built on first use and kept for the process; two threads
    # whose first calls overlapped each built one and kept it, so a plugin one of them registered on what
    # it got was missing from what every later call gets. A barrier in the build makes them overlap: before
    # the fix the two managers differed on every run (after it, the second waits for the first's build and
    # the barrier gives up after its timeout).
    build = plugins.get_plugin_manager
    meet = threading.Barrier(2, timeout=0.5)

    def slow_build(**kw):
        try:
            meet.wait()
        except threading.BrokenBarrierError:
            pass
        return build(autoload=False)

    monkeypatch.setattr(plugins, "_installed", {})
    monkeypatch.setattr(plugins, "get_plugin_manager", slow_build)
    got: list[object] = [None, None]

    def first_call(i: int) -> None:
        got[i] = plugins.installed_plugin_manager()

    threads = [threading.Thread(target=first_call, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert got[0] is not None and got[0] is got[1]
    assert plugins.installed_plugin_manager() is got[0]
