"""SIGINT and SIGTERM for the ``serq`` command: a run stops with its partial report, start-up stops quietly.

:func:`install` (the first thing ``serq`` does) makes both signals raise :class:`KeyboardInterrupt` (SIGINT)
or :class:`Terminated`, a subclass (SIGTERM, what ``timeout`` and batch schedulers send), so a simulation
catches either the same way and ends with the partial report. Only the first signal raises: a second one,
however soon after, is ignored, so it cannot interrupt the writing of the partial report the first one
asked for. Inside :func:`deferred` (the writing of a report) a first signal is only recorded;
:func:`exit_status` then says what the command should exit with (130 for SIGINT, 143 for SIGTERM).

Nothing here is installed by importing a part: the Python API keeps Python's own Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
import threading

#: Exit status of a command stopped by a signal: 128 + the signal's number, as a shell reports it.
EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt (``reason`` names it in a partial report)."""

    reason = "sigterm"


_received: int | None = None
_defer = 0
_installed = False
#: the handlers :func:`install` replaced, given back by :func:`uninstall`
_previous: dict[int, object] = {}


def _on_signal(signum, frame) -> None:
    global _received
    if _received is not None:
        return  # a repeated signal: the first one's report is being made
    _received = signum
    if _defer:
        return
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def install() -> None:
    """Handle SIGINT and SIGTERM as above (in the main thread only; elsewhere nothing changes)."""
    global _installed, _received
    if threading.current_thread() is not threading.main_thread():
        return
    _received = None
    for sig in (signal.SIGINT, signal.SIGTERM):
        prev = signal.signal(sig, _on_signal)
        if not _installed:
            _previous[sig] = prev
    _installed = True


def uninstall() -> None:
    """Give both signals back the handlers :func:`install` found (Python's defaults in the ``serq``
    command; a program calling :func:`serq.cli.main` keeps its own), unless one was received: the command
    is then on its way out with that signal's status, and a repeated signal stays ignored (with Python's
    default it would kill the process, and the status would be the signal's, not 130/143)."""
    global _installed
    if not _installed or threading.current_thread() is not threading.main_thread():
        return
    if _received is not None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
    else:
        for sig in (signal.SIGINT, signal.SIGTERM):
            prev = _previous.get(sig)
            signal.signal(sig, prev if prev is not None else
                          signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    _previous.clear()
    _installed = False


def received() -> int | None:
    """The first SIGINT or SIGTERM received since :func:`install`, or ``None``."""
    return _received


def exit_status() -> int | None:
    """130 or 143 when a signal was received, else ``None``."""
    return None if _received is None else EXIT_STATUS.get(_received, 128 + int(_received))


@contextlib.contextmanager
def deferred():
    """A first signal inside is recorded (see :func:`received`), not raised."""
    global _defer
    _defer += 1
    try:
        yield
    finally:
        _defer -= 1
