"""SIGINT, SIGTERM and SIGHUP for the ``serq`` command: a run stops with its partial report, start-up stops
quietly.

:func:`install` (the first thing ``serq`` does) makes these signals raise :class:`KeyboardInterrupt` (SIGINT)
or :class:`Terminated`, a subclass (SIGTERM, what ``timeout`` and batch schedulers send), or
:class:`HungUp`, a subclass of that (SIGHUP, where the platform has it: the terminal the command ran in was
closed, or its ssh connection dropped), so a simulation catches any of them the same way and ends with the
partial report. Before, SIGHUP kept Python's default and killed the process where it stood: a run whose
terminal was closed lost its report, and a sweep its table (its journal stayed). Inside :func:`deferred`
(the writing of a report) a first signal is only recorded; :func:`exit_status` then says what the command
should exit with (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP). A SIGHUP ignored when the command began
(``nohup``) stays ignored, as an ignored SIGINT or SIGTERM does.

A signal is *pending* from the moment it is received until the code that makes the stop it asks for
acknowledges it (:func:`acknowledge`): the command's top level, a run that caught it
(``Simulation.stopped``, both tiers), a sweep ending its runs, a command that consults it after writing its
report. Once it is acknowledged a repeated signal is ignored, so it cannot interrupt the partial report
the first one asked for.

Python runs a handler at the next boundary between bytecodes, which may be inside Python code that C code
called and whose exception it then clears: msgspec hashing the ``typing`` unions of a type it reads (as
``serq_ir.codec`` makes its decoder, in start-up), ``PyDict_GetItem`` comparing keys, a ``__del__``, a
weak reference's callback (the import system's module locks). The interrupt is then gone, often without a
trace, and the command would run on (a run whose horizon is far ends never). So the exception raised for a
pending signal is watched: a helper thread, started by the first raise and ended by the acknowledgement,
looks at it every 10 ms, and once nothing but this module holds it any more (it was dropped: it is not
being raised, handled or kept) it delivers the signal again to the main thread, whose handler raises a new
one, until one reaches code that acknowledges it. An exception that something keeps without acting on it
(stored away, or in a reference cycle) counts as dropped after half a second, unless the main thread is
handling it then (an ``except`` or ``finally`` clause on its way, such as a sweep ending its workers). The
same signal sent again while one is pending raises at once if the first one's exception was dropped.
Python 3.11 turns an exception raised in ``__set_name__`` into a ``RuntimeError`` whose cause it is: the
command's top level ends with the signal's line and status whenever a signal is pending
(:func:`pending`), whatever exception, or none, ended the command. Nothing of this costs anything before
a signal: the thread starts with the first one, and the simulator's loops check nothing for it.

An interrupt of ours that Python reports as unraisable (a ``__del__``, a callback) is taken quietly by the
``sys.unraisablehook`` :func:`install` sets: no "Exception ignored" and traceback.

Nothing here is installed by importing a part: the Python API keeps Python's own Ctrl-C.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
import time

#: The signals the command handles: SIGHUP only where the platform has it (not Windows).
HANDLED: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())
#: Exit status of a command stopped by a signal: 128 + the signal's number, as a shell reports it.
EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
if hasattr(signal, "SIGHUP"):
    EXIT_STATUS[signal.SIGHUP] = 129
#: how often the exception raised for a pending signal is looked at (and the signal delivered again)
REDELIVER_EVERY = 0.01
#: how long something may keep that exception, not handling it, before it counts as dropped
KEPT_FOR = 0.5


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt (``reason`` names it in a partial report)."""

    reason = "sigterm"


class HungUp(Terminated):
    """SIGHUP (the terminal closed), raised as SIGTERM's :class:`Terminated` is: a run ends with its partial
    report, a sweep with the table of what finished (``reason`` names it in a partial report)."""

    reason = "sighup"


