"""A third party's stage kind for the tests: a single server that starts its next job only when the settle asks
(``wants_start``), shared by test_peer_programs_round8.py and test_hostile_round28_stall_plugins.py."""

from __future__ import annotations

from collections import deque

from serq_sim.stages import StageKind


class Slotted(StageKind):
    """A single server that starts its next job only when the settle asks (``wants_start``: ``idle()``,
    ``try_start()``), and never says when it may become idle: among many such stages the settle asks
    each at every settle. Serves in arrival order, one job at a time, a job's work in time."""

    wants_start = True

    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self.waiting: deque = deque()
        self.current = None

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.waiting.append(job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        if job is self.current:
            self.current = None
        else:
            self.waiting.remove(job)

    def busy_level(self):
        return 1.0 if self.current is not None else 0.0

    def idle(self):
        return self.current is None and bool(self.waiting)

    def try_start(self):
        self.acc()
        job = self.waiting.popleft()
        job.started = self.sim.now
        self.current = job
        self.sim.at(self.sim.now + job.work, self._finish, job)

    def _finish(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        self.current = None
        job.stage = None
        self.sim.job_done(self, job)
