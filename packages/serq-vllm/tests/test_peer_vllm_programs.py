"""vLLM v1 written again, without lib/vllm.sq, from language.txt §7 and vLLM's scheduler rules, in several
styles (tests/peer_programs/*.sq and textual variants of them below), each run on every shipped oracle
scenario and compared with the real scheduler's answers: per request the first-token step, the last-token
step and the preemption count, and the total preemptions.

The runner gives a program the scenario as ``serq vllm scenario`` gives programs/scenario.sq (scenarios.py):
the settings as let overrides (B, max_seqs, bs, blocks = num_blocks - 1, C, caching), the serving order as
the definition ``serve_key``, each chain of requests as a preset session arriving at its first request's
``arrive`` whose turns load ``idx``, ``prompt``, ``o``, ``think_time`` and ``more``. The answers are read
from the program's own record table ``request`` (``first_token``, ``last_token``, ``preemptions``), keyed
by (session, turn).

Formulations that are *not* equivalent to vLLM are run too, with the scenarios where they differ pinned
and the reason (the spec's line) next to them: a change that made one of them agree, or another one
disagree, is a change of semantics to look at.

The last tests check the serving metrics the report derives from the table (TTFT, TPOT, ITL, E2E
latency, the throughputs, goodput) against a hand computation from the records and the oracle's answers.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import msgspec
import pytest
import serq_sim
from serq_frontend import compile as compile_program
from serq_ir import nodes as N
from serq_vllm.scenarios import answer_path, list_scenarios

HERE = Path(__file__).parent / "peer_programs"
SCENARIOS = {s.name: s.path for s in list_scenarios()}
MULTI_TURN = {"vllm/multiturn", "generated/turns_evict", "generated/turns_preempt"}
#: the scenarios a variant of a peer program runs on (the peer programs themselves run on all): between
#: them chunking with the threshold and a lone request, several victims in a step, a preemption in the
#: recompute, six preemptions, a preempted request resuming on its cached blocks, prefix caching over
#: turns with eviction and preemption, head-of-line blocking and the request cap
CORE = ["generated/chunk_many", "generated/preempt_cached_resume", "generated/preempt_victims",
        "generated/recompute_preempt", "generated/serve_admission_preempt", "generated/turns_preempt",
        "vllm/alone", "vllm/hol", "vllm/multiturn", "vllm/seqcap"]


@cache
def _text(name: str) -> str:
    return (HERE / f"{name}.sq").read_text()


@cache
def _scenario(name: str) -> tuple[dict, dict]:
    path = SCENARIOS[name]
    return json.loads(path.read_text()), json.loads(answer_path(path).read_text())


def _chains(sc: dict) -> list[list[tuple[int, dict]]]:
    """The requests as sessions (chains of turns), in arrival order, ties by the first request's index."""
    sessions: dict = {}
    for i, r in enumerate(sc["requests"]):
        sessions.setdefault(("s", r["session"]) if "session" in r else ("r", i), []).append((i, r))
    chains = [sorted(ch, key=lambda ir: ir[1].get("turn", 0)) for ch in sessions.values()]
    return sorted(chains, key=lambda ch: (ch[0][1].get("arrive", 0), ch[0][0]))


def build(source: str, sc: dict, **lets: float) -> tuple[N.Program, list[list[int]]]:
    """The IR of ``source`` for scenario ``sc`` and, per session serial, its request indices by turn."""
    sets = {"B": sc["budget"], "max_seqs": sc["max_seqs"], "bs": sc["block_size"],
            "blocks": sc["num_blocks"] - 1, "C": sc.get("chunk") or 0,
            "caching": 1 if sc.get("prefix_caching") else 0, **lets}
    defs = {"serve_key": sc.get("serve", "admission")} if "def serve_key" in source else {}
    prog = compile_program(source=source, sets={k: float(v) for k, v in sets.items()}, defs=defs)
    slot = {a.name: i for i, a in enumerate(prog.attributes)}
    presets, index = [], []
    for chain in _chains(sc):
        turns = []
        for k, (i, r) in enumerate(chain):
            more = k + 1 < len(chain)
            values = {"idx": i, "prompt": r["prompt"], "o": r["out"],
                      "think_time": chain[k + 1][1].get("think", 0) if more else 0, "more": int(more)}
            turns.append([N.SlotValue(slot=slot[a], value=float(v)) for a, v in values.items()])
        presets.append(N.Preset(at=float(chain[0][1].get("arrive", 0)), turns=turns))
        index.append([i for i, _ in chain])
    workload = msgspec.structs.replace(prog.workload, presets=presets)
    return msgspec.structs.replace(prog, workload=workload), index


