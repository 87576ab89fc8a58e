"""Process-wide settings that calls under way raise together (the interpreter's recursion limit while a
compile walks a program, the cyclic collector's threshold while a compile or a run works): one rule for
both."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class SharedSetting:
    """A setting of the process (``read()`` gives it, ``write(value)`` sets it) that calls in several threads
    raise at once. The first call to begin notes what it was; each raises it as it needs; the last to end
    puts back the first's note. Each putting back what it found left a raised setting behind when two
    overlapped (A begins, B begins, A ends, B ends), and lowered it under B while B still needed it. The
    count is taken inside the ``try`` whose ``finally`` gives it back: Ctrl-C's KeyboardInterrupt handled as
    the lock was let go would otherwise leave a call counted for good, and the setting raised."""

    def __init__(self, read: Callable[[], Any], write: Callable[[Any], None]):
        self.read, self.write = read, write
        #: guards the count and the note (a test may put a lock of its own here)
        self.lock: Any = threading.Lock()
        self.count = 0
        self.before: Any = None

    @contextmanager
    def raised(self, raise_to: Callable[[Any], Any]) -> Iterator[None]:
        """For the duration, the setting as ``raise_to(current)`` makes it (``None``: left as it is)."""
        counted = False
        try:
            with self.lock:
                if self.count == 0:
                    self.before = self.read()
                self.count += 1
                counted = True
                wanted = raise_to(self.read())
                if wanted is not None:
                    self.write(wanted)
            yield
        finally:
            if counted:
                with self.lock:
                    self.count -= 1
                    if self.count == 0:
                        self.write(self.before)


#: the cyclic collector's first threshold while a compile or a run works (CPython's default is 700). Both
#: make objects by the hundred thousand that live to the end of the work (a compile's parse tree, AST and
#: IR; a run's sessions, jobs and holds under a queue that grows) and free nearly everything they free by
#: reference counting: each young collection walked them, and the full ones walked them all again for next
#: to nothing (a 50 000-line program's compile spent 2.6 s of its 9.5 in them; M/M/1 at rho 1.2 on the
#: general engine 0.65 s of its 3.2). At 100 000 few collections run; cyclic garbage is still collected, at
#: most about 100 000 objects later (docs/performance.md).
WORK_GC_THRESHOLD = 100_000

#: the collector's thresholds, raised while any compile or run is under way (threads may work at once):
#: one setting for both, so that a run inside a compile's caller, or a compile beside a run, puts back
#: what there was before the first of them
COLLECTOR = SharedSetting(gc.get_threshold, lambda t: gc.set_threshold(*t))


def collector_raised(threshold: int = WORK_GC_THRESHOLD) -> Any:
    """Raise the collector's first threshold to ``threshold`` for the duration (never lower it, nor turn on
    what a threshold of 0 turned off), and put the thresholds back after the last of the calls under way
    (:data:`COLLECTOR`)."""
    return COLLECTOR.raised(lambda t: (threshold, *t[1:]) if 0 < t[0] < threshold else None)


#: the C stack the ``serq`` command asks for (bytes): a program may nest 1 000 deep (expressions and blocks inside
#: one another), and parsing, formatting and running such a program recurse through C frames in CPython (a
#: generator resumed through ``yield from`` at every level of nested blocks, among others), about 300 bytes a
#: level and more: under ``ulimit -s 256`` (KB) a program of 990 nested branches ended in a segmentation fault
#: in ``serq ast`` and ``serq run``. Linux's default, 8 MB, holds them with room to spare.
STACK_BYTES = 8 * 2**20


def stack_room() -> None:
    """Raise this process's soft stack limit (``RLIMIT_STACK``) to :data:`STACK_BYTES`, or to its hard limit when
    that is lower, when it is below: on Linux the main thread's stack grows on demand up to the limit in force at
    each fault, so a raise here holds for the rest of the command, and for the processes it starts (a sweep's
    workers). Nothing is done where the limit is at least that, cannot be read or cannot be raised."""
    try:
        import resource
    except ImportError:  # not on this system
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        inf = resource.RLIM_INFINITY
        if soft == inf or soft >= STACK_BYTES:
            return
        want = STACK_BYTES if hard == inf or hard >= STACK_BYTES else hard
        if want > soft:
            resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
    except (OSError, ValueError, AttributeError):
        return
