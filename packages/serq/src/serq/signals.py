"""SIGINT and SIGTERM for the ``serq`` command: a run stops with its partial report, start-up stops quietly.

:func:`install` (the first thing ``serq`` does) makes both signals raise :class:`KeyboardInterrupt` (SIGINT)
or :class:`Terminated`, a subclass (SIGTERM, what ``timeout`` and batch schedulers send), so a simulation
catches either the same way and ends with the partial report. Only the first signal raises: a second one,
however soon after, is ignored, so it cannot interrupt the writing of the partial report the first one
asked for. Inside :func:`deferred` (the writing of a report) a first signal is only recorded;
:func:`exit_status` then says what the command should exit with (130 for SIGINT, 143 for SIGTERM).

Python swallows an exception raised where nothing can receive it (a weak reference's callback, such as the
import system's module locks, a ``__del__``, a collector callback): it prints "Exception ignored in …" and
goes on. A signal handled there would be lost and the command would run on. So :func:`install` also sets a
``sys.unraisablehook`` that takes such a lost interrupt of ours quietly (no traceback) and has the signal
delivered again from a helper thread every 10 ms until its exception is raised where it can be received.

Nothing here is installed by importing a part: the Python API keeps Python's own Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time

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
#: the first signal's exception was swallowed (see the module's docstring): it is being delivered again
_lost = False
#: inside our unraisable hook, where a raise would be swallowed as well
_in_hook = False
_previous_hook = None


def _on_signal(signum, frame) -> None:
    global _received, _lost
    if _received is not None:
        if not _lost or _in_hook:
            return  # a repeated signal: the first one's report is being made
        signum = _received  # the first signal again: its exception was lost
        _lost = False
    _received = signum
    if _defer:
        return
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _unraisable(unraisable) -> None:
    """``sys.unraisablehook`` while installed: our interrupt swallowed somewhere is delivered again."""
    global _lost, _in_hook
    if (_received is None or _lost or unraisable.exc_type is None
            or not issubclass(unraisable.exc_type, KeyboardInterrupt)):
        (_previous_hook or sys.__unraisablehook__)(unraisable)
        return
    _in_hook = True
    try:
        _lost = True
        threading.Thread(target=_deliver_again, args=(_received,), name="serq-signal", daemon=True).start()
    finally:
        _in_hook = False


def _deliver_again(signum: int) -> None:
    # the handler runs in the main thread; raised from here, the signal only marks it pending
    while _lost:
        time.sleep(0.01)
        if _lost:
            signal.raise_signal(signum)


def install() -> None:
    """Handle SIGINT and SIGTERM as above (in the main thread only; elsewhere nothing changes)."""
    global _installed, _received, _lost, _previous_hook
    if threading.current_thread() is not threading.main_thread():
        return
    _received = None
    _lost = False
    for sig in (signal.SIGINT, signal.SIGTERM):
        prev = signal.signal(sig, _on_signal)
        if not _installed:
            _previous[sig] = prev
    if not _installed:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable
    _installed = True


def uninstall() -> None:
    """Give both signals back the handlers :func:`install` found (Python's defaults in the ``serq``
    command; a program calling :func:`serq.cli.main` keeps its own), unless one was received: the command
    is then on its way out with that signal's status, and a repeated signal stays ignored (with Python's
    default it would kill the process, and the status would be the signal's, not 130/143)."""
    global _installed, _lost, _previous_hook
    if not _installed or threading.current_thread() is not threading.main_thread():
        return
    _lost = False
    if sys.unraisablehook is _unraisable:
        sys.unraisablehook = _previous_hook or sys.__unraisablehook__
    _previous_hook = None
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
