"""A queueing researcher's programs on the pool options pool-reference.txt adds, each checked against its
closed form: M/M/c written with `reserve held` (a call reserves a line and allocates nothing, so only the
reservations keep the fourth call out: Erlang C's wait), the M/M/1 queue with preemptive priority whose
victim goes back with `requeue tail` (exponential service: Cobham's preemptive-resume means, whatever the
order among the victims) and the M/M/1 queue served by `queue by (waited)` (the newest first: the mean
wait FCFS's, its second moment FCFS's over 1 - rho) against `queue by (-waited)` (FCFS); and M/G/1-PS under a
heavy-tailed service, whose slowdown is 1 / (1 - rho) for short and long jobs alike. Each seeded run's
95 % CI covers the closed form and is narrow, and the two simulator tiers give the same report; and a run of
`arrivals 3` traced by hand (its end, the time averages over it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from peers import covers
from tiers import same_json


def compile_source(tmp_path: Path, src: str, **sets: float):
    path = tmp_path / "p.sq"
    path.write_text(src)
    return serq_frontend.compile(path, sets=sets)


def erlang_c(a: float, c: int) -> float:
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return c * b / (c - a * (1 - b))


RESERVED = """let lambda = 2.4;

pool lines { cap 3; reserve held; }
stage svc : delay;

workload {
  arrive poisson(lambda);
}

session {
  set t0 = now;
  hold lines (0) reserve (1) {
    observe wait = now - t0;
    run svc (~exp(1));
  }
  end;
}

run { horizon 40000; warmup 500; seed 1; }
"""


def test_reservations_alone_make_an_mmc_queue_that_waits_as_erlang_c(tmp_path, monkeypatch):
    # the holds allocate nothing: without `reserve held` every call would be admitted at once (wait 0)
    doc = same_json(compile_source(tmp_path, RESERVED), monkeypatch)
    c_wait = erlang_c(2.4, 3)
    assert c_wait == pytest.approx(11.52 / 17.8)  # 0.647191
    covers(doc["observes"]["wait"], c_wait / (3 - 2.4), 0.08)  # 1.07865
    assert doc["pools"][0]["used"] == 0
    open_lines = compile_source(tmp_path, RESERVED.replace(" reserve held;", "").replace("horizon 40000", "horizon 600"))
    assert serq_sim.run(open_lines).result.observes["wait"].mean == 0


PRIORITY = """let lam1 = 0.3;
let lam2 = 0.4;

pool hi_slot { cap 1; }
pool gpu { cap 1; queue by (1 - hi); preempt by (hi) requeue tail; }
stage svc : fifo;

workload {
  arrive poisson(lam1 + lam2);
  init {
    set hi = ~bernoulli(lam1 / (lam1 + lam2));
  }
}

session {
  set t0 = now;
  branch (hi) {
    hold hi_slot (1) {
      hold gpu (0) {
        grow gpu (1);
        run svc (~exp(1));
      }
    }
    observe t_hi = now - t0;
  } else {
    hold gpu (1) {
      run svc (~exp(1));
    }
    observe t_lo = now - t0;
  }
  end;
}

run { horizon 60000; warmup 1000; seed 5; }
"""


def test_preemptive_priority_with_the_victim_at_the_tail_responds_as_cobham(tmp_path, monkeypatch):
    # an interactive request grows to the GPU's unit and preempts the batch request holding it, which joins
    # the queue again behind the batch requests waiting (requeue tail) and starts over with a new draw. The
    # service is exponential, so starting over is resuming in law, and the order among batch requests of
    # one law moves no mean: E[T1] = 1 / (1 - rho1), E[T2] = 1 / ((1 - rho1) (1 - rho)) (mu = 1)
    doc = same_json(compile_source(tmp_path, PRIORITY), monkeypatch)
    covers(doc["observes"]["t_hi"], 1 / (1 - 0.3), 0.03)  # 1.42857
    covers(doc["observes"]["t_lo"], 1 / (0.7 * 0.3), 0.06)  # 4.7619
    assert doc["pools"][1]["preemptions"] > 5000


NEWEST = """let lam = 0.5;
let newest = 1;

