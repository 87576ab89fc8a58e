"""Known defects of the simulator's semantics and metrics, each worked out by hand from the language's
rules (docs/language.md, docs/simulator.md) on small programs of the step clock (cost 1 or 10: an
iteration planned at t runs over [t, t + cost])."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)


def _run(src: str, tier: str, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(source=src))


# ---------------------------------------------------------------- a token given back to another's growth
#
# Two engines share the memory pool kv (cap 3, blocks of 1, preempt lifo): the candidates are the residents of
# both. Session 0 holds kv (1) and decodes 3 tokens on E1 (cost 1), growing kv; session 1 arrives at E2
# (cost 10) at 0.5 and holds kv (1). E1 plans [0, 1] (position 1, within the allocation), [1, 2] (grows to
# 2: used 3), and at 2 the growth to 3 does not fit: the victim is the holder admitted last, session 1,
# whose job E2 served one token in its iteration [0.5, 10.5]. That token is given back: the iteration runs
# to 10.5 serving nobody. Session 0 ends at 3; session 1 is admitted again then, and its whole run goes
# on E2 at 10.5, 20.5 and 30.5 (the hold executed again starts its run over).
#
# E2's statistics count 4 iterations (the one whose job was taken still ran) of which 3 served a job and
# 3 tokens: batch and tokens per iteration 3 / 4, token utilisation 3 / (4 * 64); the emptied iteration is
# in no composition class, as one that only preempted.

CROSS = """
pool kv { cap 3; block 1; preempt lifo; }
stage E1 : step { budget 64; cost 1; memory kv; }
stage E2 : step { budget 64; cost 10; memory kv; }
stage think : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (1) { decode on E1 (3) growing kv; }
  } else {
    run think (0.5);
    hold kv (1) { VICTIM }
  }
  record r { done = now; }
}
run { horizon 100; warmup WARM; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("victim, decode", [
    ("decode on E2 (3) growing kv;", True),  # a decoder planned job by job
    ("decode on E2 (3);", True),  # a decoder that grows nothing: planned as a count (lazy)
])
def test_a_decode_token_given_back_to_another_engines_growth_is_not_counted(tier, victim, decode, monkeypatch):
    report = _run(CROSS.replace("VICTIM", victim).replace("WARM", "0"), tier, monkeypatch)
    assert report.records(kind="numpy")["done"].tolist() == [3.0, 40.5]
    assert report.pool("kv").preemptions == 1
    e2 = report.stage("E2")
    assert (e2.iterations, e2.decode_only, e2.prefill_only, e2.mixed) == (4, 3, 0, 0)
    assert (e2.batch, e2.tokens, e2.token_utilisation) == (3 / 4, 3 / 4, 3 / (4 * 64))
    e1 = report.stage("E1")  # the grower's engine: 3 decode-only iterations of one token
    assert (e1.iterations, e1.decode_only, e1.batch, e1.tokens) == (3, 3, 1.0, 1.0)


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_prefill_chunk_given_back_is_not_counted(tier, monkeypatch):
    """Session 1 prefills 1 token on E2 instead: its chunk of [0.5, 10.5] is given back, and the prefill
    runs again at 10.5 (ending at 20.5). 2 iterations, one prefill-only, 1 token and 1 job over 2."""
    report = _run(CROSS.replace("VICTIM", "prefill on E2 (1);").replace("WARM", "0"), tier, monkeypatch)
    assert report.records(kind="numpy")["done"].tolist() == [3.0, 20.5]
    e2 = report.stage("E2")
    assert (e2.iterations, e2.decode_only, e2.prefill_only, e2.mixed) == (2, 0, 1, 0)
    assert (e2.batch, e2.tokens) == (1 / 2, 1 / 2)


@pytest.mark.parametrize("tier", ["", "general"])
def test_an_iteration_planned_before_the_warm_up_gives_nothing_back(tier, monkeypatch):
    """Warm-up 1: E2's iteration planned at 0.5 was not counted, so the token it gives back at 2 takes
    nothing from the statistics: the 3 iterations from 10.5 on, each of one decode token."""
    src = CROSS.replace("VICTIM", "decode on E2 (3) growing kv;").replace("WARM", "1")
    e2 = _run(src, tier, monkeypatch).stage("E2")
    assert (e2.iterations, e2.decode_only, e2.batch, e2.tokens) == (3, 3, 1.0, 1.0)


MIXED = """
pool kv { cap 3; block 1; preempt lifo; }
stage E1 : step { budget 64; cost 1; memory kv; }
stage E2 : step { budget 64; cost 10; memory kv; }
stage think : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (1) { decode on E1 (3) growing kv; }
  } else {
    run think (0.5);
    branch (serial == 1) {
      hold kv (1) { prefill on E2 (1); }
    } else {
      decode on E2 (1);
    }
  }
  record r { done = now; }
}
run { horizon 100; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_an_iteration_left_with_its_decoder_is_decode_only(tier, monkeypatch):
    """As above, with a third session decoding 1 token on E2 from 0.5 without holding kv (no candidate):
    E2's iteration [0.5, 10.5] serves session 1's prefill chunk and session 2's token (mixed, 2 jobs, 2
    tokens); the prefill's is given back at 2, leaving the decoder's (decode-only, 1 and 1); session 2 is
    done at 10.5, session 1's prefill runs again over [10.5, 20.5] (prefill-only). 2 iterations, 2 jobs,
    2 tokens: batch and tokens 1.0 (2 / 2, where 3 / 2 counted the chunk given back)."""
    report = _run(MIXED, tier, monkeypatch)
    rec = report.records(kind="numpy")
    assert dict(zip(rec["session"].tolist(), rec["done"].tolist())) == {0: 3.0, 1: 20.5, 2: 10.5}
    e2 = report.stage("E2")
    assert (e2.iterations, e2.decode_only, e2.prefill_only, e2.mixed) == (2, 1, 1, 0)
    assert (e2.batch, e2.tokens) == (1.0, 1.0)


# ---------------------------------------------------------------- a growth that fits grows at once
#
# pool m: cap 4, blocks of 1, preempt none; three sessions at 0, each holding 1 (used 3). Session 0 holds
# for 10. Session 1 grows by 2 at 1: 3 + 2 > 4, it waits (a grower). Session 2 grows by 1 at 2: 3 + 1
# fits, and it grows at once (language.txt §3: a grow waits only "if it does not fit"; the waiting
# growers' order, "the head blocking the rest", is among them): used 4; it ends at 3, releasing 2 (used
# 2); session 1, the growers' head, grows then (used 4) and ends at 4, releasing 3; session 0 ends at 10.

GROWERS = """
pool m { cap 4; block 1; preempt none; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (1) { run d (10); }
  } else {
    branch (serial == 1) {
      hold m (1) { run d (1); grow m (2); run d (1); }
    } else {
      hold m (1) { run d (2); grow m (1); run d (1); }
    }
  }
  record r { done = now; }
}
run { horizon 100; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("policy", ["preempt none;", ""])  # none is the default
def test_a_growth_that_fits_grows_while_others_wait(tier, policy, monkeypatch):
    report = _run(GROWERS.replace("preempt none;", policy), tier, monkeypatch)
    rec = report.records(kind="numpy")
    assert dict(zip(rec["session"].tolist(), rec["done"].tolist())) == {0: 10.0, 1: 4.0, 2: 3.0}
    m = report.pool("m")
    assert (m.admissions, m.preemptions) == (3, 0)
    # used: 3 over [0, 2], 4 over [2, 3] (session 2 grown), 4 over [3, 4] (session 2 released 2, session 1
    # grew by 2), 1 over [4, 10] (session 0's): (6 + 4 + 4 + 6) / 100
    assert m.used == pytest.approx(20 / 100)


# On a step engine (kv: cap 6, blocks of 1, preempt none; session 0 holds 2 away from the engine until 5):
# session 1 prefills 4 tokens growing kv from an allocation of 1, session 2 (admitted after it) decodes 2
# growing kv from 1 (used 4). At 0 the prefill's growth by 3 does not fit (4 + 3 > 6): it waits; the
# decoder's first token fits its allocation, [0, 1]. At 1 the decoder's growth by 1 fits (5): it grows
# and takes its second token, [1, 2], and ends at 2 releasing 2 (used 3); the prefill grows by 3 then (6),
# [2, 3], and ends at 3. Session 0 ends at 5.

ENGINE = """
pool kv { cap 6; block 1; preempt none; }
stage E : step { budget 64; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (2) { run d (5); }
  } else {
    branch (serial == 1) {
      hold kv (1) { prefill on E (4) growing kv; }
    } else {
      hold kv (1) { decode on E (2) growing kv; }
    }
  }
  record r { done = now; }
}
run { horizon 100; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_resident_growth_that_fits_goes_ahead_of_a_stalled_prefill(tier, monkeypatch):
    report = _run(ENGINE, tier, monkeypatch)
    rec = report.records(kind="numpy")
    assert dict(zip(rec["session"].tolist(), rec["done"].tolist())) == {0: 5.0, 1: 3.0, 2: 2.0}
    e = report.stage("E")
    # [0, 1] and [1, 2] the decoder alone (the prefill waits to grow), [2, 3] the prefill's 4 tokens
    assert (e.iterations, e.decode_only, e.prefill_only, e.mixed, e.tokens) == (3, 2, 1, 0, 6 / 3)


# ---------------------------------------------------------------- a disaggregated request counts once
#
# Two requests at 0, each prefilled on P (10 tokens) and then, on D, its first token (prefill (1)) and 3
# decode tokens. P: [0, 1] both prefills (20 tokens, prefill-only). D: [1, 2] both first tokens
# (prefill-only, 2 tokens), [2, 3], [3, 4], [4, 5] a decode token each (decode-only). Each request: sent
# 0, first token 2, last 5, 4 output tokens. The requests section counts the 2 records once each:
# TTFT 2, E2E 5, TPOT (5 - 2) / 3 = 1, 8 output tokens over the 100 s; ITL takes the gaps between one
# request's output tokens on D (3 of 1 each, per request: 6), and none from the prefiller's token at 1
# to the decoder's first at 2 (a prefill that completes opens a request: docs/simulator.md, Output
# tokens). Each engine counts the requests whose first output token it produced, as each vLLM instance's
# vllm:request_success_total does (docs/simulator.md, Engine statistics): 2 on P and 2 on D, by design.

PD = """
stage P : step { budget 64; cost 1; }
stage D : step { budget 64; cost 1; }
workload { arrive batch(2); }
session {
  set t0 = now;
  prefill on P (10);
  prefill on D (1);
  set f = now;
  decode on D (3);
  record req { sent = t0; first_token = f; last_token = now; output = 4; prompt = 10; }
}
run { horizon 100; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_request_prefilled_on_one_engine_and_decoded_on_another_counts_once(tier, monkeypatch):
    report = _run(PD, tier, monkeypatch)
    m = report.result.requests
    assert (m.completed, m.total_input_tokens, m.total_output_tokens) == (2, 20, 8)
    assert (m.request_throughput, m.output_throughput) == (2 / 100, 8 / 100)
    assert (m.ttft.count, m.ttft.mean, m.e2el.mean, m.tpot.count, m.tpot.mean) == (2, 2.0, 5.0, 2, 1.0)
    assert (m.itl.count, m.itl.mean) == (6, 1.0)
    p, d = report.stage("P"), report.stage("D")
    assert (p.iterations, p.prefill_only, p.tokens, p.requests) == (1, 1, 20.0, 2)
    assert (d.iterations, d.prefill_only, d.decode_only, d.tokens, d.requests) == (4, 1, 3, 2.0, 2)


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_growth_within_its_own_reservation_goes_ahead(tier, monkeypatch):
    """Under `reserve held` session 2 holds 1 with a reservation of 2 (admitted at 0: 2 used + 0 + 2 <= 4;
    used 3, 1 reserved). Session 1's growth by 2 at 1 waits (3 + 1 + 2 > 4). Session 2's growth by 1 at 2
    is within its own unallocated reservation (used + reserved stays 4): it fits and grows; it ends at 3,
    releasing 2 (used 2, nothing reserved), and session 1 grows then (2 + 2 <= 4) and ends at 4."""
    src = GROWERS.replace("preempt none;", "reserve held;").replace(
        "hold m (1) { run d (2); grow m (1);", "hold m (1) reserve (2) { run d (2); grow m (1);")
    report = _run(src, tier, monkeypatch)
    rec = report.records(kind="numpy")
    assert dict(zip(rec["session"].tolist(), rec["done"].tolist())) == {0: 10.0, 1: 4.0, 2: 3.0}


BEHIND = """
pool kv { cap 4; block 1; preempt none; }
stage E : step { budget 64; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (1) { prefill on E (4) growing kv; }
  } else {
    hold kv (1) { decode on E (2) growing kv; }
  }
  record r { done = now; }
}
run { horizon 100; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_stalled_head_does_not_hold_back_the_grower_that_frees_its_room(tier, monkeypatch):
    """kv cap 4, preempt none; session 0 prefills 4 tokens from an allocation of 1, session 1 decodes 2 from
    1 (used 2). At 0 the prefill's growth by 3 waits (2 + 3 > 4), the decoder's first token fits its
    allocation, [0, 1]. At 1 the decoder's growth by 1 fits (3): it grows, [1, 2], and ends at 2 releasing
    2 (used 1); the prefill grows by 3 then (4), [2, 3], and ends at 3. Were a growth that fits to wait
    behind the stalled head, which only the decoder's release lets in, neither would ever grow."""
    report = _run(BEHIND, tier, monkeypatch)
    rec = report.records(kind="numpy")
    assert dict(zip(rec["session"].tolist(), rec["done"].tolist())) == {0: 3.0, 1: 2.0}
    assert report.stage("E").iterations == 3
    assert not [n for n in report.result.notes if "wait for ever" in n]


# ---------------------------------------------------------------- an unbounded decode's tokens
#
# Three sessions prefill 5 tokens each and then decode (inf), growing kv (blocks of 16), on an engine of
# budget 64 and cost 1, until the horizon 10.5. [0, 1]: the three prefills (15 tokens, prefill-only; each
# request's first token at 1). Then an iteration a second planned at 1, 2, ..., 10, each one whole token
# to each decoder (30 tokens, decode-only; the last ends at 11, after the horizon, but was planned before
# it). 11 iterations, 45 tokens: 45 / 11 per iteration, whole tokens only. Output tokens at 2, ..., 10
# follow the first at 1: 9 gaps of 1 each per request, 27. Each hold stays within its first block (5 + 10
# tokens < 16): used 48. A budget in whole tokens gives an unbounded decode whole tokens; a part of one
# comes only of a fractional budget or work (docs/language.md, "A decoder gets the part of a token the
# budget has left"; test_itl_unending_decode.py).

UNBOUNDED = """
pool kv { cap inf; block 16; preempt lifo; }
stage engine : step { budget 64; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  set t0 = now;
  hold kv (1) {
    prefill on engine (5) growing kv;
    set tf = now;
    decode on engine (inf) growing kv;
  }
  record request { sent = t0; first_token = tf; last_token = now; output = 1; }
}
run { horizon 10.5; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_an_unbounded_decode_is_given_whole_tokens(tier, monkeypatch):
    report = _run(UNBOUNDED, tier, monkeypatch)
    e = report.stage("engine")
    assert (e.iterations, e.prefill_only, e.decode_only, e.mixed) == (11, 1, 10, 0)
    assert (e.tokens, e.batch, e.token_utilisation) == (45 / 11, 33 / 11, 45 / (11 * 64))
    itl = report.result.requests.itl  # (the record table that holds the requests is never reached)
    assert (itl.count, itl.mean) == (27, 1.0)
    assert report.pool("kv").used == 48.0
