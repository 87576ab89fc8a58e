"""Where a sweep's runs run: this process, a local process pool, or a Dask distributed cluster.

An engine is a context manager with ``run(tasks)``, which yields ``(task, result)`` as runs finish (in any
order); a task is a tuple of :func:`serq_sweep.worker.run_task`'s arguments after an id. Leaving the
engine ends its workers; an interrupted ``run`` (Ctrl-C, SIGTERM: ``KeyboardInterrupt``) ends them at
once, so the caller keeps what had finished.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from serq.errors import UserError, clipped

from .worker import run_task

Task = tuple[Any, bytes, str, str, int, dict, bool]

#: the most worker processes a sweep starts (``--workers``): each is a Python interpreter with the simulator
#: imported, and ``--workers 100000`` forked until the machine gave out
MAX_WORKERS = 1024


#: the open files of this process a worker costs while the pool starts and runs (its sentinel, the pipes of
#: its start, a share of the pool's queues: about 2 under Linux's forkserver), and those kept spare
FILES_PER_WORKER = 3
SPARE_FILES = 16


def files_left() -> tuple[int, int] | None:
    """How many more files this process may open, and its limit (``ulimit -n``); None when there is no
    limit or it cannot be told."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return soft - len(os.listdir(folder)), soft
        except OSError:
            continue
    return None  # pragma: no cover


def _workers_that_fit(left: int) -> int:
    """How many workers the ``left`` files this process may still open let start (may be 0 or below)."""
    return (left - SPARE_FILES) // FILES_PER_WORKER


def _too_few_files(n: int, left: int, limit: int, given: Any = None) -> UserError:
    """``given`` names the count of workers (:func:`serq.loading.given_or_option`)."""
    from serq.loading import given_or_option

    given = given_or_option(given)
    fit = max(0, _workers_that_fit(left))
    instead = f"{given('workers', str(fit))} or fewer" if fit else f"{given('workers', '0')} (the runs in this process)"
    return UserError(f"{given('workers', str(n))}: {n} worker processes need about {n * FILES_PER_WORKER + SPARE_FILES} "
                     f"open files, and this process may open {max(left, 0)} more (its limit, ulimit -n, is "
                     f"{limit}): give {instead}, or raise the limit")


#: a sweep that starts more worker processes than this many times the machine's cores is warned (:func:`_crowded`)
CROWDED = 4


def _crowded(n: int, given: Any = None, whose: str = "a local pool") -> bool:
    """Warn (on stderr, once, before they start) of ``n`` worker processes that far exceed this machine's cores
    (more than :data:`CROWDED` times :func:`cores`); whether it did. ``serq sweep --workers 1024 --dask local``
    on 2 cores spent minutes starting its workers (each a Python process with the simulator loaded, some
    100 MB) without a word, to run no faster than 2: each run is one core's work. Warned, not capped: the
    count is the user's (a machine whose cores are shared out by a scheduler may count fewer than it runs
    on), and the sweep's table is the same for any count. ``given`` names the count
    (:func:`serq.loading.given_or_option`; ``--workers`` by default)."""
    have = cores()
    if n <= CROWDED * have:
        return False
    from serq.loading import given_or_option

    from .core import say

    named = given_or_option(given)("workers", str(n))
    say(f"warning: {named}: {whose} of {n} worker processes on this machine's {have} core(s) takes long to "
        f"start (a Python process each, some 100 MB) and runs no faster than {have} (a run is one core's work); "
        f"{given_or_option(given)('workers', str(have))} runs as fast")
    return True


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class InProcess:
    """Every run in this process, one after another (``workers=0``)."""

    name = "this process"

    def __init__(self, pm: Any = None):
        self.pm = pm

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, dict]]:
        for t in tasks:
            yield t, run_task(*t[1:], pm=self.pm)