pool gpu { cap 1; queue by (newest ? waited : -waited); }
stage svc : delay;

workload {
  arrive poisson(lam);
}

session {
  set t0 = now;
  hold gpu (1) {
    set w = now - t0;
    run svc (~exp(1));
  }
  observe wait = w;
  observe wait2 = w * w;
  end;
}

run { horizon 100000; warmup 100; seed 4; }
"""


@pytest.mark.parametrize("newest, wait2", [(1, 8.0), (0, 4.0)])
def test_the_newest_first_by_waited_waits_as_fcfs_on_average_and_more_variably(tmp_path, monkeypatch,
                                                                               newest, wait2):
    # M/M/1 at rho 0.5: E[W] = rho / (mu - lam) = 1 under either order (the order is not by size); FCFS's
    # E[W^2] = 2 rho / (mu - lam)^2 = 4, non-preemptive LCFS's that over 1 - rho = 8. `waited` is the time
    # since the hold joined the queue, so its least is the newest arrival
    doc = same_json(compile_source(tmp_path, NEWEST, newest=newest), monkeypatch)
    covers(doc["observes"]["wait"], 1.0, 0.06)
    covers(doc["observes"]["wait2"], wait2, 0.13)


SLOWDOWN = """let lam = 0.5;

stage cpu : ps(1);

workload {
  arrive poisson(lam);
}

session {
  set s = ~h2(1, 20);
  set t0 = now;
  run cpu (s);
  observe slowdown = (now - t0) / s;
  branch (s < 0.2) {
    observe short = (now - t0) / s;
  }
  branch (s > 3) {
    observe long = (now - t0) / s;
  }
  end;
}

run { horizon 100000; warmup 1000; seed 3; }
"""


def test_processor_sharing_slows_every_size_alike_under_a_heavy_tail(tmp_path, monkeypatch):
    # M/G/1-PS: E[T | S = x] = x / (1 - rho), so the slowdown T / S has mean 1 / (1 - rho) = 2 at rho 0.5 for
    # jobs of every size, the shortest and the longest of a service of cv2 20 alike (theory/test_ps.py checks
    # the mean response over all jobs only, at cv2 4)
    doc = same_json(compile_source(tmp_path, SLOWDOWN), monkeypatch)
    for name in ("slowdown", "short", "long"):
        covers(doc["observes"][name], 2.0, 0.06)
    assert doc["observes"]["long"]["count"] > 1000 and doc["observes"]["short"]["count"] > 10000


FINITE = """stage svc : fifo;

workload {
  arrive renewal(1);
}

session {
  set t0 = now;
  run svc (1.5);
  observe response = now - t0;
  end;
}

run { horizon 100; arrivals 3; }
"""


def test_a_run_of_three_arrivals_ends_when_the_last_leaves_by_hand(tmp_path, monkeypatch):
    # arrivals at 1, 2, 3 (a renewal's first after one gap), 1.5 s each: served 1-2.5, 2.5-4, 4-5.5; the run
    # ends at 5.5, responses 1.5, 2 and 2.5, in the system 1.5 + 2 + 2.5 = 6 session-seconds over 5.5 s, busy
    # 4.5 of 5.5 s, 3 / 5.5 completions a second, waits 0, 0.5 and 1
    doc = same_json(compile_source(tmp_path, FINITE), monkeypatch)
    assert (doc["end"], doc["arrivals"], doc["ended"]) == (5.5, 3, 3)
    assert doc["observes"]["response"]["mean"] == 2.0
    svc = doc["stages"][0]
    assert svc["present"] == pytest.approx(6 / 5.5) and svc["utilisation"] == pytest.approx(4.5 / 5.5)
    assert svc["throughput"] == pytest.approx(3 / 5.5) and svc["wait"] == pytest.approx(0.5)
