"""Disaggregated and routed vLLM deployments as an llm-d engineer writes them (tests/peer_programs16/), each checked
against truths of its own: a router over three engines by least queued, least KV used, prefix-cache affinity and
round robin by session, every request's engine and times worked out by hand; prefill/decode disaggregation with
a KV read between the two instances, every iteration by hand; GPU engines spilling to a CPU tier, shared or one
an engine, the second turn's hit found in the tier and its read timed by hand; engines of two GPU sizes behind a
router that weighs them; and each deployment at a few thousand requests, twice with one seed (byte-identical
reports and records), its per-engine utilisation, tokens, requests and hit rates recomputed from --records.
What a fleet's user meets besides: a run-time error names the member of a family it is about (kv[1], E[1]),
and a router or chunk cap keyed on the queue of a pool nobody waits in (queued(kv[j])) is warned of."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
import serq_sim.fast

HERE = Path(__file__).resolve().parent / "peer_programs16"
SERQ = str(Path(sys.executable).parent / "serq")
pytestmark = pytest.mark.timeout(60)


def run(name: str, sets: dict, defs: dict, **over):
    prog = serq_frontend.compile(path=str(HERE / name), sets=sets, defs=defs)
    return serq_sim.run(prog, **over)


def rows_of(r, table: str = "request") -> list[dict]:
    rec = r.records(table, kind="numpy")
    names = list(rec)
    return [dict(zip(names, (rec[k][i].item() for k in names))) for i in range(len(rec["session"]))]


def union(intervals) -> float:
    """The length of a union of closed intervals: the time an engine has a request resident."""
    total, start, end = 0.0, None, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    return total + (end - start if end is not None else 0.0)


def serq_twice(tmp_path: Path, name: str, *args: str) -> tuple[dict, list[dict]]:
    """Runs FILE twice with the same seed through the CLI (--json, --records) into two folders: both reports and
    every record file are byte-identical; returns the report and the rows of the table `request` (a program of
    several tables writes one file a table, FILE.NAME.csv)."""
    outs = []
    for k in (1, 2):
        folder = tmp_path / str(k)
        folder.mkdir()
        p = subprocess.run([SERQ, "run", str(HERE / name), *args, "--no-progress", "--json", "-o",
                            str(folder / "r.json"), "--records", str(folder / "r.csv")],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        outs.append({f.name: f.read_bytes() for f in folder.iterdir()})
    assert outs[0] == outs[1]
    table = tmp_path / "1" / ("r.csv" if "r.csv" in outs[0] else "r.request.csv")
    return json.loads(outs[0]["r.json"]), read_rows(table)


def read_rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def stage_of(report: dict, name: str, index: int | None) -> dict:
    return next(s for s in report["stages"] if s["name"] == name and s["index"] == index)


# --- router.sq: least queued, least KV used, prefix affinity, round robin ---------------------------------------

# Three engines of a 16-token budget, blocks of 4 tokens, one iteration a second. The sessions are sent at
# 1, 1, 1.5, 2.5, 3.25 and 4.75 (start_at), with prompts of 8, 12, 4, 16, 8 and 4 tokens and 4, 2, 3, 1, 3 and
# 2 output tokens. A request is admitted at an iteration's start (an idle engine starts one at once) with the
# budget the residents left, prefills, samples its first token when its last chunk's iteration ends, then one
# token an iteration. The two sessions of time 1 choose one after the other, before any iteration starts.
ROUTER_SETS = {"N": 3, "B": 16, "bs": 4, "blocks": 64, "step": 1, "max_seqs": 4}
ROUTER_DEFS = {
    "spacing": "0.125",
    "start_at": "serial <= 1 ? 1 : serial == 2 ? 1.5 : serial == 3 ? 2.5 : serial == 4 ? 3.25 : 4.75",
    "new_tokens": "turn_no > 1 ? 4 : serial == 0 ? 8 : serial == 1 ? 12 : serial == 2 ? 4 : serial == 3 ? 16 "
                  ": serial == 4 ? 8 : 4",
    "out_tokens": "turn_no > 1 ? 2 : serial == 0 ? 4 : serial == 1 ? 2 : serial == 2 ? 3 : serial == 3 ? 1 "
                  ": serial == 4 ? 3 : 2",
    "think": "0.25",
}
SENT = [1, 1, 1.5, 2.5, 3.25, 4.75]

ROUTER_SINGLE = {
    # least queued: a request counts only while it waits for an iteration's start, so from 1.5 on every engine
    # has none and each request goes to engine 0. 0 goes to 0 and 1, seeing 0 waiting there, to 1. 2 (at 1.5)
    # waits for 0's iteration at 2 (15 tokens left beside 0's decode), 3 for the one at 3 (14 left: 14 tokens
    # of its 16, the last 2 at 4, first token 5), 4 for the one at 4 (beside 0, 2 and 3's 2 tokens: 12 left)
    # and 5 for the one at 5.
    0: [(0, 1, 2, 5), (1, 1, 2, 3), (0, 2, 3, 5), (0, 3, 5, 5), (0, 4, 5, 7), (0, 5, 6, 7)],
    # least KV used: at 1 nothing is allocated yet, so 1 follows 0 to engine 0 and takes the 8 tokens of budget
    # 0 leaves (its last 4 at 2, first token 3). 2 sees 16 tokens on engine 0 and goes to 1; 3 (2.5) to the
    # empty engine 2; 4 (3.25) finds engine 0 at 28 (0's 3 blocks, 1's 4), engine 1 at 8 (2 at position 5),
    # engine 2 at 16 (3's prompt): engine 1, admitted at its iteration of 3.5; 5 (4.75) finds engine 2 empty.
    1: [(0, 1, 2, 5), (0, 1, 3, 4), (1, 1.5, 2.5, 4.5), (2, 2.5, 3.5, 3.5), (1, 3.5, 4.5, 6.5),
        (2, 4.75, 5.75, 6.75)],
    # prefix affinity: no prefix anywhere, so the fewest running or waiting: 0, 1, 2 on three engines, 3 on the
    # tie of one each (engine 0), 4 on engine 1 (its request done at 3), 5 on engine 2 (done at 4.5)
    2: [(0, 1, 2, 5), (1, 1, 2, 3), (2, 1.5, 2.5, 4.5), (0, 3, 5, 5), (1, 3.25, 4.25, 6.25),
        (2, 4.75, 5.75, 6.75)],
    # round robin by session: s % 3, the same engines as above
    3: [(0, 1, 2, 5), (1, 1, 2, 3), (2, 1.5, 2.5, 4.5), (0, 3, 5, 5), (1, 3.25, 4.25, 6.25),
        (2, 4.75, 5.75, 6.75)],
}


@pytest.mark.parametrize("policy", list(ROUTER_SINGLE), ids=["least_queued", "least_kv", "prefix", "round_robin"])
def test_router_single_turn_by_hand(policy):
    want = ROUTER_SINGLE[policy]
    r = run("router.sq", {**ROUTER_SETS, "policy": policy, "turns": 1}, ROUTER_DEFS, arrivals=6)
    rows = sorted(rows_of(r), key=lambda x: x["session"])
    assert [x["sent"] for x in rows] == SENT
    assert [x["prompt"] for x in rows] == [8, 12, 4, 16, 8, 4]
    assert [(x["engine"], x["admitted"], x["first_token"], x["last_token"]) for x in rows] == want
    ttft = [w[2] - s for w, s in zip(want, SENT)]
    assert r.result.requests.ttft.mean == pytest.approx(sum(ttft) / 6, rel=1e-12)
    end = max(w[3] for w in want)
    assert r.result.end == end
    for j in range(3):
        mine = [w for w in want if w[0] == j]
        eng = r.stage("engine", j)
        assert eng.requests == len(mine) == r.pool("reqs", j).admissions
        # one iteration a second, run while a request is resident: from its admission to its last token
        busy = union((w[1], w[3]) for w in mine)
        assert eng.iterations == busy
        assert eng.utilisation == pytest.approx(busy / end, rel=1e-12)


def test_router_reads_an_engine_before_the_iteration_that_ends_at_the_same_instant():
    # Least KV used with request 4 sent at 3.5, the instant engines 1 and 2 end an iteration (2.5 to 3.5) and
    # request 3 its only token on engine 2. Events at one instant run in the order they were scheduled: 4's
    # wait was scheduled at its arrival (0.625), the iterations' ends at 2.5, so 4 chooses first and sees 3's
    # 16 tokens still on engine 2 and 2's 8 on engine 1: engine 1, whose next iteration starts at 3.5. (Read
    # after the ends, engine 2 would be empty and take it, and 5 would go to engine 1.)
    defs = {**ROUTER_DEFS, "start_at": ROUTER_DEFS["start_at"].replace("serial == 4 ? 3.25", "serial == 4 ? 3.5")}
    r = run("router.sq", {**ROUTER_SETS, "policy": 1, "turns": 1}, defs, arrivals=6)
    rows = sorted(rows_of(r), key=lambda x: x["session"])
    want = list(ROUTER_SINGLE[1])
    assert [(x["engine"], x["admitted"], x["first_token"], x["last_token"]) for x in rows] == want
    assert rows[4]["sent"] == 3.5


ROUTER_TWO_TURNS = {
    # sessions 0, 1, 2 as above, then a second turn 0.25 after the first's last token, with 4 new tokens and 2
    # out. Turn 2's prompt is the conversation so far plus 4: 16, 18, 11 tokens. A turn caches its computed
    # tokens (prompt + output - 1) in whole blocks: 8, 12, 4; a hit is at most the blocks before the last token.
    # least queued: 1's turn 2 (3.25) goes to engine 0, where its history is not (waits for 4, 14 tokens of its
    # 18, first token 6); 0 and 2 both send at 5.25: 0 chooses first (engine 0, then waiting there), 2 goes to
    # engine 1, where nothing of it is cached
    0: [(0, 1, 0, 1, 2, 5, 0), (1, 1, 1, 1, 2, 3, 0), (2, 1, 0, 2, 3, 5, 0),
        (0, 2, 0, 6, 7, 8, 8), (1, 2, 0, 4, 6, 7, 0), (2, 2, 1, 5.25, 6.25, 7.25, 0)],
    # least KV used: 1's turn 2 (4.25) finds engine 2 empty and its history on engine 0 (16 tokens in two
    # chunks, first token 6.25); 2's (4.75) goes to the empty engine 1, its own; 0's (5.25) to engine 0, its own
    1: [(0, 1, 0, 1, 2, 5, 0), (1, 1, 0, 1, 3, 4, 0), (2, 1, 1, 1.5, 2.5, 4.5, 0),
        (0, 2, 0, 5.25, 6.25, 7.25, 8), (1, 2, 2, 4.25, 6.25, 7.25, 0), (2, 2, 1, 4.75, 5.75, 6.75, 4)],
    # prefix affinity: every second turn goes back to its history and finds all of it (1: 12 of 18, prefilling 6)
    2: [(0, 1, 0, 1, 2, 5, 0), (1, 1, 1, 1, 2, 3, 0), (2, 1, 2, 1.5, 2.5, 4.5, 0),
        (0, 2, 0, 5.25, 6.25, 7.25, 8), (1, 2, 1, 3.25, 4.25, 5.25, 12), (2, 2, 2, 4.75, 5.75, 6.75, 4)],
}


@pytest.mark.parametrize("policy", list(ROUTER_TWO_TURNS), ids=["least_queued", "least_kv", "prefix"])
def test_router_two_turns_by_hand(policy):
    want = ROUTER_TWO_TURNS[policy]
    r = run("router.sq", {**ROUTER_SETS, "policy": policy, "turns": 2}, ROUTER_DEFS, arrivals=3)
    rows = sorted(rows_of(r), key=lambda x: (x["turn"], x["sent"], x["session"]))
    got = [(x["session"], x["turn"], x["engine"], x["admitted"], x["first_token"], x["last_token"], x["cached"])
           for x in rows]
    assert sorted(got) == sorted(want)
    assert sorted(x["prompt"] for x in rows) == [4, 8, 11, 12, 16, 18]
    hits = sum(w[6] for w in want)
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(hits / 69, rel=1e-12)


def test_router_at_scale_matches_its_records(tmp_path):
    # 1 000 conversations of 3 turns over three engines, prefix-aware, on caches that never evict: every
    # follow-up finds the history its session computed on the engine it went to (in whole blocks, never its
    # prompt's last token). Each engine iterates exactly while a request is resident, so its iterations and
    # utilisation are the union of its requests' [admitted, last token], and its tokens their uncached prompts
    # and outputs but the first.
    rep, rows = serq_twice(tmp_path, "router.sq", "--set", "policy=2", "--set", "blocks=20000",
                           "--arrivals", "1000")
    assert len(rows) == 3000 == rep["requests"]["completed"]
    assert all(p["preemptions"] == 0 and p["evicted_entries"] == 0 for p in rep["pools"])
    span = rep["end"] - rep["warmup"]
    for j in range(3):
        mine = [x for x in rows if x["engine"] == j]
        eng = stage_of(rep, "engine", j)
        busy = union((x["admitted"], x["last_token"]) for x in mine)
        assert eng["requests"] == len(mine) > 500
        assert eng["iterations"] == round(busy / 0.02)
        assert eng["utilisation"] == pytest.approx(busy / span, rel=1e-9)
        tokens = sum(x["prompt"] - x["cached"] + x["output"] - 1 for x in mine)
        assert eng["tokens"] * eng["iterations"] == pytest.approx(tokens, rel=1e-12)
    history: dict[tuple, float] = {}
    for x in sorted(rows, key=lambda x: (x["session"], x["turn"])):
        key = (x["session"], x["engine"])
        assert x["cached"] == min(history.get(key, 0), (x["prompt"] - 1) // 16 * 16), x
        history[key] = max(history.get(key, 0), (x["prompt"] + x["output"] - 1) // 16 * 16)
    hit = sum(x["cached"] for x in rows) / sum(x["prompt"] for x in rows)
    assert rep["requests"]["prefix_cache_hit_rate"] == pytest.approx(hit, rel=1e-12)
    assert hit > 0.5


# --- pd.sq: prefill/decode disaggregation ------------------------------------------------------------------------

# One prefill and one decode instance, a 16-token budget each, one iteration a second; the decoder waits 0.25
# before a read, and a read moves 8 tokens a second over both NICs (two reads share them, 4 each). Requests:
# 0 and 1 sent at 1 (prompts 8 and 12, outputs 3 and 2), 2 at 2.5 (prompt 8, output 2).
#   P [1,2]   0's 8 tokens and 8 of 1's 12 (the budget 0 left); 0 prefilled at 2
#   2         D (idle) admits 0's blocks, no slot and no token; 0 waits 0.25 and reads 8 tokens in [2.25, 3.25]
#   P [2,3]   1's last 4: prefilled at 3; D admits it at once (idle: 0 is reading), its read starts at 3.25
#   P [3,4]   2 (waiting since 2.5): prefilled at 4
#   D [3.25, 4.25]  0 takes a slot: one token of prefill, its first token; decodes at 5.25 and 6.25
#   4.25      D's iteration admits 2's blocks; 2 waits 0.25; at 4.5 1 has 2 tokens left to read: the two
#             reads share the NICs (4 a second), 1 done at 5, 2 (2 of 8 read) alone, done at 5.75
#   D [5.25, 6.25]  1 takes a slot (first token 6.25, its one decode 7.25); D [6.25, 7.25] 2 (first token 7.25,
#             last 8.25)
PD_SETS = {"NP": 1, "ND": 1, "B": 16, "bs": 4, "blocksP": 64, "blocksD": 64, "stepP": 1, "stepD": 1, "BwP": 8,
           "BwD": 8, "x0": 0.25, "x_route": 0, "turns": 1}
PD_DEFS = {"spacing": "0.125", "start_at": "serial <= 1 ? 1 : 2.5", "new_tokens": "serial == 1 ? 12 : 8",
           "out_tokens": "serial == 0 ? 3 : 2"}


def test_pd_iterations_by_hand():
    r = run("pd.sq", PD_SETS, PD_DEFS, arrivals=3)
    rows = sorted(rows_of(r), key=lambda x: x["session"])
    cols = ("sent", "started", "prefilled", "arrived", "slot", "first_token", "last_token")
    assert [tuple(x[c] for c in cols) for x in rows] == [
        (1, 1, 2, 3.25, 3.25, 4.25, 6.25),
        (1, 1, 3, 5, 5.25, 6.25, 7.25),
        (2.5, 3, 4, 5.75, 6.25, 7.25, 8.25),
    ]
    assert [(x["prompt"], x["output"], x["hit_p"], x["hit_d"]) for x in rows] == [(8, 3, 0, 0), (12, 2, 0, 0),
                                                                                     (8, 2, 0, 0)]
    P, D = r.stage("P"), r.stage("D")
    assert (P.iterations, D.iterations) == (3, 5)  # P [1, 4]; D [3.25, 8.25]
    assert P.tokens * P.iterations == 28 and D.tokens * D.iterations == 7  # prompts; 3 first tokens + 4 decodes
    assert P.requests == D.requests == 3
    assert r.stage("D.nic").completions == r.stage("P.nic").completions == 3
    assert r.result.end == 8.25
    assert P.utilisation == pytest.approx(3 / 8.25, rel=1e-12) and D.utilisation == pytest.approx(5 / 8.25, rel=1e-12)
    # the decoder's slots: a request takes none while its KV is read, one from its slot to its last token
    assert r.pool("D.reqs").admissions == 6 and r.pool("D.kv").admissions == 3


def test_pd_second_turn_reads_only_what_the_decoder_lacks():
    # One conversation: turn 1 (prompt 8, 3 out) as request 0 above: prefilled at 2, read in [2.25, 3.25], first
    # token 4.25, last 6.25. The prefiller then caches the 8 tokens it leased (its cache (prompt)); the decoder
    # 8 of the 10 it computed (prompt + 3 - 1, whole blocks). Turn 2, 0.5 later (6.75): prompt 11 + 4 = 15, whose
    # reusable blocks are 12. P finds 8 and prefills 7 in [6.75, 7.75]; D finds 8 too, so it reads 15 - 8 = 7
    # tokens in [8, 8.875] after its 0.25, and takes its slot at once (idle): first token 9.875, last 10.875.
    r = run("pd.sq", {**PD_SETS, "turns": 2}, {**PD_DEFS, "start_at": "1", "new_tokens": "turn_no == 1 ? 8 : 4",
                                               "out_tokens": "turn_no == 1 ? 3 : 2", "think": "0.5"}, arrivals=1)
    rows = sorted(rows_of(r), key=lambda x: x["turn"])
    cols = ("sent", "started", "prefilled", "arrived", "slot", "first_token", "last_token", "prompt", "hit_p", "hit_d")
    assert [tuple(x[c] for c in cols) for x in rows] == [(1, 1, 2, 3.25, 3.25, 4.25, 6.25, 8, 0, 0),
                                                         (6.75, 6.75, 7.75, 8.875, 8.875, 9.875, 10.875, 15, 8, 8)]
    P, D = r.stage("P"), r.stage("D")
    assert (P.iterations, D.iterations) == (2, 5) and P.tokens * P.iterations == 8 + 7
    assert r.stage("D.nic").service == pytest.approx((8 / 8 + 7 / 8) / 2, rel=1e-12)  # the two reads, alone


def test_pd_at_scale_matches_its_records(tmp_path):
    # 1 000 conversations of 3 turns, two prefill and two decode instances. A prefill instance iterates while a
    # request prefills there, from its admission to its last chunk (started, prefilled), over its uncached
    # prompt (prompt - hit_p); a decode instance while a request holds a slot there (slot, last token), one
    # token of prefill and the output's decodes a request; each read is one job on the decoder's NIC.
    rep, rows = serq_twice(tmp_path, "pd.sq", "--arrivals", "1000")
    assert len(rows) == 3000
    assert all(p["preemptions"] == 0 for p in rep["pools"])
    span = rep["end"] - rep["warmup"]
    for i in range(2):
        mine = [x for x in rows if x["prefiller"] == i]
        eng = stage_of(rep, "P", i)
        busy = union((x["started"], x["prefilled"]) for x in mine)
        assert eng["requests"] == len(mine) > 0
        assert eng["iterations"] == round(busy / 0.03)
        assert eng["utilisation"] == pytest.approx(busy / span, rel=1e-9)
        assert eng["tokens"] * eng["iterations"] == pytest.approx(sum(x["prompt"] - x["hit_p"] for x in mine),
                                                                  rel=1e-12)
    for j in range(2):
        mine = [x for x in rows if x["decoder"] == j]
        eng = stage_of(rep, "D", j)
        busy = union((x["slot"], x["last_token"]) for x in mine)
        assert eng["requests"] == len(mine) == stage_of(rep, "D.nic", j)["completions"] > 500
        assert eng["iterations"] == round(busy / 0.01)
        assert eng["utilisation"] == pytest.approx(busy / span, rel=1e-9)
        assert eng["tokens"] * eng["iterations"] == pytest.approx(sum(x["output"] for x in mine), rel=1e-12)
    for x in rows:
        # the order of a request's moments, and the read: at least x0 and the uncached prompt at 50 000 a second
        assert x["sent"] < x["started"] < x["prefilled"] <= x["arrived"] <= x["slot"] < x["first_token"]
        assert x["first_token"] <= x["last_token"]
        assert x["arrived"] - x["prefilled"] >= 0.002 + (x["prompt"] - x["hit_d"]) / 50000 - 1e-9


# --- offload.sq: a CPU tier under the GPUs of two engines ----------------------------------------------------------

# Two engines of a 16-token budget and 8 GPU blocks of 4 tokens, one iteration a second, routed to the least KV
# used; a block's write to the tier takes 0.5 s on a fifo link, a read 0.25 s a block.
#   1    conversation 0's turn 1 (prompt 8, 4 out) on engine 0: first token 2, last 5; 8 tokens cached there.
#   6    conversation 1's only turn (prompt 32, 1 out): engine 0 (nothing allocated anywhere, the lower index).
#        Its 8 blocks leave 0 free: 0's two blocks are evicted, tail first, each written to the tier
#        ([6, 6.5], [6.5, 7]); 32 tokens in two chunks, first and last token 8.
#   7.5  0's turn 2 (prompt 12 + 12 = 24, 2 out): engine 1 (engine 0 holds 32). Its GPU has nothing of 0; the
#        tier has its history's 8 tokens, read in [7.5, 8] and loaded; 16 prefilled in [8, 9]; last token 10.
# Hit rate 8 of 64 prompt tokens, the tier's.
OFFLOAD_SETS = {"N": 2, "B": 16, "bs": 4, "blocks": 8, "cpu_blocks": 8, "step": 1, "write": 0.5, "read": 0.25,
                "max_seqs": 4, "policy": 0}
OFFLOAD_DEFS = {"spacing": "0.125", "start_at": "serial == 0 ? 1 : 6",
                "new_tokens": "serial == 0 ? (turn_no == 1 ? 8 : 12) : 32",
                "out_tokens": "serial == 0 ? (turn_no == 1 ? 4 : 2) : 1", "think": "2.5",
                "last_turn": "serial == 1 || turn_no >= 2"}
OFFLOAD = {
    # (sets, turn 2's (admitted: when the tier's read ended, first token, last token, gpu, cpu), link jobs, end)
    "shared": ({}, (8, 9, 10, 0, 8), {None: 3}),
    # prefix-aware routing: nothing of 0 on either GPU, so the least used, engine 1 again
    "prefix_aware": ({"policy": 1}, (8, 9, 10, 0, 8), {None: 3}),
    # a tier an engine: 0's blocks went to engine 0's, and engine 1's has nothing: 24 tokens in [7.5, 9.5]
    "per_engine": ({"tiers": 2}, (7.5, 9.5, 10.5, 0, 0), {0: 2, 1: 0}),
    # no tier: the evicted blocks are gone
    "no_tier": ({"tier": 0}, (7.5, 9.5, 10.5, 0, 0), {None: 0}),
    # writes of 1 s: at 7.5 only the first written, the tail block, is in the tier. The tier counts a session's
    # tokens, not which ones, so it is a hit of 4 (read after the second write, [8, 8.25]; 20 tokens prefilled in
    # [8.25, 10.25]), where vLLM, matching from the first block, would find none until 8 (docs/vllm.md).
    "slow_write": ({"write": 1}, (8.25, 10.25, 11.25, 0, 4), {None: 3}),
}


@pytest.mark.parametrize("case", list(OFFLOAD))
def test_offload_second_turn_by_hand(case):
    sets, turn2, link_jobs = OFFLOAD[case]
    r = run("offload.sq", {**OFFLOAD_SETS, **sets}, OFFLOAD_DEFS, arrivals=2)
    rows = sorted(rows_of(r), key=lambda x: x["sent"])
    cols = ("admitted", "first_token", "last_token", "gpu", "cpu")
    assert [(x["session"], x["turn"], x["engine"]) for x in rows] == [(0, 1, 0), (1, 1, 0), (0, 2, 1)]
    assert [tuple(x[c] for c in cols) for x in rows] == [(1, 2, 5, 0, 0), (6, 8, 8, 0, 0), turn2]
    assert [x["prompt"] for x in rows] == [8, 32, 24]
    assert all(x["cached"] == x["gpu"] + x["cpu"] for x in rows)
    assert r.result.requests.prefix_cache_hit_rate == pytest.approx(turn2[4] / 64, rel=1e-12)
    kv0 = r.pool("kv", 0)
    assert (kv0.evicted_entries, kv0.evicted_units) == (1, 8)
    assert kv0.spills == (0 if case == "no_tier" else 2)
    for index, jobs in link_jobs.items():  # a write a spilled block, a read a tier hit; an empty read is no job
        assert r.stage("pcie", index).completions == jobs
    assert r.result.end == turn2[2]


@pytest.mark.parametrize(("policy", "guard"), [(1, 1), (0, 0), (0, 1)])
def test_offload_at_scale_finds_histories_in_the_shared_tier(tmp_path, policy, guard):
    # 1 000 conversations of 4 turns over two engines of 200 GPU blocks and one ample tier, written at once.
    # Prefix-aware, a follow-up goes where its GPU head is (or, with none left, finds all of it in the tier):
    # its first execution finds its whole history between the GPU and the tier, preempted requests too.
    # Routed to the least used, a follow-up may go to an engine without its head while another keeps it: with
    # guard 0 the tier's blocks (that head's continuation) still count, with guard 1 they do not.
    args = ["--set", f"policy={policy}", "--set", f"guard={guard}", "--set", "write=0", "--arrivals", "1000"]
    if (policy, guard) == (1, 1):
        rep, rows = serq_twice(tmp_path, "offload.sq", *args)
    else:
        r = run("offload.sq", {"policy": policy, "guard": guard, "write": 0}, {}, arrivals=1000)
        rep, rows = {"requests": {"prefix_cache_hit_rate": r.result.requests.prefix_cache_hit_rate}}, rows_of(r)
    assert len(rows) == 4000
    prev = {(x["session"], x["turn"]): x for x in rows}
    exact = foreign = 0
    for x in rows:
        p = prev.get((x["session"], x["turn"] - 1))
        history = 0 if p is None else (p["prompt"] + p["output"] - 1) // 16 * 16
        assert x["cached"] == x["gpu"] + x["cpu"] <= history, x
        assert x["sent"] <= x["admitted"] < x["first_token"] <= x["last_token"], x
        exact += x["cached"] == history
        foreign += x["cpu"] > 0 and x["elsewhere"] > x["gpu"]
    hit = sum(x["cached"] for x in rows) / sum(x["prompt"] for x in rows)
    assert rep["requests"]["prefix_cache_hit_rate"] == pytest.approx(hit, rel=1e-12)
    if policy == 1:
        assert exact == 4000 and foreign == 0 and hit > 0.6
        assert sum(x["cpu"] for x in rows) > 0.2 * sum(x["cached"] for x in rows)
        assert sum(x["preemptions"] for x in rows) == sum(p["preemptions"] for p in rep.get("pools", [])) > 0
        for j in range(2):  # every block a GPU evicts is written to the tier, which evicts none
            kv = next(p for p in rep["pools"] if p["name"] == "kv" and p["index"] == j)
            assert kv["spills"] * 16 == kv["evicted_units"] > 0
        assert next(p for p in rep["pools"] if p["name"] == "cpu")["evicted_units"] == 0
    else:
        assert exact < 3600
        assert (foreign > 50) if guard == 0 else (foreign == 0)
        if guard == 0:  # the figure docs/vllm.md gives
            assert foreign == 120


# --- hetero.sq: engines of two GPU sizes --------------------------------------------------------------------------

# The large engine: a 32-token budget; two small ones of 16; one iteration a second each. Requests 0, 1, 2 sent
# at 1 (prompts 16, outputs 3), 3 and 4 at 1.5 (prompts 8, outputs 2). The key (running + waiting + 1) / weight,
# weight 2 for the large engine (numbered 0), 1 for small[0] and small[1] (1 and 2), ties to the lowest number:
#   0: 0.5, 1, 1 -> large;  1: 1, 1, 1 -> large;  2: 1.5, 1, 1 -> small[0]   (large [1, 2] prefills both: 32)
#   3: 1.5, 2, 1 -> small[1] (idle: [1.5, 2.5]);  4: 1.5, 2, 2 -> large, admitted at 2 beside two decodes
HETERO_SETS = {"NS": 2, "wL": 2, "BL": 32, "BS": 16, "blocksL": 64, "blocksS": 64, "stepL": 1, "stepS": 1, "bs": 4,
               "max_seqs": 4}
HETERO_DEFS = {"spacing": "0.125", "start_at": "serial <= 2 ? 1 : 1.5", "new_tokens": "serial <= 2 ? 16 : 8",
               "out_tokens": "serial <= 2 ? 3 : 2"}


def test_hetero_router_by_hand():
    r = run("hetero.sq", HETERO_SETS, HETERO_DEFS, arrivals=5)
    routed = sorted(rows_of(r, "routed"), key=lambda x: x["session"])
    assert [x["to"] for x in routed] == [0, 0, 1, 2, 0]
    rows = sorted(rows_of(r), key=lambda x: x["session"])
    assert [(x["admitted"], x["first_token"], x["last_token"]) for x in rows] == [
        (1, 2, 4), (1, 2, 4), (1, 2, 4), (1.5, 2.5, 3.5), (2, 3, 4)]
    # lib/vllm.sq's engine column is the member's index in its own family: the large engine and small[0] are 0
    assert [x["engine"] for x in rows] == [0, 0, 0, 1, 0]
    assert r.result.end == 4
    for name, index, iterations, requests in (("large", None, 3, 3), ("small", 0, 3, 1), ("small", 1, 2, 1)):
        eng = r.stage(name, index)
        assert (eng.iterations, eng.requests) == (iterations, requests)
        assert eng.utilisation == pytest.approx(iterations / 4, rel=1e-12)


def test_hetero_at_scale_matches_its_records(tmp_path):
    # 3 000 requests; the router's own table says which engine took each, the request table when; joined by
    # session, each engine iterates exactly while a request it took is resident.
    rep, rows = serq_twice(tmp_path, "hetero.sq")
    to = {x["session"]: x["to"] for x in read_rows(tmp_path / "1" / "r.routed.csv")}
    assert len(rows) == len(to) == 3000
    span = rep["end"] - rep["warmup"]
    counts = []
    for k, (name, index, step) in enumerate((("large", None, 0.02), ("small", 0, 0.025), ("small", 1, 0.025))):
        mine = [x for x in rows if to[x["session"]] == k]
        assert all(x["engine"] == (0 if k == 0 else k - 1) for x in mine)
        eng = stage_of(rep, name, index)
        busy = union((x["admitted"], x["last_token"]) for x in mine)
        assert eng["requests"] == len(mine)
        assert eng["iterations"] == round(busy / step)
        assert eng["utilisation"] == pytest.approx(busy / span, rel=1e-9)
        counts.append(len(mine))
    assert counts[0] > counts[1] + counts[2] > 0  # the weight: the large engine takes more than both small ones


# --- run-time errors name the member --------------------------------------------------------------------------------

MEMBER_ERRORS = [
    # a load or grow on another member than the one held: the statement is inside `hold m[0]`, and the error said
    # `load m: outside a hold of m`, which the line it quotes contradicts
    ("hold m[0] (2) { load m[serial] (1); }", "load m[1]: outside a hold of m[1]"),
    ("hold m[1] (2) { grow m[1 - serial] (1); }", "grow m[0]: outside a hold of m[0]"),
    ("hold m[serial] (2) { load m[serial] (1 + 2 * serial); }", "load m[1] (3): the hold has 2 allocated and 0 computed; a load "
     "must fit the allocation (grow first)"),
    ("hold m[0] (2) { run E[serial] prefill (3) growing m[serial]; }",
     "run E[1] … growing m[1]: outside a hold of m[1]"),
]


@pytest.mark.parametrize(("stmt", "msg"), MEMBER_ERRORS)
def test_a_run_time_error_names_the_member_of_a_family(stmt, msg):
    # a fleet's engines and KV pools are families, and an index computed at run time is the one the message must
    # give (kv[1]), as the report's tables and the other run-time errors of a member (a lease, a pool named twice)
    src = ("pool m[2] { cap 10; }\nstage E[2] : step { budget 4; cost 1; memory m; }\nstage d : delay;\n"
           "workload { arrive batch(2); }\nsession { run d (1); " + stmt + " }\nrun { horizon 10; }\n")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=src))
    first = str(e.value).splitlines()[0]
    assert first.endswith(f"error: at t=1, session 1: {msg}"), first


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize(("pool", "stmt", "msg"), [
    # units that read no state, checked when the hold is reached, and units read at the admission (session 1
    # waits for m[1] until 2, when its units come out -1): both said `the units of m`
    ("pool m[2] { cap 10; }", "run d (1); hold m[serial] (1 - 2 * serial) { run d (1); }",
     "at t=1, session 1: the units of m[1] are negative (-1)"),
    ("pool m[2] { cap 1; }", "run d (serial); hold m[1] (used(m[0]) + (now > 1.5 ? -1 : 1)) { run d (2); }",
     "at t=2, session 1: the units of m[1] are negative (-1)"),
    # a family of one is named with its index, as the report names it; a pool without a size without one
    ("pool m[1] { cap 10; }", "run d (1); hold m[0] (1 - 2 * serial) { run d (1); }",
     "at t=1, session 1: the units of m[0] are negative (-1)"),
    ("pool m { cap 10; }", "run d (1); hold m (1 - 2 * serial) { run d (1); }",
     "at t=1, session 1: the units of m are negative (-1)"),
])
def test_a_holds_units_error_names_the_member_on_both_tiers(monkeypatch, tier, pool, stmt, msg):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=pool + "\nstage d : delay;\nworkload { arrive batch(2); }\nsession { "
                                 + stmt + " }\nrun { horizon 10; }\n")
    assert serq_sim.fast.tier(prog) == tier  # a simple program: the fast tier runs it unless told otherwise
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    assert str(e.value).splitlines()[0].endswith("error: " + msg), str(e.value)


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize(("decl", "stage", "msg"), [
    # a NIC family's capacity read at 3 jobs present on nic[1] (the first three sessions): it said `stage nic`
    ("stage nic[2] : ps(2 - present);", "nic[serial < 3 ? 1 : 0]", "stage nic[1]: the capacity is negative (-1) at "
     "present = 3"),
    ("stage nic[1] : ps(2 - present);", "nic[0]", "stage nic[0]: the capacity is negative (-2) at present = 4"),
    ("stage nic : ps(2 - present);", "nic", "stage nic: the capacity is negative (-2) at present = 4"),
])
def test_a_ps_capacity_error_names_the_member_on_both_tiers(monkeypatch, tier, decl, stage, msg):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    prog = serq_frontend.compile(source=f"{decl}\nworkload {{ arrive batch(4); }}\nsession {{ run {stage} (1); }}\n"
                                 "run { horizon 10; }\n")
    assert serq_sim.fast.tier(prog) == tier
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    # at the capacity's expression (where a constant one that breaks the rule is refused)
    col = decl.index("2 - present") + 1
    assert str(e.value).splitlines()[0] == f"<source>:1:{col}: error: at t=0: {msg}; a ps stage's capacity is at least 0"


def test_a_spill_error_names_the_evicting_member():
    # offload.sq with a write of -1 s a block: the first block engine 0's GPU evicts (at 1.77) is the error, at
    # the clause, naming kv[0] (it said `pool kv`, for either engine)
    with pytest.raises(serq_sim.SimError) as e:
        run("offload.sq", {"write": -1, "blocks": 20}, {}, arrivals=30)
    assert str(e.value).splitlines()[0].endswith(": pool kv[0]: the spill's work is negative (-1)"), str(e.value)


@pytest.mark.parametrize(("settings", "msg", "at"), [
    ("cost 1 - used(m); budget 4;", "the iteration's cost is negative (-1) (its batch: tokens 1, decoders 0, "
     "prefilled 1, residents 1, kv_decode 0, kv_prefill 2)", "1 - used"),
    ("cost 1; budget 4 - 3 * used(m);", "the budget is negative (-2)", "4 - 3"),
    ("cost 1; budget 4; chunk 1 - used(m);", "the chunk is negative (-1)", "1 - used"),
])
def test_a_step_familys_setting_error_names_the_member(settings, msg, at):
    # each member of a step family reads its own pool (m[i]): engine 1's holds 2 units, so only its setting goes
    # negative, and the error said `stage E`, for either engine
    src = (f"pool m[2] {{ cap 10; }}\nstage E[2] : step {{ {settings} memory m; }}\nworkload {{ arrive batch(2); }}\n"
           "session { hold m[serial] (2 * serial) { run E[serial] prefill (1); } }\nrun { horizon 10; }\n")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(serq_frontend.compile(source=src))
    # at the setting's expression (where a constant one that breaks the rule is refused)
    line2 = src.splitlines()[1]
    # (the cost names the session of its batch too, session 1, engine 1's one resident)
    head = "at t=0, session 1" if msg.startswith("the iteration's cost") else "at t=0"
    assert str(e.value).splitlines()[0] == f"<source>:2:{line2.index(at) + 1}: error: {head}: stage E[1]: {msg}"


# --- a router keyed on a queue nobody waits in ------------------------------------------------------------------------

def test_a_router_on_the_kv_pools_queue_is_warned_of(tmp_path):
    # "least queued" written on the KV pool: lib/vllm.sq's hold names reqs first and waits in its queue, so
    # queued(kv[j]) is 0 throughout and every request went to engine 0, the report saying nothing. It now warns,
    # at the router's read, naming the hold (in the library) and the pool whose queue counts the waiting.
    src = (HERE / "router.sq").read_text(encoding="utf-8").replace("? queued(reqs[j])", "? queued(kv[j])")
    prog = tmp_path / "router_kv.sq"
    prog.write_text(src, encoding="utf-8")
    line = src[:src.index("queued(kv[j])")].count("\n") + 1
    r = serq_sim.run(serq_frontend.compile(path=str(prog), sets={"policy": 0}), arrivals=100)
    assert [r.stage("engine", j).requests for j in range(3)] == [300, 0, 0]
    (note,) = [n for n in r.result.notes if "queued(" in n]
    assert note.startswith(f"warning: `queued(kv)` (at line {line}) is 0 throughout the run: a hold waits in the "
                           "queue of its first pool, and no hold names kv first (the hold at vllm.sq:"), note
    assert note.endswith(" names reqs first and waits in its queue: `queued(reqs)` counts it)"), note
    # written on reqs, the router spreads the load and nothing is said
    r = run("router.sq", {"policy": 0}, {}, arrivals=100)
    assert not [n for n in r.result.notes if "queued(" in n]
    assert r.stage("engine", 1).requests > 0


@pytest.mark.parametrize(("threshold", "warned"), [("64", True), ("inf", False)])
def test_a_chunk_cap_on_the_kv_pool_is_warned_of_when_its_count_is_read(tmp_path, threshold, warned):
    # long_prefill(kv, C) where lib/vllm.sq means long_prefill(reqs, C): its count holders + queued reads the KV
    # pool's queue, which no one waits in. With C = inf both arms are inf and the count is never read: nothing
    # to say (a constant chunk, step.common.constant).
    src = (HERE / "router.sq").read_text(encoding="utf-8").replace("long_prefill(reqs, inf)",
                                                                   f"long_prefill(kv, {threshold})")
    prog = tmp_path / "router_chunk.sq"
    prog.write_text(src, encoding="utf-8")
    r = serq_sim.run(serq_frontend.compile(path=str(prog), sets={"policy": 3}), arrivals=20)
    notes = [n for n in r.result.notes if "queued(" in n]
    if warned:
        (note,) = notes
        assert note.startswith("warning: `queued(kv)` (at vllm.sq:"), note
    else:
        assert notes == []
