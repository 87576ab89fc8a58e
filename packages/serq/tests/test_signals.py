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


def test_main_gives_back_the_unraisable_hook():
    import sys

    def mine(u):  # pragma: no cover - nothing unraisable here
        pass

    old = sys.unraisablehook
    sys.unraisablehook = mine
    try:
        with pytest.raises(SystemExit):
            serq.cli.main(["--version"])
        assert sys.unraisablehook is mine
    finally:
        sys.unraisablehook = old


# A signal handled inside a __del__ (or a weak reference's callback: the import system's module locks) raises
# where Python swallows the exception. The interrupt must still arrive, once, with no "Exception ignored".
_SWALLOWED = r"""
import signal, sys, time
from serq import signals

class Dropped:
    def __del__(self):
        signal.raise_signal(signal.SIG)   # the handler runs here: its exception is swallowed

signals.install()
try:
    Dropped()
    end = time.monotonic() + 20
    while time.monotonic() < end:
        sum(range(100))
    print("lost")
except KeyboardInterrupt as e:
    print("caught", type(e).__name__, signals.received() == signal.SIG)
signals.uninstall()
"""


@pytest.mark.parametrize("sig, name", [("SIGINT", "KeyboardInterrupt"), ("SIGTERM", "Terminated")])
def test_a_signal_whose_exception_python_swallows_still_interrupts(sig, name):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _SWALLOWED.replace("signal.SIG", f"signal.{sig}")],
                          capture_output=True, timeout=60)
    assert proc.stdout.decode().split() == ["caught", name, "True"], proc
    assert b"Exception ignored" not in proc.stderr and b"Traceback" not in proc.stderr, proc.stderr


def test_an_unraisable_error_that_is_not_ours_still_reaches_the_previous_hook():
    import subprocess
    import sys

    src = r"""
import sys
from serq import signals
seen = []
sys.unraisablehook = lambda u: seen.append(u.exc_type.__name__)
signals.install()
class Bad:
    def __del__(self):
        raise ValueError("x")
Bad()
signals.uninstall()
print(seen, sys.unraisablehook is not None)
"""
    proc = subprocess.run([sys.executable, "-c", src], capture_output=True, timeout=60)
    assert proc.stdout.decode().strip() == "['ValueError'] True", proc
