"""Programs a serving-systems researcher would write (P/D disaggregation over a KV link, a CPU offload
tier with spill, a prefix-aware router over a family of engines, priority scheduling with preemption,
`reserve held`, agent sessions, a trace replay, `run { arrivals }`, gauges and records), each run on the
tier serQ picks and on the general engine (SERQ_SIM_TIER=general), which must agree byte for byte, and
checked against a hand computation or a closed form. The larger programs are files under peer_programs/;
the hand-traced cases are inline. Statistical checks use fixed seeds and an interval that covers the
theory and is narrow."""

from __future__ import annotations

from pathlib import Path

import serq_frontend
import serq_sim
from conform import both_tiers, close, covers, pool, run, stage

# --- a session a step stage admits, and that then holds a pool admitted outside the engine -------------------

STAGING = """
pool reqs { cap 4; admit via E; }
pool kv { cap 100; admit via E; }
pool cpu { cap 1; }                    // a staging buffer, admitted at settle time (no admit via)
stage E : step { budget 10; cost 1; memory kv; }
stage pcie : fifo;
workload { arrive batch(1); }
session {
  hold reqs (1), kv (4) {
    hold cpu (1) { observe staged = now; run pcie (2); }
    load kv (0);
    run E prefill (4) growing kv;
  }
  observe done = now;
}
run { horizon 10; }
"""


def test_a_session_the_engine_admits_holds_a_free_pool_at_the_same_instant(monkeypatch):
    # docs/simulator.md, the settle loop: idle step stages plan an iteration, "which may admit and run
    # sessions; if that made sessions ready, the loop starts again". At 0 the engine admits s0 (reqs, kv)
    # and runs it at once: it joins cpu's queue (cap 1, empty). The settle must admit it there at 0:
    # pcie [0, 2], then the prefill of 4 tokens is one iteration [2, 3]. (Before, the admitted session had
    # already run, so nothing was ready and the settle ended: s0 waited at an empty pool until the next
    # event, here none, and the run ended with it "waiting for ever".)
    r, o = run(STAGING, monkeypatch)
    assert o["staged"] == [(0, 0.0, 0.0)]
    assert o["done"] == [(0, 3.0, 3.0)]
    assert (pool(r, "cpu").admissions, r.result.ended) == (1, 1)
    assert stage(r, "E").iterations == 1


def test_a_session_one_engine_admits_runs_at_once_on_another(monkeypatch):
    # The same rule with two engines: P admits s0 at 0 (its slot pool), and s0's body runs on D, declared
    # first, so D had had its turn at this instant already, idle. The settle must ask D again: D's iteration
    # [0, 1] serves the 4 tokens. (Before, D waited for the next event, here none: nothing ran.)
    r, o = run("""
stage D : step { budget 10; cost 1; }
pool reqs { cap 1; admit via P; }
stage P : step { budget 10; cost 1; }
workload { arrive batch(1); }
session {
  hold reqs (1) { run D prefill (4); observe a = now; }
  observe done = now;
}
run { horizon 10; }
""", monkeypatch)
    assert o["done"] == [(0, 1.0, 1.0)]
    assert (stage(r, "D").iterations, stage(r, "P").iterations, r.result.ended) == (1, 0, 1)


# --- helpers ---------------------------------------------------------------------------------------------------

HERE = Path(__file__).resolve().parent / "peer_programs"


def both(name: str, monkeypatch, *, sets=None, **kw):
    """``peer_programs/NAME`` on both tiers (conform.both_tiers). Returns the report."""
    return both_tiers(HERE / name, monkeypatch, sets=sets, **kw)


def mva(n: int, s: float, z: float) -> tuple[float, float]:
    """Mean-value analysis of n customers, one queueing station of demand s, think time z: (X, R)."""
    q = 0.0
    for k in range(1, n + 1):
        r = s * (1 + q)
        x = k / (r + z)
        q = x * r
    return x, r


# --- closed forms ----------------------------------------------------------------------------------------------

