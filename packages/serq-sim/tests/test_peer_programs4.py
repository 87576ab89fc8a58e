"""Programs of a fourth round of users (peer_programs4/*.sq), of kinds the first three rounds lack: a
tandem pipeline whose stage family is sized by a let and walked by a loop (Burke), a closed loop of agents
on a multi-server endpoint with tool calls (a product-form network with a load-dependent station), an
Erlang loss system with heavy-tailed holding times (insensitivity, a gauge), the online estimates an
admission controller reads, a drained batch (`run { arrivals N; }`) whose Little identities hold exactly,
through a library of definitions and records; and, traced by hand, a step engine that serves the fewest
tokens left first, aging priorities in a queue by `waited`, a priority preemption whose victim goes back
to the tail or the head, the timing of a spill to an offload tier and its load-back, reserve held and
`free`, an out-of-order chat trace with a prefix cache and forced misses, P/D disaggregation with a
load-aware router over a shared KV link, and an engine that never mixes a prefill into a decode batch.
Each runs on the tier serQ picks and on the general engine,
which must agree byte for byte. Statistical checks fix their seeds and assert a 95 % CI that covers the
theory and is narrow."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from conform import both_tiers, covers
from serq_report.json import encode_json
from serq_sim.fast import tier

HERE = Path(__file__).resolve().parent / "peer_programs4"


def both(name: str, monkeypatch, *, sets=None, **kw):
    """``peer_programs4/NAME`` on both tiers (conform.both_tiers). Returns the report."""
    return both_tiers(HERE / name, monkeypatch, sets=sets, **kw)


def by_session(report, name: str) -> dict[int, float]:
    o = report.observe(name)
    return dict(zip(o.sessions.tolist(), o.values.tolist()))


def samples(report, name: str) -> list[tuple[int, float, float]]:
    """(session, time, value) of every sample of ``name``, in time then session order."""
    o = report.observe(name)
    return sorted(zip(o.sessions.tolist(), o.times.tolist(), o.values.tolist()), key=lambda r: (r[1], r[0]))


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# --- closed forms ------------------------------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_a_tandem_pipeline_is_a_product_of_mm1_queues(monkeypatch):
    # tandem.sq: 3 exp(1) stages in series at lambda 0.5 (Burke): response 3 / 0.5 = 6, a hop 2, each
    # stage busy 0.5 and holding 1 on average, the live sessions 3 (Little). It is in the fast tier.
    assert tier(serq_frontend.compile(path=str(HERE / "tandem.sq"))) == "fast"
    r = both("tandem.sq", monkeypatch)
    covers(r.stats("response"), 6.0, 0.04)
    covers(r.stats("hop"), 2.0, 0.04)
    for j in range(3):
        st = r.stage("s", j)
        assert abs(st.utilisation - 0.5) < 0.01 and abs(st.present - 1.0) < 0.08, j
    assert abs(r.result.mean_live - 3.0) < 0.2
    assert math.isclose(sum(r.stage("s", j).present for j in range(3)), r.result.mean_live, rel_tol=1e-9)


def closed_llm_agents(n: int, c: int, z: float, s: float, t: float, p: float) -> tuple[float, float, float]:
    """agents_mvs.sq's network: the LLM a c-server exponential station of demand D = S / (1 - p) per task,
    think and tool one infinite-server station of demand Y = Z + p T / (1 - p). Product form:
    p(k at the LLM) ~ D^k / beta(k) * Y^(n-k) / (n-k)!, beta(k) = prod_{i<=k} min(i, c). Returns the task
    throughput X, the mean number at the LLM and the LLM's utilisation (busy servers / c)."""
    d, y = s / (1 - p), z + p * t / (1 - p)
    w = []
    for k in range(n + 1):
        beta = math.prod(min(i, c) for i in range(1, k + 1))
        w.append(d ** k / beta * y ** (n - k) / math.factorial(n - k))
    pk = [x / sum(w) for x in w]
    busy = sum(pk[k] * min(k, c) for k in range(n + 1))
    return busy / d, sum(k * pk[k] for k in range(n + 1)), busy / c


