"""A live session of §3's configuration: its attributes (a list indexed by slot; the first four are
the serial, the turn, ``cached`` and ``computed``), its continuation (a generator), status, active holds
and leases, and where it waits.
"""

from __future__ import annotations

import math

from .status import READY

SLOT_SERIAL, SLOT_TURN, SLOT_CACHED, SLOT_COMPUTED = 0, 1, 2, 3

#: a session no hold has admitted yet is ordered by its serial, below every admission's number
_UNADMITTED = 2 ** 53


class Session:
    __slots__ = ("serial", "attrs", "gen", "status", "holds", "pending", "adm_seq", "preempt_pos", "stuck",
                 "outgrew", "leases", "trace", "preset", "requeue", "job", "grow", "qpool", "in_ready", "spin_t", "spin_k",
                 "redo_t", "redo_k", "tok", "tokp", "tokst", "tokw", "qkey", "draws", "lapsed")

    def __init__(self, serial: int, nattrs: int):
        self.serial = serial
        attrs = self.attrs = [0.0] * nattrs
        attrs[SLOT_SERIAL] = float(serial)
        self.gen = None
        #: the session block's draw state (rand.place_state), when the block draws
        self.draws = None
        self.status = READY
        self.holds: list = []
        self.pending = None
        # the place in admission order (a step stage's residents, ``admission``): the counter of the pool
        # admissions once a hold admits the session; before that its arrival, ahead of every admitted
        # session as -1 was, and among such sessions by serial (docs/language.md, rules chosen)
        self.adm_seq = serial - _UNADMITTED
        self.preempt_pos = None
        self.stuck = False
        #: ``(pool, units, kept)`` when, in a run with no horizon, the session's growth on ``pool`` to ``units``,
        #: beyond its cap with the ``kept`` units the session keeps there, preempted the session itself: its
        #: hold is a run-time error when it joins the queue again (pools.admission.outgrown); None otherwise
        self.outgrew = None
        self.leases: list = []
        #: the pools whose lease by this session ended by its time (``lease P (t)``, t seconds) and that no
        #: ``transfer … from P`` has read since, nor a new lease of P renewed: a transfer from one of them
        #: reads KV only the cache kept (pools.release.transfer_release); None while there is none
        self.lapsed = None
        self.trace = None
        self.preset = None
        self.requeue = None
        self.job = None
        self.grow = None
        self.qpool = None
        self.in_ready = False
        #: the instant of the session's last loop-head pass, and how many passes it made at it
        self.spin_t = math.nan
        self.spin_k = 0
        #: the instant of the session's last re-execution of a preempted hold, and how many it made then
        self.redo_t = math.nan
        self.redo_k = 0
        #: the time of the session's last output token on a step stage (-1: none in this request), and
        #: whether it was preempted since (step/tokens.py)
        self.tok = -1.0
        self.tokp = False
        #: the step stage of the first output token of the session's open request (None: none open)
        self.tokst = None
        #: whether the gaps of its open request count (sent at or after the warm-up's end; tokens.py)
        self.tokw = True
        #: (its queue key, its join order) while it waits in a pool's KeyedQueue
        self.qkey = None