def test_agents_closed_population_matches_mean_value_analysis(monkeypatch):
    # agents.sq: N = 10 agents, one ps(1) LLM with exp(1) calls, then a tool call uniform(0, 8) (mean 4)
    # w.p. 0.4 or an erlang(3, 10) think (mean 10) w.p. 0.6 (a leaving agent is replaced at once). The
    # network is product-form, insensitive to the delay laws: MVA with Z = 0.4 * 4 + 0.6 * 10 = 7.6 gives
    # X = 0.8961, R = 3.5592 (the LLM's utilisation is X * S, its present X * R). Over 50 000 s the call's CI
    # is 0.071 (2.0 %), 0.66 of the width allowed (0.046, 0.43, over 100 000 s), around 3.5483: a mean call
    # 2.3 % above the truth or 1.7 % below it fails (1.9 % and 0.65 % over 100 000 s); the utilisation, the
    # throughput and the present are within 0.0007, 0.0011 and 0.006 of theirs (0.01, 0.01 and 0.05 allowed).
    r = both("agents.sq", monkeypatch, horizon=50000)
    x, resp = mva(10, 1.0, 7.6)
    covers(r.stats("call"), resp, 0.03)
    llm = r.stage("llm")
    assert abs(llm.utilisation - x) < 0.01 and abs(llm.throughput - x) < 0.01
    assert abs(llm.present - x * resp) < 0.05
    assert close(r.result.mean_live, 10) or abs(r.result.mean_live - 10) < 1e-9  # every seat always taken


def test_two_gpus_behind_one_queue_is_erlang_c(monkeypatch):
    # mmc.sq: M/M/2 at lambda 1.5, mu 1 (rho 0.75): Erlang C = 0.642857, Wq = C / (c mu - lambda) = 1.285714,
    # W = 2.285714; Little at the pool: queue = lambda Wq, holders = lambda / mu = 1.5. `arrivals` drains.
    r = both("mmc.sq", monkeypatch, arrivals=50000)
    assert r.result.arrivals == r.result.ended == 50000 and r.result.end < r.result.horizon
    covers(r.stats("wq"), 9 / 7, 0.1)
    covers(r.stats("response"), 16 / 7, 0.06)
    g = r.pool("gpus")
    assert abs(g.holders - 1.5) < 0.03 and abs(g.queue - 1.5 * 9 / 7) < 0.2
    # the gauges are the pool's own time averages, read at the end of every instant
    assert close(r.result.gauges["waiting"].mean, g.queue) and close(r.result.gauges["busy_gpus"].mean, g.used)


def test_priority_classes_are_cobhams_formula(monkeypatch):
    # prio_mg1.sq: two classes on one exp(1) server, non-preemptive priority by `queue by (cls, t0)`:
    # W0 = (0.3 + 0.4) * 2 / 2 = 0.7, W_hi = W0 / (1 - 0.3) = 1, W_lo = W0 / (0.7 * 0.3) = 10 / 3.
    r = both("prio_mg1.sq", monkeypatch, horizon=150000)
    covers(r.stats("w_hi"), 1.0, 0.04)
    covers(r.stats("w_lo"), 10 / 3, 0.06)
    assert abs(r.stage("gpu").utilisation - 0.7) < 0.01


def test_load_shedding_is_the_loss_formula(monkeypatch):
    # slo_shed.sq: c = 3 GPUs, a = 2. K = 0: Erlang B = (8/6) / (1 + 2 + 2 + 8/6) = 4/19 = 0.210526, the GPUs
    # busy a (1 - B) = 1.578947. K = 2 (two may wait): p_5 = 0.0758294, busy 1.848341, Wq = 0.143590.
    r = both("slo_shed.sq", monkeypatch)
    covers(r.stats("rejected"), 4 / 19, 0.02)
    assert abs(r.pool("gpus").used - 2 * 15 / 19) < 0.02
    r = both("slo_shed.sq", monkeypatch, sets={"K": 2})
    covers(r.stats("rejected"), 0.0758294, 0.05)
    covers(r.stats("wait"), 0.1435897, 0.03)


# --- priority scheduling on an engine, traced by hand ------------------------------------------------------------

PRIORITY = """
pool kv { cap 8; queue by (prio, t0); preempt by (-prio, -t0) requeue tail; admit via E; }
stage E : step { budget 4; cost 1; serve by (prio, admission); memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  set prio = serial == 2 ? 0 : 1;     // s2 is interactive, s0 and s1 batch
  set p = serial == 2 ? 2 : 3;
  set out = serial == 2 ? 2 : 3;
  run d (serial == 2 ? 1 : 0);
  set t0 = now;
  hold kv (p) {
    observe adm = now;
    run E prefill (p) growing kv;
    observe ft = now;
    run E decode (out) growing kv;
  }
  observe done = now;
}
run { horizon 20; }
"""