@contextmanager
def _main_from_no_file():
    """While workers start: a main module read from no file (``python - < script.py``, a heredoc: its
    ``__file__`` is ``<stdin>``) is not one a worker can import, so it is not named to them, as ``python -c``'s
    is not. Each worker ran ``<stdin>`` as a path, failed (FileNotFoundError), and the sweep said the script
    lacked its ``__main__`` guard."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if (main is None or getattr(main, "__spec__", None) is not None or not isinstance(path, str)
            or os.path.isfile(path)):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


class LocalPool:
    """A pool of at most ``workers`` processes (forkserver: each starts from a clean interpreter with the
    simulator imported), fed one run at a time. The processes start with the first runs, no more of them
    than there are runs to run at once (a sweep of 3 runs under ``--workers 64`` starts 3), and more start
    (up to ``workers``) when a later batch (a capacity search's next round) has more runs."""

    def __init__(self, workers: int, *, chosen: bool = True, given: Any = None, plugins: Any = None):
        self.workers = workers
        self.plugins = plugins  # the installed plugins the runs use (serq.plugins.plugin_selection)
        self.chosen = chosen  # the user's count (--workers), not every core: fewer is an error, not a choice
        self.given = given  # how a message names that count (serq.loading.given_or_option)
        self.name = f"{workers} local worker{'s' if workers != 1 else ''}"
        self._pool = None
        self._size = 0
        self._pids: set[int] = set()
        self._probed = False
        self._crowd_said = False  # (a pool that grows for a later batch says it once: _crowded)
        #: the fork server's pid when the pool started (None: spawned workers), to tell it ended (_server_lost)
        self._server: int | None = None

    def __enter__(self):
        return self

    def _start(self, n: int) -> None:
        """Have a pool of at least ``n`` processes (``n`` at most ``workers``)."""
        if self._pool is not None and not self._whole():
            # a worker of the idle pool ended between batches (killed while it waited for its next run: it held
            # the lock of the queue of runs, and every worker after it waited for ever, the next batch of a
            # search with them): the pool is given up, as in a batch (_run_on), and another started
            pool, self._pool, self._size = self._pool, None, 0
            _end_behind(pool)
        if self._pool is not None and self._size >= n:
            return
        import multiprocessing as mp

        if self._pool is not None:  # idle between batches: replaced by a larger one
            pool, self._pool = self._pool, None
            _end_pool(pool, closing=True)
        if getattr(mp.current_process(), "_inheriting", False):
            # this process is a worker being started, whose start re-ran the top level of a script that runs
            # a sweep: it would start a sweep of its own (and its workers theirs)
            raise UserError(_UNGUARDED)
        # the workers' open files fit in this process's limit (ulimit -n: 256 on macOS): past it the pool's
        # start failed with OSError "Too many open files" (and the forkserver's EOFError), two tracebacks
        left = files_left()
        if left is not None and n * FILES_PER_WORKER + SPARE_FILES > left[0]:
            fit = _workers_that_fit(left[0])
            if self.chosen or fit < 1:
                raise _too_few_files(n, *left, self.given)
            self.workers = n = fit  # every core by default: as many as the limit lets start (the same table)
        # the memory guard's share divided among the n workers (SERQ_MEMORY_WORKERS, _worker_start): a share that
        # leaves each less than a run takes to begin is said once, here, before any worker runs (each refused it
        # for every run: a table of errors)
        from serq_sim.memguard import machine_share

        machine_share(runs=n)
        if not self._crowd_said:
            self._crowd_said = _crowded(n, self.given)
        methods = mp.get_all_start_methods()
        ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
        _start_tracker_deaf_to_hangup()
        if "forkserver" in methods:
            # (serq_sweep.server_ready last: the server, started ignoring SIGINT, forks processes that take it)
            ctx.set_forkserver_preload(["serq_sweep.worker", "serq_sim.engine", "serq_sim.fast",
                                        "serq_sweep.server_ready"])
            try:
                _start_forkserver_deaf_to_ctrl_c()
                self._server = _server_pid()
            except OSError:
                # the server listens on a Unix socket in the temporary folder, which cannot be made there: a
                # TMPDIR whose path is longer than such a socket's name may be ("AF_UNIX path too long", 107
                # bytes on Linux) was that traceback; the workers are spawned instead, as where there is no
                # fork server (the same runs, the same table)
                ctx = mp.get_context("spawn")
                self._server = None
        else:
            self._server = None
        from .worker import ignore_sigint

        self._started = ctx.SimpleQueue()
        with _main_from_no_file():
            if not self._probed:
                # one process started and ended first: a worker that cannot start (a script without the
                # __main__ guard re-runs its sweep in every worker as it starts) would be started again and
                # again by the pool, which never gives up, and the sweep would wait for ever
                probe = ctx.Process(target=ignore_sigint)
                with _signals_held():
                    probe.start()
                probe.join()
                if probe.exitcode != 0:
                    raise UserError(f"a sweep's worker process could not start (exit status {probe.exitcode}): "
                                    + _UNGUARDED)
                self._probed = True
            try:
                with _signals_held():
                    self._pool = ctx.Pool(n, initializer=_worker_start, initargs=(self._started, n))
            except OSError as e:
                if e.errno not in (errno.EMFILE, errno.ENFILE) or left is None:
                    raise
                raise _too_few_files(n, *(files_left() or left), self.given) from None
        _quiet_when_stopped(self._pool, self._server)
        self._size = n
        self._pids = {w.pid for w in list(self._pool._pool)}  # (the pool's workers as it started: _start, again)

    def _whole(self) -> bool:
        """Whether every worker the pool started is still there, alive (the pool starts another in place of one
        that ended, and drops the one that ended)."""
        workers = list(self._pool._pool)
        return {w.pid for w in workers} == self._pids and all(w.exitcode is None for w in workers)

    def __exit__(self, exc_type, exc, tb) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        _end_pool(pool, closing=exc_type is None)

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, dict]]:
        tasks = list(tasks)
        if not tasks:
            return
        left = set(range(len(tasks)))
        try:
            while left:
                self._start(min(self.workers, len(left)))
                if not (yield from self._run_on(tasks, left)):
                    # a worker ended holding a lock of the pool's queues: the pool can send nothing more. The
                    # runs not done run again on a new one (a run's result is its program's and seed's alone),
                    # while the old one is ended behind (its reader of results may wait for ever: _end_pool)
                    pool, self._pool, self._size = self._pool, None, 0
                    _end_behind(pool)
        except BaseException:
            pool, self._pool = self._pool, None
            if pool is not None:  # (None: the pool did not start; its error is the one to see)
                _end_pool(pool)
            raise

    def _run_on(self, tasks: list[Task], left: set[int]) -> Iterator[tuple[Task, dict]]:
        """Run the runs ``left`` (indexes of ``tasks``) on the pool, yielding each run and its result as it
        comes and taking it out of ``left``. ``False`` when the pool stopped sending results because a
        worker ended holding the lock of one of its queues (:func:`_lock_taken`): the runs still in
        ``left`` have no result yet; else ``True``, every run done."""
        import multiprocessing as mp

        pool, started = self._pool, self._started
        while not started.empty():  # (the last batch's)
            started.get()
        # a worker that ends inside a run (os._exit in a plugin's code, the kernel's OOM killer) takes the run
        # with it: the pool starts another worker and never hands the run back, so the sweep waited for ever.
        # Each worker says which run it takes; a run whose worker is gone is that run's error
        running: dict[int, int] = {}  # a worker's pid -> the run it took last
        workers: dict[int, Any] = {w.pid: w for w in list(pool._pool)}  # pid -> process, every worker seen
        suspect: set[int] = set()
        order = sorted(left)
        results = pool.imap_unordered(_indexed, [(i, tasks[i], self.plugins) for i in order], chunksize=1)
        taken: set[int] = set()  # the runs a worker said it took
        lost = False
        held = 0  # the polls in a row, since a worker ended, that found a lock of the queues taken
        while left:
            try:
                i, result = results.next(timeout=_POLL)
            except mp.TimeoutError:
                if _server_lost(self._server):
                    # the fork server ended (killed: kill -9, the OOM killer): the pool reads each worker's end
                    # from it, so every worker looked ended (exit status 255) while it ran on; every run any of
                    # them took was that run's error ("ended without its result"), the pool's thread that starts
                    # workers printed an EOFError traceback, and the workers ran their runs on unseen. They are
                    # ended, and the runs not done run again on a new pool (a new server): the same rows
                    _end_orphans(workers)
                    return False
                while not started.empty():
                    i, pid = started.get()
                    running[pid] = i
                    taken.add(i)
                alive = set()
                for w in list(pool._pool):  # (the pool drops a worker that ended, and starts another)
                    workers[w.pid] = w
                    if w.exitcode is None:
                        alive.add(w.pid)
                gone = {i: pid for pid, i in running.items() if i in left and pid not in alive}
                # seen gone twice: a result sent just before its worker ended has had a poll's time to come
                for i in sorted(gone.keys() & suspect):
                    left.discard(i)
                    lost = True
                    w = workers.get(gone[i])
                    yield tasks[i], _died(tasks[i], None if w is None else w.exitcode)
                suspect = set(gone)
                # a worker that ended (killed: kill -9, the OOM killer) while it sent a result, or said which
                # run it took, took the lock of that queue with it: every other worker waits for it for ever,
                # and the pool's reader of results for the rest of the result cut short. The sweep waited
                # for ever for the runs left. Such a lock stays taken: taken at every poll for
                # _STUCK_POLLS polls in a row after a worker ended, the pool is given up
                if left and (lost or any(w.exitcode not in (None, 0) for w in workers.values())):
                    held = held + 1 if _lock_taken(pool, started, len(taken) < len(order)) else 0
                    if held >= _STUCK_POLLS:
                        return False
                continue
            held = 0
            if i in left:
                left.discard(i)
                yield tasks[i], result
            if len(left) % 64 == 0:  # the workers' notes read as they come: a full pipe would hold them up
                while not started.empty():
                    j, pid = started.get()
                    running[pid] = j
                    taken.add(j)
        if lost:  # the pool still waits for the lost runs: it is ended, and a later batch starts another
            self._pool, self._size = None, 0
            _end_pool(pool)
        return True


def _server_pid() -> int | None:
    """The pid of multiprocessing's fork server that this process started, or None."""
    from multiprocessing import forkserver

    return getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)


def _server_lost(started: int | None) -> bool:
    """Whether the fork server ``started`` (its pid when a pool started with it; None: no server) has ended: it
    is not there, or another one is (the pool's thread that starts workers in place of ended ones starts a
    new server when it finds the old one gone, and new workers from it, so that the pool went on)."""
    if started is None:
        return False
    from multiprocessing import forkserver

    now = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    return now != started or _server_gone(started)


def _server_gone(pid: int) -> bool:
    """Whether the fork server ``pid``, a child of this process, has ended (it is not waited for here: the next
    ``forkserver.ensure_running`` reaps it and starts another)."""
    if not hasattr(os, "waitid") or not hasattr(os, "WNOWAIT"):
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # (reaped already: no server there)
        return True
    except OSError:
        return False


