"""The fast tier on programs with cap-only pools (serq_sim.fast): the same JSON report byte for byte,
the same observe samples and the same errors as the general engine (``SERQ_SIM_TIER=general``), on
programs built to stress the pools' paths: several pools, nested holds, families named by computed
indices, holds over several pools, ``queue by`` keys fixed at the join (ties, NaN keys) and keys read at
every head lookup (``now``, ``waited``, pool observables), units drawn at every admission attempt,
demands that never fit (rejected at the hold, or waiting for ever), deadlocks, closed and batch
workloads, the warm-up and ``arrivals N``, and run-time errors."""

from __future__ import annotations

import pytest
import serq_frontend
from serq_sim import fast
from tiers import assert_same


def _prog(src: str):
    return serq_frontend.compile(source=src, sets={}, defs={})


NESTED = """
let n = 3;
pool a { cap 6; }
pool b[n] { cap 2; }
pool c { cap 1.5; queue by (-sz, serial); }
stage s : fifo(2);
stage d : delay;
stage p[2] : ps(1);
workload { arrive poisson(1.2); }
session {
  set t0 = now;
  set sz = floor(~uniform(0, 3)) + 1;
  set r = floor(~uniform(0, n));
  hold a (sz), b[r] (sz * 0.5) {
    run s (~exp(0.5));
    hold c (sz / 2) {
      run d (~exp(0.6));
      observe inner = used(c) + holders(b[r]) + queued(a) + free(b[1]);
      run p[serial % 2] (0);
    }
    branch with (0.2) { end; }
    run p[r % 2] (~exp(0.2));
  }
  observe response = now - t0;
  end;
}
run { horizon 3000; warmup 100; seed 3; }
"""

DYNAMIC = """
pool srv { cap 2; queue by (prio - waited * 0.1, serial); }
pool m { cap 10; queue by (queued(srv) > 2 ? prio : -prio, now > 100 ? serial : -serial); }
stage d : delay;
stage f : fifo;
workload { arrive poisson(1.5); }
session {
  set t0 = now;
  branch with (0.3) { set prio = 0; } else { set prio = 1; }
  hold m (~uniform(1, 4)) {
    run f (~exp(0.4));
    hold srv (1) {
      run d (~exp(1.1));
    }
  }
  observe response = now - t0;
  observe q = queued(m);
}
run { horizon 2000; warmup 0; seed 5; }
"""

TIES = """
pool server { cap 1; queue by (prio); }
pool other { cap 2; queue by (sqrt(prio - 0.5), serial); }
stage svc : delay;
workload { arrive poisson(0.9); }
session {
  set t0 = now;
  branch with (0.5) { set prio = 0; } else { set prio = 1; }
  hold server (1) {
    run svc (~exp(1));
  }
  hold other (1) { run svc (~exp(1.5)); }
  branch (prio == 0) { observe response_hi = now - t0; } else { observe response_lo = now - t0; }
}
run { horizon 4000; warmup 200; seed 1; }
"""

NEVER = """
pool a { cap 3; }
pool b { cap 2; }
stage d : delay;
workload { arrive poisson(1); }
session {
  set sz = floor(~uniform(0, 5));
  branch (serial % 7 == 3) { hold a (4) { run d (1); } }
  hold a (sz) {
    run d (~exp(0.5));
    hold b (now > 600 ? 3 : 1) { run d (1); }
  }
  observe response = now;
}
run { horizon 1000; warmup 50; seed 2; }
"""

DEADLOCK = """
pool x { cap 1; }
pool y { cap 1; }
stage d : delay;
workload { arrive poisson(0.5); }
session {
  branch (serial % 2 == 0) {
    hold x (1) { run d (~exp(1)); hold y (1) { run d (~exp(1)); } }
  } else {
    hold y (1) { run d (~exp(1)); hold x (1) { run d (~exp(1)); } }
  }
  observe done = now;
}
run { horizon 500; warmup 0; seed 4; }
"""

CLOSED = """
pool tok { cap 3; }
pool slot[2] { cap 1; queue by (turn_no, serial); }
stage think : delay;
stage work : fifo;
workload { arrive closed(6); }
session {
  loop {
    run think (~exp(2));
    hold tok (1) {
      hold slot[serial % 2] (1) {
        run work (~exp(0.7));
        run work (0);
      }
      turn;
      branch (turn_no > 4) { end; }
    }
    observe holding = holders(tok);
  }
}
run { horizon 3000; warmup 100; seed 9; }
"""

BATCH_STUCK = """
pool a { cap 2; }
stage d : delay;
workload { arrive batch(5); }
session {
  hold a (serial < 3 ? 1 : 1.5) { run d (serial); hold a (1) { run d (1); } }
  observe t = now;
}
run { horizon 100; warmup 0; seed 1; }
"""

# FIFO queues and units that read no state: an admission is attempted only after a join or a release
# (``admd``), and a session that joins an empty queue with nothing ready is admitted at the join; integer
# times make many instants with several events (a release and a join at once), one hold spans a family
# member and a keyed pool whose releases unblock the family's queues, and batches arrive at once
LAZY = """
pool a { cap 3; }
pool b[2] { cap 2; }
pool c { cap 4; queue by (sz, serial); }
stage d : delay;
stage f : fifo(2);
workload { arrive poisson(1.4); }
session {
  set t0 = now;
  set sz = floor(~uniform(1, 3));
  hold a (sz) {
    run d (floor(~uniform(0, 3)));
    hold b[serial % 2] (1), c (sz) {
      run f (floor(~uniform(0, 2)));
    }
    hold c (1) { run d (1); }
  }
  branch (serial % 5 == 0) { hold b[1] (2) { run d (0); } }
  observe response = now - t0;
}
run { horizon 2000; warmup 50; seed 7; }
"""

