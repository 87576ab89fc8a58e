"""The ``step`` stage kind: the iteration-level engine of continuous batching.

An iteration is planned at one instant, when the stage is idle, the settle has nothing left to run and no
other event is pending at that instant (a scheduler step sees every arrival up to it):

1. The budget moment: ``residents``, ``decoders``, ``kv_decode``, ``kv_prefill`` (the jobs present and the
   memory their sessions hold on the stage's ``memory`` pool) are fixed; ``budget`` and ``chunk`` are
   evaluated with them (``chunk`` absent or ``inf``: no cap; 0: a prefill gets no token).
2. The residents are served in the ``serve by`` order (keys ascending, then admission order): one token to
   a decoding job, up to ``chunk`` to a prefilling one, until the budget is spent. A growing job first
   grows its hold to the position it will reach, block by block, preempting per the pool's rule; a victim
   already served gives its tokens back. A grower that is its own victim ends the serving under ``preempt
   lifo`` (vLLM's FCFS ``break``); under another victim order the serving goes on (its priority policy). Its position advances now (so a later victim's ``computed`` and
   the cache see it), its work when the iteration ends.
3. Unless this planning preempted someone, the stage admits from the pools it serves (``admit via``), in
   declaration order, while budget is left: ``budget_left(S)`` in the head's header reads the budget left;
   the first head that does not fit ends the admissions. The admitted session runs at once (zero time)
   until it joins the stage or blocks, and a newcomer is served like a resident.
4. Nothing scheduled and nothing preempted: no iteration. Otherwise the iteration lasts ``cost``
   (``tokens``, ``decoders``, ``prefilled``, ``residents``, ``kv_decode``, ``kv_prefill``, ``attention``);
   an iteration that only preempted costs ``cost`` at zero tokens.

``serve exclusive prefill``: a resident prefill (the first in admission order) is served alone; otherwise
the decodes are scheduled tentatively, and a waiting prefill admitted while budget is left (its header
sees the full budget) displaces them: they keep any allocation they acquired but neither execute nor
advance their position, and the prefill gets the whole budget. A selected prefill ends admission.
"""

from .stage import StepStage, step_factory

__all__ = ["StepStage", "step_factory"]