def _end_orphans(workers: dict[int, Any]) -> None:
    """End the worker processes ``workers`` (pid -> process) of a pool whose fork server ended: their parent,
    the server, is gone, and the pool, which reads their end from it, takes them all for ended (exit status
    255), so its ending sends them nothing. Each is ended by its pid (SIGKILL: its runs run again), once, and
    where the system shows a process's command line only a process the fork server forked (a worker that
    ended long before may have left its pid to another process)."""
    import signal

    for pid, w in workers.items():
        if getattr(w, "_serq_ended", False):
            continue
        w._serq_ended = True
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"multiprocessing.forkserver" not in f.read():
                    continue
        except FileNotFoundError:
            if os.path.isdir("/proc/self"):
                continue  # (ended already)
        except OSError:
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # (ended already)
            pass


#: how many polls in a row (:data:`_POLL` seconds apart), after a worker of a local pool ended, a lock of the
#: pool's queues must be found taken before the pool is given up (:meth:`LocalPool._run_on`): a worker holds
#: one only while it sends a result (the sweep's reader takes the bytes as they come), says which run it
#: takes, or reads its next run
_STUCK_POLLS = 10


def _lock_taken(pool: Any, started: Any, untaken: bool) -> bool:
    """Whether a lock under which a worker of ``pool`` writes (the queue of results, the queue on which each
    says which run it takes) is taken now: not had within a moment (and given back at once when had). With
    ``untaken`` (runs no worker said it took), also the lock under which a worker reads its next run, which an
    idle worker holds while it waits for one, and a worker with runs to take only for a moment."""
    locks = [(getattr(pool, "_outqueue", None), "_wlock"), (started, "_wlock")]
    if untaken:
        locks.append((getattr(pool, "_inqueue", None), "_rlock"))
    for queue, name in locks:
        lock = getattr(queue, name, None)
        if lock is None:
            continue
        if not lock.acquire(timeout=0.05):
            return True
        lock.release()
    return False


#: the threads of the local pools that start their worker processes (``Pool._worker_handler``), each with the pid
#: of the fork server its pool started with (None: spawned workers), whose failure to start one is quiet once
#: the command received SIGINT or SIGTERM, or once that server is gone (:func:`_starter_failed`)
_STARTERS: Any = None
#: threading.excepthook before :func:`_quiet_when_stopped` put :func:`_starter_failed` in its place
_previous_hook: Any = None
#: how long (seconds) :func:`_starter_failed` waits for the cause of a pool's failure to start a worker to show:
#: the command's signal taken, or the fork server seen ended
_STARTER_GRACE = 2.0


def _quiet_when_stopped(pool: Any, server: int | None = None) -> None:
    """Take quietly the failure of ``pool``'s thread that starts worker processes in place of those that ended, when
    the command was sent SIGINT or SIGTERM, or when ``server`` (the fork server the pool started with) ended. A
    SIGTERM to the whole process group (``kill -TERM -PGID``, ``timeout``) ends the fork server with the workers;
    the thread, looking for ended workers every 0.1 s, could see them before the sweep's own process took the
    signal and ended the pool, and asked the fork server for new ones: its ``EOFError`` (or
    ``ConnectionRefusedError``) traceback, ``Exception in thread Thread-1 (_handle_workers)``, came above the
    sweep's ``terminated``. A fork server killed alone (``kill -9``, the OOM killer) gave the same traceback
    (the pool is given up and its runs run on a new one: :meth:`LocalPool._run_on`). Any other failure of that
    thread, and this one with neither cause, is told as before."""
    import threading
    import weakref

    global _STARTERS, _previous_hook
    starter = getattr(pool, "_worker_handler", None)
    if starter is None:
        return
    if _STARTERS is None:
        _STARTERS = weakref.WeakKeyDictionary()
    _STARTERS[starter] = server
    if threading.excepthook is not _starter_failed:
        _previous_hook, threading.excepthook = threading.excepthook, _starter_failed


def _starter_failed(args: Any) -> None:
    """threading.excepthook while a local pool runs (:func:`_quiet_when_stopped`): the failure of a pool's thread
    that starts workers to reach the fork server is quiet when the command received a signal or the pool's fork
    server ended. Each is waited for a moment (:data:`_STARTER_GRACE`): the thread may fail before the main
    thread runs the signal's handler, and before a killed server is seen ended. A server killed closes its
    socket as it exits, before the system shows it ended (a zombie): the thread's read of the new worker's pid
    met the end of the socket (``EOFError``) in that moment, the server looked alive, and the traceback was
    printed above the sweep's table (once under load)."""
    import threading
    import time

    if (_STARTERS is not None and args.thread in _STARTERS
            and isinstance(args.exc_value, (EOFError, OSError))):
        from serq import signals

        server = _STARTERS.get(args.thread)
        waited = time.monotonic() + _STARTER_GRACE
        while True:
            if signals.received() is not None or _server_lost(server):
                return
            if time.monotonic() >= waited:
                break
            time.sleep(0.01)
    (_previous_hook or threading.__excepthook__)(args)


#: how long (seconds) the ending of a sweep's local pool may take before the sweep looks for a lock of the
#: pool's queues that a worker took with it (:func:`_end_pool`); how long it then waits for the ending again
#: before it leaves it to itself
STUCK_AFTER = 2.0
GIVE_UP_AFTER = 10.0


def _end_pool(pool: Any, closing: bool = False) -> None:
    """End the local ``pool``: ``close`` it (every run done: each worker ends after its last) or ``terminate`` it
    (its workers ended at once), then ``join`` it. A worker process that ended while it held a lock of the
    pool's queues takes the lock with it: the task queue's read lock, which an idle worker holds all the while
    it waits for its next run, or the result queue's write lock, held while it sends a result. A signal to the
    whole process group (SIGTERM: ``kill -TERM -PGID``, ``timeout``, a batch scheduler's cancel) ends the
    workers wherever they are, and one sent to a worker alone (``kill -9 PID``, the kernel's OOM killer) the
    idle one; the pool's ending then waited on the lock for ever (Python's ``Pool.terminate`` takes the read
    lock and puts its sentinel under the write lock; the other workers wait on it, so ``join`` never saw them
    end): ``serq sweep --workers 2`` sent SIGTERM while one worker ran the last run and the other waited never
    ended, its table never written, and a sweep whose idle worker was killed waited for ever after its last
    run. So the ending runs in a thread of its own; when it has not ended after :data:`STUCK_AFTER` seconds,
    the workers still alive are ended (SIGKILL: the runs are all done or given up, as the ending would end
    them), and each lock that is still taken once none of them is alive is held by a process that is gone and
    is given back. An ending that still has not ended :data:`GIVE_UP_AFTER` seconds later (a worker that ended
    in the middle of a result's bytes leaves the pool's reader of results waiting for the rest) is left to
    itself in its thread: the sweep goes on to its table and its exit."""
    import threading

    failed: list[BaseException] = []

    def end() -> None:
        try:
            if closing:
                pool.close()
            else:
                pool.terminate()
            pool.join()
        except BaseException as e:  # (raised again in the caller's thread)
            failed.append(e)

    ending = threading.Thread(target=end, name="serq-sweep-pool-end", daemon=True)
    ending.start()
    ending.join(STUCK_AFTER)
    if ending.is_alive():
        _give_back_locks(pool)
        ending.join(GIVE_UP_AFTER)
    if failed:
        raise failed[0]


