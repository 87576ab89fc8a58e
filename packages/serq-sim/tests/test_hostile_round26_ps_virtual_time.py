"""A ps stage's virtual time near the top of the doubles (serq_sim.stages.ps_tag, ps_rebase; the fast tier's
attach the same).

A ps stage orders its jobs by tag, the virtual time (the work each job present has received since the stage
began) plus the job's work. With a capacity of 1e308 the virtual time grows by some 1e308 a second, and with
works of 1e308 a tag of 1e308 + 1e308 was inf: the job never completed (its completion time was
(inf - v) / rate = inf, or NaN at an infinite rate), and the run ended with every later session live. Both
tiers agreed on that wrong answer. A ps stage with c times the capacity and c times the works is the same
queue, so ps(1e308) with works of 1e308 must give ps(1)'s report with works of 1; and at ps(inf) every job of
finite work completes at the instant it starts, however large the work."""

from __future__ import annotations

import pytest
from tiers import both

pytestmark = pytest.mark.timeout(60)


def program(kind: str, work: str, arrive: str, run: str) -> str:
    return f"""stage cpu : {kind};
workload {{
  arrive {arrive};
}}
session {{
  set t0 = now;
  run cpu ({work});
  observe response = now - t0;
  end;
}}
run {{ {run} }}
"""


@pytest.mark.parametrize("scale", ["1", "1e308"])
def test_three_jobs_by_hand(scale, monkeypatch):
    # jobs of work 1.5 c arrive at t = 1, 2, 3 on ps(c). A alone until 2 (received c, 0.5 c left), then A and
    # B at c/2 each: A completes at 3 (B has received 0.5 c, c left). B and C share from 3: B completes at 5
    # (C has received c, 0.5 c left), C alone at c: 5.5. Responses 2, 3 and 2.5. At c = 1e308 B's tag was
    # 1e308 + 1.5e308 = inf, and neither B nor C completed.
    src = program(f"ps({scale})", f"1.5 * {scale}", "renewal(1)", "horizon inf; arrivals 3; seed 1;")
    r = both(src, monkeypatch)
    resp = r.observe("response")
    assert list(resp.values) == pytest.approx([2.0, 3.0, 2.5], rel=1e-12)
    assert r.result.ended == 3
    assert r.result.end == pytest.approx(5.5, rel=1e-12)
    st = r.stage("cpu")
    assert st.completions == 3
    # present: 1 job over [1, 2], 2 over [2, 5], 1 over [5, 5.5], over the run's 5.5 s: 7.5 / 5.5
    assert st.present == pytest.approx(7.5 / 5.5, rel=1e-12)
    assert not any("wait for ever" in n for n in r.result.notes)


def test_a_busy_queue_at_1e308_is_the_queue_at_1(monkeypatch):
    # ρ = 1 (Poisson arrivals of rate 1, works of c on ps(c)): a busy period of many seconds, whose virtual
    # time passes 1e308 within two of them; the same arrivals at c = 1 are the same queue
    run = "horizon 100; warmup 10; seed 1;"
    one = both(program("ps(1)", "1", "poisson(1)", run), monkeypatch)
    big = both(program("ps(1e308)", "1e308", "poisson(1)", run), monkeypatch)
    assert one.stage("cpu").completions > 50
    assert big.stage("cpu").completions == one.stage("cpu").completions
    assert big.result.ended == one.result.ended and big.result.arrivals == one.result.arrivals
    assert list(big.observe("response").values) == pytest.approx(list(one.observe("response").values), rel=1e-9)
    assert big.stage("cpu").present == pytest.approx(one.stage("cpu").present, rel=1e-9)


def test_an_infinite_capacity_completes_every_finite_work_at_once(monkeypatch):
    # ps(inf): each job at an infinite rate; a work of 1e308 takes no time, as a work of 1 does. The second
    # job's tag was 1e308 + 1e308 = inf, and inf / inf NaN: no completion, every later job stuck behind it.
    r = both(program("ps(inf)", "1e308", "poisson(1)", "horizon 100; warmup 10; seed 1;"), monkeypatch)
    resp = r.observe("response")
    assert len(resp.values) == r.result.ended > 50
    assert set(resp.values) == {0.0}
    assert r.stage("cpu").present == 0.0
    assert not r.result.notes


def test_infinite_work_beside_them_still_never_completes(monkeypatch):
    # a job of infinite work keeps its infinite tag through the move back to 0: it never completes, while the
    # finite works beside it do (1e308 at c/2 = 0.5e308 a second: 2 s each, one at a time). Alone from 3 to 6
    # it took the virtual time to inf (3e308), where an infinite tag less it was NaN
    src = program("ps(1e308)", "serial == 0 ? inf : 1e308", "renewal(3)", "horizon 100; seed 1;")
    r = both(src, monkeypatch)
    # sessions 1 .. 32 arrive at 6, 9, …, 99 and each completes 2 s later, the last at 101 (after the horizon)
    assert len(r.observe("response").values) == 31
    assert list(r.observe("response").values) == pytest.approx([2.0] * 31, rel=1e-9)
    assert 0 not in set(r.observe("response").sessions)
    # the job of infinite work is present throughout [3, 100], one of the others over 2 s of every 3 from 6
    assert r.stage("cpu").present == pytest.approx((97 + 31 * 2 + 1) / 100, rel=1e-9)


def test_a_family_at_1e308_is_the_family_at_1(monkeypatch):
    # each member's virtual time moves back on its own (the fast tier's heap of a member, f{f}_h[m])
    def fam(c: str) -> str:
        return f"""stage cpu[2] : ps({c});
workload {{
  arrive poisson(2);
}}
session {{
  set t0 = now;
  run cpu[serial % 2] ({c});
  observe response = now - t0;
  end;
}}
run {{ horizon 100; warmup 10; seed 1; }}
"""
    one, big = both(fam("1"), monkeypatch), both(fam("1e308"), monkeypatch)
    for m in (0, 1):
        assert big.stage("cpu", m).completions == one.stage("cpu", m).completions > 50
        assert big.stage("cpu", m).present == pytest.approx(one.stage("cpu", m).present, rel=1e-9)
    assert list(big.observe("response").values) == pytest.approx(list(one.observe("response").values), rel=1e-9)
