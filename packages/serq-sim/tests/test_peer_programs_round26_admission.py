"""An SRE's admission control: a slot pool a session leaves when it is full, under a burst. The sessions
one event makes ready all run before the pools admit (language.txt §3, the settle), so a test of
``free(slots)`` alone lets a whole batch past a pool too small for it, to wait in its queue (a trace's
sends of one time, each an event of its own, are turned away as they should be); ``free(slots) -
queued(slots)`` counts the holds that joined the queue first. Both by hand (who is turned away, the
pool's wait, the gauge of the sessions inside and the time it takes to come back to 0 after the burst), on
both tiers, and the same test under Poisson arrivals against M/M/1/K's loss probability."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import serq_frontend
import serq_sim

BURST = """let N = 10;
let K = 4;

pool slots {{ cap K; }}
stage svc : fifo;

gauge inside = holders(slots);

workload {{
  arrive {arrive};
}}

session {{
  branch ({full}) {{
    observe dropped = 1;
    end;
  }}
  observe dropped = 0;
  hold slots (1) {{
    run svc ({service});
  }}
  end;
}}

run {{ horizon {horizon}; warmup {warmup}; seed 1; }}
"""


def run(tmp_path: Path, monkeypatch, tier: str, **fields):
    fields = {"arrive": "batch(N)", "service": "~det(1)", "horizon": "inf", "warmup": 0} | fields
    path = tmp_path / "burst.sq"
    path.write_text(BURST.format(**fields))
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(path))


@pytest.mark.parametrize("tier", ["", "general"])
def test_free_alone_lets_a_batch_past_a_full_pool(tmp_path, monkeypatch, tier):
    report = run(tmp_path, monkeypatch, tier, full="free(slots) < 1")
    # all ten read free 4 before any hold is admitted: none leaves, 4 start at 0 and 6 wait their turn
    assert list(report.observe("dropped").values) == [0.0] * 10
    pool = report.result.pools[0]
    assert pool.admissions == 10
    assert pool.wait == pytest.approx((1 + 2 + 3 + 4 + 5 + 6) / 10)
    gauge = report.gauge("inside")
    assert list(gauge.times) == [0, 7, 8, 9, 10] and list(gauge.values) == [4, 3, 2, 1, 0]


@pytest.mark.parametrize("tier", ["", "general"])
def test_free_less_queued_turns_the_rest_away_at_once(tmp_path, monkeypatch, tier):
    report = run(tmp_path, monkeypatch, tier, full="free(slots) - queued(slots) < 1")
    dropped = report.observe("dropped")
    assert list(dropped.values) == [0.0] * 4 + [1.0] * 6 and list(dropped.sessions) == list(range(10))
    pool = report.result.pools[0]
    assert (pool.admissions, pool.wait) == (4, 0)
    # the burst is over when the gauge is back at 0: the four served one after another, 1 s each
    gauge = report.gauge("inside")
    assert list(gauge.times) == [0, 1, 2, 3, 4] and list(gauge.values) == [4, 3, 2, 1, 0]


def test_with_arrivals_at_distinct_instants_both_tests_are_mm1k(tmp_path, monkeypatch):
    fields = {"arrive": "poisson(0.9)", "service": "~exp(1)", "horizon": 40000, "warmup": 500}
    report = run(tmp_path, monkeypatch, "", full="free(slots) < 1", **fields)
    free = report.observe("dropped")
    less = run(tmp_path, monkeypatch, "", full="free(slots) - queued(slots) < 1", **fields).observe("dropped")
    assert free.values.tobytes() == less.values.tobytes()  # the queue is empty at every arrival
    rho, k = 0.9, 4
    p_k = (1 - rho) * rho**k / (1 - rho ** (k + 1))  # 0.160629
    figure = report.result.observes["dropped"]
    assert abs(figure.mean - p_k) <= figure.ci <= 0.06 * p_k, (figure.mean, figure.ci)


EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "mmck.sq"


@pytest.mark.parametrize(("k", "loss", "response"), [(6, 0.112664, 1.78821), (2, 0.366516, 1.0),
                                                     (float("inf"), 0.0, 5.26316)])
def test_the_mmck_example_gives_the_closed_forms_its_header_states(k, loss, response):
    # the birth-death chain of M/M/c/K at a = 1.8, c = 2, by hand in the header; K = 2 is Erlang B,
    # K = inf Erlang C
    a, c = 1.8, 2
    top = 40 if k == float("inf") else int(k)
    p = [a**n / math.factorial(min(n, c)) / c ** max(n - c, 0) for n in range(top + 1)]
    if k != float("inf"):
        assert p[-1] / sum(p) == pytest.approx(loss, abs=1e-6)
        assert sum(n * x for n, x in enumerate(p)) / sum(p) / (a * (1 - p[-1] / sum(p))) == pytest.approx(response, abs=1e-5)
    report = serq_sim.run(serq_frontend.compile(EXAMPLE, sets={"K": k}))  # its own 100 000 s
    lost, resp = report.result.observes["lost"], report.result.observes["response"]
    assert abs(lost.mean - loss) <= (lost.ci if loss else 0), (lost.mean, lost.ci)
    assert abs(resp.mean - response) <= resp.ci <= 0.12 * response, (resp.mean, resp.ci)


TRACE = """let K = 4;

pool slots { cap K; }
stage until : delay;
stage svc : fifo;

workload {
  arrive batch(10);
  trace "sends.csv" ordered;
}

session {
  turn;
  run until (think);
  branch (free(slots) < 1) {
    observe dropped = 1;
    end;
  }
  observe dropped = 0;
  hold slots (1) {
    run svc (new);
  }
  end;
}

run { horizon inf; seed 1; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_sends_of_one_time_from_a_trace_settle_one_at_a_time(tmp_path, monkeypatch, tier):
    # ten sessions sent at 5 by their delays' ends, each an event of its own: each reads free(slots) after
    # the holds before it were admitted, so free alone turns away the six past the pool's four
    (tmp_path / "sends.csv").write_text("session,turn,new,out,think,forced\n"
                                        + "".join(f"{i},0,1,1,5,0\n" for i in range(10)))
    (tmp_path / "t.sq").write_text(TRACE)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    report = serq_sim.run(serq_frontend.compile(tmp_path / "t.sq"))
    assert list(report.observe("dropped").values) == [0.0] * 4 + [1.0] * 6
    assert list(report.observe("dropped").times) == [5.0] * 10
    assert (report.result.pools[0].admissions, report.result.pools[0].wait) == (4, 0)