@pytest.mark.timeout(60)
def test_closed_agents_on_a_two_replica_endpoint_are_product_form(monkeypatch):
    # agents_mvs.sq: 6 agents, think 4, LLM fifo(2) of mean 1, a tool call of mean 2 after an LLM call
    # w.p. 1/2. X = 0.69463 tasks/s, task response N / X - Z = 4.6377 (the response time law), the LLM
    # holds 1.8322 and is busy 0.69463 of its two servers; 2 LLM calls a task (geometric).
    x, at_llm, util = closed_llm_agents(6, 2, 4.0, 1.0, 2.0, 0.5)
    assert abs(x - 0.694628) < 1e-6 and abs(6 / x - 4 - 4.637720) < 1e-6
    r = both("agents_mvs.sq", monkeypatch)
    covers(r.stats("response"), 6 / x - 4, 0.03)
    covers(r.stats("llm_calls"), 2.0, 0.01)
    llm = r.stage("llm")
    assert abs(llm.utilisation - util) < 0.012
    assert abs(llm.present - at_llm) < 0.04 * at_llm
    assert abs(r.stage("think").throughput - x) < 0.01 * x
    assert abs(llm.throughput - 2 * x) < 0.01 * 2 * x
    assert math.isclose(r.result.mean_live, 6, rel_tol=1e-12)


def erlang_b(c: int, a: float) -> float:
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


@pytest.mark.timeout(60)
def test_an_erlang_loss_system_is_insensitive_to_the_holding_law(monkeypatch):
    # erlang_loss.sq: 4 slots, lambda 3, holding h2(1, 4): B(4, 3) = 0.206107 whatever the holding law.
    # Arrivals are lost with that probability (PASTA: the observe at arrivals), the slots are all busy that
    # fraction of the time (the gauge), and the slots carry 3 (1 - B) on average.
    b = erlang_b(4, 3.0)
    assert abs(b - 27 / 131) < 1e-12
    r = both("erlang_loss.sq", monkeypatch)
    covers(r.stats("lost"), b, 0.07)
    full = r.result.gauges["full"]
    assert abs(full.mean - b) <= full.ci and full.ci < 0.07 * b
    assert (full.min, full.max) == (0.0, 1.0)
    assert abs(r.pool("slots").used - 3 * (1 - b)) < 0.03 * 3 * (1 - b)
    # every admitted request passed through the delay stage; the lost ones never held a slot
    assert r.pool("slots").admissions == round(r.stats("lost").count * (1 - r.stats("lost").mean))


@pytest.mark.timeout(60)
def test_the_online_estimates_of_an_mm1_queue(monkeypatch):
    # online_estimates.sq: lambda 0.6, mu 1. Averaged over the arrivals, the exponentially weighted
    # estimates are the queue's figures: lambda 0.6, rho 0.6, the wait 1.5 (their CIs are batch means over
    # strongly correlated samples, so the tolerance is the CI and 3 % of the value). At every arrival the
    # price is docs/language.md's formula of the same instant's estimates (s_h 0.25, ds 0.5).
    r = both("online_estimates.sq", monkeypatch)
    for name, want in (("lam_hat", 0.6), ("rho_hat", 0.6), ("w_hat", 1.5)):
        st = r.stats(name)
        assert abs(st.mean - want) <= max(st.ci, 0.03 * want), (name, st.mean, st.ci)
    lam, rho, w = (r.observe(n).values for n in ("lam_hat", "rho_hat", "w_hat"))
    price = r.observe("price_hat").values
    sh, ds = 0.25, 0.5
    sm = sh + ds
    want = ds + lam * (sm * sm - sh * sh) / (2 * (1 - rho)) + lam * w * ds / (1 - rho)
    assert np.allclose(price, want, rtol=1e-12, atol=1e-12)
    assert (rho <= 0.99).all() and (rho >= 0).all()


def geometric_moments(mean: float) -> tuple[float, float]:
    """E[1 + floor(X)] and E[(1 + floor(X))^2] for X ~ exp(mean): floor(X) is geometric, q = e^(-1/mean)."""
    q = math.exp(-1 / mean)
    e = 1 + q / (1 - q)
    return e, q / (1 - q) ** 2 + e * e