def _end_behind(pool: Any) -> None:
    """End ``pool`` as :func:`_end_pool` does, in a thread of its own, without waiting for it: a pool given up
    because a worker ended holding a lock of its queues (:meth:`LocalPool._run_on`), whose ending takes the
    longest (its reader of results never ends). Its workers are ended within :data:`STUCK_AFTER` seconds, or
    at the process's exit, whichever comes first."""
    import threading

    def end() -> None:
        try:
            _end_pool(pool)
        except BaseException:  # (nothing of it is waited for: its runs run again on another pool)
            pass

    threading.Thread(target=end, name="serq-sweep-pool-given-up", daemon=True).start()


def _give_back_locks(pool: Any) -> None:
    """End the workers of ``pool`` still alive and give back each lock of its queues that is still taken when
    none of them is (:func:`_end_pool`). Nothing is given back while a worker cannot be seen to have ended."""
    import contextlib

    workers = list(getattr(pool, "_pool", None) or ())
    for w in workers:
        with contextlib.suppress(Exception):  # (one that ended meanwhile)
            if w.exitcode is None:
                w.kill()
    for w in workers:
        with contextlib.suppress(Exception):
            w.join(1.0)
    if any(w.exitcode is None for w in workers):
        return
    for queue, name in ((getattr(pool, "_inqueue", None), "_rlock"), (getattr(pool, "_outqueue", None), "_wlock")):
        lock = getattr(queue, name, None)
        if lock is None:
            continue
        # (the pool's own threads hold the write lock only while they put a sentinel)
        if lock.acquire(timeout=0.2):
            lock.release()
        else:
            with contextlib.suppress(ValueError):  # (given back meanwhile)
                lock.release()


#: what a worker that re-runs a sweep as it starts is told (and the sweep that started it)
_UNGUARDED = ("a script that runs a sweep on worker processes calls it under `if __name__ == \"__main__\":` "
              "(each worker imports the script as it starts, running what is not under it), or runs it "
              "with workers=0")


_UNGUARDED_DASK = ("a script that runs a sweep on a LocalCluster calls it under `if __name__ == \"__main__\":` "
                   "(each worker imports the script as it starts, running what is not under it)")
#: the other cause of a LocalCluster's worker that does not start, and the only one from the command line
_DASK_SETTINGS = ("a worker reads Dask's configuration as it starts (the DASK_* variables, the YAML files of "
                  "DASK_CONFIG, ~/.config/dask and /etc/dask), and a setting it cannot use ends it (a preload "
                  "that does not import, a memory limit that is no size)")


#: how often (seconds) a sweep waiting for its runs looks for a worker that ended inside one
_POLL = 0.5

_started_queue: Any = None


def _environ_back(before: dict[str, str | None]) -> dict[str, str | None]:
    """Put back the variables of this process's environment that differ from ``before`` (name to value, ``None``
    for unset), and return those, as they were: what Dask's nanny set here to spawn its workers
    (``distributed.nanny.pre-spawn-environ``, its own ``PYTHONHASHSEED`` and ``__DASK_PARENT_PID``) is theirs,
    not this process's."""
    back = {k: v for k, v in before.items() if os.environ.get(k) != v}
    for k, v in back.items():
        if v is None:
            del os.environ[k]
        else:
            os.environ[k] = v
    return back


@contextmanager
def _signals_held() -> Iterator[None]:
    """Within, SIGINT, SIGTERM and SIGHUP wait (blocked) until the block is done, then come as they would have: while a
    worker process is started. multiprocessing starts one by handing the fork server its pipes over a socket,
    and a Ctrl-C that raised ``KeyboardInterrupt`` in the middle of that left the server a message cut short:
    the server ended (its ``EOFError`` traceback on stderr), and the next sweep of the process, called at once,
    failed with ``ConnectionRefusedError`` until the dying server was gone. Blocked in this thread only (Python
    runs its handlers in the main thread); a system without ``pthread_sigmask`` holds nothing."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from serq.signals import HANDLED

    held = signal.pthread_sigmask(signal.SIG_BLOCK, set(HANDLED))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _start_tracker_deaf_to_hangup() -> None:
    """Start multiprocessing's resource tracker, when none runs, with SIGHUP ignored. The tracker (which the fork
    server, a spawned worker and the pool's queues report their semaphores to) ignores SIGINT and SIGTERM, not
    SIGHUP: a closed terminal sends SIGHUP to the whole process group, which killed it while the sweep made its
    table, and multiprocessing started another, which printed ``resource_tracker: process died unexpectedly``
    and a ``KeyError`` traceback for every semaphore the sweep's ending unregistered, under its ``hung up``.
    Ignored when it starts, SIGHUP stays ignored through the fork and the exec; the tracker still ends when
    the last process that writes to it does. Only the main thread may change a handler: a sweep started in
    another thread starts the tracker as before."""
    import signal
    import threading
    from multiprocessing import resource_tracker

    hup = getattr(signal, "SIGHUP", None)
    if hup is None or threading.current_thread() is not threading.main_thread():
        return  # (Windows, where nothing hangs up, has no tracker either)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {hup})
    try:
        handler = signal.signal(hup, signal.SIG_IGN)
        try:
            resource_tracker.ensure_running()
        finally:
            signal.signal(hup, handler)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _start_forkserver_deaf_to_ctrl_c() -> None:
    """Start multiprocessing's fork server, when none runs, with SIGINT ignored. Ctrl-C at a terminal reaches
    the whole process group: the fork server ignores SIGINT once its loop begins, and a worker once its
    initializer has run, but the signal came while the server imported the modules it preloads (half a second)
    and printed its ``KeyboardInterrupt`` traceback under the sweep's ``interrupted`` (3 of 15 ``serq sweep
    --workers 2`` stopped at a random moment of their first 2.5 s). An ignored signal stays ignored through the
    fork and the exec, and Python leaves it so at start-up: the server runs its preload ignoring SIGINT, as it
    runs its loop; the last module it preloads (serq_sweep.server_ready) puts Python's handler back, which the
    processes it forks take, as they did. The sweep's own process ignores it only while it starts
    the server, with SIGINT blocked meanwhile, so that a Ctrl-C of that moment is taken just after, not lost.
    Only the main thread may change a handler: a sweep started in another thread starts the server as before."""
    import signal
    import threading
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        forkserver.ensure_running()
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            forkserver.ensure_running()
        finally:
            signal.signal(signal.SIGINT, handler)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _worker_start(started: Any, workers: int = 1) -> None:
    """A pool worker's initializer: ``started`` takes ``(run, pid)`` as the worker takes each run; its runs
    divide the memory guard's share of the machine's available memory among the pool's ``workers``
    (:data:`serq_sim.memguard.WORKERS_VAR`): each of them reads the same free memory when its run begins."""
    global _started_queue
    from serq_sim.memguard import WORKERS_VAR

    from .worker import ignore_sigint

    ignore_sigint()
    os.environ[WORKERS_VAR] = str(workers)
    _started_queue = started
    _end_with_the_sweep(started)


def _end_with_the_sweep(started: Any) -> None:
    """End this worker as soon as the sweep's process is gone. Killed (SIGKILL: ``kill -9``, the kernel's OOM
    killer, which picks the process holding every result), the sweep left its workers to run their runs to
    the end, each at a core for as long as its run took (hours, for a long horizon), after which each printed
    two ``BrokenPipeError`` tracebacks to the terminal, sending its result to no one. The sweep's process
    holds the read end of ``started``'s pipe; the worker closes its own copy, which it never reads, and a
    thread of its own waits until no process holds that end (``poll`` of the write end says ``POLLERR``), then
    ends the worker. Where ``poll`` is not (Windows) nothing is watched."""
    import select
    import threading

    reader, writer = getattr(started, "_reader", None), getattr(started, "_writer", None)
    if reader is None or writer is None or not hasattr(select, "poll"):
        return
    reader.close()
    fd = writer.fileno()

    def watch() -> None:
        waiting = select.poll()
        waiting.register(fd, 0)  # (POLLERR and POLLHUP are said whatever the mask)
        while True:
            for _, event in waiting.poll():
                if event & select.POLLNVAL:  # (this worker closed it: it is ending)
                    return
                if event & (select.POLLERR | select.POLLHUP):
                    os._exit(1)

    threading.Thread(target=watch, name="serq-sweep-watch", daemon=True).start()


def _indexed(item: tuple[int, Task, Any]) -> tuple[int, dict]:
    i, t, plugins = item
    if _started_queue is not None:
        _started_queue.put((i, os.getpid()))
    return i, run_task(*t[1:], plugins=plugins)


def _died(task: Task, code: int | None, who: str = "worker process") -> dict:
    """The result of the run ``task`` whose worker process ended inside it (``code``: its exit status, when
    the pool had not dropped the process before it was seen)."""
    (point, seed, _key), file = task[0], task[3]
    how = "" if code is None else f" (killed by signal {-code})" if code < 0 else f" (exit status {code})"
    from .core import WORKER_ENDED

    return {"status": "error", "figures": {}, "wall": 0.0, "warnings": WORKER_ENDED,  # (a resume runs it again)
            "message": f"error: {file}: the {who} running point {point}, seed {seed} ended without its "
                       f"result{how}: something in the run (a plugin's code, a lack of memory) ended the process"}


#: the most bytes a scheduler file may have (Dask's holds an address, a type, an id and its workers' addresses)
MAX_SCHEDULER_FILE = 16 * 2**20


def import_distributed() -> Any:
    """Dask distributed, imported (None where it is not installed). Its first import reads Dask's configuration,
    the YAML files of ``DASK_CONFIG``, ``~/.config/dask`` and ``/etc/dask`` and the ``DASK_*`` variables: one
    it cannot read (a file that is no YAML mapping, ``DASK_CONFIG=/etc/passwd``; a YAML error in the user's
    ``~/.config/dask/dask.yaml``) ended ``serq sweep --dask local`` in Dask's traceback (``ValueError: A dask
    config file at '/etc/passwd' is malformed …``). It is one error naming it, the configuration being the
    user's; any other fault of the import is raised as it is."""
    try:
        import distributed
    except ImportError:
        return None
    except Exception as e:  # noqa: BLE001 - only a fault of Dask's reading of its configuration is said
        tb, config = e.__traceback__, os.path.join("dask", "config.py")
        while tb is not None and not tb.tb_frame.f_code.co_filename.endswith(config):
            tb = tb.tb_next
        if tb is None:
            raise
        from serq.errors import printable

        # (its YAML error's lines made one: the message is one line)
        raise UserError(f"--dask: Dask's configuration cannot be read: {printable(clipped(' '.join(str(e).split()), 400))} (Dask "
                        "reads the YAML files of DASK_CONFIG, ~/.config/dask and /etc/dask, and the DASK_* "
                        "variables, when it is first imported: mend or move the file)") from None
    return distributed