def _stop_for(signum: int | None) -> KeyboardInterrupt:
    """The exception that stops the command for ``signum``."""
    if signum == signal.SIGTERM:
        return Terminated()
    if signum is not None and signum == getattr(signal, "SIGHUP", None):
        return HungUp()
    return KeyboardInterrupt()


_received: int | None = None
_acknowledged = False
_defer = 0
#: :func:`uninstall` under way: a signal is only recorded
_closing = False
_installed = False
#: the handlers :func:`install` replaced, given back by :func:`uninstall`
_previous: dict[int, object] = {}
_previous_hook = None
#: the exception last raised for the pending signal, alone in a list (nothing else of ours refers to it, so
#: a count of its references says whether anything else still holds it), and when it was raised
_raised: list[BaseException] = []
_raised_at = 0.0
_main_thread = 0
#: counts :func:`install` and :func:`uninstall`: a watcher started before the last of them ends
_generation = 0
_watching = False


def _refs(box: list) -> int:
    return sys.getrefcount(box[0])


#: what :func:`_refs` says of an object that only its list holds
_ALONE = _refs([object()])


def _on_signal(signum, frame) -> None:
    global _received, _raised, _raised_at
    if _received is None:
        _received = signum
    elif _acknowledged or _on_its_way():
        return  # the stop is being made, or the exception raised for it is on its way there
    if _defer or _closing:
        return  # recorded only (see deferred)
    # a repeated signal raises the first one's exception: its status is the command's
    _raised = [_stop_for(_received)]
    _raised_at = time.monotonic()
    _watch()
    raise _raised[0]  # (from the list: no variable of this frame, which its traceback keeps, holds it)


def _on_its_way() -> bool:
    """The exception last raised for the pending signal is still held by something other than this module:
    raised on, handled, or kept for less than :data:`KEPT_FOR` seconds (longer while the main thread is
    handling it: a clean-up on its way)."""
    box = _raised
    if not box or _refs(box) <= _ALONE:
        return False
    return time.monotonic() - _raised_at < KEPT_FOR or _being_handled(box[0])


def _being_handled(exc: BaseException) -> bool:
    """``exc`` is the exception the main thread is handling (an ``except`` or ``finally`` clause runs), or
    the cause or context of that one, or of its own, and so on."""
    cur = sys._current_exceptions().get(_main_thread)
    if isinstance(cur, tuple):  # Python 3.11: (type, value, traceback)
        cur = cur[1]
    for _ in range(100):
        if cur is None:
            return False
        if cur is exc:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _watch() -> None:
    global _watching
    if _watching:
        return
    _watching = True
    try:
        # a bare thread (not threading's): starting it takes no lock that the main thread, which this
        # handler interrupted, may hold
        _thread.start_new_thread(_watcher, (_generation,))
    except RuntimeError:  # pragma: no cover - no thread can start (the interpreter is ending)
        _watching = False


def _watcher(generation: int) -> None:
    """Deliver the pending signal again whenever the exception raised for it was dropped, until it is
    acknowledged (or the handlers go)."""
    global _watching
    try:
        while True:
            time.sleep(REDELIVER_EVERY)
            if generation != _generation or _received is None or _acknowledged:
                break
            if (time.monotonic() - _raised_at < REDELIVER_EVERY or _defer or _closing or _on_its_way()):
                continue
            if hasattr(signal, "pthread_kill"):  # to the main thread: a call waiting there is interrupted
                signal.pthread_kill(_main_thread, _received)
            else:  # pragma: no cover - Windows
                signal.raise_signal(_received)
    except Exception:  # pragma: no cover - the interpreter is ending
        return
    if generation == _generation:
        _watching = False


def _unraisable(unraisable) -> None:
    """``sys.unraisablehook`` while installed: an interrupt of ours that Python could not raise is taken
    quietly (the watcher delivers the signal again once the exception is gone)."""
    if (_received is None or unraisable.exc_type is None
            or not issubclass(unraisable.exc_type, KeyboardInterrupt)):
        (_previous_hook or sys.__unraisablehook__)(unraisable)


