"""Programs of an eighteenth round of users (peer_programs18/*.sq): a serving-systems researcher comparing
scheduling policies beyond vLLM's default on one step engine with request slots and a KV pool. Each policy
is traced by hand on the step clock (cost 1: an iteration lasts 1) in sched.sq, iteration by iteration,
and run at scale in sched_scale.sq (3000 Poisson arrivals, run to the last), where the trend a researcher
expects is checked on one seed with common random numbers: the same requests under both policies. Every
run is made on the tier serQ picks and on the general engine, which must agree byte for byte."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from conform import both_tiers, pool, stage

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve().parent / "peer_programs18"


def rows(r) -> dict[int, tuple]:
    """The table req by session: (sent, first token, last token, runs of the hold)."""
    t = r.records("req")
    return {s: (a, f, la, n) for s, a, f, la, n in zip(t["session"].tolist(), t["sent"].tolist(),
                                                       t["first"].tolist(), t["last"].tolist(),
                                                       t["runs"].tolist())}


def hand(monkeypatch, path=HERE / "sched.sq", **sets):
    return rows(both_tiers(path, monkeypatch, sets=sets))


# ---------------------------------------------------------------------------------------------------------
# Shortest remaining first: serve by (remaining)


def test_srpt_against_admission_order_traced_by_hand(monkeypatch):
    # B 3, chunk 2; three prompts of 10, 3 and 2 tokens at 0, one output token each (the first token is
    # the last). The waiting queue is FIFO under both: only the residents' order differs.
    # serve admission:
    #   [0,1] R0 admitted, 2 (chunk); R1 admitted, 1 (the budget's last)      R0 8 left, R1 2
    #   [1,2] R0 2, R1 1                                                       R0 6, R1 1
    #   [2,3] R0 2, R1 1: R1 done at 3                                         R0 4
    #   [3,4] R0 2; R2 admitted, 1                                             R0 2, R2 1
    #   [4,5] R0 2, R2 1: both done at 5
    assert hand(monkeypatch, B=3, C=2) == {0: (0, 5, 5, 1), 1: (0, 3, 3, 1), 2: (0, 5, 5, 1)}
    # serve by (remaining):
    #   [0,1] as above (admission is the queue's order)                        R0 8, R1 2
    #   [1,2] R1 first (2 left), 2: done at 2; R0 the budget's last 1          R0 7
    #   [2,3] R0 2; R2 admitted, 1                                             R0 5, R2 1
    #   [3,4] R2 first (1 left): done at 4; R0 2                               R0 3
    #   [4,5] R0 2; [5,6] R0 1: done at 6
    # mean E2E 4 against 13/3
    assert hand(monkeypatch, B=3, C=2, srpt=1) == {0: (0, 6, 6, 1), 1: (0, 2, 2, 1), 2: (0, 4, 4, 1)}


def scale(monkeypatch, **sets):
    r = both_tiers(HERE / "sched_scale.sq", monkeypatch, sets=sets, arrivals=2000)
    t = r.records("req")
    assert len(t["session"]) == 2000  # every request ended: nothing hung, nothing was left waiting
    return r, t


def per_session(t, col: str) -> dict[int, float]:
    return dict(zip(t["session"].tolist(), t[col].tolist()))


def by_class(t, col: str, c: int) -> list[float]:
    return [v for v, k in zip(t[col].tolist(), t["cls"].tolist()) if k == c]


def test_srpt_at_scale_lowers_the_mean_e2e_with_common_random_numbers(monkeypatch):
    # budget 64, chunk 16, 0.6 requests a step: four prefills' chunks fill a step, and the order the
    # residents are served in decides who finishes first. The same 2000 requests (the draws are the
    # sessions' own): serving the fewest tokens left first lowers the mean E2E (SRPT's optimality, here at
    # the token level of one iteration), and serves the same tokens (the same iterations' work)
    fifo, tf = scale(monkeypatch, lam=0.6)
    srpt, ts = scale(monkeypatch, lam=0.6, srpt=1)
    assert per_session(tf, "o") == per_session(ts, "o")  # common random numbers: the same requests
    assert statistics.fmean(ts["e2e"].tolist()) < statistics.fmean(tf["e2e"].tolist())
    assert len(srpt.observes["e2e"].values) == len(fifo.observes["e2e"].values) == 2000


def test_without_a_chunk_cap_srpt_is_the_admission_order(monkeypatch):
    # language.txt §3: without a per-request chunk cap a prefill admitted takes the budget left, so a
    # second prefill is admitted only when the first ends in that iteration: a step starts with at most
    # one prefilling resident. The decoders, at most 16 (the slots) under a budget of 64, each get their
    # one token whichever order serves them, and the prefill what they leave: the order changes no
    # step's tokens, and SRPT is the admission order's run, sample for sample.
    _, tf = scale(monkeypatch, lam=0.6, C=float("inf"))
    _, ts = scale(monkeypatch, lam=0.6, C=float("inf"), srpt=1)
    assert per_session(tf, "e2e") == per_session(ts, "e2e")


# ---------------------------------------------------------------------------------------------------------
# Priority classes with aging: queue by (max(0, cls - floor(waited / aging))), a key that reads waited


@pytest.mark.parametrize("sets, order", [
    # one slot, prompts of 4 at a budget of 4: each request is one iteration, admitted when the previous
    # ends. R0 (class 0) at 0, L (class 1) at 0.5, H1..H3 (class 0) at 0.6, 1.5, 2.5, 3.5.
    ({}, [0, 1, 2, 3, 4, 5]),                    # FIFO: L at [1,2]
    ({"prio": 1}, [0, 2, 3, 4, 5, 1]),           # classes: L after every class-0 request, at [5,6]
    # aged at 2: at 2 L has waited 1.5 (class 1, H2 goes); at 3 it has waited 2.5, counts as class 0 and
    # joined before H3: L at [3,4]
    ({"prio": 1, "aging": 2}, [0, 2, 3, 1, 4, 5]),
    # L of class 2, a class higher for each aging waited (max(0, cls - floor(waited / aging))): at aging 2
    # it reaches class 1 at 2.5 and never 0 while a class-0 request waits: L at [5,6]; at aging 1 it is
    # class 1 at 2 (H2 goes) and class 0 at 3, ahead of H3 by its join: L at [3,4]
    ({"prio": 1, "aging": 2, "lcls": 2}, [0, 2, 3, 4, 5, 1]),
    ({"prio": 1, "aging": 1, "lcls": 2}, [0, 2, 3, 1, 4, 5]),
])
def test_priority_classes_and_aging_traced_by_hand(monkeypatch, sets, order):
    got = hand(monkeypatch, case=1, n=6, slots=1, **sets)
    sent = {0: 0, 1: 0.5, 2: 0.6, 3: 1.5, 4: 2.5, 5: 3.5}
    assert got == {s: (sent[s], k + 1, k + 1, 1) for k, s in enumerate(order)}


def test_priority_at_scale_and_aging_bounds_the_low_class_wait(monkeypatch):
    # 0.85 requests a step, 16 slots: requests wait for a slot. The class-0 requests wait less than the
    # class-1 ones under priority (and not under FIFO's order, where the two are the same population); aging
    # at 20 steps cuts the class-1 worst wait without giving class 0 its FIFO wait back
    _, fifo = scale(monkeypatch, lam=0.85)
    _, pr = scale(monkeypatch, lam=0.85, prio=1)
    _, aged = scale(monkeypatch, lam=0.85, prio=1, aging=20)
    ttft = {name: [statistics.fmean(by_class(t, "ttft", c)) for c in (0, 1)]
            for name, t in (("fifo", fifo), ("prio", pr), ("aged", aged))}
    wmax = {name: [max(by_class(t, "wait", c)) for c in (0, 1)]
            for name, t in (("fifo", fifo), ("prio", pr), ("aged", aged))}
    assert ttft["prio"][0] < ttft["fifo"][0] < ttft["prio"][1]
    assert ttft["prio"][0] < 0.8 * ttft["prio"][1]
    assert wmax["aged"][1] < 0.5 * wmax["prio"][1]
    assert ttft["aged"][0] < ttft["fifo"][0]


# ---------------------------------------------------------------------------------------------------------
# Preemption by keys, requeue head or tail


@pytest.mark.parametrize("vict, tail, want", [
    # KV of 6, two slots. R0 (class 1) and R1 (class 0): prompts of 2, 3 decode tokens; R2 (class 0): a
    # prompt of 1, no decode, waiting for a slot from 0.
    #   [0,1] R0 and R1 admitted (KV 4), prefill 2 each: first tokens at 1
    #   [1,2] both grow to 3 (KV 6) and decode
    #   [2,3] R0 grows to 4: 7 > 6, the victim goes (lifo: R1, the latest admitted; by class: R0, itself);
    #         the survivor grows to 4 and decodes; a step that preempted admits nothing
    #   [3,4] the survivor grows to 5 and decodes its last token: done at 4. Requeue head: the victim is
    #         the queue's head and needs 2 (5 + 2 > 6): it blocks R2. Requeue tail: R2 is ahead, fits
    #         (5 + 1) in the freed slot: done at 4
    #   [4,5] the victim admitted again, prefills its prompt again (first token kept from 1); with head R2
    #         too, done at 5. [5,8] the victim's 3 decode tokens: done at 8
    (0, False, {0: (0, 1, 4, 1), 1: (0, 1, 8, 2), 2: (0, 5, 5, 1)}),
    (1, False, {0: (0, 1, 8, 2), 1: (0, 1, 4, 1), 2: (0, 5, 5, 1)}),
    (0, True, {0: (0, 1, 4, 1), 1: (0, 1, 8, 2), 2: (0, 4, 4, 1)}),
    (1, True, {0: (0, 1, 8, 2), 1: (0, 1, 4, 1), 2: (0, 4, 4, 1)}),
])
def test_preemption_by_keys_and_requeue_traced_by_hand(monkeypatch, tmp_path, vict, tail, want):
    path = HERE / "sched.sq"
    if tail:
        path = tmp_path / "sched_tail.sq"
        path.write_text((HERE / "sched.sq").read_text().replace("requeue head;", "requeue tail;"))
    assert hand(monkeypatch, path, case=2, slots=2, kvcap=6, vict=vict) == want


def test_preemption_by_class_at_scale_moves_the_preemptions_to_the_low_class(monkeypatch):
    # A KV pool of 900 tokens at 0.6 requests a step: lifo preempts whoever was admitted last, of either
    # class; by (-cls, -admission) a class-1 request whenever one is resident
    _, lifo = scale(monkeypatch, lam=0.6, kvcap=900)
    _, cls = scale(monkeypatch, lam=0.6, kvcap=900, vict=1)
    hit = {name: [sum(1 for n in by_class(t, "runs", c) if n > 1) for c in (0, 1)]
           for name, t in (("lifo", lifo), ("cls", cls))}
    assert sum(hit["lifo"]) > 5 and sum(hit["cls"]) > 5
    assert hit["cls"][0] < hit["lifo"][0] and hit["cls"][1] > hit["lifo"][1]
    assert hit["cls"][0] < hit["cls"][1]


# ---------------------------------------------------------------------------------------------------------
# reserve held: a request that reserves its whole sequence keeps it from the others


def variant(tmp_path, name: str, old: str, new: str) -> Path:
    text = (HERE / "sched.sq").read_text()
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("held", [False, True])
def test_reserve_held_traced_by_hand(monkeypatch, tmp_path, held):
    # KV of 7, two slots; R0 and R1 at 0, prompts of 2 and 3 decode tokens each, reserving their whole
    # sequence (2 + 3 = 5) at admission.
    # Without reserve held the reservation is checked at admission only:
    #   [0,1] R0 admitted (0 + 5 <= 7, 2 allocated), R1 too (2 + 5 <= 7): KV 4, first tokens at 1
    #   [1,2] both grow to 3 (KV 6); [2,3] R0 to 4 (7), R1 to 4 (8 > 7): R1, the latest admitted, is its
    #         own victim (KV 4); a step that preempted admits nothing
    #   [3,4] R0 grows to 5, its last token at 4; R1 reserves 5 beside 5: waits
    #   [4,5] R1 again, its prompt again; [5,8] its decode: last token at 8
    # With reserve held R0's unallocated 3 count against R1's admission (2 + 3 + 5 > 7): R1 waits until R0
    # ends at 4 and is never preempted; its first token comes at 5 instead of 1, its last at 8 all the same
    path = variant(tmp_path, "held.sq", "requeue head;", "requeue head; reserve held;") if held else HERE / "sched.sq"
    r = both_tiers(path, monkeypatch, sets={"case": 2, "n": 2, "rsv": 1, "kvcap": 7, "slots": 2})
    assert rows(r) == {0: (0, 1, 4, 1), 1: (0, 5 if held else 1, 8, 1 if held else 2)}
    assert pool(r, "kv").preemptions == (0 if held else 1)


# ---------------------------------------------------------------------------------------------------------
# serve exclusive prefill against mixed (Sarathi-like, chunked) batches


@pytest.mark.parametrize("C, mixed, exclusive", [
    # R0 (prompt 6, 2 decode tokens) at 0, R1 (prompt 4, 1 decode token) at 1; budget 4.
    # Chunk 2, mixed batches (serve admission):
    #   [0,1] R0 2 (R1 not there yet); [1,2] R0 2, R1 admitted 2; [2,3] R0 2, R1 2: first tokens at 3
    #   [3,4] both decode: R1 done at 4; [4,5] R0 done at 5               (3 prefill-only, 2 decode-only)
    # Chunk 2, exclusive prefill: one prefill alone, at most its chunk
    #   [0,1], [1,2], [2,3] R0 2 each (a resident prefill first, no admission once one is selected):
    #         first token at 3; [3,4] R1 displaces R0's decode: 2; [4,5] R1 2: first token at 5
    #   [5,6] decode batch: R1 done at 6; [6,7] R0 done at 7              (5 prefill-only, 2 decode-only)
    (2, ({0: (0, 3, 5, 1), 1: (1, 3, 4, 1)}, (3, 2, 0)), ({0: (0, 3, 7, 1), 1: (1, 5, 6, 1)}, (5, 2, 0))),
    # No chunk cap, mixed: [0,1] R0 4; [1,2] R0 2 (first token 2), R1 admitted 2; [2,3] R0 decodes, R1 2
    #   (first token 3): a mixed step; [3,4] both decode, both done at 4  (2 prefill-only, 1, 1 mixed)
    # No chunk cap, exclusive: [0,1] R0 4; [1,2] R0 2 alone; [2,3] R1 displaces R0's decode: 4 (first
    #   token 3); [3,4] both decode: R1 done; [4,5] R0 done                (3 prefill-only, 2 decode-only)
    (float("inf"), ({0: (0, 2, 4, 1), 1: (1, 3, 4, 1)}, (2, 1, 1)), ({0: (0, 2, 5, 1), 1: (1, 3, 4, 1)}, (3, 2, 0))),
])
def test_exclusive_prefill_against_chunked_mixed_batches_traced_by_hand(monkeypatch, tmp_path, C, mixed, exclusive):
    ex = variant(tmp_path, "ex.sq", "serve by (srpt * remaining);", "serve exclusive prefill;")
    for path, (want, steps) in ((HERE / "sched.sq", mixed), (ex, exclusive)):
        r = both_tiers(path, monkeypatch, sets={"case": 3, "n": 2, "C": C})
        assert rows(r) == want, path.name
        E = stage(r, "E")
        assert (E.prefill_only, E.decode_only, E.mixed) == steps, path.name


def scale_variant(tmp_path, name: str, old: str, new: str) -> Path:
    text = (HERE / "sched_scale.sq").read_text()
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


def test_reserve_held_at_scale_never_preempts(monkeypatch, tmp_path):
    # pool-reference.txt: under reserve held a growth needs used + the others' unallocated reservations + d
    # <= cap and may use its own reservation, so a request that reserved its whole sequence (prompt and
    # output) grows into it without fail: no preemption at all, whatever the load. Without reserve held the
    # same reservations are checked at admission only, and a KV pool of 900 at 0.6 requests a step preempts
    plain, _ = scale(monkeypatch, lam=0.6, kvcap=900, rsv=1)
    path = scale_variant(tmp_path, "held.sq", "requeue head;", "requeue head; reserve held;")
    r = both_tiers(path, monkeypatch, sets={"lam": 0.6, "kvcap": 900, "rsv": 1}, arrivals=2000)
    assert len(r.records("req")["session"]) == 2000
    assert pool(plain, "kv").preemptions > 5
    assert pool(r, "kv").preemptions == 0 and set(r.records("req")["runs"].tolist()) == {1}


def test_exclusive_prefill_at_scale_stalls_the_decodes(monkeypatch, tmp_path):
    # 0.3 requests a step, no chunk cap. Mixed batches: every decoding resident (at most 16, the slots) gets
    # its token in every step before any prefill (a prefill is admitted only with budget left, and without a
    # cap at most one prefills at a step's start, admitted after every decoder), and the steps follow one
    # another while anyone is resident: each request's time per output token is exactly 1. Exclusive
    # prefill: a step that serves a prefill serves no decode, and no step mixes the two, so decodes stall
    # (Sarathi's generation stalls) and the mean E2E rises
    mixed, tm = scale(monkeypatch, lam=0.3, C=float("inf"))
    path = scale_variant(tmp_path, "ex.sq", "serve by (srpt * remaining);", "serve exclusive prefill;")
    ex = both_tiers(path, monkeypatch, sets={"lam": 0.3, "C": float("inf")}, arrivals=2000)
    tx = ex.records("req")
    assert len(tx["session"]) == 2000

    def tpot(t):
        return [(e - f) / (o - 1) for e, f, o in zip(t["e2e"].tolist(), t["ttft"].tolist(), t["o"].tolist()) if o > 1]

    assert all(abs(x - 1) < 1e-9 for x in tpot(tm))
    assert stage(ex, "E").mixed == 0 and stage(mixed, "E").mixed > 0
    assert statistics.fmean(tpot(tx)) > 1.5
    assert statistics.fmean(tx["e2e"].tolist()) > statistics.fmean(tm["e2e"].tolist())


def test_the_run_blocks_arrivals_end_the_run_on_both_plannings(tmp_path):
    # run { horizon inf; arrivals 3000; }: the command line's report, JSON, is the same bytes on the tier
    # serQ picks and on the general engine, and says 3000 arrivals, all ended
    serq = Path(sys.executable).parent / "serq"
    out = []
    for tier in ("", "general"):
        env = {k: v for k, v in os.environ.items() if k != "SERQ_SIM_TIER"}
        if tier:
            env["SERQ_SIM_TIER"] = tier
        p = subprocess.run([str(serq), "run", str(HERE / "sched_scale.sq"), "--json"], env=env,
                           capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr.decode()
        out.append(p.stdout)
    assert out[0] == out[1]
    doc = json.loads(out[0])
    assert doc["observes"]["e2e"]["count"] == 3000


def test_a_let_that_switches_the_victim_key_off_is_preempt_lifo(monkeypatch, tmp_path):
    # sched_scale.sq switches its victim order with a let, preempt by (vict == 1 ? -cls : 0, -admission):
    # at vict 0 the first key is 0 for every candidate and the order is lifo's, so a grower that is its own
    # victim ends the step's serving as under preempt lifo (vLLM's FCFS break), which under serve by
    # (remaining) leaves residents after it unserved. The linker leaves the conditional in the IR (it
    # folds one only when its three parts are numbers); the policy took the key for one that orders, and
    # served on (the same 2000 requests differed from preempt lifo's). The same samples, byte for byte
    sets = {"lam": 0.6, "kvcap": 900, "srpt": 1}
    keyed, tk = scale(monkeypatch, **sets)
    path = scale_variant(tmp_path, "lifo.sq", "preempt by (vict == 1 ? -cls : 0, -admission) requeue head;",
                         "preempt lifo;")
    lifo = both_tiers(path, monkeypatch, sets=sets, arrivals=2000)
    assert pool(lifo, "kv").preemptions > 5
    assert {n: o.values.tobytes() for n, o in keyed.observes.items()} == \
        {n: o.values.tobytes() for n, o in lifo.observes.items()}
    assert tk.to_csv() == lifo.records("req").to_csv()


def test_the_srpt_trace_through_the_command_lines_records(tmp_path):
    # serq run --records on the SRPT case above: the file's rows are the requests in the order their last
    # tokens came (R1 at 2, R2 at 4, R0 at 6), each with its first and last token
    serq = Path(sys.executable).parent / "serq"
    out = tmp_path / "req.csv"
    p = subprocess.run([str(serq), "run", str(HERE / "sched.sq"), "--set", "B=3", "--set", "C=2", "--set", "srpt=1",
                        "--records", str(out)], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    lines = out.read_text().splitlines()
    assert lines[0] == "session,turn,time,sent,first,last,runs"
    assert lines[1:] == ["1,0,2.0,0.0,2.0,2.0,1", "2,0,4.0,0.0,4.0,4.0,1", "0,0,6.0,0.0,6.0,6.0,1"]