@pytest.mark.timeout(60)
def test_a_drained_batch_satisfies_little_exactly(monkeypatch, tmp_path):
    # drain_little.sq (serving_lib.sq's definitions): 12 000 requests at lambda 2 through one slot and one
    # server, service 0.0005 prompt + 0.004 out, drained. Over [0, end]: the integral of the live sessions
    # is the sum of the responses, that of the slot's queue the sum of the waits, that of the busy server
    # the sum of the service times; the run ends at the last departure; one record a request. The mean
    # response is Pollaczek-Khinchine's for the service's first two moments.
    r = both("drain_little.sq", monkeypatch, sets={"N": 12000})
    end = r.result.end
    resp, wait = r.observe("response").values, r.observe("wait").values
    assert len(resp) == len(wait) == 12000 and r.result.warmup == 0
    assert math.isclose(r.result.mean_live * end, resp.sum(), rel_tol=1e-9)
    assert math.isclose(r.pool("slots").queue * end, wait.sum(), rel_tol=1e-9)
    assert math.isclose(r.stage("gpu").utilisation * end, (resp - wait).sum(), rel_tol=1e-9)
    rec = r.records()
    assert len(rec) == 12000 and sorted(rec.session.tolist()) == list(range(12000))
    assert end == rec.done.max()
    for col, name in (("done", "response"), ("started", "wait")):
        obs = by_session(r, name)
        assert np.allclose((rec[col] - rec.sent).to_numpy(), [obs[s] for s in rec.session], rtol=0, atol=1e-9)
    service = 0.0005 * rec.prompt + 0.004 * rec.out
    assert np.allclose((rec.done - rec.started).to_numpy(), service.to_numpy(), rtol=1e-9, atol=1e-12)
    ep, ep2 = geometric_moments(200)
    eo, eo2 = geometric_moments(50)
    a, b, lam = 0.0005, 0.004, 2
    es = a * ep + b * eo
    es2 = a * a * ep2 + 2 * a * b * ep * eo + b * b * eo2
    covers(r.stats("response"), es + lam * es2 / (2 * (1 - lam * es)), 0.08)
    # the same program without its records is in the fast tier, and gives the same figures
    (tmp_path / "serving_lib.sq").write_text("\n".join(
        line for line in (HERE / "serving_lib.sq").read_text().splitlines() if "record req" not in line))
    (tmp_path / "drain_little.sq").write_text((HERE / "drain_little.sq").read_text())
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert tier(serq_frontend.compile(path=str(tmp_path / "drain_little.sq"))) == "fast"
    fast = both_tiers(tmp_path / "drain_little.sq", monkeypatch, sets={"N": 12000})
    assert fast.result.end == end and fast.result.mean_live == r.result.mean_live
    assert fast.observe("response").values.tobytes() == resp.tobytes()


# --- by hand -----------------------------------------------------------------------------------------------------

def token_srpt(budget: float, gap: float, direction: int, mode: int, frac: float = 0.0, n: int = 6
               ) -> dict[int, float]:
    """srpt_tokens.sq written out (language.txt §3's step stage): the iteration starts when the stage is
    idle and has residents (every arrival up to its start included), lasts 1, and serves the residents in
    ascending (direction * tokens left, arrival) order, one token each (mode 1; what is left of it, or of
    the budget, when less) or as many as the budget left reaches (mode 0), until the budget is spent. The
    end time of each request."""
    sizes = [frac + 1 + ((s + 1) * 5) % 7 for s in range(n)]
    arrive = [gap * (s + 1) for s in range(n)]
    left, done, t = list(sizes), {}, 0.0
    while len(done) < n:
        here = [s for s in range(n) if arrive[s] <= t and s not in done]
        if not here:
            t = min(arrive[s] for s in range(n) if s not in done)
            continue
        spend, got = budget, {}
        for s in sorted(here, key=lambda s: (direction * left[s], s)):
            if spend <= 0:
                break
            got[s] = min(left[s], spend) if mode == 0 else min(1, left[s], spend)
            spend -= got[s]
        t += 1
        for s, k in got.items():
            left[s] -= k
            if left[s] == 0:
                done[s] = t
    return done