def install() -> None:
    """Handle SIGINT, SIGTERM and SIGHUP as above (in the main thread only; elsewhere nothing changes)."""
    global _installed, _received, _acknowledged, _raised, _closing, _generation, _watching, _main_thread
    global _previous_hook
    if threading.current_thread() is not threading.main_thread():
        return
    _generation += 1
    _received = None
    _acknowledged = False
    _raised = []
    _closing = False
    _watching = False
    _main_thread = threading.get_ident()
    if not _installed:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable
    _installed = True
    for sig in HANDLED:
        if signal.getsignal(sig) is signal.SIG_IGN:
            # ignored when the command began (a script's background job, whose shell ignores SIGINT so that a
            # Ctrl-C at the terminal stops the job in front only; `trap '' TERM`): left so, as Python leaves an
            # ignored SIGINT, and given back so (uninstall)
            _previous.setdefault(sig, signal.SIG_IGN)
            continue
        prev = signal.signal(sig, _on_signal)
        if prev is _startup_handler():  # (the serq command's start-up's: Python's, once the command is done)
            prev = signal.default_int_handler
        _previous.setdefault(sig, prev)


def _startup_handler() -> object:
    """The SIGINT handler the ``serq`` package gives the command until :func:`install` (serq._startup_interrupt),
    or ``None`` when the package is not loaded."""
    serq = sys.modules.get("serq")
    return getattr(serq, "_startup_interrupt", None) if serq is not None else None