def _answers(address: str, where: str, seconds: float) -> None:
    """Refuse, within ``seconds``, an address at which no Dask scheduler answers: one that takes the connection
    and says nothing, as an HTTP server does (the dashboard's port, 8787, given for the scheduler's, 8786),
    made ``distributed.Client`` wait for ever, its timeout being the connection's alone and not its handshake's
    (the sweep sat silent). Dask's own ``connect``, handshake and all, is given ``seconds`` in a thread of its
    own (a caller's running event loop is not this one's); an address it cannot reach at all is the same
    error as the client's (``cannot reach the scheduler: …``), and any other failure is left to the client,
    which words it as before (``tls://`` without TLS settings)."""
    import asyncio
    import threading

    from distributed.comm import connect

    got: list[BaseException | None] = []
    # (connect's own deadline, seconds, ends its tries at an address that refuses them, its OSError the
    # client's words; the handshake of one that took the connection is given a little longer in all)
    bound = seconds + min(seconds, 2.0)

    async def handshake() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=seconds), bound)
        await comm.close()

    def probe() -> None:
        try:
            asyncio.run(handshake())
        except BaseException as e:  # noqa: BLE001 - told apart below
            got.append(e)
        else:
            got.append(None)

    thread = threading.Thread(target=probe, name="serq-dask-probe", daemon=True)
    thread.start()
    thread.join(bound + 5.0)  # (wait_for ends it by then: the thread is a daemon in any case)
    e = got[0] if got else TimeoutError()
    if isinstance(e, TimeoutError):  # (asyncio's is the builtin's)
        why = (f"nothing answered as a Dask scheduler at {clipped(address)} in {bound:g} s (a scheduler listens "
               "on port 8786 by default; 8787 is its dashboard's)")
    elif isinstance(e, OSError):
        why = str(e)
    else:
        return
    raise UserError(f"--dask {clipped(where)}: cannot reach the scheduler: {clipped(why, 240)}") from None


def scheduler_address(path: str) -> str:
    """The address of the scheduler that the scheduler file ``path`` names (a name ending ``.json``, what
    ``dask scheduler --scheduler-file PATH`` writes: a JSON object whose ``address`` is ``tcp://HOST:PORT``),
    read here as every input serQ is given is read (:func:`serq.files.read_input`). Dask read it itself:
    a FIFO there was opened and waited on for ever, and a file of other JSON (``{}``, ``[]``, an empty one,
    an ``address`` that is no text) was a traceback of Dask's (``AssertionError``, ``TypeError``)."""
    import json

    from serq.errors import printable
    from serq.files import not_utf8, read_input

    said = f"--dask {clipped(printable(str(path)))}"  # (a line break in the name split the message's line)
    try:
        data = read_input(path, limit=MAX_SCHEDULER_FILE, what="a scheduler file")
    except OSError as e:
        raise UserError(f"{said}: cannot read the scheduler file: {e.strerror or e}") from None
    try:
        cfg = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise UserError(f"{said}: the scheduler file is {not_utf8(data[e.start], data[:4], None)}") from None
    except (ValueError, RecursionError):
        got = "no JSON" if data.strip() else "nothing"
    else:
        address = cfg.get("address") if isinstance(cfg, dict) else None
        if isinstance(address, str) and address:
            return address
        kinds = {list: "a JSON array", str: "a JSON string", bool: "a JSON true or false", type(None): "null"}
        got = (kinds.get(type(cfg), "a JSON number") if not isinstance(cfg, dict) else
               "an object without an address" if "address" not in cfg else
               f"the address {clipped(printable(repr(address)))}")
    raise UserError(f"{said}: not a scheduler file (it holds {got}; a scheduler file is a JSON object whose "
                    '"address" is the scheduler\'s, "tcp://HOST:PORT", as dask scheduler --scheduler-file '
                    "writes it)")


def _ignoring_ctrl_c() -> dict[str, Any]:
    """Dask's configuration of worker preloads with :func:`serq_sweep.worker.dask_setup` added: the workers of a
    LocalCluster of ours ignore SIGINT, as the local pool's do (:func:`serq_sweep.worker.ignore_sigint`). Ctrl-C at
    a terminal reaches the whole process group; the sweep decides what happens (it keeps what finished and
    closes the cluster), and each worker ended in a ``KeyboardInterrupt`` that multiprocessing printed, traceback
    and all, under the sweep's ``interrupted``. The preloads configured already are kept, before it."""
    import dask

    preload = dask.config.get("distributed.worker.preload", default=None) or []
    preload = [preload] if isinstance(preload, str) else list(preload)
    argv = dask.config.get("distributed.worker.preload-argv", default=None) or []
    config: dict[str, Any] = {"distributed.worker.preload": [*preload, "serq_sweep.worker"]}
    if argv and isinstance(argv[0], list):  # one list of arguments a preload: ours takes none
        config["distributed.worker.preload-argv"] = [*argv, []]
    return config


