"""The pools of §3 (pool-reference.txt): what they hold and every rule that changes it.

- :mod:`.model`: a pool member, a waiting hold, an active hold, its slot on each pool, a lease, a cache
  entry (data, and the pool's time averages and rounding to blocks);
- :mod:`.admission`: joining a queue (the re-queue at the head), the head, a hold's demand, the fit,
  admission (consuming the session's own cached prefix, up to ``reuse``), the retry at every settle;
- :mod:`.cache`: making room by eviction in the pool's order, per block from the tail; spilling to a
  tier; ``drop``;
- :mod:`.growth`: ``load``, ``grow`` and a growing run's growth, preemption (victims' candidates, their
  computed positions, the victim's release and re-queue, ``stuck``), the growers' retry;
- :mod:`.release`: the end of a hold's scope and what it caches, leases, ``release``;
- :mod:`.check`: ``--check-invariants``.

Each function takes the :class:`~serq_sim.engine.Simulation` first where it needs the clock, counters or
other pools; the simulation exposes the entry points that compiled session code, stage kinds and
policies call (``E.hold``, ``sim.preempt_candidates``, …) as its methods.
"""