def answer(source: str, sc: dict) -> dict:
    """The oracle's fields from the program's records: first, done, preempted (request index -> value)
    and the pools' total preemptions."""
    prog, index = build(source, sc)
    report = serq_sim.run(prog, check_invariants=True)
    rec = report.records("request", kind="numpy")
    out: dict = {"first": {}, "done": {}, "preempted": {}}
    for s, t, f, la, p in zip(rec["session"], rec["turn"], rec["first_token"], rec["last_token"],
                              rec["preemptions"]):
        i = str(index[int(s)][int(t) - 1])
        out["first"][i], out["done"][i], out["preempted"][i] = int(f), int(la), int(p)
    out["preemptions"] = sum(p.preemptions for p in report.result.pools)
    return out


def differences(source: str, name: str) -> list[str]:
    sc, expected = _scenario(name)
    got = answer(source, sc)
    diffs = []
    for field in ("first", "done", "preempted"):
        for k, v in expected.get(field, {}).items():
            if got[field].get(k) != v:
                diffs.append(f"{field}[{k}]: {got[field].get(k)}, vLLM {v}")
    if got["preemptions"] != expected["preemptions"]:
        diffs.append(f"preemptions: {got['preemptions']}, vLLM {expected['preemptions']}")
    return diffs


def differing(source: str, names=None) -> dict[str, list[str]]:
    """The scenarios (of ``names``, default all) where ``source`` differs from vLLM, with the differences."""
    out = {}
    for name in sorted(SCENARIOS) if names is None else names:
        d = differences(source, name)
        if d:
            out[name] = d
    return out


def variant(program: str, *edits: tuple[str, str]) -> str:
    text = _text(program)
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def test_every_shipped_scenario_is_run():
    assert len(SCENARIOS) >= 22 and MULTI_TURN <= set(SCENARIOS)
    assert sum("serve" in _scenario(n)[0] for n in SCENARIOS) >= 7


# --- the peer programs: each agrees with vLLM on every scenario ------------------------------------


@pytest.mark.parametrize("program", ["kernel", "sides", "kv_first_family"])
def test_peer_program_agrees_with_vllm(program):
    assert differing(_text(program)) == {}


def test_queue_station_agrees_except_where_an_entry_header_cannot_know_the_kept_outputs():
    # An entry's header reads its parameters, its queue's pools and stage and the constants (language.txt
    # §2, Queues), so queues.sq writes §3's `known = computed < prompt ? prompt : computed + 1`. A
    # request preempted a second time while it recomputes (computed below the tokens it had) then
    # forgets the output token it kept, and decodes one step too many; the real scheduler reschedules
    # with num_tokens = prompt + outputs (docs/vllm.md, "Where this departs from the spec").
    # (fuzz_storm_turns: requests 1, 2 and 5 are preempted again during their recomputes)
    assert differing(_text("queues")) == {
        "generated/fuzz_storm_turns": ["first[2]: 113, vLLM 112", "first[5]: 137, vLLM 136", "done[1]: 112, vLLM 111",
                                       "done[2]: 136, vLLM 135", "done[5]: 161, vLLM 160"],
        "generated/recompute_preempt": ["done[3]: 27, vLLM 26"],
        "generated/serve_prefill_first_preempt": ["done[3]: 55, vLLM 54"],
    }