@pytest.mark.timeout(60)
def test_a_step_engine_serving_the_fewest_tokens_left_first(monkeypatch):
    # srpt_tokens.sq under budgets 1 and 3, gaps 1.5 and 0.5, shortest and longest remaining first, prefill
    # and decode. A hand check of one: budget 2, gap 1.5, SRPT prefill: sizes 6, 4, 2, 7, 5, 3 at 1.5, 3,
    # ..., 9; request 0 runs [1.5, 4.5] alone (2 a round) and ends at 4.5, request 1 [4.5, 6.5] with
    # request 2 (2 tokens) going first at [4.5, 5.5], ...
    first = token_srpt(2, 1.5, 1, 0)
    assert first[0] == 4.5 and first[2] == 5.5
    # With a quarter token more a request (a decode's last token a fraction) and a budget of 2.5 tokens
    # (a decoder gets half a token when half is left).
    for budget, gap, direction, mode, frac in (
            (2, 1.5, 1, 0, 0), (1, 0.5, 1, 1, 0), (3, 0.5, -1, 0, 0), (3, 1.5, 1, 1, 0), (1, 1.5, -1, 0, 0),
            (2, 0.5, -1, 1, 0), (1, 1.5, 1, 1, 0.25), (2.5, 0.5, -1, 1, 0.25), (2.5, 1.5, 1, 0, 0.25)):
        sets = {"B": budget, "g": gap, "dir": direction, "mode": mode, "frac": frac}
        r = both("srpt_tokens.sq", monkeypatch, sets=sets)
        want = token_srpt(budget, gap, direction, mode, frac)
        got = by_session(r, "done")
        assert got == want, (sets, got, want)
        assert r.result.end == max(want.values())


@pytest.mark.timeout(30)
def test_aging_priorities_in_a_queue_by_waited(monkeypatch, tmp_path):
    # aging.sq (the trace is in the program's header): with aging the batch request L1 overtakes H4.
    for a, waits in ((1.5, [0, 2.8, 0.1, 0.5, 1.1]), (100, [0, 3.8, 0.1, 0.5, 0.1])):
        r = both("aging.sq", monkeypatch, sets={"A": a})
        rec = r.records().sort_values("session")
        assert rec.prio.tolist() == [1, 1, 0, 0, 0]
        assert np.allclose(rec.wait.to_numpy(), waits, rtol=0, atol=1e-12), (a, rec.wait.tolist())
        assert np.allclose((rec.start - rec.sent).to_numpy(), waits, rtol=0, atol=1e-12)
        assert sorted(rec.start.tolist()) == [0, 1, 2, 3, 4]
        assert math.isclose(r.pool("slot").wait, sum(waits) / 5, rel_tol=1e-12)
        # without its records the program is in the fast tier, which orders the queue the same way
        fast = tmp_path / f"aging_{a}.sq"
        fast.write_text((HERE / "aging.sq").read_text().replace(
            "  record req { prio = prio; sent = t0; start = start; wait = start - t0; }\n",
            "  observe wait = start - t0;\n"))
        monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        assert tier(serq_frontend.compile(path=str(fast))) == "fast"
        got = by_session(both_tiers(fast, monkeypatch, sets={"A": a}), "wait")
        assert np.allclose([got[s] for s in range(5)], waits, rtol=0, atol=1e-12)


@pytest.mark.timeout(30)
def test_a_priority_preemption_and_where_the_victim_goes_back(monkeypatch):
    # preempt_tail.sq (the trace is in the program's header).
    for tail, fresh, c_resp, starts in ((1, 0, 1.3, [(1, 0.0), (0, 0.0), (2, 0.5), (0, 1.5)]),
                                        (1, 1, 1.3, [(1, 0.0), (0, 0.0), (2, 0.5), (0, 1.5)]),
                                        (0, 0, 2.3, [(1, 0.0), (0, 0.0), (0, 1.5), (2, 1.5)])):
        r = both("preempt_tail.sq", monkeypatch, sets={"tail": tail, "fresh": fresh})
        got = by_session(r, "response")
        assert got.keys() == {0, 1, 2}
        assert close(got[0], 4.5) and close(got[1], 1.5) and close(got[2], c_resp), (tail, got)
        assert sorted((s, t) for s, t, _ in samples(r, "start")) == sorted(starts), tail
        used = r.pool("kv" if tail else "kv_head")
        assert (used.preemptions, used.admissions) == (1, 4)


