"""The cache's warnings (a folder not used) are written once per process even when two threads find the
folder unusable at the same moment: the look-up of the warning's key and its add are one step."""

from __future__ import annotations

import threading

import pytest
from serq_frontend import cache


class _Pacing(set):
    """A set whose first look-up waits (at most 1 s) for a second look-up to begin: the order in which two
    threads that look up and then add would both find the key absent."""

    def __init__(self) -> None:
        super().__init__()
        self.first = True
        self.second_in = threading.Event()

    def __contains__(self, key: object) -> bool:
        if self.first:
            self.first = False
            found = super().__contains__(key)
            self.second_in.wait(1.0)  # with the step atomic, the second thread waits for this one instead
            return found
        self.second_in.set()
        return super().__contains__(key)


@pytest.mark.timeout(30)
def test_two_threads_warn_once_for_one_key(monkeypatch, capsys):
    monkeypatch.setattr(cache, "_warned", _Pacing())
    a = threading.Thread(target=cache._warn, args=("k", "not using the cache folder /x: reasons"))
    b = threading.Thread(target=cache._warn, args=("k", "not using the cache folder /x: reasons"))
    a.start()
    while cache._warned.first:  # A is in its look-up before B begins
        threading.Event().wait(0.001)
    b.start()
    a.join(10)
    b.join(10)
    err = capsys.readouterr().err
    assert err.count("serq: warning: not using the cache folder /x: reasons\n") == 1, err
