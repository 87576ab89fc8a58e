"""``serq.cli.main`` called from a program gives it back its own SIGINT and SIGTERM handlers."""

from __future__ import annotations

import signal

import pytest
import serq.cli


def test_main_gives_back_the_callers_handlers():
    def mine(signum, frame):  # pragma: no cover - never delivered
        pass

    old = {sig: signal.signal(sig, mine) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as e:
            serq.cli.main(["--version"])
        assert e.value.code == 0
        assert signal.getsignal(signal.SIGINT) is mine
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def test_main_gives_back_pythons_defaults_in_the_command():
    old = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with pytest.raises(SystemExit):
            serq.cli.main(["--version"])
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