def _scratch_folder() -> str | None:
    """A new temporary folder for a LocalCluster's scratch folders (Dask's ``temporary-directory``), or None
    when none can be made (then Dask's own choice, ``$TMPDIR/dask-scratch-space``)."""
    import tempfile

    try:
        return tempfile.mkdtemp(prefix="serq-dask-")
    except OSError:
        return None


class Dask:
    """A Dask distributed cluster: ``address`` (``tcp://host:8786``, a scheduler file's path), ``"local"``
    for a :class:`distributed.LocalCluster` of ``workers`` single-threaded processes started here, or a
    ``distributed.Client`` the caller made (left open)."""

    def __init__(self, where: Any, workers: int | None = None, plugins: Any = None, given: Any = None):
        self.where = where
        self.workers = workers
        self.given = given  # how a message names the count (serq.loading.given_or_option)
        self.plugins = plugins  # the installed plugins the runs use (serq.plugins.plugin_selection)
        self._client = self._cluster = None
        self._own = True
        self.name = "dask"
        #: the loggers quieted while a cluster of our own runs, with the levels to put back (_quiet_loggers)
        self._quiet: list | None = None
        #: the temporary folder a cluster of our own keeps its scratch folders in (:func:`_scratch_folder`)
        self._scratch: str | None = None
        #: the variables of this process's environment a cluster of our own set as it started, as they were
        #: before (:func:`_environ_back`: a worker it restarts sets them again)
        self._environ: dict[str, str | None] | None = None

    def __enter__(self):
        distributed = import_distributed()
        if distributed is None:
            raise UserError("--dask needs Dask distributed: pip install 'serq-sweep[dask]'")
        if isinstance(self.where, distributed.Client):
            self._client, self._own = self.where, False
        elif self.where == "local":
            # on this machine's loopback only, and no fixed port: a scheduler's HTTP server (its dashboard)
            # takes 8787 even with dashboard_address=None, so a second sweep at once warned and moved
            import multiprocessing as mp

            if getattr(mp.current_process(), "_inheriting", False):
                raise UserError(_UNGUARDED_DASK)  # a worker being started, re-running an unguarded script
            import dask
            from serq_sim.memguard import WORKERS_VAR, machine_share

            machine_share(runs=self.workers or cores())  # (as the local pool's: said once, before its workers)
            _crowded(self.workers or cores(), self.given, "--dask local's cluster")

            # its workers' processes started with Dask's own logging at CRITICAL, their restarts too (what
            # silence_logs quiets is the workers' running, not their start and end)
            # and the memory guard's share of this machine's available memory divided among them
            # (serq_sim.memguard.machine_share: each reads the same free memory when its run begins)
            # (asyncio's too: a task cut short by a worker's end reports itself, traceback and all, when
            # collected, in the process that held it: _collect_cut_tasks)
            quiet_workers = {"distributed.nanny.pre-spawn-environ.DASK_LOGGING__DISTRIBUTED": "critical",
                             "distributed.nanny.pre-spawn-environ.DASK_LOGGING__ASYNCIO": "critical",
                             f"distributed.nanny.pre-spawn-environ.{WORKERS_VAR}": str(self.workers or cores()),
                             **_ignoring_ctrl_c()}
            # Dask's nanny sets the variables of pre-spawn-environ in this process's own environment before it
            # spawns a worker, and takes a variable this process has over the configuration's: a sweep in a
            # Python session left SERQ_MEMORY_WORKERS=N behind (its later runs divided their memory share by N,
            # and a later cluster's workers took that N) and Dask's logging at CRITICAL; put back (_environ_back)
            before = dict(os.environ)
            os.environ.pop(WORKERS_VAR, None)
            # the scratch folders of its scheduler, nannies and workers in a temporary folder of ours, removed with
            # the cluster (__exit__): Dask made $TMPDIR/dask-scratch-space and left it, its two lock files in it,
            # after every sweep; a worker it restarts is given its nanny's folder, inside ours
            self._scratch = _scratch_folder()
            if self._scratch is not None:
                quiet_workers["temporary-directory"] = self._scratch
            from distributed.deploy.spec import SpecCluster

            _start_tracker_deaf_to_hangup()  # (its nannies spawn their workers: the tracker starts then)
            known = set(SpecCluster._instances)  # (the clusters there were before this one's start)
            try:
                with _main_from_no_file(), dask.config.set(quiet_workers):  # (its workers: processes started here)
                    # quiet, its workers' processes and, while it runs, the handlers Dask gives its loggers here
                    # (a record of distributed.client goes to them whatever the loggers' levels): a worker that
                    # ends inside a run is the run's error, which the sweep says itself; Dask puts back the
                    # handlers' levels when the cluster closes
                    self._cluster = distributed.LocalCluster(n_workers=self.workers or cores(),
                                                             threads_per_worker=1, processes=True,
                                                             host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                                             silence_logs=QUIET)
            except RuntimeError as e:  # "Nanny failed to start.": it was that traceback
                self._remove_scratch()
                # (from the command line its main module is serq's own, guarded: no script of the user's)
                why = _DASK_SETTINGS if self.given is None else f"{_UNGUARDED_DASK}; or {_DASK_SETTINGS}"
                raise UserError(f"dask local: a worker process of the LocalCluster could not start ({e}): "
                                + why) from None
            except Exception as e:  # noqa: BLE001 - a value of Dask's configuration the cluster's start cannot read
                self._abandon(set(SpecCluster._instances) - known)
                said = " ".join(f"{type(e).__name__}: {e}".split())  # (KeyError: 'Invalid time unit: abc. …')
                raise UserError(f"dask local: the LocalCluster could not start ({clipped(said, 400)}): a setting of "
                                "Dask's configuration (a DASK_* variable, a YAML file of DASK_CONFIG, "
                                "~/.config/dask or /etc/dask) it cannot use, most likely") from None
            except BaseException:  # Ctrl-C or SIGTERM while its workers start
                self._abandon(set(SpecCluster._instances) - known)
                raise
            finally:  # (what the cluster's start changed, as it was: put back again at its end)
                self._environ = _environ_back({k: before.get(k) for k in {*before, *os.environ}})
            try:
                self._client = distributed.Client(self._cluster)
            except BaseException:  # (Ctrl-C or SIGTERM as the client connects: the cluster torn down as at the end)
                self.__exit__(None, None, None)
                raise
            # and the loggers of the scheduler in this process and tornado's (tracebacks of the comms a worker's
            # end cuts short), as at the cluster's teardown, put back when it is torn down (__exit__)
            self._quiet = _quiet_loggers()
        else:
            where = str(self.where)
            address = scheduler_address(where) if where.endswith(".json") else where
            _answers(address, where, self.CONNECT_WAIT)
            try:
                self._client = distributed.Client(address, timeout=f"{self.CONNECT_WAIT:g}s")
            except Exception as e:  # noqa: BLE001 - what Dask makes of the user's address is the user's
                # (an address of 100 000 characters was quoted whole, and again in Dask's words; tls:// without
                # Dask's TLS settings, and ucx:// without its library, were TypeError tracebacks)
                why = str(e) if isinstance(e, (OSError, TimeoutError, ValueError)) else f"{type(e).__name__}: {e}"
                raise UserError(f"--dask {clipped(where)}: cannot reach the scheduler: {clipped(why, 240)}"
                                ) from None
            self._has_workers(where)
        self.name = f"dask ({self._client.scheduler.address})"
        self._scattered: dict[bytes, Any] = {}
        return self

    #: how long a scheduler's address is given to answer, its handshake included (_answers)
    CONNECT_WAIT = 10.0
    #: how long a scheduler is given to have a worker (Dask's scatter waited as long, then failed)
    WORKER_WAIT = 10.0

    def _has_workers(self, where: str) -> None:
        """Refuse, closing the client, a scheduler that has no worker within :data:`WORKER_WAIT` seconds: the
        first run's IR could go nowhere, and Dask's ``TimeoutError: No valid workers found`` was a traceback."""
        try:
            self._client.wait_for_workers(1, timeout=self.WORKER_WAIT)
        except TimeoutError:
            address = self._client.scheduler.address
            self._client.close()
            self._client = None
            raise UserError(f"--dask {clipped(where)}: the scheduler at {clipped(address)} has no worker (none joined "
                            f"in {self.WORKER_WAIT:g} s); start workers for it (dask worker {clipped(address)}), "
                            "or give --dask local") from None

    #: how often (seconds) a sweep waiting for Dask's results looks for them, and for the scheduler's workers
    _READY_POLL = 0.02
    _WORKER_POLL = 1.0

    def _watched(self, done: Any) -> Iterator[Any]:
        """The results of ``done`` (a ``distributed.as_completed``, futures added to it as they are sent again)
        as they come; a :class:`UserError` once the scheduler has had no worker for :data:`WORKER_WAIT` seconds
        while runs wait. Every worker of a scheduler of ours ended (killed, out of memory, no nanny to restart
        it) and none joined: Dask keeps the runs until one does, and the sweep waited for ever, saying
        nothing."""
        import time

        seen = time.monotonic()  # when the scheduler was last seen with a worker
        look = seen + self._WORKER_POLL
        while True:
            if done.has_ready():
                yield from done.next_batch(block=False)
                continue
            if done.is_empty():
                return
            now = time.monotonic()
            if now >= look:
                look = now + self._WORKER_POLL
                if self._client.nthreads():
                    seen = now
                elif now - seen >= self.WORKER_WAIT:
                    raise UserError(f"{self.name}: every worker of the scheduler ended, and none joined in "
                                    f"{self.WORKER_WAIT:g} s: {done.count()} run(s) wait for one (a sweep's --out keeps "
                                    "the runs that finished in its journal, for the sweep run again to "
                                    "resume); start workers for it, or give --dask local")
            time.sleep(self._READY_POLL)

    def __exit__(self, *exc) -> None:
        if self._own:
            # a cluster of our own torn down (after Ctrl-C or SIGTERM too): Dask's and tornado's loggers
            # report the callbacks its closing comms cut short, with tracebacks; none of it is the user's
            quiet = self._quiet or _quiet_loggers()
            try:
                if self._client is not None:
                    self._client.close()
                if self._cluster is not None:
                    self._cluster.close()
                _collect_cut_tasks()
            finally:
                self._quiet = None
                for lg, lv in quiet:
                    lg.setLevel(lv)
                if self._environ is not None:  # (a worker Dask restarted set them again)
                    _environ_back(self._environ)
                    self._environ = None
                self._remove_scratch()
        self._client = self._cluster = None

    def _abandon(self, started: set) -> None:
        """Close, quietly, the cluster whose start a signal cut short (``started``: the clusters made since, its
        own; the constructor raised, so no name holds it), and remove its scratch folder. Left to Dask's exit
        handler, its close met workers not started yet, an ``AssertionError: Status.init`` traceback on stderr
        after the sweep's ``terminated`` (or, at the loop's end, ``Task exception was never retrieved …
        RuntimeError: Nanny failed to start`` once a worker), and the scratch folder stayed in $TMPDIR."""
        import contextlib

        # Dask's, tornado's and asyncio's loggers are left quiet: the half-started cluster's nannies and tasks
        # go on ending after its close gives up (the assertion above), and their words came after the sweep's
        # own, up to the interpreter's exit (each worker 'was killed by signal 15', 'Task exception was never
        # retrieved'); the signal ends the sweep, and with the serq command the process
        _quiet_loggers()
        try:
            for cluster in started:
                with contextlib.suppress(BaseException):  # (half started: whatever its close says is not the user's)
                    cluster.close(timeout=5)
                with contextlib.suppress(BaseException):
                    type(cluster)._instances.discard(cluster)  # (no second close at the interpreter's exit)
            _collect_cut_tasks()
        finally:
            self._remove_scratch()

    def _remove_scratch(self) -> None:
        """Remove the scratch folder of a cluster of our own (:func:`_scratch_folder`), once it is closed."""
        folder, self._scratch = getattr(self, "_scratch", None), None  # (an engine made without __init__ has none)
        if folder is not None:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, dict]]:
        import asyncio

        import distributed

        client = self._client
        futures = {}

        def submit(t: Task, again: bool = False) -> Any:
            _, ir, ir_hash, name, seed, limits, *rest = t
            ref = self._scattered.get(ir)  # (the IR itself: ir_hash leaves the spans and the source out)
            if again:  # with the IR itself: the worker its scattered copy went to may end again
                ref = ir
            elif ref is None:  # a point's IR travels once, not once per seed
                try:
                    ref = self._scattered[ir] = client.scatter(ir, broadcast=False)
                except TimeoutError:  # (every worker gone since the sweep began: Dask's traceback)
                    raise UserError(f"{self.name}: the scheduler has no worker left to send the runs of "
                                    f"{name} to; start workers for it, or give --dask local") from None
            f = client.submit(run_task, ref, ir_hash, name, seed, limits, *rest, plugins=self.plugins, pure=False)
            futures[f] = t
            return f

        for t in tasks:
            submit(t)
        sent: dict[int, int] = {}  # id of a task -> how often it was sent again
        suspects: list[Task] = []  # the runs Dask gave up on (KilledWorker), to be sent again one at a time

        def outcome(f: Any, result: Any) -> tuple[str, Any]:
            """What became of a run: ``("done", its result)``, ``("killed", …)`` (Dask gave up on it: its worker
            ended, KilledWorker), ``("cancelled", …)`` (the IR scattered to a worker that ended went with it) or
            ``("error", the exception)``."""
            if f.status == "error" and isinstance(result, tuple):  # (raise_errors=False: type, value, traceback)
                result = result[1]
            if not isinstance(result, BaseException):
                return "done", result
            if type(result).__name__ == "KilledWorker":
                return "killed", result
            if isinstance(result, distributed.client.FutureCancelledError | asyncio.CancelledError):
                return "cancelled", result
            return "error", result

        try:
            done = distributed.as_completed(list(futures), with_results=True, raise_errors=False)
            for f, result in self._watched(done):
                t = futures.pop(f)
                kind, result = outcome(f, result)
                if kind == "done":
                    yield t, result
                elif kind == "error":
                    raise result
                elif kind == "killed":
                    suspects.append(t)
                # a worker that ended (os._exit in a plugin's code, out of memory) took the IR scattered to it
                # with it, and the runs that needed it were cancelled: each is sent again with its IR in the task;
                # the runs that were on the workers that ended are Dask's KilledWorker. Both were a traceback
                # ('FutureCancelledError' object has no attribute 'items')
                elif sent.get(id(t), 0) < 3:
                    sent[id(t)] = sent.get(id(t), 0) + 1
                    done.add(submit(t, again=True))
                else:
                    yield t, _died(t, None, "Dask worker")
            # Dask gives up on every run that was on a worker each time one ended, an innocent run queued beside
            # the one that ended them too (its row was the same error): each is sent again alone, after the
            # others, and is the error only if it ends the workers it is given to again
            for t in suspects:
                f = submit(t, again=True)
                (f, result), = self._watched(distributed.as_completed([f], with_results=True, raise_errors=False))
                futures.pop(f)
                kind, result = outcome(f, result)
                if kind == "done":
                    yield t, result
                elif kind == "error":
                    raise result
                else:
                    yield t, _died(t, None, "Dask worker")
        except BaseException:
            client.cancel(list(futures))
            raise