def test_priority_admission_serving_and_preemption_by_hand(monkeypatch):
    # pool-reference `queue by`, `preempt by … requeue tail`; language.txt §3 step (budget 4, cost 1).
    # 0: s0 (3 units) admitted, prefills 3; s1 admitted (6 <= 8), prefills the 1 token left. [0, 1]
    # 1: s0 decodes (grows to 4, used 7), s1 prefills 2; s2 (prio 0, arrived at 1) does not fit (9 > 8).
    # 2: s0 grows to 5 (used 8); s1's growth to 4 does not fit: the victims' keys (-prio, -t0) tie, the
    #    last admitted goes: s1 itself, released (used 5) and re-queued at the tail: behind s2 by its keys
    #    (0, 1) < (1, 0). No admission in a step that preempted.
    # 3: s0 grows to 6; s2 admitted (used 8), prefills 2; s1 (3) does not fit. [3, 4]
    # 4: s0 done (used 2); s2 decodes (3); s1 admitted again (6), prefills 3. [4, 5]
    # 5: s2 first (serve by prio), then s1: both decode. 6: s2 done; s1 decodes at 6, 7: done 8.
    r, o = run(PRIORITY, monkeypatch)
    assert [(s, v) for s, _, v in o["adm"]] == [(0, 0.0), (1, 0.0), (2, 3.0), (1, 4.0)]
    assert [(s, v) for s, _, v in o["ft"]] == [(0, 1.0), (1, 2.0), (2, 4.0), (1, 5.0)]
    assert [(s, v) for s, _, v in o["done"]] == [(0, 4.0), (2, 6.0), (1, 8.0)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.admissions, kv.stuck) == (1, 4, 0)
    assert stage(r, "E").iterations == 8


# --- a CPU offload tier: spill, land, read back, traced by hand ---------------------------------------------------

OFFLOAD = """
let t_tok = 0.25;
pool kv { cap 8; block 2; evict lru; spill cpu via pcie (size) when (1); }
pool cpu { cap 100; block 2; evict lru; }
stage pcie : fifo;
stage gpu : delay;
stage think : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run think (2); }
  set turns = serial == 0 ? 2 : 1;
  loop {
    hold kv (6) reuse (g) at admission (g = cachedin(kv)) {
      set cg = cached;
      hold cpu (h) reuse (h) at admission (h = cachedin(cpu)) {
        set cc = cached;
        run pcie (cc);
        load kv (cc);
      } cache (cc);
      observe loaded = now;
      run gpu (t_tok * (6 - cg - cc));
      load kv (6 - cg - cc);          // the recomputed KV counts as computed (a plain run does not advance)
    } cache (6);
    observe cg = cg;
    observe cc = cc;
    observe done = now;
    set turns = turns - 1;
    branch (turns == 0) { end; }
    run think (3.5);
  }
}
run { horizon 20; }
"""


def test_an_offload_tier_spills_block_by_block_and_is_read_back(monkeypatch):
    # language.txt §3 Pools (eviction per block from the tail; load), pool-reference `spill`;
    # docs/language.md: a spill's units take their room in the tier from the eviction and are usable when
    # the write lands.
    # s0 turn 1: kv 6 on [0, 1.5], caches 6. s1 at 2: 6 more need 4 of s0's 6 evicted, tail first, block by
    # block: two writes of 2 on the fifo link, [2, 4] and [4, 6]; s1 computes [2, 3.5] and caches 6.
    # s0 turn 2 at 5: consumes its 2 left on the GPU (cg 2); its allocation evicts 4 of s1's (writes [6, 8],
    # [8, 10], queued behind s0's second block); in the tier only s0's first block has landed: cc 2. Its
    # read of 2 waits behind the three writes: [10, 12] (loaded 12); it recomputes 6 - 2 - 2 = 2 tokens,
    # [12, 12.5].
    r, o = run(OFFLOAD, monkeypatch)
    assert o["loaded"] == [(0, 0.0, 0.0), (1, 2.0, 2.0), (0, 12.0, 12.0)]
    assert [(s, t, v) for s, t, v in o["done"]] == [(0, 1.5, 1.5), (1, 3.5, 3.5), (0, 12.5, 12.5)]
    assert [v for _, _, v in o["cg"]] == [0.0, 0.0, 2.0] and [v for _, _, v in o["cc"]] == [0.0, 0.0, 2.0]
    kv, cpu = pool(r, "kv"), pool(r, "cpu")
    assert (kv.spills, kv.evicted_units, kv.evicted_entries) == (4, 8.0, 0)  # blocks of entries, none whole
    # kv over [0, 20]: used 6 on [0, 1.5], [2, 3.5], [5, 12.5]: 63 / 20; cached 6 [1.5, 2], 2 [2, 3.5],
    # 8 [3.5, 5], 2 [5, 12.5], 8 (s1's 2 and s0's 6) [12.5, 20]: 93 / 20.
    assert close(kv.used, 3.15) and close(kv.cached, 4.65)
    # cpu: s0's hold of 2 on [5, 12]; cached from the evictions: 4 [2, 5], 6 (s0's second block in flight
    # and s1's two) from 5, s0's release at 12 replacing its own entry of 2: 12 + 42 + 48 = 102 / 20.
    assert close(cpu.used, 0.7) and close(cpu.cached, 5.1)
    pcie = stage(r, "pcie")
    assert pcie.completions == 5 and close(pcie.utilisation, 0.5)  # four writes and one read, busy [2, 12]