PROGRAMS = {"lazy": LAZY, "nested": NESTED, "dynamic": DYNAMIC, "ties": TIES, "never": NEVER, "deadlock": DEADLOCK,
            "closed": CLOSED, "batch_stuck": BATCH_STUCK}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("kw", [dict(), dict(seed=11, warmup=0.0), dict(horizon=300.0, warmup=20.0)],
                         ids=["as-written", "seed11", "short"])
def test_pool_programs_agree(name, kw, monkeypatch):
    prog = _prog(PROGRAMS[name])
    assert fast.exclusion(prog) is None
    assert_same(prog, monkeypatch, **kw)


def test_arrivals_limit_agrees(monkeypatch):
    assert_same(_prog(TIES), monkeypatch, arrivals=3000, horizon=1e9, warmup=0.0)
    assert_same(_prog(NESTED), monkeypatch, arrivals=2000, horizon=1e9, warmup=0.0)


def test_the_stressed_paths_happen():
    """The programs above reach what they are meant to stress (so an agreement means something)."""
    import serq_sim

    r = serq_sim.run(_prog(NEVER))
    notes = " ".join(r.result.notes)
    assert r.pool("a").rejections > 0 and "rejected" in notes
    assert r.pool("b").over_cap > 0 and "wait for ever" in notes
    r = serq_sim.run(_prog(DEADLOCK))
    assert "deadlock" in " ".join(r.result.notes)
    r = serq_sim.run(_prog(BATCH_STUCK))
    assert "no event is left" in " ".join(r.result.notes)
    r = serq_sim.run(_prog(NESTED))
    assert min(r.pool("a").wait, r.pool("c").wait) > 0 and r.pool("b", 2).admissions > 0


def test_the_lazy_admission_is_taken_where_it_is_sound():
    """``admd`` and the admission at the join are generated only where no key and no units read state."""
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    def gen(src):
        prog = _prog(src)
        return fast._Gen(Simulation(prog, registries(None), seed=1, horizon=10.0, warmup=0.0))

    for name in ("lazy", "nested", "closed", "deadlock", "batch_stuck", "ties"):
        g = gen(PROGRAMS[name])
        assert g.adm_lazy, name
        assert "admd = False" in g.source(False), name
    for name in ("dynamic", "never"):  # keys read waited and now; units read now
        g = gen(PROGRAMS[name])
        assert not g.adm_lazy and "admd" not in g.source(False), name
    assert "if not ready and not admd and not g0_q and g0_u + A[" in gen(LAZY).source(False)


ERRORS = [
    ("pool b: index 3 out of range", """
pool b[3] { cap 5; }
stage d : delay;
workload { arrive poisson(1); }
session { set r = floor(~uniform(0, 4)); hold b[r] (1) { run d (1); } }
run { horizon 100; warmup 0; seed 1; }
"""),
    ("the units of a are negative", """
pool a { cap 5; }
stage d : delay;
workload { arrive poisson(1); }
session { hold a (~uniform(-1, 3)) { run d (1); } }
run { horizon 100; warmup 0; seed 1; }
"""),
    ("the units of a are NaN", """
pool a { cap 5; }
stage d : delay;
workload { arrive poisson(1); }
session { set x = ~uniform(-1, 3); hold a (sqrt(x)) { run d (1); } }
run { horizon 100; warmup 0; seed 1; }
"""),
    ("the units of b are negative", """
pool a { cap 5; }
pool b { cap 5; }
stage d : delay;
workload { arrive poisson(1); }
session { hold a (1), b (now > 30 ? -1 : 1) { run d (1); } }
run { horizon 100; warmup 0; seed 1; }
"""),
    ("stage d: index", """
pool a { cap 5; queue by (queue(d[floor(now) % 3])); }
stage d[2] : delay;
workload { arrive poisson(3); }
session { hold a (1) { run d[0] (1); } }
run { horizon 100; warmup 0; seed 1; }
"""),
]


@pytest.mark.parametrize("message,src", ERRORS, ids=[m for m, _ in ERRORS])
def test_errors_agree(message, src, monkeypatch):
    prog = _prog(src)
    assert fast.exclusion(prog) is None
    out = assert_same(prog, monkeypatch)
    assert out[0] == "error" and message in out[2], out


def test_what_stays_out():
    base = "stage d : delay; workload { arrive poisson(1); } run { horizon 10; }\n"
    cases = {
        "a pool with blocks": "pool a { cap 8; block 2; } session { hold a (1) { run d (1); } }",
        "a pool with a preemption policy": "pool a { cap 8; preempt lifo; } session { hold a (1) { run d (1); } }",
        "a pool with reserve held": "pool a { cap 8; reserve held; } session { hold a (1) { run d (1); } }",
        "a hold with a reserve": "pool a { cap 8; } session { hold a (1) reserve (2) { run d (1); } }",
        "a hold that caches or leases": "pool a { cap 8; } session { hold a (1) { run d (1); } cache (1) }",
        "a hold naming one pool family twice":
            "pool a[2] { cap 8; } session { hold a[0] (1), a[1] (1) { run d (1); } }",
        "statement Grow": "pool a { cap 8; } session { hold a (1) { grow a (1); run d (1); } }",
    }
    for why, src in cases.items():
        assert fast.exclusion(_prog(base + src)) == why, why
