"""The report's serving metrics against bench/vllm_peer.py, a plain-Python vLLM loop, given the same requests.

The peer (its own scheduler, block allocator, prefix cache and recompute preemption, packages/serq-vllm/tests/
test_bench_peer.py shows it does serQ's work) is watched here token by token: a subclass notes the time of every
output token it samples (a decode token, or a prefill that completes: the first token, or after a preemption the
recompute's token), so every request's gaps are known without serQ. From those times and the requests' send
times the expected figures are computed in plain Python, as docs/language.md defines them:

* TTFT ``first - sent``, E2EL ``done - sent``, TPOT ``(done - first) / (o - 1)`` of the requests of more than one
  token, the phases queue, prefill, decode and infer from the first admission, over the requests sent at or after the warm-up's end and done by the horizon;
* ITL every gap between consecutive output tokens of a request sent at or after the warm-up's end, those of the
  requests still in flight at the horizon included;
* the mean as ``math.fsum / n``; ``std`` the population deviation, its sum of squares exact; median and pN as
  ``np.median`` and ``np.percentile`` (linear); ``ci`` 2.093 times the standard error of the means of 20
  consecutive batches of ``n // 20`` values (the rest in no batch), NaN below 40 values;
* the values in record order (the order the requests finish, in an iteration in the order served) and the gaps
  in the order of the iterations' ends; within one iteration's end the gaps after a stall (a first decode after a
  preemption's recompute, a token of a request not served in the iteration before) first, ascending, then the
  gaps of an iteration's length, the order ``serq_sim.step.tokens.TokenGaps.iteration`` keeps (docs/simulator.md, Statistics);
* hit rate ``sum(hit at the first admission) / sum(prompt)``; preemptions per request (``runs - 1``) and in all;
* the pool table's time averages over [warm-up, end], vLLM's gauges: the requests running (``reqs``' holders)
  and waiting (its queue), the KV blocks held (``kv``'s used) and cached by no running request (its cached),
  from the peer's levels between its plannings and iteration ends;
* the engine table from the peer's iterations, and lib/vllm.sq's observes (ttft, response, preempted: nearest-rank
  quantiles) from its samples, taken after the warm-up by the time taken.

The engine is bench/vllm_preset.sq (the A100 step cost) with 300 blocks of 16 tokens and a chunk cap of 96, so
requests are chunked, preempted and recomputed (one of them more than once), some have one output token, and
under the multi-turn workload later turns hit the prefix cache.
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from pathlib import Path

import msgspec
import numpy as np
import pytest

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[3]


def _load_peer():
    spec = importlib.util.spec_from_file_location("vllm_peer_round5", REPO / "bench" / "vllm_peer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vllm_peer_round5"] = mod
    spec.loader.exec_module(mod)
    return mod


peer = _load_peer()


class TokenTimes(peer.Engine):
    """The peer engine, noting every output token's time per request and the gaps as serQ orders them, and the
    levels vLLM's gauges read: the requests running and waiting, the KV blocks held and cached."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.tokens: dict[int, list[float]] = {}
        self.gaps: list[tuple[float, float]] = []  # (the request's send time, the gap), in serQ's order
        self.last_end = None
        self.levels: list[tuple[float, int, int, int]] = [(0.0, 0, 0, 0)]  # (time, running, held, cached) from then
        self.waits: list[tuple[float, float]] = []  # (joined the waiting queue, admitted from it)
        self.requeued: dict[int, float] = {}  # a preempted request's return to the queue
        self.iterations_run: list[tuple] = []
        self.admitted: dict[int, float] = {}
        self.firsts: list = []  # the requests in the order of their first tokens (served order within an end)
        self.dones: list = []  # the requests in the order they are done

    def plan(self):
        # the instant of this planning: the last iteration's end, or, when the engine was idle, the arrival that
        # woke it (a request joins the waiting queue at its send time, r.t0, at the planning that follows it)
        self._planned_at = max([self.last_end or 0.0, *(r.t0 for r in self.waiting)])
        before = list(self.running)
        planned = super().plan()
        now_running = {id(r) for r in self.running}
        was_running = {id(r) for r in before}
        self._moves = ([r for r in self.running if id(r) not in was_running],
                       [r for r in before if id(r) not in now_running])
        self._planned_levels = (len(self.running), self.used, self.cached)
        return planned

    def finish(self, planned, now, done_cb):
        start = self._planned_at
        self.levels.append((start, *self._planned_levels))
        admitted, preempted = self._moves
        for r in admitted:
            self.waits.append((self.requeued.pop(r.idx, r.t0), start))
            self.admitted.setdefault(r.idx, start)  # the first scheduling, vLLM's scheduled_ts
        for r in preempted:
            self.requeued[r.idx] = start
        stalled, regular = [], []
        for r, t, _ in planned:
            if r.decoding or r.work == t:  # a decode token, or the prefill completes: a token at `now`
                ts = self.tokens.setdefault(r.idx, [])
                if ts:  # a gap after the request's previous token
                    (regular if ts[-1] == self.last_end else stalled).append((r.t0, now - ts[-1]))
                ts.append(now)
        self.gaps += sorted(stalled, key=lambda g: g[1]) + regular
        self.last_end = now
        firsts = [r for r, t, _ in planned if not r.decoding and r.work == t and r.known == r.prompt]
        # (start, end, jobs served, tokens, whether each decoded): the engine table's iterations
        self.iterations_run.append((start, now, len(planned), sum(t for _, t, _ in planned),
                                    {r.decoding for r, _, _ in planned}))
        super().finish(planned, now, lambda r: (self.dones.append(r), done_cb(r)))
        self.firsts += firsts  # (after the requests done here, as serQ's sessions go on: none has both)
        self.levels.append((now, len(self.running), self.used, self.cached))

    def time_average(self, k, start, end):
        """The mean over [start, end] of level ``k`` (1 running, 2 blocks held, 3 blocks cached)."""
        total = 0.0
        for (t0, *v), (t1, *_) in zip(self.levels, [*self.levels[1:], (end, 0, 0, 0)]):
            a, b = max(t0, start), min(t1, end)
            if b > a:
                total += v[k - 1] * (b - a)
        return total / (end - start)