# --- the programs in peer_programs/: identities that hold exactly, and Little's law -----------------------------

def test_pd_link_conserves_tokens_and_the_link_carries_every_prompt(monkeypatch):
    # pd_link.sq drained after 400 requests (no warm-up): P prefilled every prompt token once and D decoded
    # every output token once (no preemption at this load); the link carried every prompt: its work is
    # utilisation x end x bw (ps(bw): the rate is bw whenever a read is present, shared among the reads).
    r = both("pd_link.sq", monkeypatch, arrivals=400, horizon=1000, warmup=0)
    n, o = r.observe("prompt_tokens").values, r.observe("tokens_out").values
    assert len(n) == len(o) == 400
    P, D, link = r.stage("P"), r.stage("D"), r.stage("link")
    assert (r.pool("kvP").preemptions, r.pool("kvD").preemptions) == (0, 0)
    assert close(P.tokens * P.iterations, n.sum()) and close(D.tokens * D.iterations, o.sum())
    assert abs(link.utilisation * r.result.end * 200000 - n.sum()) < 1e-6 * n.sum()
    assert link.completions == 400
    # Little at the link (jobs present = throughput x time there), and kvD's holders are the sessions
    # reading over the link or resident on D
    assert close(link.present, link.throughput * (link.wait + link.service))
    assert close(r.pool("kvD").holders, D.present + link.present)


def test_offload_spills_every_evicted_block_and_conserves_tokens(monkeypatch):
    # offload.sq drained after 100 requests at maxlen 3072 (no preemption): `spill … when (1)` writes every
    # block the GPU evicts, one write a block (spills x bs = evicted units), and the PCIe link ran those
    # writes and every read of a positive amount (a run of no work is no job there); the engine computed
    # exactly the tokens neither cache gave back, and decoded o - 1 a request.
    r = both("offload.sq", monkeypatch, sets={"maxlen": 3072}, arrivals=100, horizon=5000, warmup=0)
    kv = r.pool("kv")
    assert kv.preemptions == 0 and kv.spills > 1000
    assert kv.spills * 16 == kv.evicted_units
    reads = r.observe("from_cpu").values
    assert (reads > 0).sum() > 50
    assert r.stage("pcie").completions == kv.spills + (reads > 0).sum()
    E = r.stage("E")
    done = r.observe("computed_tokens").values.sum() + r.observe("decoded").values.sum()
    assert close(E.tokens * E.iterations, done)


def test_prefix_router_request_metrics_are_the_records(monkeypatch):
    # prefix_router.sq (lib/vllm.sq's vllm_request on each of 4 replicas) drained after 120 sessions: the
    # report's request metrics are what the records give, row by row; a request of `output` tokens has
    # output - 1 inter-token gaps adding up to last_token - first_token; the gauge `running` is the
    # replicas' holders summed; Little: the requests running = throughput x the mean response.
    r = both("prefix_router.sq", monkeypatch, arrivals=120, horizon=5000, warmup=0)
    rec = r.records("request", kind="numpy")
    sent, ft, lt, out = (rec[k].astype(float) for k in ("sent", "first_token", "last_token", "output"))
    m = r.result.requests
    assert m.completed == len(sent) == r.result.turns
    assert close(m.ttft.mean, (ft - sent).mean()) and close(m.e2el.mean, (lt - sent).mean())
    many = out > 1
    assert close(m.tpot.mean, ((lt - ft)[many] / (out[many] - 1)).mean())
    assert m.itl.count == (out - 1).sum() and close(m.itl.mean, (lt - ft).sum() / (out - 1).sum())
    running = sum(r.pool("reqs", k).holders for k in range(4))
    assert close(r.result.gauges["running"].mean, running)
    assert abs(running - m.request_throughput * m.e2el.mean) < 0.01 * running
    assert r.result.gauges["imbalance"].max >= 1 and r.result.gauges["imbalance"].min == 0