@pytest.mark.timeout(30)
def test_a_spilled_prefix_is_usable_when_its_write_lands(monkeypatch):
    # spill_timing.sq (the trace is in the program's header).
    r = both("spill_timing.sq", monkeypatch)
    assert [(t, v) for _, t, v in samples(r, "c1") + samples(r, "c2") + samples(r, "c3")] == [
        (2.5, 0.0), (3.5, 16.0), (4.5, 32.0)]
    assert samples(r, "got") == [(0, 4.5, 32.0)]
    assert samples(r, "done") == [(0, 8.5, 8.5)]
    gpu, cpu, pcie = r.pool("gpu"), r.pool("cpu"), r.stage("pcie")
    assert (gpu.spills, gpu.evicted_units, gpu.evicted_entries, gpu.admissions) == (4, 64.0, 2, 3)
    assert pcie.completions == 5
    # the link's busy time 4 writes of 1 and a read of 2; waits 0, 1 (the second block), 0, 1, 2
    assert close(pcie.utilisation, 6 / 100) and close(pcie.wait, 4 / 5)
    # A's 32 of the tier are held over [4.5, 8.5]; the GPU held 32 over [0, 1], [2, 3] and [4.5, 8.5]
    assert close(cpu.used, 32 * 4 / 100) and close(gpu.used, 32 * 6 / 100)
    # cached on the tier: A's blocks from their eviction (2) to its hold (4.5), B's from 4.5 on, A's again
    # from 8.5: (32 * 2.5 + 32 * 95.5 + 32 * 91.5) / 100
    assert close(cpu.cached, (32 * 2.5 + 32 * 95.5 + 32 * 91.5) / 100)


@pytest.mark.timeout(30)
def test_reserve_held_and_what_free_says(monkeypatch):
    # reserve_free.sq (the trace is in the program's header).
    for held, free0, free1, resp in ((1, 4.0, 4.0, {0: 3.0, 1: 3.5, 2: 3.4}),
                                     (0, 8.0, 0.0, {0: 3.0, 1: 1.0, 2: 1.9})):
        r = both("reserve_free.sq", monkeypatch, sets={"held": held})
        assert samples(r, "free0") == [(0, 0.0, free0)] and samples(r, "free1") == [(0, 1.0, free1)]
        got = by_session(r, "response")
        assert got.keys() == resp.keys() and all(close(got[s], v) for s, v in resp.items()), (held, got)


@pytest.mark.timeout(30)
def test_an_out_of_order_chat_trace_with_a_prefix_cache(monkeypatch, tmp_path):
    # trace_cache.sq (the trace is in the program's header): hits 0, 0, 320 and 0; ends 16.32 and 20.1.
    r = both("trace_cache.sq", monkeypatch)
    assert [(s, round(t, 9), v) for s, t, v in samples(r, "hit")] == [
        (0, 10.0, 0.0), (0, 12.2, 0.0), (0, 15.71, 320.0), (1, 20.0, 0.0)]
    assert [(s, v) for s, _, v in samples(r, "turns")] == [(0, 3.0), (1, 1.0)]
    done = by_session(r, "done")
    assert math.isclose(done[0], 16.32, rel_tol=1e-12) and math.isclose(done[1], 20.1, rel_tol=1e-12)
    assert r.result.end == done[1] and r.result.turns == 4
    # Without `ordered` each arrival replays a trace session drawn uniformly: of 4000 sessions, those that
    # replayed the first (3 turns, hits 0, 0, 320) are a binomial(4000, 1/2), and every session is one of the
    # two whole.
    (tmp_path / "trace_chat.csv").write_text((HERE / "trace_chat.csv").read_text())
    (tmp_path / "u.sq").write_text((HERE / "trace_cache.sq").read_text().replace(" ordered;", ";"))
    u = both_tiers(tmp_path / "u.sq", monkeypatch, arrivals=4000, horizon=1e6)
    turns = u.observe("turns").values
    assert len(turns) == 4000 and set(turns.tolist()) == {1.0, 3.0}
    assert abs((turns == 3).mean() - 0.5) < 3 * math.sqrt(0.25 / 4000)
    hits = u.observe("hit")
    per = {}
    for s, v in zip(hits.sessions.tolist(), hits.values.tolist()):
        per.setdefault(s, []).append(v)
    assert all(v in ([0.0, 0.0, 320.0], [0.0]) for v in per.values())