# --- equivalent spellings: the same answers ---------------------------------------------------------

KNOWN = "max(had, computed < prompt ? prompt : computed + 1)"
UNITS = "kv (hit + min(known - hit, budget_left(engine), C > 0 && holders(reqs) + queued(reqs) > 1 ? C : inf))"
CHUNK = "chunk C > 0 && holders(reqs) + queued(reqs) > 1 ? C : inf;"

EQUIVALENT = {
    # §7's Admission: min(known, hit + budget_left(engine)), the other way round
    "units as min(known, hit + chunk)": [(UNITS, "kv (min(known, hit + min(budget_left(engine), "
                                                 "C > 0 && holders(reqs) + queued(reqs) > 1 ? C : inf)))")],
    # the reserve taken as the larger of units and reserve (§3: r = max(u, reserve))
    "reserve as max(units, known)": [("reserve (known) reuse", "reserve (max(known, hit + min(known - hit, "
                                      "budget_left(engine)))) reuse")],
    "reqs with reserve (1)": [("hold reqs (1),", "hold reqs (1) reserve (1),")],
    # the hit never exceeds the session's own cached prefix bounded by known - 1 here, so reuse is moot
    "no reuse clause": [(" reuse (hit)", "")],
    # §7's table: cache (prompt + out - 1); the computed position bounds cache (prompt + o) the same
    "cache (prompt + o - 1)": [("cache (caching ? prompt + o : 0)", "cache (caching ? prompt + o - 1 : 0)")],
    # every holder of reqs is a resident of the engine when an iteration starts
    "chunk test on residents": [(CHUNK, "chunk C > 0 && residents + queued(reqs) > 1 ? C : inf;")],
    "budget and cost as expressions": [("budget B;\n  cost 1;", "budget B + 0 * residents;\n  cost 1 + 0 * tokens;")],
    # the body reads the binding: the parser sets it at the body's top (§3, at admission)
    "body reads the binding": [(f"set k = {KNOWN};", "set k = known;")],
    # eviction: LRU is the release time then release order; -age and last order the same
    "evict by (-age)": [("evict lru;", "evict by (-age);")],
    "evict by (last)": [("evict lru;", "evict by (last);")],
    "preempt by (-admission) requeue head": [("preempt lifo;", "preempt by (-admission) requeue head;")],
    # with no stage naming kv as memory, the candidates are the holders with an active scope: here the
    # same sessions, the last admitted the same one
    "no memory clause": [("  memory kv;\n", "")],
    # FCFS among requests sent at one step by their index: the longest wait first, then the index
    "queue by (-waited, idx)": [("queue by (t0, idx);", "queue by (-waited, idx);")],
    "serving forms": [("run engine prefill (k - cached) growing kv;", "prefill (k - cached) growing kv;"),
                      ("run engine decode (o - 1 - (k - prompt)) growing kv;",
                       "decode on engine (o - 1 - (k - prompt)) growing kv;")],
    # the first output token's decode step and the rest as two runs: a zero-work run completes at once
    "decode split in two runs": [("run engine decode (o - 1 - (k - prompt)) growing kv;",
                                  "run engine decode (min(1, o - 1 - (k - prompt))) growing kv;\n"
                                  "      run engine decode (max(0, o - 2 - (k - prompt))) growing kv;")],
    "engine as a family of one": [("stage engine : step", "stage engine[1] : step"),
                                  ("budget_left(engine)", "budget_left(engine[0])"),
                                  ("run engine prefill", "run engine[0] prefill"),
                                  ("run engine decode", "run engine[0] decode")],
    "kv as a family of one": [("pool kv {", "pool kv[1] {"), ("cachedin(kv)", "cachedin(kv[0])"),
                              ("hold reqs (1),\n         kv (", "hold reqs (1),\n         kv[0] ("),
                              ("prefill (k - cached) growing kv;", "prefill (k - cached) growing kv[0];"),
                              ("growing kv;\n    } cache", "growing kv[0];\n    } cache")],
}