SETS = {"B": 512.0, "max_seqs": 64.0, "bs": 16.0, "blocks": 300.0, "C": 96.0}


def _sessions(n, seed, rate, multi):
    """``n`` sessions of Poisson arrivals: [(arrival, [(prompt, o, think)])], a turn's prompt the whole
    conversation so far plus its new tokens; one turn each unless ``multi`` (then 1 + geometric(0.7))."""
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(n):
        t += rng.expovariate(rate)
        turns, k = [], 0
        while True:
            new = 1 + math.floor(rng.expovariate(1 / 400))
            o = 1 + math.floor(rng.expovariate(1 / 100))
            turns.append((k + new, o, rng.expovariate(1 / 2)))
            k += new + o
            if not multi or rng.random() >= 0.7:
                break
        out.append((t, turns))
    return out


def _serq(sessions, tier, monkeypatch, **kw):
    """serQ's report of bench/vllm_preset.sq given ``sessions`` as presets, on ``tier`` (``SERQ_SIM_TIER``)."""
    from serq_frontend import compile as compile_program
    from serq_ir import nodes as n
    from serq_sim import run

    program = compile_program(REPO / "bench" / "vllm_preset.sq", sets=SETS, defs={})
    slot = {a.name: i for i, a in enumerate(program.attributes)}
    presets, idx = [], 0
    for at, turns in sessions:
        rows = []
        for k, (prompt, o, think) in enumerate(turns):
            more = k + 1 < len(turns)
            rows.append([n.SlotValue(slot=slot["idx"], value=float(idx)),
                         n.SlotValue(slot=slot["prompt"], value=float(prompt)),
                         n.SlotValue(slot=slot["o"], value=float(o)),
                         n.SlotValue(slot=slot["think_time"], value=float(think) if more else 0.0),
                         n.SlotValue(slot=slot["more"], value=1.0 if more else 0.0)])
            idx += 1
        presets.append(n.Preset(at=float(at), turns=rows))
    program = msgspec.structs.replace(program, workload=msgspec.structs.replace(program.workload, presets=presets))
    # a step stage is never the fast tier's: the default plans lazily (decoders counted, quiet rounds), the
    # general tier every job every iteration; both must give the peer's figures
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return run(program, **kw)


