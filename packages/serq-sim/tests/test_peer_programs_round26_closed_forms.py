"""A queueing student's programs, each checked against its closed form: M/M/c (Erlang C), a loss system
(Erlang B: a pool of c lines and a session that leaves when none is free), M/M/1/K (the same admission
control in front of one server: the loss probability and the mean response), a tandem Jackson network and
a finite-source loss system (Engset, a closed workload). Each seeded run's 95 % CI covers the closed form
and is narrow (a few per cent of it), and the two simulator tiers give the same report."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import serq_frontend
from peers import covers
from tiers import same_json


def compile_source(tmp_path: Path, src: str):
    path = tmp_path / "p.sq"
    path.write_text(src)
    return serq_frontend.compile(path)


def erlang_b(a: float, c: int) -> float:
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(a: float, c: int) -> float:
    b = erlang_b(a, c)
    return c * b / (c - a * (1 - b))


LOSS = """let lambda = {lam};
let c = {c};

pool lines {{ cap c; }}
stage svc : {stage};

workload {{
  arrive poisson(lambda);
}}

session {{
  set t0 = now;
  branch (free(lines) < 1) {{
    observe lost = 1;
    end;
  }}
  observe lost = 0;
  hold lines (1) {{
    run svc (~exp(1));
  }}
  observe response = now - t0;
  end;
}}

run {{ horizon 40000; warmup 500; seed 1; }}
"""


def test_mmc_waits_as_erlang_c(tmp_path, monkeypatch):
    prog = compile_source(tmp_path, """let lambda = 2.4;

stage svc : fifo(3);

workload {
  arrive poisson(lambda);
}

session {
  set t0 = now;
  run svc (~exp(1));
  observe response = now - t0;
  end;
}

run { horizon 40000; warmup 500; seed 1; }
""")
    doc = same_json(prog, monkeypatch)
    c_wait = erlang_c(2.4, 3)  # 0.647191: the chance an arrival waits
    assert c_wait == pytest.approx(11.52 / 17.8)
    covers(doc["observes"]["response"], 1 + c_wait / (3 - 2.4), 0.06)  # 2.07865
    assert doc["stages"][0]["utilisation"] == pytest.approx(0.8, abs=0.01)


def test_a_loss_system_blocks_as_erlang_b(tmp_path, monkeypatch):
    doc = same_json(compile_source(tmp_path, LOSS.format(lam=3, c=4, stage="delay")), monkeypatch)
    b = erlang_b(3, 4)
    assert b == pytest.approx(3.375 / 16.375)  # 0.206107
    covers(doc["observes"]["lost"], b, 0.03)
    # the lines carry a (1 - B) calls on average, and the delay stage is busy when any is: 1 - p0
    assert doc["pools"][0]["used"] == pytest.approx(3 * (1 - b), rel=0.02)
    assert doc["stages"][0]["utilisation"] == pytest.approx(1 - 1 / 16.375, abs=0.005)


def test_mm1k_loses_and_responds_as_its_closed_form(tmp_path, monkeypatch):
    doc = same_json(compile_source(tmp_path, LOSS.format(lam=0.9, c=5, stage="fifo")), monkeypatch)
    rho, k = 0.9, 5
    p_k = (1 - rho) * rho**k / (1 - rho ** (k + 1))  # 0.126021
    n = rho / (1 - rho) - (k + 1) * rho ** (k + 1) / (1 - rho ** (k + 1))  # 2.19478 in the system
    covers(doc["observes"]["lost"], p_k, 0.07)
    covers(doc["observes"]["response"], n / (0.9 * (1 - p_k)), 0.03)  # Little: 2.79035
    assert doc["pools"][0]["used"] == pytest.approx(n, rel=0.03)


def test_a_tandem_network_is_two_independent_mm1_queues(tmp_path, monkeypatch):
    prog = compile_source(tmp_path, """let lambda = 0.5;

stage a : fifo;
stage b : fifo;

workload {
  arrive poisson(lambda);
}

session {
  set t0 = now;
  run a (~exp(1));
  set t1 = now;
  run b (~exp(1.25));
  observe ra = t1 - t0;
  observe rb = now - t1;
  end;
}

run { horizon 40000; warmup 500; seed 1; }
""")
    doc = same_json(prog, monkeypatch)
    covers(doc["observes"]["ra"], 1 / (1 - 0.5), 0.05)  # 2
    covers(doc["observes"]["rb"], 1 / (1 / 1.25 - 0.5), 0.08)  # 3.333
    assert [s["utilisation"] for s in doc["stages"]] == pytest.approx([0.5, 0.625], abs=0.01)


def test_a_finite_source_loss_system_blocks_as_engset(tmp_path, monkeypatch):
    prog = compile_source(tmp_path, """let N = 6;
let Z = 3;
let c = 2;

pool lines { cap c; }
stage idle : delay;
stage call : delay;

workload {
  arrive closed(N);
}

session {
  loop {
    run idle (~exp(Z));
    branch (free(lines) < 1) {
      observe blocked = 1;
    } else {
      observe blocked = 0;
      hold lines (1) {
        run call (~exp(1));
      }
    }
  }
}

run { horizon 40000; warmup 500; seed 1; }
""")
    doc = same_json(prog, monkeypatch)
    a, n, c = 1 / 3, 6, 2

    def busy(sources: int) -> list[float]:  # the lines busy, k = 0 .. c, with `sources` sources
        p = [math.comb(sources, k) * a**k for k in range(c + 1)]
        return [x / sum(p) for x in p]

    # an arrival finds every line busy as the time congestion of N - 1 sources (Engset): 0.294118
    covers(doc["observes"]["blocked"], busy(n - 1)[c], 0.03)
    assert doc["pools"][0]["used"] == pytest.approx(sum(k * p for k, p in enumerate(busy(n))), rel=0.02)  # 1.14286


def test_a_closed_network_of_two_queues_responds_as_mean_value_analysis(tmp_path, monkeypatch):
    prog = compile_source(tmp_path, """let N = 8;
let Z = 4;

stage users : delay;
stage cpu : fifo;
stage disk : fifo;

workload {
  arrive closed(N);
}

session {
  loop {
    run users (~exp(Z));
    set t0 = now;
    run cpu (~exp(0.5));
    run disk (~exp(0.8));
    observe response = now - t0;
  }
}

run { horizon 40000; warmup 500; seed 1; }
""")
    doc = same_json(prog, monkeypatch)
    demands, q = (0.5, 0.8), [0.0, 0.0]
    for n in range(1, 9):  # exact MVA: R_k(n) = S_k (1 + Q_k(n - 1)), X(n) = n / (sum R + Z), Q_k = X R_k
        r = [s * (1 + qk) for s, qk in zip(demands, q)]
        x = n / (sum(r) + 4)
        q = [x * rk for rk in r]
    assert sum(r) == pytest.approx(3.41566, abs=1e-5)
    covers(doc["observes"]["response"], sum(r), 0.02)
    assert [s["utilisation"] for s in doc["stages"][1:]] == pytest.approx([x * 0.5, x * 0.8], abs=0.01)
