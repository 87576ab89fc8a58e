"""An independent model of a family of step engines behind a `choose` (test_conformance_round18_b.py):
N replicas, each vLLM's shape of engine (request slots, a KV pool of blocks with a prefix cache evicted in
LRU order, victims by `preempt lifo` or by keys), multi-turn sessions that go back to the replica their first
turn chose and there find their own cached prefix. Written from the spec's words (language.txt §3, pool-
reference.txt), not from the simulator's code: each replica is engine_model16.prefix_engine, the
one-engine model of test_conformance_round16_c.py.

Sessions arrive together at 0 and run in serial order; each first turn chooses the replica with the fewest
holders + queued (ties to the smallest index: §3 "choose: the keys, in order, then the smallest index"),
and its hold joins that replica's queue at once, so session s goes to s % N; later turns choose their home.
The replicas then share nothing: each is the one-engine model on its own sessions, its own clock
(cost 1, so iteration k of a replica that has work from 0 runs over [k, k + 1]).
"""

from __future__ import annotations

import math

from engine_model16 import prefix_engine


def family(sessions, N, *engine, until=math.inf):
    """The N replicas: session s on replica s % N. Returns the sessions' admissions, hits and ends (merged),
    and per replica the times of its preemptions and of its iterations' starts."""
    admits, hits, done = {}, {}, {}
    per = []
    for j in range(N):
        mine = [s for s in range(len(sessions)) if s % N == j]
        a, h, d, p, it = prefix_engine(sessions, *engine, mine=mine, until=until)
        admits.update(a)
        hits.update(h)
        done.update(d)
        per.append((p, it))
    return admits, hits, done, per