def _peer(sessions, horizon):
    eng = TokenTimes(int(SETS["B"]), int(SETS["max_seqs"]), int(SETS["bs"]), int(SETS["blocks"]), chunk=SETS["C"],
                     cost=peer.A100)
    arrivals, reqs, idx = [], [], 0
    for s, (at, turns) in enumerate(sessions):
        prev = None
        for prompt, o, think in turns:
            r = peer.Req(idx, s, prompt, o, at)
            reqs.append(r)
            idx += 1
            if prev is None:
                arrivals.append((at, r))
            else:
                prev[0].nxt = (prev[1], r)
            prev = (r, think)
    done = peer.simulate(eng, arrivals, horizon=horizon)
    return eng, done, reqs


def _batch_means_ci(x):
    """docs/simulator.md, Statistics: 20 batches of n // 20 values in order, t(19) = 2.093; NaN below 40."""
    n = len(x)
    if n < 40:
        return math.nan
    size = n // 20
    means = [math.fsum(x[k * size:(k + 1) * size]) / size for k in range(20)]
    m = math.fsum(means) / 20
    return 2.093 * math.sqrt(math.fsum((b - m) ** 2 for b in means) / 19 / 20)


def _stats(x):
    n = len(x)
    if n == 0:
        return dict(count=0, mean=math.nan, std=math.nan, ci=math.nan, median=math.nan, p90=math.nan,
                    p95=math.nan, p99=math.nan)
    m = math.fsum(x) / n
    return dict(count=n, mean=m, std=math.sqrt(math.fsum((v - m) ** 2 for v in x) / n), ci=_batch_means_ci(x),
                median=float(np.median(x)), p90=float(np.percentile(x, 90)), p95=float(np.percentile(x, 95)),
                p99=float(np.percentile(x, 99)))


def _same(got, want, what, rel=0.0):
    for k, w in want.items():
        g = getattr(got, k)
        if isinstance(w, float) and math.isnan(w):
            assert math.isnan(g), (what, k, g)
        elif rel:
            assert g == pytest.approx(w, rel=rel, abs=0), (what, k)
        else:
            assert g == w, (what, k, g, w)


