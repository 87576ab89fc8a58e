"""Programs of a nineteenth round of users (peer_programs19/*.sq): a capacity planner sizing a fleet before
buying GPUs. fleet.sq is N vLLM-style engines behind an llm-d-style router (least loaded, prefix affinity by
session, random); pd.sq is a disaggregated fleet, prefill engines whose KV decode engines pull over the pods'
NICs. Each is traced by hand on the step clock (cost 1: an iteration lasts 1) on a few requests, and run at
scale with fixed seeds against truths of its own: Little's law (the time-average requests in the fleet, a
gauge, against the arrival rate times the mean time in it), the utilisation law (busy time is the offered
work over the capacity: an iteration's cost is c1 per token), conservation (requests in = done + in flight),
and random routing over N engines of one slot each against N separate M/G/1 queues at a rate of lambda / N
(Poisson splitting; Pollaczek-Khinchine). Every run is made on the tier serQ picks and on the general engine,
which must agree byte for byte. The sweeps of the same programs (CRN, --find) are in
packages/serq-sweep/tests/test_peer_programs19.py."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
import serq_sim
from conform import both_tiers, run_error
from conform import run as conform_run
from serq_report.json import encode_json

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve().parent / "peer_programs19"
FLEET = HERE / "fleet.sq"
PD = HERE / "pd.sq"
OFFLOAD = HERE / "offload.sq"

# the step clock: every iteration costs 1 whatever it schedules
STEP_CLOCK = {"c0": 1, "c1": 0}


def rows(r, cols: tuple[str, ...]) -> dict[tuple[int, int], tuple]:
    """The table request by (session, turn): the columns ``cols``."""
    t = r.records("request")
    keys = zip(t["session"].tolist(), t["turn"].tolist())
    return dict(zip(keys, zip(*(t[c].tolist() for c in cols))))


def run_hand(path, monkeypatch, sets, defs, n):
    """A drained hand case: ``n`` sessions arriving (nearly) at once, each starting at its ``start_at()``."""
    prog = serq_frontend.compile(path=str(path), sets={"Lambda": 1e6, **STEP_CLOCK, **sets}, defs=defs)
    out = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        out.append(serq_sim.run(prog, arrivals=n, warmup=0, horizon=100))
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert encode_json(out[0]) == encode_json(out[1])
    assert rows(out[0], ("sent", "last_token")) == rows(out[1], ("sent", "last_token"))
    return out[1]


def busy(r, name, index=None) -> float:
    """The time the stage was busy (a ps stage: its work over its capacity), from its utilisation."""
    s = next(s for s in r.result.stages if s.name == name and s.index == index)
    return s.utilisation * (r.result.end - r.result.warmup)


# ---------------------------------------------------------------------------------------------------------
# fleet.sq by hand


def test_least_loaded_fleet_traced_by_hand(monkeypatch):
    # two engines of one slot each, a budget of 8; prompts (n) and outputs (o) and start times:
    #   s0 at 1: 6, 3   s1 at 1: 4, 2   s2 at 1.5: 3, 1   s3 at 2.5: 2, 2
    # the router counts the slots held and waiting, ties to the lowest index:
    #   s0 at 1: (0, 0) -> E0, admitted at 1: prefill [1,2] (first token at 2), decode 2 [2,4]: done 4
    #   s1 at 1: (1, 0) -> E1, admitted at 1: prefill [1,2], decode 1 [2,3]: done 3
    #   s2 at 1.5: (1, 1) -> E0, waits for the slot until 4: prefill [4,5], first and last token at 5
    #   s3 at 2.5: (2, 1) -> E1, waits until 3: prefill [3,4], decode 1 [4,5]: done 5
    r = run_hand(FLEET, monkeypatch, {"N": 2, "max_seqs": 1, "B": 8}, {
        "start_at": "serial == 2 ? 1.5 : serial == 3 ? 2.5 : 1",
        "new_tokens": "serial == 0 ? 6 : serial == 1 ? 4 : serial == 2 ? 3 : 2",
        "out_tokens": "serial == 0 ? 3 : serial == 1 ? 2 : serial == 2 ? 1 : 2"}, 4)
    cols = ("sent", "admitted", "first_token", "last_token", "engine")
    assert rows(r, cols) == {(0, 1): (1, 1, 2, 4, 0), (1, 1): (1, 1, 2, 3, 1),
                             (2, 1): (1.5, 4, 5, 5, 0), (3, 1): (2.5, 3, 4, 5, 1)}
    # Little on the drained run: the time-average requests in the fleet over [0, 5] is the sum of their
    # times in it, 3 + 2 + 3.5 + 2.5 = 11, over 5
    assert r.result.end == 5
    assert r.result.gauges["inflight"].mean == pytest.approx(11 / 5, rel=1e-12)
    # each engine ran four iterations of 1 in [0, 5]
    assert busy(r, "engine", 0) == busy(r, "engine", 1) == pytest.approx(4, rel=1e-12)
    m = r.result.requests
    assert m.completed == 4 and m.ttft.mean == pytest.approx((1 + 1 + 3.5 + 1.5) / 4, rel=1e-12)


def test_least_loaded_fleet_by_hand_through_the_command_line(tmp_path):
    # the same four requests through `serq run --def … --records --dump`: the records file holds the rows
    # traced above, and the dump the in-flight gauge's steps: 2 at 1 (s0, s1), 3 at 1.5 (s2), 4 at 2.5 (s3),
    # 3 at 3 (s1 done), 2 at 4 (s0 done), 0 at 5
    serq = str(Path(sys.executable).parent / "serq")
    args = [serq, "run", str(FLEET), "--no-progress", "--arrivals", "4", "--warmup", "0", "--horizon", "100",
            "--records", str(tmp_path / "r.csv"), "--dump", str(tmp_path / "d")]
    for k, v in {"N": 2, "max_seqs": 1, "B": 8, "c0": 1, "c1": 0, "Lambda": 1e6}.items():
        args += ["--set", f"{k}={v}"]
    for k, v in {"start_at": "serial == 2 ? 1.5 : serial == 3 ? 2.5 : 1",
                 "new_tokens": "serial == 0 ? 6 : serial == 1 ? 4 : serial == 2 ? 3 : 2",
                 "out_tokens": "serial == 0 ? 3 : serial == 1 ? 2 : serial == 2 ? 1 : 2"}.items():
        args += ["--def", f"{k}={v}"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    with open(tmp_path / "r.csv", newline="") as f:
        got = {int(r["session"]): (float(r["sent"]), float(r["admitted"]), float(r["first_token"]),
                                   float(r["last_token"]), int(r["engine"])) for r in csv.DictReader(f)}
    assert got == {0: (1, 1, 2, 4, 0), 1: (1, 1, 2, 3, 1), 2: (1.5, 4, 5, 5, 0), 3: (2.5, 3, 4, 5, 1)}
    with open(tmp_path / "d" / "gauge" / "inflight.csv", newline="") as f:
        steps = [(float(r["time"]), float(r["value"])) for r in csv.DictReader(f)]
    assert steps == [(0, 0), (1, 2), (1.5, 3), (2.5, 4), (3, 3), (4, 2), (5, 0)]


def test_tpot_and_itl_slo_of_a_shared_engine_by_hand(monkeypatch):
    # one engine of two slots whose iteration costs 1 a token (c0 = 0, c1 = 1); both requests have 3 outputs
    #   s0 at 1: 4 tokens, prefill [1, 5]: first token at 5
    #   s1 at 2: 2 tokens, admitted at 5 beside s0's decode: [5, 8] costs 3 (s1's 2 and s0's 1): s0's second
    #            token and s1's first at 8; [8, 10] costs 2: s0's last and s1's second; s1 alone [10, 11]
    # TTFT 4 and 6; TPOT (10 - 5) / 2 = 2.5 and (11 - 8) / 2 = 1.5; ITL gaps 3, 2 and 2, 1
    r = run_hand(FLEET, monkeypatch, {"N": 1, "max_seqs": 2, "B": 16, "c0": 0, "c1": 1}, {
        "start_at": "serial == 0 ? 1 : 2", "new_tokens": "serial == 0 ? 4 : 2", "out_tokens": "3"}, 2)
    assert rows(r, ("sent", "admitted", "first_token", "last_token")) == {(0, 1): (1, 1, 5, 10),
                                                                         (1, 1): (2, 5, 8, 11)}
    m = r.result.requests
    assert (m.ttft.mean, m.tpot.mean, m.tpot.std) == (5, 2, 0.5)
    assert (m.itl.count, m.itl.mean, m.itl.median) == (4, 2, 2) and m.itl.std == pytest.approx(math.sqrt(0.5))
    # goodput: a TPOT of 2 only s1 meets; with a TTFT of 5 besides, neither (s1's TTFT is 6); 2.5 both
    for slo, good in (({"tpot": 2}, 1), ({"ttft": 5, "tpot": 2}, 0), ({"tpot": 2.5}, 2)):
        r.set_slo(slo)
        assert (r.result.requests.good, r.result.requests.attainment) == (good, good / 2)


AFFINITY = {
    # s0 (two turns) at 1: 9 new and 4 out, then 3 new and 2 out after a think of 1; s1 at 5.5: 8 and 3
    "start_at": "serial == 1 ? 5.5 : 1",
    "new_tokens": "serial == 0 ? (turn_no == 1 ? 9 : 3) : 8",
    "out_tokens": "serial == 0 ? (turn_no == 1 ? 4 : 2) : 3",
    "think": "1",
    "last_turn": "turn_no >= (serial == 0 ? 2 : 1)",
}


@pytest.mark.parametrize("policy, second_turn, attained", [
    # prefix affinity: s0's second turn (at 6) goes home to E0, where s1 (at 5.5) runs; it is admitted at
    # E0's next iteration, 6.5, finds 12 of its 16 tokens (its first turn computed 9 + 3 = 12 tokens, three
    # whole blocks of 4; reusable(16) = 12) and prefills 4 beside s1's decode in [6.5, 7.5]: first token at
    # 7.5, decode 1 [7.5, 8.5]. TTFT 1.5: two of the three requests meet a TTFT of 1 (s1 runs prefill
    # [5.5, 6.5], decode 2 [6.5, 8.5] either way)
    (1, (6, 6.5, 7.5, 8.5, 12, 0), 2 / 3),
    # least loaded: at 6 E0 holds s1 and E1 nothing, so s0 goes to E1, finds nothing there and prefills all
    # 16 tokens at once in [6, 7] (on the step clock a prefill's length costs nothing): TTFT 1, all three
    # meet it
    (0, (6, 6, 7, 8, 0, 1), 1),
])
def test_prefix_affinity_against_least_loaded_traced_by_hand(monkeypatch, policy, second_turn, attained):
    sets = {"N": 2, "max_seqs": 4, "B": 16, "bs": 4, "turns": 2, "policy": policy}
    r = run_hand(FLEET, monkeypatch, sets, AFFINITY, 2)
    cols = ("sent", "admitted", "first_token", "last_token", "cached", "engine")
    # s0's first turn: prefill 9 [1,2], decode 3 [2,5]; s1: on E0 (both engines idle at 5.5)
    assert rows(r, cols) == {(0, 1): (1, 1, 2, 5, 0, 0), (0, 2): second_turn, (1, 1): (5.5, 5.5, 6.5, 8.5, 0, 0)}
    r.set_slo({"ttft": 1})
    assert r.result.requests.attainment == pytest.approx(attained, rel=1e-12)
    assert r.result.requests.good == round(3 * attained)


# ---------------------------------------------------------------------------------------------------------
# pd.sq by hand


def test_disaggregated_fleet_traced_by_hand(monkeypatch):
    # two prefill engines, one decode engine, NICs of 2 tokens a unit of time, budget 16
    #   s0 at 1: 6 prompt, 3 out -> P0 (the fewest requests), prefill [1, 2]
    #   s1 at 1: 3 prompt, 2 out -> P1 (P0 holds s0), prefill [1, 2]
    #   at 2 both are admitted to D0's KV and read: 5 and 2 tokens, both through D0's NIC, max-min 1 each;
    #   s1's read ends at 4; s0's last 3 tokens go at 2 a unit: 5.5
    #   s1 takes a slot at 4 (D0 idle): prefill 1 [4, 5], first token 5, decode 1 [5, 6]
    #   s0's KV arrives at 5.5, inside D0's iteration [5, 6]: a slot at 6, prefill 1 [6, 7], decode 2 [7, 9]
    r = run_hand(PD, monkeypatch, {"NP": 2, "ND": 1, "B": 16, "Bw": 2}, {
        "start_at": "1", "new_tokens": "serial == 0 ? 6 : 3", "out_tokens": "serial == 0 ? 3 : 2"}, 2)
    cols = ("sent", "started", "arrived", "first_token", "last_token", "prefiller", "decoder")
    assert rows(r, cols) == {(0, 1): (1, 1, 5.5, 7, 9, 0, 0), (1, 1): (1, 1, 4, 5, 6, 1, 0)}
    # Little: (8 + 5) / 9 requests in the fleet on the average
    assert r.result.end == 9
    assert r.result.gauges["inflight"].mean == pytest.approx(13 / 9, rel=1e-12)
    # the utilisation law at every stage: the iterations, and the tokens read over a NIC's 2 a unit
    assert [busy(r, "P", 0), busy(r, "P", 1), busy(r, "D", 0)] == pytest.approx([1, 1, 5], rel=1e-12)
    assert busy(r, "P.nic", 0) == pytest.approx(5 / 2, rel=1e-12)
    assert busy(r, "P.nic", 1) == pytest.approx(2 / 2, rel=1e-12)
    assert busy(r, "D.nic", 0) == pytest.approx(7 / 2, rel=1e-12)


# ---------------------------------------------------------------------------------------------------------
# at scale: Little, the utilisation law, conservation


def geo_mean(m: float) -> float:
    """E[floor(X)] of X ~ exp(m): floor(X) >= k with probability q^k, q = e^(-1/m): sum q^k = q / (1 - q)."""
    q = math.exp(-1 / m)
    return q / (1 - q)


def geo_var(m: float) -> float:
    q = math.exp(-1 / m)
    return q / (1 - q) ** 2


def tokens_moments(E_n: float, E_o: float) -> tuple[float, float]:
    """The mean and the second moment of the tokens a single-turn request has an engine iterate over: the
    prompt n = 1 + floor(exp(E_n)) and o - 1 = floor(exp(E_o)) decode tokens."""
    mean = 1 + geo_mean(E_n) + geo_mean(E_o)
    return mean, geo_var(E_n) + geo_var(E_o) + mean * mean


def integral(r, name: str) -> float:
    g = r.gauge(name)
    return float(np.sum(np.diff(np.append(g.times, r.result.end)) * g.values))


def check_drained_identities(r):
    """On a drained run from 0: Little's law exactly (the gauge's integral is the sum of the requests' times
    in the fleet), and every engine's busy time c1 times the tokens its requests had it iterate over."""
    t = r.records("request")
    assert r.result.arrivals == r.result.ended
    assert integral(r, "inflight") == pytest.approx(float((t["last_token"] - t["sent"]).sum()), rel=1e-9)
    assert r.result.gauges["inflight"].mean * r.result.end == pytest.approx(integral(r, "inflight"), rel=1e-9)
    return t