#: above every level a logger records at: what a logger or handler set to it lets through is nothing
QUIET = 51


def _quiet_loggers() -> list:
    """Quiet Dask's, tornado's and asyncio's loggers in this process (their handlers are Dask's to quiet:
    LocalCluster's ``silence_logs``); returns each logger with its level before."""
    import logging

    before: list = []
    for name in ("tornado.application", "distributed", "asyncio"):
        lg = logging.getLogger(name)
        before.append((lg, lg.level))
        lg.setLevel(QUIET)
    return before


def _collect_cut_tasks() -> None:
    """Collect, while the loggers are quiet, the asyncio tasks a cluster's teardown cut short. A task whose
    exception nobody retrieved (a comm's read of a worker that ended: ``StreamClosedError: Stream is closed``)
    reports it with its traceback when it is destroyed, on the ``asyncio`` logger; its exception holds its
    traceback, which holds its frames, so it is destroyed by the cycle collector, whenever that runs next.
    Run after the levels were put back, or at the interpreter's exit, that report reached stderr (Python's
    last-resort handler), a traceback after a sweep's own message. Collected here, it is told to a quiet
    logger."""
    import gc

    gc.collect()


#: what an empty ``dask`` (``--dask ""``) is told: it names no scheduler
EMPTY_DASK = ("is empty: it names no scheduler; give \"local\" (a LocalCluster here), a scheduler's address "
              "(tcp://HOST:PORT) or a scheduler file")


