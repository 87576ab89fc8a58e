"""``stage s : @batch(size);``: one server that serves waiting jobs in batches.

When the server is free and jobs wait, it takes up to ``size`` of them, in arrival order, and serves them
together: the batch takes as long as its longest job, and all of its jobs complete when it ends. Jobs
that arrive meanwhile wait for the next batch. The batch is formed at the end of the instant (``settle``),
so jobs arriving at the same time go together.

The stage-kind contract is the module docstring of :mod:`serq_sim.stages`.
"""

from __future__ import annotations

from collections import deque

from serq import hookimpl
from serq_sim.errors import SimError, format_error
from serq_sim.stages import StageKind


def _size(sim, node) -> int:
    params = node.kind.params
    if isinstance(params, dict):
        params = [params.get("size", 1)]
    size = params[0] if params else 1
    if isinstance(params, list) and len(params) > 1 or not (isinstance(size, float | int) and size >= 1
                                                             and size == int(size)):
        raise SimError(format_error(node.span, None, None, f"stage {node.name}: @batch(size) takes one whole "
                                    f"number, at least 1, not {params!r}", sim.source))
    return int(size)


class BatchStage(StageKind):
    def __init__(self, sim, node, member, flat):
        super().__init__(sim, node, member, flat)
        self.size = _size(sim, node)
        self.waiting: deque = deque()
        self.serving: list = []

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        self.waiting.append(job)
        self.mark()  # form the batch once every arrival of this instant is in

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None
        if job in self.serving:
            self.serving.remove(job)
        else:
            self.waiting.remove(job)

    def settle(self):  # asked for by self.mark(); the engine clears the mark before calling it
        if self.serving or not self.waiting:
            return
        self.acc()
        now = self.sim.now
        batch = [self.waiting.popleft() for _ in range(min(self.size, len(self.waiting)))]
        for job in batch:
            job.started = now
        self.serving = batch
        self.sim.at(now + max(job.work for job in batch), self._end, batch)

    def _end(self, batch):
        if batch is not self.serving:  # every job of it left early
            return
        self.acc()
        self.serving = []
        for job in batch:
            self.present -= 1
            job.stage = None
            self.sim.job_done(self, job)
        if self.waiting:
            self.mark()

    def busy_level(self):
        return 1.0 if self.serving else 0.0

    def queue(self):
        return float(len(self.waiting))

    def busy(self):
        return float(len(self.serving))


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("batch", BatchStage)