@pytest.mark.parametrize("edits", EQUIVALENT.values(), ids=EQUIVALENT.keys())
def test_equivalent_spelling_agrees_with_vllm(edits):
    assert differing(variant("kernel", *edits), CORE) == {}


SERVE = "serve by (serve_key());"
SERVE_SPELLINGS = {
    "admission": ["serve admission;", "", "serve by (admission);", "serve by (0);"],
    "-admission": ["serve by (-admission);", "serve by (0 - admission);", "serve by (-admission, decoding);"],
    "decoding ? 1 : 0": ["serve by (decoding);", "serve by (decoding ? 1 : 0, admission);",
                         "serve by (1 - (decoding ? 0 : 1));"],
}


@pytest.mark.parametrize("key,line", [(k, line) for k, lines in SERVE_SPELLINGS.items() for line in lines])
def test_serving_order_spellings_agree_with_vllm(key, line):
    names = [n for n in sorted(SCENARIOS) if _scenario(n)[0].get("serve", "admission") == key]
    names = [n for n in names if n in CORE] if key == "admission" else names
    assert len(names) >= 2
    assert differing(variant("kernel", (SERVE, line)), names) == {}


# --- formulations that are not vLLM: where and why they differ -------------------------------------


def test_spec_formula_for_known_forgets_the_kept_outputs():
    # language.txt §3 (Pools, grow) writes known = computed < prompt ? prompt : computed + 1; computed is
    # "the position the hold had computed when it was preempted", which on a second preemption during
    # the recompute is below the tokens the request has (docs/vllm.md, "Where this departs from the spec").
    # The request decodes one step too many, and its recompute, now known = prompt, looks like its first
    # prefill to `branch (k == prompt)`, which records the first token again (queues.sq tests its own
    # attribute and keeps the first).
    text = variant("kernel", (f"known = {KNOWN}", "known = computed < prompt ? prompt : computed + 1"),
                   (f"set k = {KNOWN};", "set k = computed < prompt ? prompt : computed + 1;"))
    assert differing(text) == {
        "generated/fuzz_storm_turns": ["first[1]: 77, vLLM 50", "first[2]: 113, vLLM 112", "first[5]: 137, vLLM 136",
                                       "done[1]: 112, vLLM 111", "done[2]: 136, vLLM 135", "done[5]: 161, vLLM 160"],
        "generated/recompute_preempt": ["first[3]: 26, vLLM 19", "done[3]: 27, vLLM 26"],
        "generated/serve_prefill_first_preempt": ["first[3]: 32, vLLM 20", "done[3]: 55, vLLM 54"],
    }


def test_queue_fifo_orders_a_later_turn_after_an_arrival_of_the_same_step():
    # fifo is the order sessions join (§3, Ties: "Events at one instant: the order they were scheduled"):
    # a new session arriving at step t was scheduled at the start, a turn coming back from its think at t
    # later, so the new session goes first. The oracle's driver adds a step's requests by their index,
    # which is a driver convention and not the engine's (docs/vllm.md: the scenario program's
    # `queue by (t0, idx)`). Single-turn scenarios cannot tell the two apart.
    for line in ("queue fifo;", "queue by (t0);"):
        text = variant("kernel", ("queue by (t0, idx);", line))
        assert set(differing(text, CORE)) == {"vllm/multiturn", "generated/turns_preempt"}


def test_a_constant_chunk_caps_a_request_alone_too():
    # docs/vllm.md: `chunk 32;` caps a lone request, vLLM's long_prefill_token_threshold does not
    # (oracle/README.md: "applied only while more than one request is running or waiting").
    text = variant("kernel", (CHUNK, "chunk C > 0 ? C : inf;"))
    assert set(differing(text, CORE)) == {
        "generated/chunk_many", "generated/recompute_preempt", "generated/serve_admission_preempt", "vllm/alone"}