def check_dask(dask: Any) -> None:
    """Refuse a ``dask`` that is none of what it takes: ``"local"``, a scheduler's address or scheduler file
    (a str, or an os.PathLike for the file), or a ``distributed.Client``; ``None`` is no Dask. Anything else
    is a TypeError naming it: it was taken for an address by its ``str()`` (``dask=3``: "cannot reach the
    scheduler: missing port number in address '3'", ``dask=True`` the same of 'True'). An empty str (or
    one of spaces) is a ValueError naming it: it was tried as an address ("missing port number in address
    ''", status 1 from ``--dask ""``). Called by the calls that take ``dask=`` before anything is compiled."""
    if dask is None:
        return
    if isinstance(dask, str):
        if not dask.strip():
            raise ValueError(f"dask {EMPTY_DASK}")
        return
    if isinstance(dask, os.PathLike):
        return
    distributed = import_distributed()  # (None: no Client can be given without it; said by Dask's engine)
    client = None if distributed is None else distributed.Client
    if client is None or not isinstance(dask, client):
        raise TypeError(f'dask must be "local", a scheduler\'s address or scheduler file (a str), or a '
                        f"distributed.Client, not {type(dask).__name__}")


def check_engine(workers: Any = None, dask: Any = None, pm: Any = None, given: Any = None) -> int | None:
    """Refuse ``workers`` and ``dask`` that :func:`engine` would refuse, by what they are alone: a count that is
    no whole number or beyond 0 to :data:`MAX_WORKERS`, a ``dask`` of no kind it takes (:func:`check_dask`), a
    count beside a scheduler's address, file or Client, and (``pm`` given) a plugin manager holding a plugin
    registered in this process for a worker process. :func:`engine` makes these checks first, and the sweep's
    commands and calls make them before anything is compiled (``--workers 0 --dask s.json`` of a sweep of 10 000
    points was said after 26 s of compiling them). Returns the count as an int (None: every core)."""
    if workers is not None:
        from serq.numbers import exact, whole_value

        # a count: an int (numpy's too, a whole Fraction or Decimal), not a bool, a float or a str (workers=1.5
        # was a TypeError of range(), "2" one of the comparison, True one worker); Decimal("2.5") a ValueError
        count = whole_value(workers)
        if count is None:
            said = f"workers must be a whole number of processes (0: in this process), not {workers!r}"
            raise (ValueError if exact(workers) else TypeError)(said)
        workers = count
        if not 0 <= workers <= MAX_WORKERS:
            from serq.loading import given_or_option
            from serq.numbers import shown

            raise UserError(f"{given_or_option(given)('workers', shown(workers))}: a sweep runs on 0 to "
                            f"{MAX_WORKERS} worker processes")
    if pm is not None and (dask is not None or workers != 0):
        from serq.plugins import local_plugins

        here = local_plugins(pm)
        if here:
            where = "Dask's workers" if dask is not None else "a worker process"
            raise UserError(f"the plugin manager holds {', '.join(here)}, registered in this process and not "
                            f"installed: {where} would not know {'them' if len(here) > 1 else 'it'} (it loads the "
                            "installed plugins); run the sweep in this process (workers=0), or install the "
                            "plugin (an entry point in the group 'serq')")
    if dask is not None:
        check_dask(dask)
        if workers is not None and not (isinstance(dask, str) and dask == "local"):
            # a scheduler's workers run the runs: a count was the local pool's, or the LocalCluster's, and
            # was dropped without a word (--workers 0, "in this process", ran every run on the scheduler)
            from serq.errors import UsageError
            from serq.loading import given_or_option

            name = given_or_option(given)
            where = name("dask", dask if isinstance(dask, (str, os.PathLike)) else "CLIENT")
            raise UsageError(f"{name('workers', str(workers))} and {where}: the scheduler's workers run the runs, "
                            f"and {name('workers', 'N')} counts the processes of a local pool (or of "
                            f"{name('dask', 'local')}'s cluster); give one of them")
    return workers


def engine(workers: int | None = None, dask: Any = None, pm: Any = None, given: Any = None):
    """The engine for ``workers`` (None: every core; 0: this process; at most :data:`MAX_WORKERS`) and
    ``dask``; ``pm`` the plugin manager the runs in this process use. A worker process (local or Dask)
    loads the installed plugins only, so a ``pm`` holding a plugin registered in this process, which a
    program compiled with it may name, runs with ``workers=0`` only: refused otherwise, before any run. Of
    the installed plugins a worker loads those ``pm`` holds (:func:`serq.plugins.plugin_selection`).
    ``given`` names the count in a message (:func:`serq.loading.given_or_option`: ``workers=64`` for the Python
    API, ``--workers 64`` by default). The arguments are checked first (:func:`check_engine`)."""
    workers = check_engine(workers, dask, pm, given)
    if workers == 0 and dask is None:
        return InProcess(pm)
    # a worker builds the manager of the installed plugins pm holds, not the one its environment chooses
    from serq.plugins import plugin_selection

    plugins = plugin_selection(pm)
    if dask is not None:
        return Dask(dask, workers, plugins, given)
    return LocalPool(workers or cores(), chosen=workers is not None, given=given, plugins=plugins)