@pytest.mark.timeout(30)
def test_pd_disaggregation_with_a_load_aware_router(monkeypatch):
    # pd_router.sq (the trace is in the program's header).
    r = both("pd_router.sq", monkeypatch)
    rec = r.records().sort_values("session")
    assert rec.decoder.tolist() == [0, 1, 0]
    assert rec.prefilled.tolist() == [2.0, 2.0, 3.0]
    assert np.allclose(rec.read.to_numpy(), [7.6, 4.5, 6.7], rtol=1e-12)
    assert np.allclose(rec.done.to_numpy(), [10.7, 9.5, 8.7], rtol=1e-12)
    assert (r.stage("P").iterations, r.stage("D", 0).iterations, r.stage("D", 1).iterations) == (3, 4, 5)
    # the link carried a read from 2 to 7.6; P's KV held each prompt until its read ended (the lease)
    assert math.isclose(r.stage("link").utilisation, 5.6 / 100, rel_tol=1e-9)
    assert math.isclose(r.pool("kvP").used, (150 * 7.6 + 50 * 4.5 + 80 * 6.7) / 100, rel_tol=1e-9)
    # D[1] held r1's 50 from 2 and a block more from its first decode (4.5) to 9.5
    assert math.isclose(r.pool("kvD", 1).used, (50 * 2.5 + 60 * 5) / 100, rel_tol=1e-9)


@pytest.mark.timeout(60)
def test_the_text_report_of_a_drained_hand_trace(tmp_path):
    # The command line on srpt_tokens.sq: the report's end is the last request's (15.5 for budget 2, gap
    # 1.5), `done` is an instant (listed, not tabled), and the JSON report says the same.
    import subprocess
    import sys

    path = str(HERE / "srpt_tokens.sq")
    p = subprocess.run([sys.executable, "-m", "serq", "run", path, "--no-progress", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    want = token_srpt(2, 1.5, 1, 0)
    assert j["end"] == max(want.values()) == 15.5 and j["arrivals"] == 6
    assert j["instants"] == {"done": 6}
    assert math.isclose(j["observes"]["response"]["mean"],
                        sum(want[s] - 1.5 * (s + 1) for s in want) / 6, rel_tol=1e-12)
    prog = serq_frontend.compile(path=path)
    assert json.loads(encode_json(serq_sim.run(prog)))["end"] == 15.5


@pytest.mark.timeout(30)
def test_exclusive_prefill_against_mixed_batches(monkeypatch, tmp_path):
    # exclusive.sq (the trace is in the program's header), and the same engine serving mixed batches.
    mixed = tmp_path / "mixed.sq"
    mixed.write_text((HERE / "exclusive.sq").read_text().replace("serve exclusive prefill;", "serve admission;"))
    for path, first, done, counts in (
            (HERE / "exclusive.sq", {0: 2.0, 1: 3.0, 2: 4.0}, {0: 7.0, 1: 6.0, 2: 5.0}, (7, 4, 3, 0)),
            (mixed, {0: 2.0, 1: 2.0, 2: 4.0}, {0: 5.0, 1: 4.0, 2: 5.0}, (5, 2, 2, 1))):
        r = both_tiers(path, monkeypatch)
        assert by_session(r, "first") == first and by_session(r, "done") == done, path.name
        e = r.stage("E")
        assert (e.iterations, e.prefill_only, e.decode_only, e.mixed) == counts, path.name
