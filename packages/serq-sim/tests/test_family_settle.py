"""A settle costs what may start, not the size of a family of engines or pools.

At every settle the engine asks each step stage whether it is idle (and starts it), and looks at each pool
that can have waiting growers or a queue of its own. With a family of many engines, of which a few are busy
at a time, a walk over all of them at every event made a run cost in proportion to the family's size
(3 000 requests over 1 000 engines: 5.2 s, of which 4.7 s in those walks, now 1.6 s, most of it the
sessions' `choose` over the 1 000). Of more than a few, the settle
now asks only the stages that something may have made idle since it last found them not idle (an
iteration ended, a job joined, a session joined the queue of a pool the stage admits: Simulation.step_mark)
and looks only at the pools a grower or a session has joined since it found them with neither
(Simulation.pool_mark), in the same order.

The reports are those of the walk over every member (build._FEW_STEPS raised past the family's size) byte
for byte, and the work is counted: the idle() questions and the pools looked at, at two family sizes, for
the same arrivals."""

from __future__ import annotations

import json

import pytest
import serq_frontend
from counting import Counted, CountedIndexed
from serq_sim import build
from serq_sim.engine import Simulation
from serq_sim.step import StepStage
from tiers import run_on_tier

# a family of engines, each with its request slots and KV blocks; a session joins the least loaded
ENGINES = """
let R = {r};
pool reqs[R] {{ cap 2; admit via e; }}
pool kv[R] {{ cap {kv}; block 16; {preempt} }}
stage e[R] : step {{ budget 64; cost 0.01; memory kv; }}
workload {{ arrive poisson({rate}); }}
session {{
  choose j in R by (holders(reqs[j]) + queued(reqs[j]), j);
  hold reqs[j] (1), kv[j] (32) {{
    prefill on e[j] (32) growing kv[j];
    decode on e[j] (4 + serial % 40) growing kv[j];
  }}
  end;
}}
run {{ {run} }}
"""

# a family of single servers whose pools no stage admits (queues of their own), and a step engine
SERVERS = """
let R = {r};
pool slot[R] {{ cap 1; }}
stage s[R] : fifo;
pool reqs {{ cap 4; admit via e; }}
pool kv {{ cap 4096; block 16; }}
stage e : step {{ budget 64; cost 0.01; memory kv; }}
workload {{ arrive poisson({rate}); }}
session {{
  hold slot[serial % R] (1) {{ run s[serial % R] (~exp(2)); }}
  hold reqs (1), kv (16) {{ prefill on e (16) growing kv; decode on e (3) growing kv; }}
  end;
}}
run {{ horizon 1e9; seed 5; arrivals {n}; }}
"""


def _program(tmp_path, text: str):
    src = tmp_path / "family.sq"
    src.write_text(text)
    return serq_frontend.compile(str(src), sets={}, defs={})


@pytest.fixture
def counting(monkeypatch):
    """Count the settles' work: every idle() question asked of a step stage, and every pool looked at (the
    lists the settle walks, grow_pools and queue_free, and its stack of pools to look at, pool_hot, made
    counted lists when the run starts). ``run(program, walk_all)`` gives the outcome, the samples, the
    questions, the looks and the simulation; ``walk_all`` raises build._FEW_STEPS past any family's size
    (the walk over every member at every settle)."""
    asked = [0]
    marks = {"pool": 0}  # the pools a grower or a queued session marked for the settle (pool_mark)
    idle = StepStage.idle

    def counting_idle(self):
        asked[0] += 1
        return idle(self)

    run = Simulation.run

    def counting_run(self):
        self.grow_pools = Counted(self.grow_pools)
        self.queue_free = Counted(self.queue_free)
        if self.pool_hot is not None:
            self.pool_hot = CountedIndexed(self.pool_hot)
        return run(self)

    pool_mark = Simulation.pool_mark

    def counting_pool_mark(self, pool):
        marks["pool"] += 1
        pool_mark(self, pool)

    monkeypatch.setattr(StepStage, "idle", counting_idle)
    monkeypatch.setattr(Simulation, "run", counting_run)
    monkeypatch.setattr(Simulation, "pool_mark", counting_pool_mark)

    def go(program, walk_all: bool):
        monkeypatch.setattr(build, "_FEW_STEPS", 10**9 if walk_all else 8)
        asked[0] = 0
        marks["pool"] = 0
        Counted.looks = 0
        sim, outcome, samples = run_on_tier(program, "")
        return outcome, samples, asked[0], Counted.looks, sim

    go.marks = marks
    return go


