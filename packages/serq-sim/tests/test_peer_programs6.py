"""Programs of a sixth round of users (peer_programs6/*.sq), of kinds the earlier rounds lack: a gateway of
per-tenant request slots (Erlang C per tenant) and one with a priority `queue by` at the GPU (Cobham's
three classes; a `queue by` or `admit via` that no hold's waiting reaches is a warning now), a closed-loop
benchmark client in lock step on a step engine (its cycle by hand), an M/D/1 queue watched by gauges
(Pollaczek-Khinchine and Little), multi-turn chat whose every follow-up finds its history (row by row), a
drained P/D deployment with a least-loaded decode router and a drained SLO gate with priority preemption
(every token and every preemption accounted for), and the fewest GPUs meeting a p99 wait (M/M/c's
waiting-time law, through the capacity search). Each runs on the tier serQ picks and on the general
engine, which must agree byte for byte."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from conform import both_tiers, covers

HERE = Path(__file__).resolve().parent / "peer_programs6"


def both(name: str, monkeypatch, **kw):
    return both_tiers(HERE / name, monkeypatch, **kw)


def erlang_c(c: int, a: float) -> float:
    """The probability of waiting in M/M/c at offered load ``a``."""
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


def test_per_tenant_slots_make_each_tenant_an_erlang_c_queue(monkeypatch):
    # tenant_slots.sq: tenants at 0.4, 1 and 1.6 requests/s, two slots each, exponential service of mean 1
    # behind a backend that scales out: W = C(2, a) / (2 - a)
    r = both("tenant_slots.sq", monkeypatch)
    for name, lam, rel in (("w0", 0.4, 0.4), ("w1", 1.0, 0.2), ("w2", 1.6, 0.15)):
        covers(r.stats(name), erlang_c(2, lam) / (2 - lam), rel)
    assert abs(erlang_c(2, 1.6) / 0.4 - 16 / 9) < 1e-12


def test_a_priority_queue_at_the_gpu_is_cobhams_formula(monkeypatch):
    # gateway_tenants.sq: tenant 2 served first, tenant 0 last: W0 = 0.6; 0.6 / 0.8, 0.6 / (0.8 * 0.6),
    # 0.6 / (0.6 * 0.4)
    r = both("gateway_tenants.sq", monkeypatch, horizon=60000)
    for name, theory in (("w2", 0.75), ("w1", 1.25), ("w0", 2.5)):
        covers(r.stats(name), theory, 0.15)
    assert not [n for n in r.result.notes if "orders no one" in n]


def test_a_queue_by_or_admit_via_that_no_waiting_reaches_is_a_warning():
    # A hold waits in the queue of its first pool: with the tenants' slots first, gpu's `queue by` orders no
    # one (the slots' heads are tried in declaration order, tenant 0 first: the opposite of prio), and the
    # report says so; likewise an `admit via` on a pool no hold names first, which admitted at once, outside
    # the engine's iterations, with no word.
    src = (HERE / "gateway_tenants.sq").read_text()
    swapped = src.replace("hold gpu (1), slots[tenant] (1)", "hold slots[tenant] (1), gpu (1)")
    assert swapped != src
    r = serq_sim.run(serq_frontend.compile(source=swapped, sets={}, defs={}), horizon=2000)
    (note,) = [n for n in r.result.notes if "orders no one" in n]
    assert note.startswith("warning: pool gpu's `queue by` orders no one: a hold waits in the queue of its first pool")
    assert "names slots first" in note
    assert r.warnings
    engine = ("pool reqs { cap 4; }\npool kv { cap 100000; block 16; admit via engine; }\n"
              "stage engine : step { budget 64; cost 0.01; memory kv; }\nworkload { arrive batch(2); }\n"
              "session { HOLD { run engine prefill (100) growing kv; } end; }\nrun { horizon 10; }\n")
    for hold, warned in (("hold reqs (1), kv (100)", True), ("hold kv (100), reqs (1)", False)):
        r = serq_sim.run(serq_frontend.compile(source=engine.replace("HOLD", hold), sets={}, defs={}))
        notes = [n for n in r.result.notes if "admits no one" in n]
        assert len(notes) == warned, (hold, r.result.notes)
        assert all(n.startswith("warning: pool kv's `admit via engine` admits no one") for n in notes)


def test_a_spill_of_a_pool_that_caches_nothing_is_a_warning():
    # offload written without `cache` on the GPU's hold: no prefix is kept, so no eviction ever reaches
    # the CPU tier, and the report of a tier that stayed empty said nothing of why
    src = ("pool kv { cap 64; block 16; evict lru; spill cpu via pcie (size) when (1); }\npool cpu { cap 640; }\n"
           "stage pcie : ps(100);\nstage d : delay;\nworkload { arrive poisson(1); }\n"
           "session { hold kv (40) { run d (1); } CACHE end; }\nrun { horizon 200; seed 1; }\n")
    for cache, warned in (("", True), ("cache (40)", False)):
        r = serq_sim.run(serq_frontend.compile(source=src.replace("CACHE", cache), sets={}, defs={}))
        notes = [n for n in r.result.notes if "writes nothing" in n]
        assert len(notes) == warned, (cache, r.result.notes)
        assert all(n.startswith("warning: pool kv's `spill` writes nothing: no hold of kv has `cache`") for n in notes)
        assert (r.pool("kv").spills > 0) != warned


def test_a_closed_benchmark_client_moves_in_lock_step(monkeypatch):
    # closed_bench.sq: N = 8 users, prompts of 200, 20 output tokens, cost 0.01 + 2e-5 tokens: a cycle of
    # (0.01 + 2e-5 * 1600) + 19 (0.01 + 2e-5 * 8) = 0.23504, every TTFT 0.042, every response a cycle
    r = both("closed_bench.sq", monkeypatch, horizon=60)
    cycle = (0.01 + 2e-5 * 8 * 200) + 19 * (0.01 + 2e-5 * 8)
    resp = r.observe("response").values
    assert len(resp) > 0 and all(abs(v - cycle) < 1e-9 for v in resp)
    assert all(abs(v - 0.042) < 1e-12 for v in r.observe("ttft").values)
    # Little: N = X R over the window after the warm-up, give or take the cycle in flight at each end
    assert abs(len(resp) - 50 * 8 / cycle) <= 8
    assert r.result.mean_live == 8
    eng = r.stage("engine")
    assert eng.utilisation == 1


def test_a_benchmark_of_m_prompts_at_concurrency_n_runs_in_waves(monkeypatch):
    # bench_prompts.sq: 1000 requests at 0, at most 8 in flight: 125 waves of the lock-step cycle 0.23504,
    # the i-th request (in arrival order) done at (floor(i / 8) + 1) 0.23504
    r = both("bench_prompts.sq", monkeypatch)
    cycle = (0.01 + 2e-5 * 8 * 200) + 19 * (0.01 + 2e-5 * 8)
    assert abs(r.result.end - 125 * cycle) < 1e-9
    o = r.observe("e2e_from_start")
    done = sorted(zip(o.sessions.tolist(), o.values.tolist()))
    assert len(done) == 1000
    assert all(abs(v - (i // 8 + 1) * cycle) < 1e-9 for (i, v) in done)
    req = r.result.requests
    assert req.completed == 1000 and abs(req.ttft.mean - 0.042) < 1e-12 and abs(req.e2el.mean - cycle) < 1e-12


def test_gauges_of_an_md1_queue_are_pollaczek_khinchine_and_little(monkeypatch):
    # md1_gauge.sq: rho 0.8, service 1: Wq = 0.8 / (2 * 0.2) = 2; queue(gpu) counts the jobs present,
    # L = lam (Wq + 1) = 2.4; busy(gpu) is rho
    r = both("md1_gauge.sq", monkeypatch, horizon=100000)
    covers(r.stats("wait"), 2.0, 0.06)
    gw, gb = r.result.gauges["waiting"], r.result.gauges["busy_now"]
    assert abs(gw.mean - 2.4) <= gw.ci and gw.ci < 0.06 * 2.4
    assert abs(gb.mean - 0.8) <= gb.ci
    # Little on the run's own figures
    assert abs(gw.mean - r.stage("gpu").throughput * r.stats("response").mean) < 1e-3 * gw.mean


def test_every_follow_up_turn_finds_its_whole_history(monkeypatch, tmp_path):
    # chat_turns.sq: KV for every conversation, so each follow-up's hit is its previous sequence K in whole
    # blocks but its last token (floor((K - 1) / 16) * 16), and a first turn's 0
    r = both("chat_turns.sq", monkeypatch, horizon=400)
    rows = r.records("turns")
    before, got = rows["before"].tolist(), rows["got"].tolist()
    assert len(before) > 100 and any(k > 0 for k in before)
    assert got == [0 if k == 0 else (k - 1) // 16 * 16 for k in before]
    assert r.pool("kv").evicted_entries == 0


def test_a_drained_pd_deployment_accounts_for_every_token(monkeypatch):
    # pd_least_loaded.sq drained: the prefill engine computes every prompt token, the decode engines every
    # output token (the first one included), the decoders' NICs carry every prompt, every request is a row
    r = both("pd_least_loaded.sq", monkeypatch, arrivals=150, horizon=math.inf, warmup=0)
    rows = r.records("req")
    assert len(rows) == 150 == r.result.ended
    prompt, out = int(rows["prompt"].sum()), int(rows["output"].sum())
    p = r.stage("P")
    assert abs(p.tokens * p.iterations - prompt) < 1e-6 * prompt
    d = [r.stage("D", j) for j in range(3)]
    assert abs(sum(s.tokens * s.iterations for s in d) - out) < 1e-6 * out
    assert sum(r.stage("nic", j).completions for j in range(3)) == 150
    assert sorted(rows["engine"].value_counts().index.tolist()) == [0, 1, 2]
    assert all(r.pool("kvD", j).admissions == int((rows["engine"] == j).sum()) for j in range(3))


def test_a_drained_slo_gate_accounts_for_every_request_and_preemption(monkeypatch):
    # slo_preempt.sq drained at 4 requests/s: every arrival is shed at the door or recorded once; each
    # preemption is one more admission of its request's hold, and the rows count them as the pool does
    r = both("slo_preempt.sq", monkeypatch, arrivals=300, horizon=math.inf, warmup=0, sets={"Lambda": 4})
    rows = r.records("req")
    shed = r.observe("rejected").values
    assert len(shed) == 300 and len(rows) + int(shed.sum()) == 300
    kv = r.pool("kv")
    assert kv.preemptions > 0 and int(rows["preemptions"].sum()) == kv.preemptions
    assert r.pool("reqs").admissions == len(rows) + kv.preemptions == kv.admissions


@pytest.mark.timeout(120)
def test_the_fewest_gpus_that_meet_a_p99_wait_are_mmc_s():
    # replicas_find.sq: the p99 wait of M/M/c at 6 requests/s is ln(100 C(c, 6)) / (c - 6): 0.99 at 9, 0.58
    # at 10, so the smallest c with p99 <= 0.75 is 10
    import serq_sweep

    t99 = {c: max(0.0, math.log(100 * erlang_c(c, 6)) / (c - 6)) for c in (9, 10)}
    assert t99[9] > 0.9 and t99[10] < 0.6
    cols, rows = serq_sweep.find(str(HERE / "replicas_find.sq"), "wait.p99 <= 0.75", ("c", "8:11:1"),
                                 seeds="1", horizon=5000, workers=0)
    (row,) = rows
    assert (row["c"], row["outcome"], row["fails"]) == (10, "found_smallest", 9)


def test_a_load_past_the_allocation_says_the_position_is_the_cached_prefix():
    # pd_least_loaded.sq at 20 requests/s on one decoder: a preempted decode executes its hold again, which
    # consumes the session's own prefix cached at the preemption (a hold with `cache` and no `reuse`), and
    # the KV transfer loads the whole prompt on top of it. The error named "320 computed" where the program
    # had computed nothing since the admission, with no word of where the 320 came from.
    src = ("pool kv { cap 1000; block 16; evict lru; }\nstage link : delay;\nworkload { arrive batch(1); }\n"
           "session {\n  hold kv (100) { run link (1); load kv (100); } cache (100);\n"
           "  hold kv (100) { run link (1); load kv (100); } cache (100);\n  end;\n}\nrun { horizon 10; }\n")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=src, sets={}, defs={}))
    msg = str(e.value).splitlines()[0]
    # the first hold computed 100 and cached 96 (whole blocks); the second found them at its admission
    assert msg.startswith("<source>:6:33: error: at t=2, session 0: load kv (100): the hold has 112 allocated and "
                          "96 computed, the session's own prefix it found cached when it was admitted")
    assert "load what the prefix lacks" in msg