def test_first_chunk_not_cut_by_the_threshold_allocates_too_early():
    # The stage's chunk still cuts the tokens, but the admission allocates up to the whole budget: vLLM's
    # waiting loop cuts num_new_tokens by the threshold before allocate_slots (§7's table, chunked
    # prefill, scheduler.py:1115-1128), so blocks leave the free queue later there and the victims differ.
    text = variant("kernel", (", C > 0 && holders(reqs) + queued(reqs) > 1 ? C : inf))", "))"))
    assert differing(text) == {
        "generated/fuzz_storm_turns": ["first[5]: 135, vLLM 136", "done[11]: 101, vLLM 102", "done[1]: 110, vLLM 111",
                                       "done[4]: 126, vLLM 127", "done[2]: 134, vLLM 135", "done[5]: 159, vLLM 160"],
        "generated/serve_admission_preempt": [
            "preempted[1]: 1, vLLM 2", "preempted[3]: 1, vLLM 3", "preempted[4]: 0, vLLM 1", "preemptions: 2, vLLM 6"]}


# Allocating the whole prompt at admission: §7 "admission needs blocks for the whole prompt
# (scheduler_reserve_full_isl = True), but only the first chunk is allocated". Holding the prompt's blocks
# through a multi-chunk prefill takes them from the running requests' growth.
WHOLE_PROMPT_DIFFERS = {
    "generated/preempt_victims", "generated/recompute_preempt", "generated/serve_admission_preempt", "vllm/alone"}


def test_allocating_the_whole_prompt_at_admission_is_not_vllm():
    assert set(differing(variant("kernel", (UNITS, "kv (known)")), CORE)) == WHOLE_PROMPT_DIFFERS


def test_growing_to_the_prompt_before_the_prefill_is_allocating_it_at_admission():
    # grow at the body's top runs at the admission's instant, with the room reserve (known) kept: the same
    # allocation as `kv (known)`, so the same answers, scenario for scenario
    whole = variant("kernel", (UNITS, "kv (known)"))
    grown = variant("kernel", (UNITS, "kv (hit)"),
                    ("run engine prefill (k - cached) growing kv;",
                     "grow kv (k - cached);\n      run engine prefill (k - cached) growing kv;"))
    for name in CORE:
        sc = _scenario(name)[0]
        assert answer(grown, sc) == answer(whole, sc), name


def test_admission_without_reserve_is_not_vllm():
    # Without reserve (known) a request is admitted on the room its first chunk needs; vLLM admits only
    # when the whole prompt's blocks are free (§7: scheduler_reserve_full_isl, kv_cache_manager.py:515-531).
    assert len(differing(variant("kernel", ("reserve (known) ", "")), CORE)) >= 4


# An explicit `grow kv (1)` before each decode token, instead of `growing kv`. Not vLLM, for two reasons
# the spec states. First, grow m (d) "enlarges the innermost hold on m by d (rounded to blocks)" (§3) and
# a block pool's allocations round up (pool-reference, block: "Allocations round up"): the hold's
# allocation is already whole blocks, so each grow (1) takes a new block; the program must grow by one
# only where a token starts a block. Second, a grow statement runs between two iterations, not in one:
# its preemption does not make an iteration that admits nothing (§3, admit via: "not in an iteration that
# preempted"), and the candidates are the engine's residents (pool-reference, preempt: "Candidates are
# holders resident in the stage whose memory is this pool"), which a session between its runs is not; two
# such growers with no resident to preempt wait for each other (the report names them). On scenarios
# without memory pressure it is vLLM. A session cannot leave a `loop` but by `end`, so this form is a
# single-turn program.
PER_TOKEN_DECODE = """      set left = o - 1 - (k - prompt);
      loop {
        branch (left > 0) {
          set pos = prompt + o - 1 - left;
          branch (GUARD) { grow kv (1); }
          run engine decode (1);
          set left = left - 1;
        } else {
          record request {
            sent = t0; first_token = tf; last_token = now; prompt = prompt; output = o; preemptions = n - 1;
          }
          end;
        }
      }"""