def test_pd_queues_reads_cross_both_nics_once(monkeypatch):
    # pd_queues.sq drained after 80 sessions: every request is prefilled on some P[i] and read by some D[j]
    # (D pull P): one flow over P.nic[i] and D.nic[j], after one wait x0 at D.nic.latency[j]; the observe
    # ttft (D.first_token - t0, the decoder's mark) is the metric of the records.
    r = both("pd_queues.sq", monkeypatch, arrivals=80, horizon=5000, warmup=0)
    n = r.result.requests.completed
    assert n == r.result.turns
    nic = lambda name: sum(r.stage(name, k).completions for k in range(2))  # noqa: E731
    assert nic("P.nic") == nic("D.nic") == nic("D.nic.latency") == nic("P") == n
    lat = r.stage("D.nic.latency", 0)
    assert close(lat.service, 0.002)
    assert close(r.stats("ttft").mean, r.result.requests.ttft.mean)


def test_reserve_held_never_preempts(monkeypatch):
    # reserve.sq: every request reserves prompt + max_tokens. With `reserve held` the unallocated
    # reservations count against later admissions, so no growth ever fails (pool-reference: "Growth by d
    # requires used + sum_{i != grower} u_i + d <= cap": d is within the grower's own reservation); the same
    # load with the reservation checked only at admission preempts. Little at the slots' queue.
    r = both("reserve.sq", monkeypatch, horizon=200)
    kvr, q = r.pool("kvr"), r.pool("reqsr")
    assert (kvr.preemptions, kvr.stuck, kvr.admissions) == (0, 0, q.admissions) and q.admissions > 400
    assert abs(q.queue - q.admissions / 170 * q.wait) < 0.02 * q.queue
    r0 = both("reserve.sq", monkeypatch, sets={"held": 0}, horizon=200)
    assert r0.pool("kv").preemptions > 0
    serq_sim.run(serq_frontend.compile(path=str(HERE / "reserve.sq")), horizon=100, check_invariants=True)


def test_mixed_scheduling_program_agrees_on_both_tiers_and_keeps_its_books(monkeypatch):
    # mix.sq: serve by (decoding, remaining), queue by with aging, reserve held, preempt by priority with
    # requeue tail, two engines chosen by budget_left: the tiers agree, the pools' invariants hold
    r = both("mix.sq", monkeypatch, horizon=120)
    assert r.result.turns > 500 and sum(r.pool("kv", k).admissions for k in range(2)) > 500
    serq_sim.run(serq_frontend.compile(path=str(HERE / "mix.sq")), horizon=60, check_invariants=True)


def test_a_trace_replay_by_hand(monkeypatch):
    # replay.sq: renewal(1) (the first arrival after one gap), `trace … ordered`: session 0 replays trace
    # session 7 (turns of 100/10 then, after a think of 2, 50/5), session 1 trace session 9 (200/20, last).
    # The fifo GPU serves 0.001 s a new token and 0.01 s an output token: s0 [1, 1.2], s1 [2, 2.4],
    # s0 again [3.2, 3.3]; `arrivals 2` drains at 3.3.
    r = both("replay.sq", monkeypatch)
    rec = r.records("req", kind="numpy")
    assert rec["session"].tolist() == [0, 1, 0] and rec["turn"].tolist() == [1, 1, 2]
    assert rec["sent"].tolist() == [1.0, 2.0, 3.2] and rec["forced"].tolist() == [0, 1, 0]
    assert [round(x, 12) for x in rec["done"].tolist()] == [1.2, 2.4, 3.3]
    assert close(r.result.end, 3.3) and close(r.stage("gpu").utilisation, 0.7 / 3.3)
    # --trace: one trace session of 10/1, replayed by both arrivals (past the last, serial mod 1)
    other = HERE / "replay_other.csv"
    r = both("replay.sq", monkeypatch, trace=str(other))
    rec = r.records("req", kind="numpy")
    assert [round(x, 12) for x in rec["done"].tolist()] == [1.02, 2.02]


def test_exclusive_prefill_never_mixes(monkeypatch):
    # exclusive_prefill.sq drained after 100 sessions: under `serve exclusive prefill` no iteration serves
    # a prefill beside decodes (mixed 0), each prefill runs alone, and every request's prefill is at least
    # one such iteration (a prompt beyond the budget takes several); lib/vllm.sq's records are every
    # request, none preempted.
    r = both("exclusive_prefill.sq", monkeypatch, arrivals=100, horizon=5000, warmup=0)
    e = r.stage("engine")
    n = r.result.requests.completed
    assert n == r.result.turns and e.mixed == 0
    assert e.prefill_only >= n and e.prefill_only + e.decode_only == e.iterations
    assert r.records("request", kind="numpy")["preemptions"].sum() == 0