def uninstall(own_process: bool = True) -> None:
    """Give both signals back the handlers :func:`install` found (Python's defaults in the ``serq``
    command; a program calling :func:`serq.cli.main` keeps its own), unless one was received and the command
    is the process's own (``own_process``, serq.cli.entry): it is then on its way out with that signal's
    status, and a repeated signal stays ignored (with Python's default it would kill the process, and the
    status would be the signal's, not 130/143). A program that called :func:`serq.cli.main` and goes on gets
    its handlers back all the same: left ignored, its Ctrl-C and SIGTERM did nothing for the rest of its life,
    and every process it started after took them ignored too."""
    global _installed, _closing, _raised, _generation, _previous_hook
    if not _installed or threading.current_thread() is not threading.main_thread():
        return
    _closing = True
    _generation += 1  # the watcher ends
    _raised = []
    if sys.unraisablehook is _unraisable:
        sys.unraisablehook = _previous_hook or sys.__unraisablehook__
    _previous_hook = None
    if _received is not None and own_process:
        for sig in HANDLED:
            signal.signal(sig, signal.SIG_IGN)
    else:
        for sig in HANDLED:
            prev = _previous.get(sig)
            signal.signal(sig, prev if prev is not None else
                          signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    _previous.clear()
    _installed = False


def received() -> int | None:
    """The first SIGINT, SIGTERM or SIGHUP received since :func:`install`, or ``None``."""
    return _received


def pending() -> bool:
    """A signal was received and nothing has acknowledged it (:func:`acknowledge`) yet."""
    return _received is not None and not _acknowledged


def acknowledge() -> int | None:
    """Say that the stop the received signal asks for is being made here (the command's top level, a run's
    partial report, a sweep ending its runs): it is not delivered again, and a later signal is ignored.
    Returns :func:`exit_status` (``None`` when no signal was received: nothing changes)."""
    global _acknowledged, _raised
    if _received is not None:
        _acknowledged = True
        _raised = []
    return exit_status()


def interrupted() -> int:
    """End a command that a signal stopped: :func:`acknowledge` it, say so on stderr (``interrupted``,
    ``terminated`` for SIGTERM, ``hung up`` for SIGHUP) and return the exit status (130 when no signal was
    received: Ctrl-C as Python raised it)."""
    status = acknowledge() or 130
    sys.stderr.write(_SAID.get(status, "interrupted") + "\n")
    return status


#: what :func:`interrupted` says, by exit status
_SAID = {130: "interrupted", 143: "terminated", 129: "hung up"}


def stop_requested() -> KeyboardInterrupt | None:
    """The exception that stops the command for the signal received since :func:`install` (acknowledged or
    not: :class:`Terminated` for SIGTERM, :class:`HungUp` for SIGHUP, else ``KeyboardInterrupt``), or ``None``
    when none was. For code
    that waits inside :func:`deferred` for something that may never come (a write to a FIFO that no process
    reads, serq.files): it gives up and raises this rather than wait for ever."""
    if _received is None:
        return None
    return _stop_for(_received)


def run_stopped(reason: str | None) -> KeyboardInterrupt | None:
    """The exception that ends a command whose run a signal stopped, by the run's reason (its report's
    ``partial``, serq_sim.Report.partial): :class:`Terminated` for ``"sigterm"``, :class:`HungUp` for
    ``"sighup"``, ``KeyboardInterrupt`` for
    ``"interrupted"`` (Ctrl-C, SIGINT); ``None`` for any other reason (a bound's) or none. Code that runs a
    simulation and reads its report raises it, so that the command ends as any command the signal stopped
    (143, 130): a sweep's run (serq_sweep.worker) and ``serq vllm scenario``'s (serq_vllm.scenarios) had a rule
    each, and the sweep's raised ``KeyboardInterrupt`` for SIGTERM too."""
    if reason == "sighup":
        return HungUp()
    if reason == "sigterm":
        return Terminated()
    return KeyboardInterrupt() if reason == "interrupted" else None


def exit_status() -> int | None:
    """130, 143 or 129 when a signal was received (SIGINT, SIGTERM, SIGHUP), else ``None``."""
    return None if _received is None else EXIT_STATUS.get(_received, 128 + int(_received))


@contextlib.contextmanager
def undeferred():
    """Inside :func:`deferred`, a third party's code that may never return (a report format's, which renders the
    report to memory before anything is written): a signal raises there as it does outside, and the command
    stops with the plugin named (``serq: interrupted in …``), nothing written. Deferred, a format that looped
    for ever kept SIGINT and SIGTERM recorded only, and the command ran until it was killed (SIGKILL)."""
    global _defer
    held = _defer
    _defer = 0
    try:
        yield
    finally:
        _defer = held


@contextlib.contextmanager
def deferred():
    """A first signal inside is recorded (see :func:`received`), not raised; a pending one whose exception
    was dropped is not delivered again inside."""
    global _defer
    _defer += 1
    try:
        yield
    finally:
        _defer -= 1


@contextlib.contextmanager
def held():
    """Within, SIGINT, SIGTERM and SIGHUP wait until the block is done, then come as they would have: a few
    steps that must be made all or none (the renames that put a set of files in place, serq.files.
    renamed_together). In the ``serq`` command (:func:`install`) this is :func:`deferred`. Called from the
    Python API, where Python's own handlers are in place (Ctrl-C's ``KeyboardInterrupt``, a program's own), each
    of them that is not ``SIG_IGN`` is replaced for the block by one that only records the signal; at the end the
    handlers are put back and the first signal recorded is raised again (``signal.raise_signal``), so that
    Ctrl-C raises its ``KeyboardInterrupt`` once the block is done and a SIGTERM left at its default ends the
    process then. A ``KeyboardInterrupt`` between two renames left part of a set renamed. Only in the main
    thread, where Python runs its handlers (and alone may change them): a block in another thread is not
    interrupted by them."""
    if _installed:
        with deferred():
            yield
        return
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []

    def record(signum, frame) -> None:
        got.append(signum)

    previous: dict[int, object] = {}
    try:
        for sig in HANDLED:
            handler = signal.getsignal(sig)
            if handler is signal.SIG_IGN or handler is None:  # (ignored; or set outside Python: left alone)
                continue
            previous[sig] = handler  # (first: put back even if a signal comes as the next line runs)
            signal.signal(sig, record)
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if got:
            signal.raise_signal(got[0])