DECODE = "      run engine decode (o - 1 - (k - prompt)) growing kv;"
NO_PRESSURE = ["generated/chunk_many", "vllm-serve/newest_first", "vllm-serve/prefill_first", "vllm/chunked",
               "vllm/hol", "vllm/longchunk", "vllm/mixed", "vllm/preempt", "vllm/seqcap"]


def test_a_grow_per_block_before_the_decode_is_vllm_without_memory_pressure():
    text = variant("kernel", (DECODE, PER_TOKEN_DECODE.replace("GUARD", "pos % bs == 0")))
    assert differing(text, NO_PRESSURE) == {}
    stuck = differing(text, ["generated/preempt_victims"])["generated/preempt_victims"]
    assert "done[0]: None, vLLM 8" in stuck  # two growers, no resident to preempt


def test_a_grow_of_one_token_per_decode_step_takes_a_block_each_time():
    text = variant("kernel", (DECODE, PER_TOKEN_DECODE.replace("GUARD", "1")))
    sc = _scenario("vllm/hol")[0]
    prog, _ = build(text, sc)
    report = serq_sim.run(prog)
    kv = next(p for p in report.result.pools if p.name == "kv")
    # request 0: 96 prompt tokens (6 blocks), then a block per decode step until the 10 usable blocks
    # are gone, and no resident to preempt
    assert kv.preemptions == 0 and len(report.records("request", kind="numpy")["session"]) == 0
    assert any("wait for ever" in w for w in report.warnings)


# --- the serving metrics, by hand --------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    h = (len(s) - 1) * q / 100
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (h - lo)


@pytest.mark.parametrize("program", ["kernel", "sides", "kv_first_family", "queues"])
@pytest.mark.parametrize("warmup", [0, 2])
def test_serving_metrics_by_hand(program, warmup):
    # vllm-serve/admission: four 40-token prompts of 30 output tokens sent at steps 0..3 on 11 usable
    # blocks; request 2 is preempted once in its decode and recomputes. The run's horizon is the
    # oracle's step count, so the measured window is [warmup, 62].
    sc, expected = _scenario("vllm-serve/admission")
    prog, index = build(_text(program), sc)
    prog = msgspec.structs.replace(prog, run=msgspec.structs.replace(prog.run, horizon=float(expected["steps"]),
                                                                       warmup=float(warmup)))
    report = serq_sim.run(prog)
    slo = {"ttft": 2.0, "tpot": 1.0}
    report.set_slo(slo)
    m = report.result.requests
    rec = report.records("request", kind="numpy")

    # the records are the oracle's answers, for the requests sent at or after the warm-up
    kept = [i for i, r in enumerate(sc["requests"]) if r.get("arrive", 0) >= warmup]
    got = {index[int(s)][int(t) - 1]: (float(se), float(f), float(la), int(o)) for s, t, se, f, la, o in
           zip(rec["session"], rec["turn"], rec["sent"], rec["first_token"], rec["last_token"], rec["output"])}
    assert sorted(got) == kept
    for i in kept:
        r = sc["requests"][i]
        assert got[i] == (r.get("arrive", 0), expected["first"][str(i)], expected["done"][str(i)], r["out"])

    rows = [got[i] for i in kept]
    duration = expected["steps"] - warmup
    ttft = [f - s for s, f, _, _ in rows]
    e2el = [la - s for s, _, la, _ in rows]
    tpot = [(la - f) / (o - 1) for _, f, la, o in rows if o > 1]
    assert m.completed == len(rows) and m.duration == duration
    assert m.request_throughput == pytest.approx(len(rows) / duration)
    assert m.output_throughput == pytest.approx(sum(o for *_, o in rows) / duration)
    prompts = sum(sc["requests"][i]["prompt"] for i in kept)
    assert m.total_token_throughput == pytest.approx((prompts + sum(o for *_, o in rows)) / duration)
    for name, values in (("ttft", ttft), ("e2el", e2el), ("tpot", tpot)):
        stats = getattr(m, name)
        assert stats.count == len(values), name
        assert stats.mean == pytest.approx(sum(values) / len(values)), name
        for q, field in ((50, "median"), (90, "p90"), (95, "p95"), (99, "p99")):
            assert getattr(stats, field) == pytest.approx(_percentile(values, q)), (name, field)
    # ITL: output - 1 gaps per request, adding up to last_token - first_token; on the step clock every
    # gap is one step but the one over request 2's preemption (its recompute's prefill samples the next
    # token), which spans the rest
    assert m.itl.count == sum(o - 1 for *_, o in rows)
    assert m.itl.mean == pytest.approx(sum(la - f for _, f, la, _ in rows) / m.itl.count)
    gaps = []
    for _, f, la, o in rows:
        long = (la - f) - (o - 2)
        gaps += [1.0] * (o - 2) + [long]
    for q, field in ((50, "median"), (90, "p90"), (95, "p95"), (99, "p99")):
        assert getattr(m.itl, field) == pytest.approx(_percentile(gaps, q)), field
    # goodput: every named metric at or below its SLO (a one-token request's TPOT counts as 0)
    good = sum(1 for s, f, la, o in rows
               if f - s <= slo["ttft"] and ((la - f) / (o - 1) if o > 1 else 0.0) <= slo["tpot"])
    assert m.good == good and m.goodput == pytest.approx(good / duration)
    assert good == (2 if warmup == 0 else 0)