@pytest.mark.parametrize("sets", [
    {"policy": 0},                  # least loaded, single-turn
    # prefix affinity, three turns a session, KV pools that never evict: hits cost nothing
    {"policy": 1, "turns": 3, "blocks": 100000},
])
def test_fleet_drained_little_and_work(monkeypatch, sets):
    n = 1000 if sets.get("turns", 1) == 1 else 400
    r = both_tiers(FLEET, monkeypatch, sets={"E_o": 8, "Lambda": 6, **sets}, arrivals=n, warmup=0,
                   horizon=float("inf"))
    t = check_drained_identities(r)
    turns = sets.get("turns", 1)
    assert len(t) == n * turns and r.result.turns == n * turns  # every request recorded once
    # each engine's busy time is c1 = 0.0002 s a token of the prefills (prompt - cached) and decodes (o - 1)
    work = (t["prompt"] - t["cached"] + t["output"] - 1) * 0.0002
    for j in range(4):
        assert busy(r, "engine", j) == pytest.approx(float(work[t["engine"] == j].sum()), rel=1e-9)
    # every request of an engine took one admission of its slots
    assert [r.pool("reqs", j).admissions for j in range(4)] == [int((t["engine"] == j).sum()) for j in range(4)]
    if turns > 1:
        # prefix affinity: every later turn went home and found its conversation's whole blocks there: the
        # previous turn computed K - 1 tokens (K its prompt + output; the last output token is sampled, not
        # computed), floor((K - 1) / 16) blocks of them, and reusable(K + n) reaches that far
        t = t.sort_values(["session", "turn"])
        prev = t.groupby("session").shift(1)
        later = t["turn"] > 1
        k = (prev["prompt"] + prev["output"])[later]
        assert (t["engine"][later] == prev["engine"][later]).all()
        assert (t["cached"][later] == (k - 1) // 16 * 16).all()


def test_fleet_little_utilisation_conservation_at_a_horizon(monkeypatch):
    # single-turn Poisson requests at 6/s over 4 engines, least loaded, measured from 0 (an empty fleet
    # this lightly loaded is near its stationary law at once) to a horizon of 200 s
    lam, E_n, E_o, c1 = 6.0, 200, 8, 0.0002
    r = both_tiers(FLEET, monkeypatch, sets={"E_o": E_o, "Lambda": lam}, horizon=200, warmup=0)
    m, g = r.result.requests, r.result.gauges["inflight"]
    # conservation: the sessions that arrived are those that ended (one request each, recorded as it
    # ends) and those still in the fleet at the horizon; none rejected
    inflight = int(r.gauge("inflight").values[-1])
    assert r.result.arrivals == r.result.ended + inflight == m.completed + inflight

    assert all(r.pool("kv", j).rejections == 0 for j in range(4))
    # Little: requests in the fleet = throughput x mean time in it, within the two CIs
    lw = m.request_throughput * m.e2el.mean
    assert abs(g.mean - lw) <= math.hypot(g.ci, m.request_throughput * m.e2el.ci), (g.mean, g.ci, lw)
    assert g.ci < 0.1 * g.mean
    # the utilisation law: the engines' busy fraction adds up to lambda x c1 x E[tokens] (the work offered:
    # no engine saturates), within the CI of a compound Poisson's work over the window
    mean, second = tokens_moments(E_n, E_o)
    dur = r.result.end - r.result.warmup
    offered = lam * c1 * mean
    ci = 1.96 * c1 * math.sqrt(lam * second / dur)
    util = sum(busy(r, "engine", j) for j in range(4)) / dur
    assert abs(util - offered) <= ci, (util, offered, ci)
    assert ci < 0.1 * offered


def test_disaggregated_fleet_at_scale(monkeypatch):
    lam, E_n, E_o, c1, Bw = 6.0, 200, 8, 0.0002, 20000
    r = both_tiers(PD, monkeypatch, sets={"E_o": E_o, "Lambda": lam}, arrivals=1000, warmup=0,
                   horizon=float("inf"))
    t = check_drained_identities(r)
    assert len(t) == 1000
    # every request's work where it ran: its prompt on its prefill engine, its o tokens (one of prefill, the
    # first token, o - 1 of decode) on its decode engine, prompt - 1 tokens through both NICs of its read
    for side, col, work in (("P", "prefiller", t["prompt"] * c1), ("D", "decoder", t["output"] * c1),
                            ("P.nic", "prefiller", (t["prompt"] - 1) / Bw), ("D.nic", "decoder", (t["prompt"] - 1) / Bw)):
        for j in range(2):
            assert busy(r, side, j) == pytest.approx(float(work[t[col] == j].sum()), rel=1e-9), (side, j)
    # the utilisation law, the prefill side against the work offered (its CI as above)
    mean_n = 1 + geo_mean(E_n)
    second_n = geo_var(E_n) + mean_n ** 2
    util = (busy(r, "P", 0) + busy(r, "P", 1)) / r.result.end
    ci = 1.96 * c1 * math.sqrt(lam * second_n / r.result.end)
    assert abs(util - lam * c1 * mean_n) <= ci, (util, lam * c1 * mean_n, ci)


# ---------------------------------------------------------------------------------------------------------
# random routing over N engines is N separate engines at lambda / N


def pk_e2e(lam: float, c1: float, E_n: float, E_o: float) -> tuple[float, float]:
    """M/G/1 (an engine of one slot, c0 = 0: a request's service is c1 times its tokens, however chunked):
    Pollaczek-Khinchine's mean wait, and the mean E2E latency (wait + service)."""
    mean, second = tokens_moments(E_n, E_o)
    es, es2 = c1 * mean, c1 * c1 * second
    w = lam * es2 / (2 * (1 - lam * es))
    return w, w + es


def test_random_routing_is_n_separate_engines(monkeypatch):
    # four engines of one slot each behind a random router at 42/s, against one engine at 10.5/s: Poisson
    # splitting makes each of the four an M/G/1 queue at 10.5/s, so the fleet's requests (each engine's
    # alike) have the single engine's E2E law, both Pollaczek-Khinchine's (rho = 0.45)
    E_n, E_o, c1, lam1 = 200, 10, 0.0002, 10.5
    common = {"max_seqs": 1, "E_n": E_n, "E_o": E_o, "policy": 2}
    fleet = both_tiers(FLEET, monkeypatch, sets={**common, "N": 4, "Lambda": 4 * lam1}, horizon=50, warmup=5)
    one = both_tiers(FLEET, monkeypatch, sets={**common, "N": 1, "Lambda": lam1}, horizon=200, warmup=20)
    w, e2e = pk_e2e(lam1, c1, E_n, E_o)
    a, b = fleet.result.requests.e2el, one.result.requests.e2el
    for x in (a, b):
        assert abs(x.mean - e2e) <= x.ci, (x.mean, x.ci, e2e)
        assert x.ci < 0.25 * e2e
    assert abs(a.mean - b.mean) <= math.hypot(a.ci, b.ci)
    # each engine of the fleet is busy rho of the time, as the single engine is
    rho = lam1 * c1 * tokens_moments(E_n, E_o)[0]
    for r, n in ((fleet, 4), (one, 1)):
        dur = r.result.end - r.result.warmup
        for j in range(n):
            assert abs(busy(r, "engine", j) / dur - rho) < 0.05, (j, rho)
    # the split: each engine got a quarter of the requests, within a binomial's 3 sigma
    t = fleet.records("request")
    k = len(t)
    for j in range(4):
        assert abs(int((t["engine"] == j).sum()) - k / 4) < 3 * math.sqrt(k * 3 / 16)


# ---------------------------------------------------------------------------------------------------------
# offload.sq: GPUs spilling to a CPU tier


def test_offload_tier_traced_by_hand(monkeypatch):
    # one engine, a GPU of 5 blocks of 4 tokens, PCIe 0.5 a block written and 0.25 a block read (one job at
    # a time); every request has one output token, so its whole sequence prompt + 1 is held
    #   A at 1: 8 tokens, holds 9 (3 blocks): prefill [1, 2]; caches the 8 it computed, 2 blocks; thinks 11
    #   B at 3: 14 tokens, holds 15 (4 blocks): 3 free, so A's tail block goes (LRU, from the tail) and is
    #           written to the tier [3, 3.5]; prefill [3, 4]; caches 12 (3 blocks: 14 computed)
    #   A at 13: 3 new, 12 tokens, holds 13 (4 blocks): its head block is still on the GPU (gpu 4), 1 block
    #           free besides, so 2 of B's go, a write of 1 [13, 14]; the tier holds A's tail, which continues
    #           the head: 4 more (reusable(12) = 8), read after that write [14, 14.25]; prefill the 4 left
    #           [14.25, 15.25]
    r = run_hand(OFFLOAD, monkeypatch, {"N": 1, "B": 16, "bs": 4, "blocks": 5, "write": 0.5, "read": 0.25,
                                         "turns": 2}, {
        "start_at": "serial == 1 ? 3 : 1", "new_tokens": "serial == 0 ? (turn_no == 1 ? 8 : 3) : 14",
        "out_tokens": "1", "think": "11", "last_turn": "turn_no >= (serial == 0 ? 2 : 1)"}, 2)
    cols = ("sent", "admitted", "first_token", "last_token", "gpu", "cpu")
    assert rows(r, cols) == {(0, 1): (1, 1, 2, 2, 0, 0), (1, 1): (3, 3, 4, 4, 0, 0),
                             (0, 2): (13, 13, 15.25, 15.25, 4, 4)}
    kv = r.pool("kv", 0)
    assert (kv.evicted_units, kv.spills) == (12, 3)  # 4 of A's, 8 of B's: three blocks written
    assert busy(r, "pcie", 0) == pytest.approx(3 * 0.5 + 0.25, rel=1e-12)
    # the tier (docs/language.md, "A spilled prefix is usable when its write completes"): a written block
    # takes its room there from its eviction, cached: A's 4 over [3, 13], where A's hold takes them (used
    # over [13, 14.25]), and B's 8 from 13 to the end; the hold caches nothing back (cache (0))
    cpu = r.pool("cpu", 0)
    assert cpu.cached * 15.25 == pytest.approx(4 * 10 + 8 * 2.25, rel=1e-12)
    assert cpu.used * 15.25 == pytest.approx(4 * 1.25, rel=1e-12)
    assert busy(r, "engine", 0) == pytest.approx(3, rel=1e-12)
    assert r.result.gauges["inflight"].mean == pytest.approx((1 + 1 + 2.25) / 15.25, rel=1e-12)


def test_offload_fleet_at_scale_accounts_for_every_request_token_and_block(monkeypatch):
    # 300 sessions of 4 turns on two engines of 100 GPU blocks each: the GPUs evict and spill, and some
    # holds (prompt + o beyond 1600 tokens) can never fit and are rejected
    r = both_tiers(OFFLOAD, monkeypatch, sets={"Lambda": 1.5}, arrivals=300, warmup=0, horizon=float("inf"))
    t = check_drained_identities(r)
    rejected = sum(r.pool("kv", j).rejections for j in range(2))
    assert rejected > 0 and all(r.pool(p, j).rejections == 0 for p in ("reqs", "cpu") for j in range(2))
    # conservation: every turn is a request recorded or a hold rejected (its session ends there), and a
    # rejected request is the last of its session
    assert r.result.turns == len(t) + rejected
    assert r.result.ended == r.result.arrivals == 300
    # the rejected: each hold of more than the GPU's 1600 tokens (prompt + o, in whole blocks of 16)
    assert (t["prompt"] + t["output"] <= 1600).all()
    assert (t["cpu"] > 0).sum() > 50
    for j in range(2):
        tj, kv = t[t["engine"] == j], r.pool("kv", j)
        # every block evicted was written to the tier (tier = 1); the link's busy time is the writes and the
        # reads, and the engine's the tokens neither tier had, prefilled, and the decodes
        assert kv.spills * 16 == kv.evicted_units
        assert busy(r, "pcie", j) == pytest.approx(kv.spills * 0.001 + float(tj["cpu"].sum()) / 16 * 0.0005,
                                                   rel=1e-9)
        work = (tj["prompt"] - tj["gpu"] - tj["cpu"] + tj["output"] - 1) * 0.0002
        assert busy(r, "engine", j) == pytest.approx(float(work.sum()), rel=1e-9)
        # a hit is whole blocks, never the last prompt token
        assert ((tj["gpu"] + tj["cpu"]) % 16 == 0).all() and (tj["gpu"] + tj["cpu"] < tj["prompt"]).all()


# ---------------------------------------------------------------------------------------------------------
# a drained run that cannot drain says which sessions wait for ever, and where


def test_a_decoder_too_small_to_drain_is_told_where_its_request_waits(monkeypatch):
    # decode engines of 30 blocks (480 tokens) and no preemption: a request admitted with its prompt (at most
    # 480) whose decode grows its KV past 480 waits for ever for a growth nothing can give it. The drained run
    # (--arrivals 100) ends with it live; the error said "1 session still live when no event is left (not
    # drained)" and no more, where the report of a run to a horizon warns which session waits, and where
    prog = serq_frontend.compile(path=str(PD), sets={"blocksD": 30})
    msgs = []
    for tier in ("", "general"):
        if tier:
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
        else:
            monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(prog, arrivals=100, warmup=0, horizon=float("inf"))
        msgs.append(str(e.value).splitlines()[0])
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    assert msgs[0] == msgs[1]
    assert msgs[0].endswith(": arrivals=100: 1 session still live when no event is left (not drained): it waits "
                            "for ever (no event is left that could wake them): 1 growing at D.kv[0] (session 95) "
                            "(horizon=inf)"), msgs[0]


DEADLOCK = """
pool a { cap 1; }
pool b { cap 1; }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) {
    hold a (1) { run d (1.5); hold b (1) { run d (1); } }
  } else {
    hold b (1) { run d (1); hold a (1) { run d (1); } }
  }
}
run { horizon H; arrivals 2; }
"""


@pytest.mark.parametrize("horizon, at", [("inf", "t=3: run { arrivals 2; }: 2 sessions still live when no event is left"),
                                         ("20", "t=20: run { arrivals 2; }: 2 sessions still live at the horizon")])
def test_a_deadlock_that_keeps_a_run_from_draining_is_told(monkeypatch, horizon, at):
    # s0 holds a from 1 and wants b at 2.5; s1 holds b from 2 and wants a at 3: each waits for the other's
    # pool. The same words on the tier serQ picks, the fast tier (the program without its arrivals runs
    # there), and on the general engine
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    free = serq_frontend.compile(source=DEADLOCK.replace("H; arrivals 2;", "20;"), sets={}, defs={})
    assert serq_sim.run(free).tier == "fast"
    msg = run_error(DEADLOCK.replace("H;", f"{horizon};"), monkeypatch)
    assert msg.endswith(f"error: at {at} (not drained): they wait for ever (no event is left that could wake them): "
                        "1 queued at b (session 0); 1 queued at a (session 1)"), msg


# ---------------------------------------------------------------------------------------------------------
# diurnal.sq: a load that varies over the day (thinning), engines scaled out on a schedule

DIURNAL = HERE / "diurnal.sq"


def test_scheduled_scale_out_traced_by_hand(monkeypatch):
    # one engine active before 3, two from 3; one slot each, the step clock, every session kept
    #   s0 at 1: 4 and 3 -> E0 (the only one active): prefill [1, 2], decode 2 [2, 4]
    #   s1 at 2: 4 and 1 -> E0, though E1 is idle: it waits for the slot until 4, prefill [4, 5]
    #   s2 at 3: 4 and 2 -> E1 (E0 holds s0 and s1 waits there): prefill [3, 4], decode [4, 5]
    #   s3 at 3.5: 2 and 1 -> E1 (2 against 1): waits until 5, prefill [5, 6]
    r = run_hand(DIURNAL, monkeypatch, {"N": 2, "max_seqs": 1, "B": 16}, {
        "rate": "peak()", "active": "now < 3 ? 1 : 2",
        "start_at": "serial == 0 ? 1 : serial == 1 ? 2 : serial == 2 ? 3 : 3.5",
        "new_tokens": "serial == 3 ? 2 : 4", "out_tokens": "serial == 0 ? 3 : serial == 2 ? 2 : 1"}, 4)
    cols = ("sent", "first_token", "last_token", "engine", "active")
    assert rows(r, cols) == {(0, 0): (1, 2, 4, 0, 1), (1, 0): (2, 5, 5, 0, 1), (2, 0): (3, 4, 5, 1, 2),
                             (3, 0): (3.5, 6, 6, 1, 2)}


def test_thinning_gives_the_time_varying_poisson_load_and_the_schedule_holds(monkeypatch):
    # two days of 200 s, the rate a triangle from 3/s at midnight to 9/s at noon (mean 6): the requests kept
    # are a Poisson process of that rate, so the count in each eighth of a day is Poisson with the rate's
    # integral there as its mean (the rate is linear within each: its integral is the midpoint's rate times
    # 25 s), independent from bin to bin (a chi-square of 16 bins); and every request went to an engine the
    # schedule had active when it was sent, ceil(rate / 2) of them
    lam, swing, day, horizon = 6.0, 0.5, 200.0, 400.0
    r = both_tiers(DIURNAL, monkeypatch, horizon=horizon)
    t = r.records("request")
    in_flight = int(r.gauge("inflight").values[-1])

    def rate(x):
        u = x / day - math.floor(x / day)
        return lam * (1 + swing * (1 - 4 * abs(u - 0.5)))

    width = day / 8
    expected = [rate((k + 0.5) * width) * width for k in range(16)]
    counts = np.histogram(t["sent"].to_numpy(), bins=16, range=(0, horizon))[0].tolist()
    counts[-1] += in_flight  # sent in the last seconds, not yet recorded
    assert sum(expected) == pytest.approx(lam * horizon)
    chi2 = sum((o - e) ** 2 / e for o, e in zip(counts, expected))
    assert chi2 < 39.25, (chi2, counts, expected)  # chi-square's 99.9 % quantile at 16 degrees of freedom
    assert abs(sum(counts) - lam * horizon) < 3 * math.sqrt(lam * horizon)
    # the peak's sessions that were not kept leave at once: arrivals = kept + dropped, all ended but those in flight
    assert r.result.arrivals == r.result.ended + in_flight
    # the schedule: the active count recomputed from the send time, and the engine among the active ones
    active = [min(4, max(1, math.ceil(rate(s) / 2))) for s in t["sent"].tolist()]
    assert t["active"].tolist() == active
    assert (t["engine"] < t["active"]).all()
    assert set(t["engine"].tolist()) == {0, 1, 2, 3}  # the peak needs all four


@pytest.mark.parametrize("name", ["fleet.sq", "pd.sq", "offload.sq", "diurnal.sq"])
def test_both_plannings_are_taken_and_agree(name):
    # the byte-for-byte comparisons above are of two plannings of the step engines: the default tier plans
    # the decoders that grow nothing lazily, the general engine every job every iteration
    from serq_sim.step import StepStage
    from tiers import run_on_tier

    prog = serq_frontend.compile(path=str(HERE / name), sets={})
    out = {}
    for tier in ("", "general"):
        sim, outcome, samples = run_on_tier(prog, tier, horizon=60, warmup=10)
        lazy = sum(s.lazy_iterations for s in sim.stages if isinstance(s, StepStage))
        out[tier] = (outcome, samples, lazy)
    assert out[""][2] > 0 and out["general"][2] == 0
    assert out[""][:2] == out["general"][:2]


# ---------------------------------------------------------------------------------------------------------
# a random router written as a draw in the choose key

DRAWN = """
let N = 2;
stage s[N] : delay;
workload { arrive poisson(1); }
session {
  choose j in N by (~uniform(0, 1));
  run s[j] (1);
  record route { engine = j; }
}
run { horizon inf; warmup 0; arrivals 2000; seed 7; }
"""


def test_a_drawn_choose_key_routes_uniformly_and_keeps_each_candidates_draw_whatever_n(monkeypatch):
    # each candidate's key is a draw of its own (the choose is one place of the session's stream whatever
    # n: docs/simulator.md), so the choice is uniform over the N engines, and the same candidate draws the
    # same value under another N: a request the fleet of 4 sends to engine 0 or 1 goes there in the fleet
    # of 2 as well (engines 2 and 3 only take the requests whose draw they win)
    got = {}
    for n in (2, 3, 4):
        r, _ = conform_run(DRAWN.replace("let N = 2;", f"let N = {n};"), monkeypatch)
        t = r.records("route")
        got[n] = dict(zip(t["session"].tolist(), t["engine"].tolist()))
        counts = [sum(1 for e in got[n].values() if e == k) for k in range(n)]
        chi2 = sum((c - 2000 / n) ** 2 / (2000 / n) for c in counts)
        assert chi2 < 16.27, counts  # chi-square's 99.9 % quantile at 3 degrees of freedom (at most 3 here)
    for small, big in ((2, 3), (2, 4), (3, 4)):
        kept = [s for s, e in got[big].items() if e < small]
        assert len(kept) > 2000 * small / big * 0.9
        assert all(got[small][s] == got[big][s] for s in kept)