@pytest.mark.timeout(120)
@pytest.mark.parametrize("preempt", ["evict lru; preempt lifo;", "preempt none;"])
def test_a_family_of_engines_settles_at_the_cost_of_what_may_start(tmp_path, counting, preempt):
    marks = counting.marks
    counts = {}
    for r in (20, 160):
        # little KV per engine (six blocks; a request grows to five at most): growers preempt, or wait under
        # preempt none, where two engines' requests can wait for each other for good (the run ends at its
        # horizon, 300 arrivals on average, rather than when they have all left)
        if "none" in preempt:
            run, ended = "horizon 1.5; seed 3;", None
        else:
            run, ended = "horizon 1e9; seed 3; arrivals 300;", 300
        program = _program(tmp_path, ENGINES.format(r=r, kv=96, preempt=preempt, rate=200, run=run))
        quick, qs, asked, looks, sim = counting(program, walk_all=False)
        assert quick[0] == "report", quick
        if ended:
            assert sim.ended == ended
        else:
            assert 200 < sim.arrivals < 400, sim.arrivals
        stats = json.loads(quick[1])
        kv = [p for p in stats["pools"] if p["name"].startswith("kv")]
        if r == 20:  # (where the engines are busy: the growers preempt, or wait for room)
            if ended:
                assert sum(p["preemptions"] for p in kv) > 100
            else:
                assert marks["pool"] > 10
        walk, ws, asked_all, looks_all, _ = counting(program, walk_all=True)
        assert quick == walk and qs == ws  # the same reports, byte for byte, as the walk over every member
        assert asked_all >= r * 200  # the walk asks every engine at every settle of the run
        counts[r] = (asked, looks, asked_all, looks_all)
    (a20, l20, _, la20), (a160, l160, _, la160) = counts[20], counts[160]
    # 8 times the engines for the same arrivals: the walk's questions and looks grow with them, the marked
    # ones do not (spread over more engines, the requests start a few more iterations, and each pool is
    # looked at once at the start: a bound of twice, not eight times)
    assert a160 < 2 * a20 + 1000, counts
    assert l160 < 2 * l20 + 1000, counts
    assert la160 > 5 * la20, counts  # (the count can tell: the walk over the pools grows with them)


@pytest.mark.timeout(120)
def test_a_family_of_pools_with_queues_of_their_own_settles_at_the_cost_of_what_may_admit(tmp_path, counting):
    counts = {}
    for r in (20, 160):
        program = _program(tmp_path, SERVERS.format(r=r, rate=8, n=400))
        quick, qs, _asked, looks, sim = counting(program, walk_all=False)
        assert quick[0] == "report", quick
        assert sim.ended == 400
        walk, ws, _, looks_all, _ = counting(program, walk_all=True)
        assert quick == walk and qs == ws
        counts[r] = (looks, looks_all)
    assert counts[160][0] < 2 * counts[20][0] + 1000, counts
    assert counts[160][1] > 5 * counts[20][1], counts


# replicas with queues of their own on the general engine (a cache puts a program there), the head of each
# queue blocked while its replica serves; the variants are the kinds of head a blocked queue can have
REPLICAS = """
let R = {r};
pool slot[R] {{ cap 2; {queue} }}
pool mem {{ cap 1e9; block 16; evict lru; }}
stage gpu[R] : fifo(2);
workload {{ arrive poisson({rate}); }}
session {{
  set t0 = now;
  set k = serial % 3;
  set j = min(R - 1, floor(~uniform(0, R)));
  hold slot[j] ({units}) {{ run gpu[j] (~exp(1)); }}
  hold mem (16) {{ observe response = now - t0; }} cache (16);
  end;
}}
run {{ horizon 1e9; warmup 1; seed 11; arrivals {n}; }}
"""

HEADS = [
    ("", "1"),  # first come first served, a fixed demand: waits for room where it needs it
    ("queue by (k, serial);", "1 + k % 2"),  # keys read at the join: the head is fixed while it waits
    ("queue by (-waited);", "1"),  # a head that changes as time passes: tried at every admission pass
    ("", "1 + (used(slot[0]) > 1 ? 1 : 0)"),  # a demand that reads the state: tried at every pass
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("queue,units", HEADS)
def test_blocked_heads_of_many_queues_are_tried_when_they_may_fit(tmp_path, monkeypatch, queue, units):
    """admit_all tried the head of every queue at every settle (a walk over the family: 1 200 replicas with
    20 000 requests took 7.3 s, 0.4 s now); now a head that did not fit is tried again when room frees in a
    pool it needs or its queue changes, and one whose demand or place may change while it waits (a key
    reading waited, units reading the state) at every pass, as before. Reports byte for byte the walk's."""
    from serq_sim.pools import admission

    tried = [0]
    try_admit = admission.try_admit

    def counting(sim, pool):
        tried[0] += 1
        return try_admit(sim, pool)

    monkeypatch.setattr(admission, "try_admit", counting)
    counts = {}
    for r in (20, 160):
        program = _program(tmp_path, REPLICAS.format(r=r, rate=0.8 * r, n=1500, queue=queue, units=units))
        out = {}
        for walk_all in (False, True):
            monkeypatch.setattr(build, "_FEW_STEPS", 10**9 if walk_all else 8)
            tried[0] = 0
            sim, outcome, samples = run_on_tier(program, "")
            assert outcome[0] == "report", outcome
            assert sim.live == 0 and sim.ended > 1000  # (drained; those ended after the warm-up)
            out[walk_all] = (outcome, samples, tried[0])
        assert out[False][:2] == out[True][:2]  # byte for byte
        counts[r] = (out[False][2], out[True][2])
    static = "waited" not in queue and "used" not in units
    if static:
        # the tries follow the work (the arrivals and the room they free), not the family's size
        assert counts[160][0] < 2 * counts[20][0] + 1000, counts
    assert counts[160][1] > 5 * counts[20][1], counts  # (the walk's grow with the family)
