"""vLLM programs as a vLLM or llm-d engineer writes them (tests/peer_programs13/), each checked against truths of
its own: prefix-cache-aware routing over a family of engines (llm-d style) against round robin and random routing,
its hits counted by hand; a vLLM engine with a CPU offload tier, its hits per tier, spills and loads counted by
hand; a max_num_seqs/budget sweep through `serq sweep`, its throughput against the closed form of waves and its
TTFT, ITL and E2EL read back row by row; a trace replayed through `--trace` on an idle engine, every request's
times by hand, and the `--slo` attainment counted from the records."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim

HERE = Path(__file__).resolve().parent / "peer_programs13"
SERQ = str(Path(sys.executable).parent / "serq")
pytestmark = pytest.mark.timeout(60)


def run(name: str, sets: dict | None = None, defs: dict | None = None, **over):
    prog = serq_frontend.compile(path=str(HERE / name), sets=sets or {}, defs=defs or {})
    return serq_sim.run(prog, **over)


def rows_of(r) -> list[dict]:
    rec = r.records("request", kind="numpy")
    names = list(rec)
    return [dict(zip(names, (rec[k][i].item() for k in names))) for i in range(len(rec["sent"]))]


# --- routing.sq: prefix-cache-aware routing -------------------------------------------------------------------

TINY_ROUTING = {"N": 2, "bs": 4, "turns": 3, "step": 1}
TINY_ROUTING_DEFS = {"new_tokens": "8", "out_tokens": "4", "think": "1", "spacing": "0.5"}


def expected_hits(rows: list[dict], bs: int) -> list[int]:
    """Each request's hit with a cache nothing is evicted from: the session's longest sequence computed on the
    engine the request went to (its latest turn there: prompt + output - 1 tokens, in whole blocks), at most the
    request's own prompt but its last token, in whole blocks (lib/vllm.sq's reusable)."""
    out = []
    for row in rows:
        before = [p for p in rows if p["session"] == row["session"] and p["turn"] < row["turn"]
                  and p["engine"] == row["engine"]]
        computed = max(((p["prompt"] + p["output"] - 1) // bs * bs for p in before), default=0)
        out.append(min(computed, (row["prompt"] - 1) // bs * bs))
    return out


@pytest.mark.parametrize(("policy", "engines", "hits"), [
    # by hand: sessions 0 and 1 arrive at 0.5 and 1 (one iteration a second); every turn sends 8 new tokens and
    # receives 4, so the prompts are 8, 8 + 4 + 8 = 20 and 20 + 4 + 8 = 32 (60 tokens a session, 120 in all).
    # A turn computes its prompt + 3 tokens, cached in whole blocks of 4: 8 after turn 1 (11 computed), 20 after
    # turn 2 (23). Prefix-aware: session 1's first turn finds no prefix anywhere and goes to the idle engine 1
    # (engine 0 runs session 0 until 4.5); every later turn goes where its history is and finds all of it:
    # turn 2 8 (of reusable 16), turn 3 20 (of 28): 2 x 28 = 56 of 120.
    (0, [0, 1, 0, 1, 0, 1], [0, 0, 8, 8, 20, 20]),
    # round robin: turn k of session s on (s + k - 1) % 2: turn 2 on the other engine finds nothing, turn 3 back
    # on turn 1's engine finds turn 1's 8: 16 of 120
    (1, [0, 1, 1, 0, 0, 1], [0, 0, 0, 0, 8, 8]),
], ids=["prefix_aware", "round_robin"])
def test_routing_hits_by_hand(policy, engines, hits):
    r = run("routing.sq", {**TINY_ROUTING, "policy": policy}, TINY_ROUTING_DEFS, arrivals=2)
    rows = sorted(rows_of(r), key=lambda x: (x["turn"], x["session"]))
    assert [x["prompt"] for x in rows] == [8, 8, 20, 20, 32, 32]
    assert [x["engine"] for x in rows] == engines
    assert [x["cached"] for x in rows] == hits
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(sum(hits) / 120, rel=1e-12)
    # each engine's hits are its own requests' (the engine table's requests are the rows it served)
    for j in range(2):
        assert r.pool("reqs", j).admissions == engines.count(j)


@pytest.mark.parametrize("seed", [3, 4])
def test_prefix_aware_routing_hits_at_least_what_random_and_round_robin_hit(seed):
    # 40 conversations of 4 turns over two engines whose caches never evict: each request's hit is the history
    # its session computed on the engine it went to (expected_hits, from the records' own engine column), so
    # the three hit rates are checked against that rule, then against each other. The prompts are the same
    # tokens under every policy (the router's coin is drawn under every policy, from the session's stream).
    rates, prompts = {}, set()
    for policy in (0, 1, 2):
        r = run("routing.sq", {"policy": policy}, seed=seed)
        rows = rows_of(r)
        assert len(rows) == 160 and r.result.requests.completed == 160
        assert all(r.pool("kv", j).evicted_entries == 0 and r.pool("kv", j).preemptions == 0 for j in range(2))
        assert [x["cached"] for x in rows] == expected_hits(rows, 16)
        prompts.add(sum(x["prompt"] for x in rows))
        rates[policy] = r.result.requests.prefix_cache_hit_rate
        assert rates[policy] == pytest.approx(sum(x["cached"] for x in rows) / sum(x["prompt"] for x in rows),
                                              rel=1e-12)
        if policy == 0:  # every follow-up stays with its history and finds all of it
            by_turn = {(x["session"], x["turn"]): x for x in rows}
            for x in rows:
                prev = by_turn.get((x["session"], x["turn"] - 1))
                assert x["cached"] == (0 if prev is None else (prev["prompt"] + prev["output"] - 1) // 16 * 16)
                assert prev is None or prev["engine"] == x["engine"] or prev["prompt"] + prev["output"] - 1 < 16
    assert len(prompts) == 1
    assert rates[0] >= rates[2] and rates[0] >= rates[1]
    assert rates[0] > 1.3 * rates[2]
    if seed == 3:  # the figures docs/vllm.md gives
        assert [round(rates[p], 2) for p in (0, 2, 1)] == [0.63, 0.41, 0.32]


# --- offload.sq: a vLLM engine with a CPU tier for its KV --------------------------------------------------------

# By hand (blocks of 4 tokens, 6 on the GPU; an iteration 1 s; a block written to the CPU tier in 0.5 s, read
# back in 0.25 s). Conversation 0 arrives at 5, conversation 1 at 10.
#   5   0's turn 1, prompt 8: nothing cached; prefills 8 in [5, 6] (first token 6), decodes 3 to 9; it computed
#       11 tokens: 2 blocks cached on the GPU.
#   10  1's turn, prompt 16: 4 blocks beside 0's 2 cached (6 in all), prefilled in [10, 11]; its first decode
#       grows to a 5th block: the GPU evicts 0's last block, spilled (1), written by 11.5; done at 14, its 4 blocks
#       cached (19 computed).
#   19  0's turn 2 (think 10), prompt 12 + 8 = 20 (5 blocks): the GPU keeps 0's first block (hit 4); it takes 4
#       blocks more, 1 free: 3 of 1's cached blocks are evicted, spilled (2-4). The CPU tier has 0's second block:
#       the history's 8 reusable tokens less the GPU's 4, read back (load: 1 block, 0.25 s) and counted on the GPU;
#       the rest, 20 - 4 - 4 = 12, prefilled in [19.25, 20.25]; its first decode grows to a 6th block, evicting
#       1's last one (spill 5); done at 23.25.
# Hits: GPU 4, CPU 4, of 8 + 16 + 20 = 44 prompt tokens. PCIe ran 5 writes and 1 read (the empty reads of the
# first turns take no time and are no run). Evicted on the GPU: 0's one block and 1's whole entry of 4, 20 tokens.
OFFLOAD = {
    "ample": ({}, [(5, 6, 9, 0, 0), (10, 11, 14, 0, 0), (19, 20.25, 23.25, 4, 4)], 6, 0),
    # a write of 10 s: 0's block spilled at 11 lands at 21, after turn 2 looked at 19: no CPU hit, 16 prefilled
    # at once in [19, 20]; only that write completes before the run ends at 23 (the 4 others end at 29 and 30)
    "slow_write": ({"write": 10}, [(5, 6, 9, 0, 0), (10, 11, 14, 0, 0), (19, 20, 23, 4, 0)], 1, 0),
    # a tier of 3 blocks: at 19 the GPU's 3 spills of 1's blocks come before the turn reads the tier, and the
    # third evicts 0's block there (LRU): no CPU hit. At 20 the 4th spill of 1 evicts one of 1's own 3 blocks in
    # the full tier: 8 tokens evicted on the CPU, 0's entry whole.
    "small_tier": ({"cpu_blocks": 3}, [(5, 6, 9, 0, 0), (10, 11, 14, 0, 0), (19, 20, 23, 4, 0)], 5, 8),
    # a tier of 4 blocks holds 0's block and 1's 3: the same as an ample one
    "tier_of_4": ({"cpu_blocks": 4}, [(5, 6, 9, 0, 0), (10, 11, 14, 0, 0), (19, 20.25, 23.25, 4, 4)], 6, 0),
}


@pytest.mark.parametrize("case", list(OFFLOAD))
def test_offload_hits_spills_and_loads_by_hand(case):
    sets, want, pcie_runs, cpu_evicted = OFFLOAD[case]
    r = run("offload.sq", sets)
    rows = sorted(rows_of(r), key=lambda x: x["sent"])
    assert [(x["sent"], x["first_token"], x["last_token"], x["gpu"], x["cpu"]) for x in rows] == want
    assert [x["prompt"] for x in rows] == [8, 16, 20]
    assert all(x["cached"] == x["gpu"] + x["cpu"] for x in rows)
    hits = sum(x["gpu"] + x["cpu"] for x in rows)
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(hits / 44, rel=1e-12)
    kv, cpu = r.pool("kv"), r.pool("cpu")
    assert kv.spills == 5 and cpu.spills == 0
    assert (kv.evicted_entries, kv.evicted_units) == (1, 20)
    assert cpu.evicted_units == cpu_evicted
    assert r.stage("pcie").completions == pcie_runs
    assert kv.preemptions == 0 and r.result.end == want[-1][2]


SCALE_SETS = {"blocks": 40, "cpu_blocks": 100000, "write": 0, "read": 0, "step": 0.01}
SCALE_DEFS = {"turns": "4", "new_tokens": "1 + floor(~exp(12))", "out_tokens": "1 + floor(~exp(6))",
              "think": "~exp(0.5)", "arrival": "~exp(0.3)"}


@pytest.mark.parametrize("write", [0, 1])
def test_offload_at_scale_loses_no_history_to_an_ample_tier(write):
    # 150 conversations of 4 turns on a GPU of 40 blocks: every evicted block is spilled (spills x 4 tokens =
    # the evicted tokens) into a tier that never evicts. Written at once, every follow-up finds its whole
    # history between the two tiers at its first admission: the previous prompt + output - 1 tokens, in whole
    # blocks, preempted requests included (they run again from what they find then). Written in 1 s a block,
    # a block still on its way is found in neither tier: never more than the history, and less for some.
    r = run("offload.sq", {**SCALE_SETS, "write": write}, SCALE_DEFS, arrivals=150)
    rows = rows_of(r)
    by_turn = {(x["session"], x["turn"]): x for x in rows}
    lost = 0
    for x in rows:
        prev = by_turn.get((x["session"], x["turn"] - 1))
        history = 0 if prev is None else (prev["prompt"] + prev["output"] - 1) // 4 * 4
        assert x["cached"] == x["gpu"] + x["cpu"] <= history, x
        lost += history - x["cached"]
    kv, cpu = r.pool("kv"), r.pool("cpu")
    assert kv.spills > 1000 and kv.spills * 4 == kv.evicted_units and cpu.evicted_units == 0
    assert sum(x["cpu"] for x in rows) > 0.3 * sum(x["cached"] for x in rows)
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(
        sum(x["cached"] for x in rows) / sum(x["prompt"] for x in rows), rel=1e-12)
    if write == 0:
        assert lost == 0 and kv.preemptions == sum(x["preemptions"] for x in rows) > 0
    else:
        assert lost > 0

# --- sweep.sq: max_num_seqs and the budget through serq sweep ---------------------------------------------------


def serq(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SERQ, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_a_max_num_seqs_sweep_against_the_waves_it_serves(tmp_path):
    # 12 requests of prompt 16 and output 5 sent at 0; an iteration lasts c = 0.5 s; max_num_seqs m with the
    # budget 16 m. The engine serves waves of m: a wave is admitted in one iteration and prefills there (its
    # first tokens at its end), decodes its 4 other tokens in the next 4, and its slots are free for the next
    # wave from the iteration after its last. Wave w (0 to 12/m - 1) has TTFT (5w + 1) c and E2EL 5(w + 1) c, its
    # gaps between tokens c; the run ends at (12/m) 5 c: the throughput m / (5 c), 0.4, 0.8, 1.6 requests/s,
    # rising with m as the waves' count falls (every iteration costs c, whatever it computes).
    p = serq("sweep", str(HERE / "sweep.sq"), "--zip", "max_seqs,B", "--set", "max_seqs=1,2,4", "--set", "B=16,32,64",
             "--out", "t.csv", "--records", "r.csv", "--slo", "ttft=3", "--no-progress", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    table, recs = read_csv(tmp_path / "t.csv"), read_csv(tmp_path / "r.csv")
    c = 0.5
    assert [(int(row["max_seqs"]), int(row["B"])) for row in table] == [(1, 16), (2, 32), (4, 64)]
    throughput = []
    for row in table:
        m = int(row["max_seqs"])
        waves = 12 // m
        mine = [x for x in recs if x["key"] == row["key"]]
        assert len(mine) == int(row["requests.completed"]) == int(row["records.request"]) == 12
        assert float(row["end"]) == waves * 5 * c
        assert float(row["requests.request_throughput"]) == pytest.approx(m / (5 * c), rel=1e-12)
        throughput.append(float(row["requests.request_throughput"]))
        ttft = sorted(float(x["first_token"]) - float(x["sent"]) for x in mine)
        e2el = sorted(float(x["last_token"]) - float(x["sent"]) for x in mine)
        assert ttft == [(5 * w + 1) * c for w in range(waves) for _ in range(m)]
        # --slo ttft=3: the first two waves (TTFT 0.5 and 3, met at the bound), 2m requests
        assert int(row["requests.good"]) == sum(t <= 3 for t in ttft) == 2 * m
        assert float(row["requests.goodput"]) == pytest.approx(2 * m / float(row["end"]), rel=1e-12)
        assert e2el == [5 * (w + 1) * c for w in range(waves) for _ in range(m)]
        # the report's figures, read back: the means of the rows, ITL's over every gap
        assert float(row["requests.ttft.mean"]) == pytest.approx(sum(ttft) / 12, rel=1e-12)
        assert float(row["requests.e2el.mean"]) == pytest.approx(sum(e2el) / 12, rel=1e-12)
        # numpy's p99 of 12 values: the virtual index 11 x 0.99 = 10.89 between the 11th and the 12th
        assert float(row["requests.ttft.p99"]) == pytest.approx(ttft[10] + 0.89 * (ttft[11] - ttft[10]), rel=1e-12)
        assert int(row["requests.itl.count"]) == 12 * 4
        itl = float(row["requests.itl.mean"])
        assert itl == pytest.approx(c, rel=1e-12) and float(row["requests.itl.std"]) == pytest.approx(0, abs=1e-12)
        assert float(row["requests.tpot.mean"]) == pytest.approx(c, rel=1e-12)
        # row by row: E2EL = TTFT + (output - 1) x the request's mean gap (its TPOT), and with one gap for all,
        # the report's mean E2EL = mean TTFT + 4 x mean ITL
        for x in mine:
            sent, first, last, n = (float(x[k]) for k in ("sent", "first_token", "last_token", "output"))
            assert last - sent == pytest.approx((first - sent) + (n - 1) * itl, rel=1e-12), x
        assert float(row["requests.e2el.mean"]) == pytest.approx(float(row["requests.ttft.mean"]) + 4 * itl,
                                                                 rel=1e-12)
        # queue + prefill = TTFT, decode + prefill + queue = E2EL (vLLM's phases, their means)
        phases = {k: float(row[f"requests.{k}.mean"]) for k in ("queue", "prefill", "decode", "infer")}
        assert phases["queue"] + phases["prefill"] == pytest.approx(sum(ttft) / 12, rel=1e-12)
        assert phases["infer"] == pytest.approx(phases["prefill"] + phases["decode"], rel=1e-12)
        assert (phases["prefill"], phases["decode"]) == (pytest.approx(c), pytest.approx(4 * c))
    assert throughput[0] < throughput[1] < throughput[2]


# --- replay.sq: a trace through --trace, and its SLO -------------------------------------------------------------

TRACE = """session,turn,new,out,think,forced
0,1,40,3,2,0
0,2,70,4,1,0
0,3,90,2,0,1
0,4,100,2,0,0
1,1,100,2,0,0
"""

# By hand (budget 64, blocks of 16, an iteration 0.25 s; session i sent at (i + 1) x 20; the engine is idle
# between requests):
#   0/1 sent 20, prompt 40: prefilled in one iteration (first token 20.25), 2 decodes: last 20.75; it computed
#       42 tokens: 32 cached. Think 2.
#   0/2 sent 22.75, prompt 70 extending the 40: hit min(32, floor((41 - 1) / 16) x 16) = 32; prefills 38 in one
#       iteration (23), 3 decodes: 23.75; 73 computed, 64 cached. Think 1.
#   0/3 sent 24.75, forced: hit 0 (its cached 64 stay, dead); prefills 90 in two iterations (64, then 26):
#       first token 25.25, 1 decode: 25.5; 91 computed, 80 cached. No think.
#   0/4 sent 25.5, prompt 100 extending the 90: hit min(80, floor(90 / 16) x 16) = 80; prefills 20 (25.75), 1
#       decode: 26.
#   1/1 sent 40, prompt 100: 64 + 36 (40.5), 1 decode: 40.75.
REPLAY = [(0, 1, 20, 20.25, 20.75, 0), (0, 2, 22.75, 23, 23.75, 32), (0, 3, 24.75, 25.25, 25.5, 0),
          (0, 4, 25.5, 25.75, 26, 80), (1, 1, 40, 40.5, 40.75, 0)]


def test_a_trace_replay_by_hand(tmp_path):
    (tmp_path / "t.csv").write_text(TRACE, encoding="utf-8")
    r = run("replay.sq", trace=str(tmp_path / "t.csv"), arrivals=2)
    rows = rows_of(r)
    assert [(x["session"], x["turn"], x["sent"], x["first_token"], x["last_token"], x["cached"]) for x in rows] == REPLAY
    assert [(x["prompt"], x["output"]) for x in rows] == [(40, 3), (70, 4), (90, 2), (100, 2), (100, 2)]
    assert all(x["admitted"] == x["sent"] for x in rows)  # an idle engine admits at once
    assert r.result.end == 40.75 and r.stage("engine").iterations == 3 + 4 + 3 + 2 + 3  # prefill and decode iterations, by request
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx((32 + 80) / 400, rel=1e-12)


@pytest.mark.parametrize(("slo", "good"), [
    # TTFT 0.25, 0.25, 0.5, 0.25, 0.5; E2EL 0.75, 1, 0.75, 0.5, 0.75; TPOT 0.25 each. An SLO is met at its bound
    # (vLLM's `slo >= value`): ttft=0.25,e2el=1 holds for 0/1, 0/2 and 0/4; e2el=0.75 for all but 0/2;
    # tpot=0.25 for all; ttft=0.2 for none.
    ("ttft=0.25,e2el=1", 3), ("e2el=0.75", 4), ("tpot=0.25", 5), ("ttft=0.2,tpot=1", 0),
])
def test_the_slo_attainment_of_a_replay_is_the_count_of_its_records(tmp_path, slo, good, serq_in_process,
                                                                    monkeypatch):
    # (serq run in this process, in tmp_path: what is checked is the reports' figures and text)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(TRACE, encoding="utf-8")
    p = serq_in_process("run", str(HERE / "replay.sq"), "--trace", "t.csv", "--arrivals", "2", "--slo", slo,
                        "--no-progress", "--records", "rec.csv", "--json", "-o", "rep.json")
    assert p.returncode == 0, p.stderr
    rep = json.loads((tmp_path / "rep.json").read_text(encoding="utf-8"))["requests"]
    limits = {k: float(v) for k, v in (part.split("=") for part in slo.split(","))}
    count = 0
    for x in read_csv(tmp_path / "rec.csv"):
        sent, first, last, n = (float(x[k]) for k in ("sent", "first_token", "last_token", "output"))
        value = {"ttft": first - sent, "e2el": last - sent, "tpot": (last - first) / (n - 1)}
        count += all(value[k] <= v for k, v in limits.items())
    assert rep["good"] == count == good
    assert rep["goodput"] == pytest.approx(good / 40.75, rel=1e-12)
    assert rep["slo"] == limits and rep["completed"] == 5
    # the text report says the same, beside the requests it is of (the attainment K / 5): `goodput G req/s (K of
    # 5 good: …)`; it said `(K good: …)`, the count alone, on a line whose `completed` is far from it
    text = serq_in_process("run", str(HERE / "replay.sq"), "--trace", "t.csv", "--arrivals", "2", "--slo", slo,
                           "--no-progress").stdout
    assert f"goodput {good / 40.75:.6g} req/s ({good} of 5 good: {slo.replace('=', ' <= ').replace(',', ', ')})" in text
    # ... and their ratio, the SLO attainment, as the JSON's requests.attainment (the text left it to the reader)
    assert rep["attainment"] == good / 5
    assert f"good: {slo.replace('=', ' <= ').replace(',', ', ')})  attainment {good / 5:.6g}\n" in text


# --- what a user of these programs met ---------------------------------------------------------------------------


@pytest.mark.parametrize(("stmt", "message"), [
    # routing.sq's think stage was first named `user` and run as `user (think());`, as `tool (…);` runs the stage
    # tool: the message said only that no definition `user` exists, beside the stage declared with that name
    ("user (1);", "`user(…);`: `user` is a stage, not a statement definition; a session runs it with "
                  "`run user (…);`"),
    ("kv (1);", "`kv(…);`: `kv` is a pool, not a statement definition; a session holds it with `hold kv (…) { … }`"),
    ("x (1);", "`x(…);`: `x` is a `let`, not a statement definition"),
])
def test_a_declared_name_written_as_a_statement_says_what_it_is(tmp_path, stmt, message):
    from serq_frontend.diagnostics import CompileError

    path = tmp_path / "p.sq"
    path.write_text("let x = 1;\npool kv { cap 10; }\nstage user : delay;\nworkload { arrive poisson(1); }\n"
                    f"session {{\n  {stmt}\n}}\nrun {{ horizon 10; }}\n", encoding="utf-8")
    with pytest.raises(CompileError) as e:
        serq_frontend.compile(path=str(path))
    assert str(e.value).splitlines() == [f"{path}:6:3: error: {message}", f"    {stmt}", "    ^"]


def test_the_target_of_an_engine_with_an_offload_tier_says_the_tier_is_not_in_it(tmp_path):
    # offload.sq's engine is vLLM's, and its target printed the plain configuration without a word of the CPU
    # tier its figures depend on (the CPU hit of OFFLOAD["ample"]): vLLM offloads only through a KV connector
    from serq_vllm.target import target

    path = HERE / "offload.sq"
    out = target(serq_frontend.compile(path=str(path)), str(path))
    assert out["config"] == {"block_size": 4, "enable_prefix_caching": True, "long_prefill_token_threshold": 0,
                             "max_num_batched_tokens": 256, "max_num_seqs": 8, "num_gpu_blocks": 7}
    line = next(i for i, x in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "spill cpu" in x)
    col = path.read_text(encoding="utf-8").splitlines()[line - 1].index("spill cpu") + len("spill ") + 1
    assert out["warnings"] == [
        f"memory pool `kv` spills the blocks it evicts to pool `cpu` (at {path}:{line}:{col}), and this configuration "
        "has no KV offloading: the vLLM engine it describes drops an evicted block where the program keeps it in "
        "`cpu`. vLLM offloads KV to another tier only through a KV connector (kv_transfer_config), which a target "
        "does not write"]
    # a spill the constants rule out is none; and the CLI says it on stderr, the JSON unchanged but for the key
    source = path.read_text(encoding="utf-8").replace("when (1);", "when (write < 0);")
    (tmp_path / "never.sq").write_text(source, encoding="utf-8")
    never = target(serq_frontend.compile(path=str(tmp_path / "never.sq")))
    assert "warnings" not in never and never["config"] == out["config"]
    p = serq("vllm", "target", str(path), cwd=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout) == out
    assert p.stderr == f"warning: {out['warnings'][0]}\n"


@pytest.mark.parametrize("new", [0, 0.5])
def test_a_replayed_turn_of_an_empty_prompt_is_the_runs_error(tmp_path, new):
    # a trace row of new 0 (vLLM refuses an empty prompt) ran through lib/vllm.sq as a request of one token that
    # never sampled its first token: its record said first_token -1, and the report's mean TTFT was -11.25 s for
    # 0/1 (TTFT 0.25) beside 0/2 (first_token -1, sent at 21.75: -22.75)
    from serq_sim.errors import SimError

    (tmp_path / "t.csv").write_text(f"session,turn,new,out,think,forced\n0,1,20,3,1,0\n0,2,{new},3,1,0\n",
                                    encoding="utf-8")
    with pytest.raises(SimError) as e:
        run("replay.sq", trace=str(tmp_path / "t.csv"), arrivals=1)
    import serq_vllm

    lib = (Path(serq_vllm.__file__).parent / "lib" / "vllm.sq").read_text(encoding="utf-8").splitlines()
    at = next(i for i, x in enumerate(lib, 1) if x.strip().startswith("prefill on engine"))
    lines = str(e.value).splitlines()
    assert lines[0].endswith(f"lib/vllm.sq:{at}:5: error: at t=21.75, session 0: the run's work is negative "
                             f"({new - 1:g})")
    assert lines[1].strip() == "prefill on engine (prompt < 1 ? prompt - 1 : known - c) growing kv;"
    assert lines[3].endswith("replay.sq:38:5: note: in the expansion of `vllm_request_at`, used here")
