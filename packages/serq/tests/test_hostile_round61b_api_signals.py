"""serq.files.renamed_together from the Python API: a Ctrl-C (KeyboardInterrupt) between the renames that put a
set of files in place (a dump, a set of record tables, a sweep's table and points table) left part of the set
renamed, a mix of two writes; the serq command holds signals there (serq.signals.deferred), the API did not.
The renames now hold SIGINT, SIGTERM and SIGHUP in the main thread (serq.signals.held): the signal comes once
every file is in place, as it would have (the KeyboardInterrupt raised then, a program's own handler called
then)."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from serq import files, signals

NAMES = ("a.csv", "b.csv", "c.csv")


@pytest.fixture
def earlier(tmp_path):
    for n in NAMES:
        (tmp_path / n).write_text("earlier\n")
    return tmp_path


@pytest.fixture
def signal_at_first_rename(monkeypatch):
    """os.replace sends the process SIGINT (or the signal asked) as the first file is renamed."""
    real = os.replace
    sent = []

    def replace(src, dst, *a, **k):
        real(src, dst, *a, **k)
        if not sent:
            sent.append(dst)
            os.kill(os.getpid(), sent_signal[0])

    sent_signal = [signal.SIGINT]
    monkeypatch.setattr(files.os, "replace", replace)
    return sent_signal


def _write_set(folder):
    with files.renamed_together():
        for n in NAMES:
            files.write_atomic(folder / n, "new\n")


def _contents(folder):
    return {n: (folder / n).read_text() for n in NAMES}


def test_ctrl_c_between_the_renames_comes_once_all_are_in_place(earlier, signal_at_first_rename):
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # (Python's own Ctrl-C)
    try:
        with pytest.raises(KeyboardInterrupt):
            _write_set(earlier)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert _contents(earlier) == dict.fromkeys(NAMES, "new\n")  # (it was a.csv new, b.csv and c.csv earlier)
    assert sorted(p.name for p in earlier.iterdir()) == sorted(NAMES)  # no temporary file left
    assert signal.getsignal(signal.SIGINT) is previous


def test_a_programs_own_handler_is_called_once_after_the_renames(earlier, signal_at_first_rename):
    signal_at_first_rename[0] = signal.SIGTERM
    seen = []

    def handler(signum, frame):
        seen.append((signum, _contents(earlier)))

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        _write_set(earlier)
        assert signal.getsignal(signal.SIGTERM) is handler  # (given back)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [(signal.SIGTERM, dict.fromkeys(NAMES, "new\n"))]


def test_an_ignored_signal_stays_ignored_and_other_threads_are_left_alone(earlier):
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals.held():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
    handlers = {s: signal.getsignal(s) for s in signals.HANDLED}
    out = []
    t = threading.Thread(target=lambda: (_write_set(earlier), out.append({s: signal.getsignal(s)
                                                                           for s in signals.HANDLED})))
    t.start()
    t.join()
    assert out == [handlers] and _contents(earlier) == dict.fromkeys(NAMES, "new\n")