# --- the vLLM configuration the programs imply ----------------------------------------------------


def _target(text: str) -> dict:
    from serq_vllm.target import target

    return target(compile_program(source=text))


@pytest.mark.parametrize("program", ["sides", "kv_first_family", "queues"])
def test_every_peer_program_implies_the_same_vllm_configuration(program):
    # kv_first_family.sq's hold names kv first, so the engine admits kv's queue and reqs has no `admit
    # via`; max_num_seqs is still reqs's cap (the hold needs room there to be admitted), not kv's 624
    # tokens, which `serq vllm target` gave before
    kernel = _target(_text("kernel"))
    assert kernel["config"]["max_num_seqs"] == 8 and kernel["config"]["num_gpu_blocks"] == 40
    assert _target(_text(program)) == kernel


def test_an_engine_admitting_only_its_memory_pool_has_no_request_cap():
    # no request cap: max_num_seqs is the KV cache's 39 usable blocks (of 40, vLLM's null block one), which never
    # binds, said in a warning (vLLM's null is its default, 256)
    text = variant("kv_first_family", (",\n         reqs[j] (1)\n", "\n"))
    out = _target(text)
    assert out["config"]["max_num_seqs"] == 39 and out["config"]["num_gpu_blocks"] == 40
    assert out["warnings"][-1].startswith("no pool but the memory pool `kv` caps the requests stage `engine` admits: "
                                          "max_num_seqs is the KV cache's 39 blocks")


@pytest.mark.parametrize("program", ["kernel", "sides", "kv_first_family", "queues"])
def test_prefix_caching_is_off_when_the_constants_turn_it_off(program):
    # kv_first_family.sq's reuse is min(cachedin(kv[j]), caching * floor(…) * bs): with caching 0 the bound
    # is never positive, so the hold consumes nothing from the cache, as kernel.sq's `caching ? … : 0`;
    # `serq vllm target` read the cachedin syntactically and said true
    from serq_vllm.target import target

    for caching, on in ((0, False), (1, True)):
        config = target(compile_program(source=_text(program), sets={"caching": caching}))["config"]
        assert config["enable_prefix_caching"] is on
    off = target(compile_program(source=_text(program), sets={"caching": 0}))
    assert off == target(compile_program(source=_text("kernel"), sets={"caching": 0}))


def test_a_reuse_bound_that_can_be_positive_reads_the_cache():
    # a constant factor other than 0 leaves the bound positive: prefix caching stays on
    text = _text("kv_first_family").replace("caching * floor", "(caching + 1) * floor")
    assert _target(text.replace("let caching = 1;", "let caching = 0;"))["config"]["enable_prefix_caching"]
