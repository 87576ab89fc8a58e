"""``serve exclusive prefill``: a resident prefill is served alone, or a waiting prefill displaces the
tentative decodes."""

from __future__ import annotations

from ..stages import Ctx
from ..status import GROWING


class ExclusivePrefill:
    """The exclusive-prefill planning of a step stage (a part of :class:`~serq_sim.step.StepStage`)."""

    def _plan_exclusive(self, pre: Ctx, chunk: float, p0: int) -> None:
        order = self._order(self.residents, pre)
        for job in order:
            if job.mode == "prefill" and job.owner.status != GROWING:
                self._serve(job, chunk)
                # a prefill that gets nothing is not selected: one whose growth waits for room (preempt
                # none, or no victim), or one a chunk of 0 gives no token; the next one is, or the decodes
                # are (they may be what frees the room)
                if self.assign or self.sim.preempt_count != p0:
                    return
        for job in order:
            if job.stage is self and self._serve(job, chunk):
                return
        # a waiting prefill's header sees the full budget
        self._admissions(p0, chunk, order, pre, exclusive=True)

    def _displace(self) -> None:
        """Cancel the tentative decodes: they keep their allocation, not their tokens."""
        for j in self.assign:
            if j.assigned > 0.0:
                self._unadvance(j, j.assigned)
            j.assigned = 0.0
        self.assign = []
        self.left = self.budget
        self.attn = 0.0