def _check(report, eng, done, warmup, duration):
    req = report.result.requests
    rows = [r for r in done if r.t0 >= warmup]  # done in the order they finished: the record order
    assert req.completed == len(rows) and req.duration == duration
    _same(req.ttft, _stats([r.first - r.t0 for r in rows]), "ttft")
    _same(req.e2el, _stats([r.done - r.t0 for r in rows]), "e2el")
    _same(req.tpot, _stats([(r.done - r.first) / (r.o - 1) for r in rows if r.o > 1]), "tpot")
    # vLLM v1's phases from the first admission (docs/language.md): a preemption's wait and recompute in the
    # prefill when it came before the first token, in the decode after it
    adm = eng.admitted
    _same(req.queue, _stats([adm[r.idx] - r.t0 for r in rows]), "queue")
    _same(req.prefill, _stats([r.first - adm[r.idx] for r in rows]), "prefill")
    _same(req.decode, _stats([r.done - r.first for r in rows]), "decode")
    _same(req.infer, _stats([r.done - adm[r.idx] for r in rows]), "infer")
    gaps = [g for sent, g in eng.gaps if sent >= warmup]
    itl = _stats(gaps)
    # the ITL's sum of squares is taken a run of equal gaps at a time (w * d * d, rounded once): within rounding
    std = itl.pop("std")
    _same(req.itl, itl, "itl")
    assert req.itl.std == pytest.approx(std, rel=1e-12)
    assert req.total_input_tokens == sum(r.prompt for r in rows)
    assert req.total_output_tokens == sum(r.o for r in rows)
    assert req.request_throughput == len(rows) / duration
    assert req.output_throughput == sum(r.o for r in rows) / duration
    assert req.prefix_cache_hit_rate == sum(r.hit_tokens for r in rows) / sum(r.prompt for r in rows)
    rec = report.records(kind="numpy")
    assert rec["preemptions"].tolist() == [r.runs - 1 for r in rows]
    assert rec["cached"].tolist() == [r.hit_tokens for r in rows]
    return rows, gaps


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_drained_single_turn_run_is_the_peer_s_figures(tier, monkeypatch):
    # 150 requests at 4 a second on 300 blocks: preemptions (one request several times), chunks of 96
    sessions = _sessions(150, 7, 4.0, multi=False)
    eng, done, reqs = _peer(sessions, math.inf)
    report = _serq(sessions, tier, monkeypatch, horizon=math.inf)
    end = max(r.done for r in done)  # horizon inf: the run's end is its last event, the last token
    rows, gaps = _check(report, eng, done, 0.0, end)
    # every request done has o tokens and o - 1 gaps, whatever its preemptions (the peer's own bookkeeping)
    assert len(done) == len(reqs) and all(len(eng.tokens[r.idx]) == r.o for r in reqs)
    assert len(gaps) == sum(r.o - 1 for r in reqs)
    # what the instance exercises
    assert eng.preemptions > 50 and max(r.runs for r in reqs) >= 3
    assert sum(r.o == 1 for r in reqs) >= 1 and max(r.prompt for r in reqs) > 2 * 96
    pool = {p.name: p for p in report.result.pools}["kv"]
    assert pool.preemptions == eng.preemptions


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_multi_turn_run_cut_at_its_horizon_after_a_warm_up(tier, monkeypatch):
    # 60 conversations at 2 a second, horizon 30, warm-up 5: the requests sent before 5 are out whole (their
    # gaps after 5 too), those in flight at 30 have no row and their gaps so far are in the ITL
    sessions = _sessions(60, 6, 2.0, multi=True)
    eng, done, reqs = _peer(sessions, 30.0)
    report = _serq(sessions, tier, monkeypatch, horizon=30.0, warmup=5.0)
    rows, gaps = _check(report, eng, done, 5.0, 25.0)
    in_flight = [r for r in reqs if r.done is None and r.t0 >= 5.0 and len(eng.tokens.get(r.idx, ())) > 1]
    straddling = [r for r in done if r.t0 < 5.0 <= r.done]
    assert in_flight and straddling  # both kinds are there to be counted or left out
    assert len(gaps) == sum(r.o - 1 for r in rows) + sum(len(eng.tokens[r.idx]) - 1 for r in in_flight)
    assert sum(r.hit_tokens for r in rows) > 0 and eng.preemptions > 10
    # the KV pool counts the preemptions after the warm-up: a preemption is made when its iteration is planned,
    # so those before 5 are the peer's when it stops at 5 (it plans the iteration that would end past it)
    early, _, _ = _peer(sessions, 5.0)
    pool = {p.name: p for p in report.result.pools}["kv"]
    assert 0 < early.preemptions and pool.preemptions == eng.preemptions - early.preemptions


