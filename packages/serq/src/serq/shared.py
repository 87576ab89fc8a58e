"""Process-wide settings that calls under way raise together (the interpreter's recursion limit while a
compile walks a program, the cyclic collector's threshold while a run runs): one rule for both."""

from __future__ import annotations

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
