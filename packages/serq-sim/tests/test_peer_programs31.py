"""Round 31 of programs as serQ's users write them (peer_programs31/), each run to its horizon on both
simulator tiers and checked against an independent truth: a gateway's drop-tail limit (M/M/c/K: blocking,
mean number present, Little's law), a sliding-window rate limiter (Erlang B, which does not depend on the
window's law; the M/D/c delay mode by Little's law), speculative decoding per verification step (the steps
by hand at alpha 0 and 1, the mean tokens a step gives, a single request's time per token), a closed-loop
load test (the response-time law N = X (R + Z); every user is somewhere), a `vllm bench serve`-style run of
exactly N requests with a gap law chosen by a `let` (the arm of a constant test that is not taken is not
evaluated: the program was refused at the Erlang of 0.25 phases its other arm would draw)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import serq_frontend
from peers import covers, pool, stage
from tiers import same_json

HERE = Path(__file__).parent / "peer_programs31"


def run(name: str, monkeypatch, *, sets=None, text=None, **kw) -> dict:
    """The JSON report of peer_programs31/NAME (or ``text`` in its place) on both tiers (the same bytes)."""
    if text is None:
        prog = serq_frontend.compile(path=str(HERE / name), sets=sets or {})
    else:
        prog = serq_frontend.compile(source=text, sets=sets or {})
    return same_json(prog, monkeypatch, **kw)


def mmck(a: float, c: int, k: int) -> tuple[float, float]:
    """M/M/c/K with offered load a = lam / mu: (blocking probability, mean number in the system)."""
    p = [a ** n / math.factorial(n) if n <= c else a ** c / math.factorial(c) * (a / c) ** (n - c)
         for n in range(k + 1)]
    total = sum(p)
    return p[-1] / total, sum(n * x for n, x in enumerate(p)) / total


def erlang_b(a: float, c: int) -> float:
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


@pytest.mark.parametrize(("lam", "K"), [(3, 5), (1.5, 7)])
def test_drop_tail_is_mmck(monkeypatch, lam, K):
    doc = run("drop_tail.sq", monkeypatch, sets={"lam": lam, "K": K}, horizon=10000)
    blocked, present = mmck(lam, 2, K)
    covers(doc["observes"]["drop"], blocked, 0.15)
    # the mean number present is the mean live sessions (each request is a session), and by Little's law
    # on the admitted stream the mean response is that over lam (1 - p_K)
    assert doc["mean_live"] == pytest.approx(present, rel=0.03)
    covers(doc["observes"]["response"], present / (lam * (1 - blocked)), 0.05)
    # conservation: admitted = served, but for those in service at the warm-up's end and at the end
    assert abs(pool(doc, "slots")["admissions"] - stage(doc, "svc")["completions"]) <= K


def test_drop_tail_capacity_search_finds_the_closed_forms_k(serq, tmp_path):
    # the smallest K whose blocking is at most 5 % at lam = 1.5: 0.0600 at K = 6, 0.0431 at K = 7
    assert mmck(1.5, 2, 6)[0] > 0.05 > mmck(1.5, 2, 7)[0]
    out = tmp_path / "find.csv"
    r = serq("sweep", str(HERE / "drop_tail.sq"), "--set", "lam=1.5", "--find", "drop.mean <= 0.05", "--over", "K",
             "2:30:1", "--seeds", "1..3", "--horizon", "8000", "--workers", "0", "--no-progress", "-o", str(out))
    assert r.returncode == 0, r.stderr
    header, row = out.read_text().splitlines()
    got = dict(zip(header.split(","), row.split(",")))
    assert (got["outcome"], got["K"], got["fails"]) == ("found_smallest", "7", "6")
    assert float(got["observes.drop.mean:mean"]) <= 0.05


@pytest.mark.parametrize("mode", [0, 1])
def test_rate_limit_is_erlang_b_and_little(monkeypatch, mode):
    doc = run("rate_limit.sq", monkeypatch, sets={"mode": mode}, horizon=2500)
    lam, allow, window = 8, 10, 1
    held = pool(doc, "window_slots")
    if mode == 0:
        b = erlang_b(lam * window, allow)
        covers(doc["observes"]["limited"], b, 0.08)
        # each admission holds its unit for the window exactly (a unit is a server of deterministic service)
        assert held["used"] == pytest.approx(lam * window * (1 - b), rel=0.01)
        assert held["queue"] == 0 and doc["observes"]["limiter_wait"]["mean"] == 0
    else:
        # nobody is refused; units held = admission rate x window, the queue = rate x mean wait (Little)
        assert doc["observes"]["limited"]["mean"] == 0
        assert held["used"] == pytest.approx(lam * window, rel=0.01)
        assert held["queue"] == pytest.approx(held["admissions"] / (2500 - 100) * held["wait"], rel=0.01)
        assert held["wait"] > 0
    # the sliding window never holds more than `allow` admissions
    assert held["over_cap"] == 0 and held["rejections"] == 0


def spec_single(k: int, alpha: float) -> str:
    src = (HERE / "spec_decode.sq").read_text()
    return (src.replace("arrive poisson(rate);", "arrive batch(1);")
            .replace("run { horizon 300; warmup 20; seed 1; }", "run { horizon inf; }")
            .replace("let k = 3;", f"let k = {k};").replace("let alpha = 0.7;", f"let alpha = {alpha};"))


@pytest.mark.parametrize(("k", "alpha", "steps"), [(3, 1, 64), (3, 0, 255), (0, 0.7, 255), (4, 1, 51)])
def test_spec_decode_single_request_by_hand(monkeypatch, k, alpha, steps):
    # one request of 512 prompt tokens and 256 output tokens: the prefill is one iteration of
    # 0.012 + 0.00005 * 512 = 0.0376 s; 255 tokens after the first in ceil(255 / (k + 1)) steps at alpha = 1,
    # 255 at alpha = 0 (or k = 0), each step 0.012 + 0.00004 (k + 1) + 0.002 k
    doc = run("", monkeypatch, text=spec_single(k, alpha))
    step = 0.012 + 0.00004 * (k + 1) + (0.002 * k)
    obs = doc["observes"]
    assert obs["ttft"]["mean"] == pytest.approx(0.0376, abs=1e-12)
    assert obs["steps"]["mean"] == steps
    assert obs["tokens_per_step"]["mean"] == pytest.approx(255 / steps)
    assert obs["tpot"]["mean"] == pytest.approx(steps * step / 255, rel=1e-12)
    assert doc["end"] == pytest.approx(0.0376 + steps * step, rel=1e-12)
    assert stage(doc, "engine")["iterations"] == steps + 1


def test_spec_decode_mean_tokens_per_step(monkeypatch):
    # a step gives 1 + min(k, G) tokens, G geometric: (1 - alpha^(k+1)) / (1 - alpha) on average, 2.5333 at
    # k = 3, alpha = 0.7 (the last step of a request is cut to what it lacks, so a request's mean is a little
    # below: 255 tokens over its steps)
    doc = run("spec_decode.sq", monkeypatch)
    mean_steps = doc["observes"]["steps"]
    g = (1 - 0.7 ** 4) / 0.3
    assert 255 / g <= mean_steps["mean"] + mean_steps["ci"]
    assert mean_steps["mean"] - mean_steps["ci"] <= 255 / g + 1
    assert doc["observes"]["tpot"]["mean"] < 0.0085  # against 0.021 without speculation (k = 0)


@pytest.mark.parametrize("Z", [2, 0])
def test_closed_bench_response_time_law(monkeypatch, Z):
    doc = run("closed_bench.sq", monkeypatch, sets={"Z": Z}, horizon=300)
    N = 16
    reqs, engine, think = pool(doc, "reqs"), stage(doc, "engine"), stage(doc, "think")
    # every user is at the engine (running or waiting for a slot) or thinking, at every instant
    assert engine["present"] + reqs["queue"] + think["present"] == pytest.approx(N, rel=1e-9)
    # N = X (R + Z) over the window, X the engine's request throughput, R the mean response
    x, r = engine["request_throughput"], doc["observes"]["response"]["mean"]
    z = think["service"] if Z else 0  # (a run of no work completes at once: no service there)
    assert x * (r + z) == pytest.approx(N, rel=0.02)
    if Z == 0:
        assert engine["present"] + reqs["queue"] == pytest.approx(N, rel=1e-9)
        assert think["present"] == 0


@pytest.mark.parametrize("cv2", [4, 1, 0.25])
def test_bench_burst_picks_its_law_by_a_let(monkeypatch, cv2):
    # the gap is `cv2 > 1 ? ~h2(1 / R, cv2) : cv2 == 1 ? ~exp(1 / R) : ~erlang(1 / cv2, 1 / R)`: at cv2 = 4
    # the Erlang arm, never taken, would have 0.25 phases, which refused the program; the expression is then
    # the arm taken, where every arm valid keeps the conditional as it was (cv2 = 0.25: the h2 arm, of cv2
    # below 1, is left out, the exp and erlang arms kept)
    prog = serq_frontend.compile(path=str(HERE / "bench_burst.sq"), sets={"cv2": cv2, "N": 60})
    gap = prog.workload.arrive.gap
    if cv2 == 4:
        assert gap.dist == "h2"
    elif cv2 == 1:
        assert type(gap).__name__ == "Cond" and gap.then.dist == "h2" and gap.orelse.then.dist == "exp"
    else:
        assert type(gap).__name__ == "Cond" and gap.then.dist == "exp" and gap.orelse.dist == "erlang"
    doc = run("bench_burst.sq", monkeypatch, sets={"cv2": cv2, "N": 60})
    assert (doc["arrivals"], doc["ended"]) == (60, 60)
    assert doc["requests"]["completed"] == 60
    assert stage(doc, "engine")["requests"] == 60
    assert doc["end"] < 3600


def test_the_arm_not_taken_is_linked_for_names(monkeypatch):
    # the domain of a constant in the arm not taken is not enforced; every other rule is
    bad = "let a = 0; stage s : fifo; workload { arrive poisson(1); } session { run s (a > 0 ? ~erlang(a, 1) : ~exp(b)); } run { horizon 10; }"
    with pytest.raises(serq_frontend.CompileError, match="unknown name `b`"):
        serq_frontend.compile(source=bad)
    # the arm taken is checked as before
    taken = "let a = 2; stage s : fifo; workload { arrive poisson(1); } session { run s (a > 0 ? ~erlang(a - 2, 1) : ~exp(1)); } run { horizon 10; }"
    with pytest.raises(serq_frontend.CompileError, match="the number of phases must be a whole number"):
        serq_frontend.compile(source=taken)
    # a dead block whose constants are outside their domains is an empty block; the run is the other's
    blocks = ("let a = 0; stage s : fifo; workload { arrive batch(2); } session { branch (a > 0) { run s (a - 1); "
              "run s (~erlang(a, 1)); observe z = a / a; } else { run s (2); } } run { horizon inf; }")
    doc = run("", monkeypatch, text=blocks)
    assert doc["end"] == 4 and stage(doc, "s")["completions"] == 2 and doc["observes"]["z"]["count"] == 0
    # a test that is a constant NaN-free fold: `n > 0 ? s / n : 0` at n = 0 is 0
    ratio = "let n = 0; stage s : fifo; workload { arrive batch(1); } session { run s (n > 0 ? n / n : 3); } run { horizon inf; }"
    assert run("", monkeypatch, text=ratio)["end"] == 3


@pytest.mark.parametrize("policy", [0, 1, 2])
def test_llmd_router_gauges_and_hits(monkeypatch, policy):
    doc = run("llmd_router.sq", monkeypatch, sets={"policy": policy}, horizon=200)
    engines = [s for s in doc["stages"] if s["name"] == "engine"]
    queues = [p for p in doc["pools"] if p["name"] == "reqs"]
    # the gauge of requests at the engines is the time average the stages and pools give, summed
    at = doc["gauges"]["at_engines"]
    assert at["mean"] == pytest.approx(sum(s["present"] for s in engines) + sum(p["queue"] for p in queues),
                                       rel=1e-9)
    assert doc["gauges"]["spread"]["min"] == 0 and doc["gauges"]["spread"]["max"] <= at["max"]
    # Little's law: requests at the engines = request rate x mean response (within the gauge's CI)
    rate = doc["requests"]["completed"] / (200 - 100)
    assert abs(at["mean"] - rate * doc["observes"]["response"]["mean"]) <= at["ci"]
    # conservation: the requests admitted after the warm-up and those completed differ by those at the
    # engines then and at the end, at most the gauge's greatest; the engines complete every row and the
    # requests sent before the warm-up's end
    admitted, served = sum(p["admissions"] for p in queues), sum(s["requests"] for s in engines)
    assert abs(admitted - served) <= at["max"]
    assert served >= doc["requests"]["completed"]
    full = doc["observes"]["full_hit"]["mean"]
    if policy == 0:
        # consecutive turns on consecutive engines: a later turn never finds its previous sequence (but when
        # that is shorter than a block)
        assert full < 0.01
    elif policy == 2:
        assert full > 0.9


@pytest.mark.parametrize("cpu_blocks", [20000, 0])
def test_shared_cpu_tier_hits_per_tier(monkeypatch, cpu_blocks):
    import serq_sim

    prog = serq_frontend.compile(path=str(HERE / "shared_cpu.sq"), sets={"cpu_blocks": cpu_blocks})
    doc = same_json(prog, monkeypatch, horizon=150)
    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    rows = serq_sim.run(prog, horizon=150).records("request")
    gpu, cpu, cached, prompt = (np.asarray(rows[c]) for c in ("gpu", "cpu", "cached", "prompt"))
    # every hit is of one tier, within the prompt, in whole blocks; the report's hit rate is theirs
    assert (cached == gpu + cpu).all() and (cached <= prompt).all()
    assert (gpu % 16 == 0).all() and (cpu % 16 == 0).all()
    assert doc["requests"]["prefix_cache_hit_rate"] == pytest.approx(cached.sum() / prompt.sum(), rel=1e-12)
    kvs = [p for p in doc["pools"] if p["name"] == "kv"]
    (tier,) = [p for p in doc["pools"] if p["name"] == "cpu"]
    if cpu_blocks:
        # the CPU tier holds only what the GPUs wrote (a spill is a block here), and it serves most of the hits:
        # a turn never goes to the engine its previous turn went to
        assert tier["cached"] <= 16 * sum(p["spills"] for p in kvs)
        assert cpu.sum() > 5 * gpu.sum() > 0
    else:
        assert cpu.sum() == 0 and tier["cached"] == 0 and sum(p["spills"] for p in kvs) == 0


def test_max_queue_bounds_the_waiting_line(monkeypatch):
    doc = run("max_queue.sq", monkeypatch, horizon=120)
    waiting, reqs, engine = doc["gauges"]["waiting"], pool(doc, "reqs"), stage(doc, "engine")
    # the guard reads the line before joining it: never more than max_queue = 32 wait
    assert waiting["max"] == 32 and waiting["mean"] > 28
    assert waiting["mean"] == pytest.approx(reqs["queue"], rel=1e-12)
    # Little's law at the line: its mean = the admission rate x the mean wait
    assert reqs["queue"] == pytest.approx(reqs["admissions"] / 90 * reqs["wait"], rel=0.03)
    # what is not shed is what the engine serves: (1 - shed) x 12 requests/s, within the CI of the share shed
    shed = doc["observes"]["shed"]
    served = engine["request_throughput"]
    assert abs((1 - shed["mean"]) * 12 - served) <= 12 * shed["ci"] + 0.2
    # the batch is full the whole time (max_seqs 16): the engine is the bottleneck the guard protects
    assert doc["gauges"]["running"]["mean"] > 15.5


def test_max_queue_without_the_guard_climbs(monkeypatch):
    doc = run("max_queue.sq", monkeypatch, sets={"max_queue": math.inf}, horizon=120)
    assert doc["observes"]["shed"]["mean"] == 0
    assert doc["gauges"]["waiting"]["max"] > 500
    # and the report says why its means mean little, and that the request metrics hold no request: every
    # request done after the warm-up's end (t = 30) was sent before it, the line being FIFO and climbing
    assert doc["codes"] == ["not-steady", "few-samples"] and "arrivals outpace the service" in doc["notes"][0].lower()
    assert "for the request metrics: record request keeps none of its " in doc["notes"][1]
    assert doc["requests"]["completed"] == 0


def test_an_observes_name_alone_is_told_its_statistics(serq, tmp_path):
    # `--find 'shed < 0.5'` meant the observe's mean; it was offered the nearest spelling, `shed.ci`
    r = serq("sweep", str(HERE / "max_queue.sq"), "--find", "shed < 0.5", "--over", "rate", "2:20", "--horizon", "40",
             "--workers", "0", "--no-progress")
    assert r.returncode == 1
    assert r.stderr == ("error: --find: no figure 'shed' in the results: `shed` heads 8 figures (count, mean, ci, "
                        "cv2, p50, p90, p95, p99); name one, `shed.mean` (`observes.shed.mean`)\n")
    from serq_sweep.figures import UnknownFigure, resolve

    cols = ["observes.ttft.mean", "observes.ttft.p99", "requests.ttft.mean", "stages.engine.present",
            "stages.engine.wait", "gauges.waiting.mean", "gauges.waiting.max"]
    with pytest.raises(UnknownFigure, match=r"`ttft` heads figures of 2 sections; name one by its path, "
                                            r"`observes\.ttft\.mean`, `requests\.ttft\.mean`$"):
        resolve("ttft", cols)
    with pytest.raises(UnknownFigure, match=r"`stages\.engine` heads 2 figures \(present, wait\); name one, "
                                            r"`stages\.engine\.present`$"):
        resolve("stages.engine", cols)
    with pytest.raises(UnknownFigure, match=r"`waiting` heads 2 figures \(mean, max\); name one, `waiting\.mean` "
                                            r"\(`gauges\.waiting\.mean`\)$"):
        resolve("waiting", cols)
    # a figure resolves as before, and a name that heads nothing keeps its words
    assert resolve("waiting.max", cols) == "gauges.waiting.max"
    with pytest.raises(UnknownFigure, match=r"no figure 'nothing' in the results$"):
        resolve("nothing", cols)


def test_mm1_slo_attainment_is_the_sojourn_law(monkeypatch, serq):
    # the M/M/1 sojourn is exponential of rate mu - lambda: P(T <= 1) = 1 - exp(-2.5) at rate 2.5, mu 5
    import json

    prog = serq_frontend.compile(path=str(HERE / "mm1_slo.sq"))
    doc = same_json(prog, monkeypatch, horizon=8000)
    assert doc["requests"]["attainment"] is None  # no --slo, no attainment
    assert doc["requests"]["e2el"]["mean"] == pytest.approx(1 / 2.5, rel=0.05)
    r = serq("run", str(HERE / "mm1_slo.sq"), "--horizon", "8000", "--slo", "e2el=1", "--json", "--no-progress")
    req = json.loads(r.stdout)["requests"]
    assert req["attainment"] == pytest.approx(1 - math.exp(-2.5), abs=0.01)
    assert req["goodput"] == pytest.approx(req["attainment"] * req["request_throughput"], rel=1e-12)


def test_mm1_slo_capacity_search(serq, tmp_path):
    # the largest rate at which 90 % finish within 1 s: mu - ln 10 = 2.697
    out = tmp_path / "find.csv"
    r = serq("sweep", str(HERE / "mm1_slo.sq"), "--slo", "e2el=1", "--find", "requests.attainment >= 0.9", "--over",
             "rate", "0.5:4.5", "--tol", "0.05", "--seeds", "1..2", "--horizon", "4000", "--workers", "0",
             "--no-progress", "-o", str(out))
    assert r.returncode == 0, r.stderr
    header, row = out.read_text().splitlines()
    got = dict(zip(header.split(","), row.split(",")))
    assert got["outcome"] == "found"
    assert float(got["holds"]) < float(got["fails"]) <= float(got["holds"]) + 0.05
    assert abs(float(got["holds"]) - (5 - math.log(10))) < 0.12


@pytest.mark.parametrize("R", [0, 1024])
def test_prio_engine_preempts_batch_only(monkeypatch, R):
    doc = run("prio_engine.sq", monkeypatch, sets={"R": R}, horizon=150)
    obs, reqs, kv = doc["observes"], pool(doc, "reqs"), pool(doc, "kv")
    # interactive requests are never the victim while a batch one runs; the batch ones are
    assert obs["preempted_interactive"]["mean"] == 0
    victims = obs["preempted_batch"]["mean"] * obs["preempted_batch"]["count"]
    assert victims <= kv["preemptions"]
    # every admission is a first one or a victim's return: first admissions = admissions - preemptions
    # (but for victims still waiting at the end) = requests ended + in flight, within the live sessions
    first = reqs["admissions"] - kv["preemptions"]
    assert abs(first - obs["response"]["count"]) <= 64 + 5
    assert obs["ttft_interactive"]["mean"] < obs["ttft_batch"]["mean"]
    if R == 0:
        assert kv["preemptions"] > 20
        # Little's law at the slots' queue (steady at R = 0)
        assert reqs["queue"] == pytest.approx(reqs["admissions"] / 120 * reqs["wait"], rel=0.05)
    else:
        # the reservations leave almost no preemption, and fewer requests run at once: the queue climbs, and
        # the waits of the requests admitted no longer give its time average (those still waiting count there)
        assert kv["preemptions"] < 5
        assert "not-steady" in doc["codes"]
        assert reqs["queue"] > reqs["admissions"] / 120 * reqs["wait"]


def test_agents_closed_population_and_tool_law(monkeypatch):
    doc = run("agents_closed.sq", monkeypatch, horizon=400)
    engine, tool, reqs = stage(doc, "engine"), stage(doc, "tool"), pool(doc, "reqs")
    # every one of the 12 agents is at the engine, waiting for a slot, or in a tool call
    assert engine["present"] + reqs["queue"] + tool["present"] == pytest.approx(12, rel=1e-12)
    # Little's law at the tool stage, whatever the law of a call
    assert tool["present"] == pytest.approx(tool["throughput"] * tool["service"], rel=0.05)
    # the calls are ~h2(3, 6): the mean within its CI, the spread near 6
    covers(doc["observes"]["tool_time"], 3, 0.3)
    assert 3 < doc["observes"]["tool_time"]["cv2"] < 9
    # most of each prompt is the conversation the agent's cache holds
    assert doc["requests"]["prefix_cache_hit_rate"] > 0.8


def test_agents_closed_a_new_task_reuses_the_system_prompt_only(monkeypatch):
    import serq_sim

    monkeypatch.delenv("SERQ_SIM_TIER", raising=False)
    prog = serq_frontend.compile(path=str(HERE / "agents_closed.sq"), sets={"p_more": 0})
    rows = serq_sim.run(prog, horizon=200).records("request")
    # every turn is a task's first (p_more = 0): its hit is the system prompt's 93 whole blocks (1488 tokens)
    # once the agent has run a task, 0 on its first
    cached = np.asarray(rows["cached"])
    assert set(cached.tolist()) <= {0.0, 1488.0} and (cached == 1488).sum() > len(cached) - 12


def test_a_nan_kept_as_a_value_in_the_arm_not_taken_keeps_the_conditional():
    # where a NaN is a value (an observe), the arm not taken that computes one was no error and is no error:
    # the conditional stays as it was written (it is not cut to the arm taken, which would change the IR)
    src = ("let k = 0; stage s : fifo; workload { arrive batch(1); } session { set y = 2; "
           "observe x = k > 0 ? 5 % 0 : y; run s (k > 0 ? k / k : 1); } run { horizon inf; }")
    prog = serq_frontend.compile(source=src)
    observe, work = prog.session[1].value, prog.session[2].work
    assert type(observe).__name__ == "Cond" and type(observe.then).__name__ == "Binary"
    # where it is refused (a run's work), the arm not taken is left out: the work is the arm taken, 1
    assert type(work).__name__ == "Num" and float(work.value) == 1


@pytest.mark.parametrize("service", ["~exp(1 / mu)", "~det(1 / mu)", "~h2(1 / mu, 8)", "~uniform(0, 2 / mu)"])
def test_drop_tail_without_waiting_room_is_erlangs_loss_system(monkeypatch, service):
    # K = c = 2: M/G/2/2, whose blocking is Erlang's B(2, 3) = 4.5 / 8.5 whatever the service law
    prog = serq_frontend.compile(path=str(HERE / "drop_tail.sq"), sets={"K": 2}, defs={"service": service})
    doc = same_json(prog, monkeypatch, horizon=8000)
    covers(doc["observes"]["drop"], erlang_b(3, 2), 0.1)
    assert doc["observes"]["drop"]["mean"] == pytest.approx(4.5 / 8.5, abs=0.03)