@pytest.mark.parametrize("n", [1, 2, 39, 40, 41])
@pytest.mark.parametrize("tier", ["", "general"])
def test_the_statistics_of_1_2_39_40_41_requests(n, tier, monkeypatch):
    # np.median and np.percentile at every count (one value: that value; two: the linear mix), the CI from 40
    # values on (39: NaN, in JSON null); spread apart (0.5 a second) so that they seldom queue
    sessions = _sessions(n, 3, 0.5, multi=False)
    eng, done, _ = _peer(sessions, math.inf)
    report = _serq(sessions, tier, monkeypatch, horizon=math.inf)
    rows, _ = _check(report, eng, done, 0.0, max(r.done for r in done))
    req = report.result.requests
    assert req.ttft.count == n and (math.isnan(req.ttft.ci) if n < 40 else req.ttft.ci > 0)
    if n == 1:
        assert req.ttft.median == req.ttft.p99 == rows[0].first - rows[0].t0 and req.ttft.std == 0
    if n == 2:  # p90 of two values: a + (b - a) * 0.9 (numpy's _lerp, t < 0.5 is not the case: b - (b - a) * 0.1)
        a, b = sorted(r.first - r.t0 for r in rows)
        assert req.ttft.p90 == b - (b - a) * (1 - 0.9) and req.ttft.median == (a + b) / 2


@pytest.mark.parametrize("case", ["single-turn", "multi-turn"])
@pytest.mark.parametrize("tier", ["", "general"])
def test_the_pool_table_s_time_averages_are_vllm_s_gauges_of_the_peer(case, tier, monkeypatch):
    # docs/vllm.md: vllm:num_requests_running is the request pool's `holders`, vllm:num_requests_waiting its
    # `queue` (a preempted request waits again), vllm:kv_cache_usage_perc the KV pool's `used` over its cap (the
    # blocks running requests hold, in tokens), and the blocks cached and held by none are `cached`; each a time
    # average over [warm-up, end]. From the peer: its levels between plannings and iteration ends (the engine
    # idle between conversations' turns keeps its cache), and the queue as the sum over requests of their
    # waits (send or preemption to admission) within the window. The integrals are summed in another order here
    # than in serQ: within rounding.
    sessions = _sessions(150, 7, 4.0, multi=False) if case == "single-turn" else _sessions(60, 6, 2.0, multi=True)
    warmup = 10.0 if case == "single-turn" else 5.0
    eng, done, reqs = _peer(sessions, math.inf)
    report = _serq(sessions, tier, monkeypatch, horizon=math.inf, warmup=warmup)
    end = max(r.done for r in done)
    pools = {p.name: p for p in report.result.pools}
    bs = SETS["bs"]
    assert pools["reqs"].holders == pytest.approx(eng.time_average(1, warmup, end), rel=1e-12)
    assert pools["kv"].used == pytest.approx(eng.time_average(2, warmup, end) * bs, rel=1e-12)
    assert pools["kv"].cached == pytest.approx(eng.time_average(3, warmup, end) * bs, rel=1e-12)
    waited = math.fsum(max(0.0, min(b, end) - max(a, warmup)) for a, b in eng.waits)
    assert pools["reqs"].queue == pytest.approx(waited / (end - warmup), rel=1e-12)
    assert pools["reqs"].admissions == sum(1 for _, b in eng.waits if b >= warmup)  # re-admissions too
    assert pools["kv"].queue == 0  # a request waits in the queue of its first pool, reqs (docs/vllm.md)
    assert len(eng.waits) > len(reqs) and eng.time_average(3, warmup, end) > 0  # preempted and cached


