"""The status of a session (§3's configuration: ready, queued at a pool, at a stage, waiting to grow,
ended): one enum, :class:`Status`.

The hot paths (the settle loop, the stages' fast paths, the step planner) compare and store plain ints:
an ``IntEnum`` member is an int subclass, which Python's specialised int comparisons do not take. So
every module imports the module-level constants below, which are the enum's values, and ``Status(x)``
names one (in messages and tests).
"""

from __future__ import annotations

from enum import IntEnum


class Status(IntEnum):
    READY = 0
    QUEUED = 1
    STAGE = 2
    GROWING = 3
    ENDED = 4


READY = Status.READY.value
QUEUED = Status.QUEUED.value
STAGE = Status.STAGE.value
GROWING = Status.GROWING.value
ENDED = Status.ENDED.value