@pytest.mark.parametrize("case", ["single-turn", "multi-turn"])
def test_the_engine_table_is_the_peer_s_iterations(case, monkeypatch):
    # docs/simulator.md: over the iterations planned after the warm-up, how many served prefills only, decodes
    # only or both; the mean jobs served (batch) and tokens an iteration; the tokens over the budget summed over
    # them; `utilisation` the share of [warm-up, end] an iteration runs; `requests` the requests done after the
    # warm-up whatever their send time (the requests section's `completed` counts those sent after it)
    sessions = _sessions(150, 7, 4.0, multi=False) if case == "single-turn" else _sessions(60, 6, 2.0, multi=True)
    warmup = 10.0 if case == "single-turn" else 5.0
    eng, done, _ = _peer(sessions, math.inf)
    report = _serq(sessions, "", monkeypatch, horizon=math.inf, warmup=warmup)
    end = max(r.done for r in done)
    st = {s.name: s for s in report.result.stages}["engine"]
    its = [i for i in eng.iterations_run if i[0] >= warmup]
    kinds = [i[4] for i in its]
    assert (st.iterations, st.prefill_only, st.decode_only, st.mixed) == (
        len(its), kinds.count({False}), kinds.count({True}), kinds.count({False, True}))
    assert st.batch == sum(i[2] for i in its) / len(its) and st.tokens == sum(i[3] for i in its) / len(its)
    assert st.token_utilisation == sum(i[3] for i in its) / (SETS["B"] * len(its))
    busy = math.fsum(min(b, end) - max(a, warmup) for a, b, *_ in eng.iterations_run if b > warmup)
    assert st.utilisation == pytest.approx(busy / (end - warmup), rel=1e-12)
    requests = sum(1 for r in done if r.done >= warmup)
    assert st.requests == requests > report.result.requests.completed
    assert st.request_throughput == requests / (end - warmup)


def _nearest_rank(x, q):
    """docs/simulator.md, Statistics: an observe's q-quantile is the ceil(q n)-th smallest sample."""
    x = sorted(x)
    return x[min(max(math.ceil(q * len(x)), 1), len(x)) - 1]


@pytest.mark.parametrize("case", ["single-turn", "multi-turn"])
def test_lib_vllm_s_observes_are_the_peer_s_samples(case, monkeypatch):
    # lib/vllm.sq observes ttft at a request's first token, response (e2e) and preempted (runs - 1) when it is
    # done; an observe keeps the samples taken after the warm-up (by the time taken, not the send time: a request
    # sent before it counts) in the order taken; count, mean, 20-batch CI, cv2 (sample variance / mean^2) and
    # nearest-rank p50 ... p99 (NaN below 40 samples). The multi-turn run stops at its horizon: a request in
    # flight has its ttft sample and no response.
    sessions = _sessions(150, 7, 4.0, multi=False) if case == "single-turn" else _sessions(60, 6, 2.0, multi=True)
    warmup, horizon = (10.0, math.inf) if case == "single-turn" else (5.0, 30.0)
    eng, _, _ = _peer(sessions, horizon)
    report = _serq(sessions, "", monkeypatch, horizon=horizon, warmup=warmup)
    got = report.result.observes
    samples = {"ttft": [r.first - r.t0 for r in eng.firsts if r.first >= warmup],
               "response": [r.done - r.t0 for r in eng.dones if r.done >= warmup],
               "preempted": [float(r.runs - 1) for r in eng.dones if r.done >= warmup]}
    for name, x in samples.items():
        o, n = got[name], len(x)
        m = math.fsum(x) / n
        assert (o.count, o.mean, o.ci) == (n, m, _batch_means_ci(x)), name
        assert o.cv2 == pytest.approx(math.fsum((v - m) ** 2 for v in x) / (n - 1) / m / m, rel=1e-12), name
        assert [o.p50, o.p90, o.p95, o.p99] == [_nearest_rank(x, q) for q in (0.5, 0.9, 0.95, 0.99)], name
    # the samples are by the time taken: requests whose first token came before the warm-up's end have a response
    # sample and no ttft sample, and under the horizon requests in flight the reverse
    opened = {r.idx for r in eng.firsts if r.first >= warmup}
    ended = {r.idx for r in eng.dones if r.done >= warmup}
    assert ended - opened and bool(opened - ended) == (horizon < math.inf)
