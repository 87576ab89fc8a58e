"""Conformance of language.txt §3, Stages (step), by hand, in cases no earlier test held together:

* "The residents are served the way serve names …: an order, by (k₁, …) (ascending keys evaluated for each
  resident with decoding, 1 for a decoding resident, admission, its admission sequence number, remaining,
  the tokens its run has left, and the totals residents, decoders, kv_decode, kv_prefill; ties in
  admission order …). A scheduler that serves the shortest remaining run first is serve by (remaining), the
  opposite serve by (-remaining)";
* "One token to a decoding job, up to chunk to a prefilling one, until the budget is spent", with a
  `budget` and a `chunk` that read `residents` or `now` (§2: "residents, decoders, kv_decode, kv_prefill (a
  step stage's budget, chunk and cost: the residents before the iteration)"), so that they change between
  iterations of one run;
* "The iteration advances the clock by C, an expression in tokens, decoders, prefilled, residents,
  kv_decode, kv_prefill, attention" with "attention = Σ n (K + n/2) over the prefill chunks, K the
  position before the chunk" (§2), where a growing prefill's K starts at the prefix its hold consumed.

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the step stage's entry is asserted as the JSON report
reads, and every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import report_json, run


def _engine(report, name="E") -> dict:
    return next(s for s in report_json(report)["stages"] if s["name"] == name)


def _done(samples) -> dict:
    return {s: t for s, t, _v in samples}


def _fields(got: dict, want: dict) -> dict:
    return {k: got[k] for k in want}


# Two prefills, 10 (s0) and 6 (s1), on one engine with `budget 3 + residents; chunk 4; cost 1;`.
BUDGET_READS_RESIDENTS = """
stage E : step { budget 3 + residents; chunk 4; cost 1; }
workload { arrive batch(2); }
session {
  run E prefill (serial == 0 ? 10 : 6);
  observe done = now;
}
run { horizon 10; }
"""
# Six runs of 4 (s0 and s2) and 6 (s1) tokens on `budget 5; chunk 3; cost 1; serve KEYS;`.
SERVE_REMAINING = """
stage E : step { budget 5; chunk 3; cost 1; SERVE; }
workload { arrive batch(3); }
session {
  run E prefill (serial == 1 ? 6 : 4);
  observe done = now;
}
run { horizon 10; }
"""
# A decode of 3 (s0) and a prefill of 4 (s1) on `budget 2; cost 1;`.
DECODE_AND_PREFILL = """
stage E : step { budget 2; cost 1; SERVE; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { run E decode (3); } else { run E prefill (4); }
  observe done = now;
}
run { horizon 10; }
"""
# Decodes of 2 tokens each on a budget of B a step.
DECODES = """
stage E : step { budget B; cost 1; SERVE; }
workload { arrive batch(N); }
session { set prio = serial % 2; run E decode (2); observe done = now; }
run { horizon 10; }
"""


def _src(template: str, **subs) -> str:
    for k, v in subs.items():
        template = template.replace(k, str(v))
    return template


@pytest.mark.parametrize("src, done, want", [
    # budget 3 + residents: 5 while both are resident. [0, 1]: s0 min(4, 10, 5) = 4, s1 the 1 left; [1, 2]
    # the same (s0 2 left, s1 4); [2, 3]: s0 its 2, s1 3 (1 left): s0 done at 3. At 3 residents is 1, so
    # the budget is 4: s1's last token over [3, 4]. Tokens 5, 5, 5, 1: 16 over budgets 5 + 5 + 5 + 4 =
    # 19; jobs 2, 2, 2, 1: batch 7/4; present 2 on [0, 3], 1 on [3, 4]: 7 over 10.
    (BUDGET_READS_RESIDENTS, {0: 3.0, 1: 4.0},
     {"iterations": 4, "tokens": 4.0, "token_utilisation": 16 / 19, "batch": 1.75, "present": 0.7,
      "utilisation": 0.4, "service": 3.5}),
    # serve by (remaining): [0, 1] s0 (4) and s2 (4) tie, admission order: s0 3 (chunk), s2 the 2 left,
    # s1 (6) nothing; [1, 2]: s0 1, s2 2 (both done at 2), s1 2; [2, 3] s1 3; [3, 4] s1 its last 1.
    # Tokens 5, 5, 3, 1: 14 over 20; jobs 2, 3, 1, 1: 7/4; present 3 on [0, 2], 1 on [2, 4]: 8 over 10.
    (_src(SERVE_REMAINING, SERVE="serve by (remaining)"), {0: 2.0, 2: 2.0, 1: 4.0},
     {"iterations": 4, "tokens": 3.5, "token_utilisation": 0.7, "batch": 1.75, "present": 0.8}),
    # serve by (-remaining): [0, 1] s1 (-6) first: 3 (3 left); s0 and s2 tie at -4, admission order: s0
    # the 2 left (2 left), s2 nothing. [1, 2]: s2 (-4) 3 (1 left), s1 (-3) 2 (1 left), s0 nothing. [2,
    # 3]: s0 (-2) 2, then s1 and s2 tie at -1: s1 1, s2 1: all three done at 3. Tokens 5, 5, 4: 14 over
    # 15; jobs 2, 2, 3: 7/3.
    (_src(SERVE_REMAINING, SERVE="serve by (-remaining)"), {0: 3.0, 1: 3.0, 2: 3.0},
     {"iterations": 3, "tokens": 14 / 3, "token_utilisation": 14 / 15, "batch": 7 / 3, "present": 0.9}),
    # serve by (decoding): the prefill (key 0) before the decode (key 1): s1 takes the budget over [0, 1]
    # and [1, 2] (done at 2); s0's three tokens over [2, 5]. Two prefill-only iterations, three
    # decode-only; tokens 2, 2, 1, 1, 1: 7 over 10.
    (_src(DECODE_AND_PREFILL, SERVE="serve by (decoding)"), {1: 2.0, 0: 5.0},
     {"iterations": 5, "prefill_only": 2, "decode_only": 3, "mixed": 0, "tokens": 1.4,
      "token_utilisation": 0.7, "batch": 1.0, "utilisation": 0.5}),
    # serve admission: s0's decode token first, s1 the 1 left, three times (s0 done at 3, s1 at 3 left
    # 1); s1's last over [3, 4]. Three mixed iterations and a prefill-only; tokens 7 over 8.
    (_src(DECODE_AND_PREFILL, SERVE="serve admission"), {0: 3.0, 1: 4.0},
     {"iterations": 4, "prefill_only": 1, "decode_only": 0, "mixed": 3, "tokens": 1.75,
      "token_utilisation": 0.875, "batch": 1.75, "utilisation": 0.4}),
    # serve by (-admission) on a budget of 1: the last admitted first, s2 over [0, 2], s1 over [2, 4],
    # s0 over [4, 6]; present 3, 2, 1 for 2 each: 12 over 10.
    (_src(DECODES, B=1, N=3, SERVE="serve by (-admission)"), {2: 2.0, 1: 4.0, 0: 6.0},
     {"iterations": 6, "decode_only": 6, "tokens": 1.0, "batch": 1.0, "present": 1.2, "service": 4.0}),
    # serve by (prio), prio = serial % 2, budget 2: s0 and s2 (0) tie and go in admission order before
    # s1 and s3 (1): s0, s2 over [0, 2], s1, s3 over [2, 4]; present 4 on [0, 2], 2 on [2, 4].
    (_src(DECODES, B=2, N=4, SERVE="serve by (prio)"), {0: 2.0, 2: 2.0, 1: 4.0, 3: 4.0},
     {"iterations": 4, "decode_only": 4, "tokens": 2.0, "batch": 2.0, "present": 1.2, "service": 3.0}),
    # serve by (0): every key ties, admission order: s0, s1 over [0, 2], s2, s3 over [2, 4].
    (_src(DECODES, B=2, N=4, SERVE="serve by (0)"), {0: 2.0, 1: 2.0, 2: 4.0, 3: 4.0},
     {"iterations": 4, "decode_only": 4, "tokens": 2.0, "batch": 2.0, "present": 1.2, "service": 3.0}),
])
def test_the_serving_order_and_a_budget_read_before_each_iteration(monkeypatch, src, done, want):
    r, o = run(src, monkeypatch)
    assert _done(o["done"]) == done
    assert _fields(_engine(r), want) == want


# A prefill of 10 (s0) beside a decode of 2 (s1): the cost reads attention. Chunks of 4: K = 0, n = 4:
# 4 (0 + 2) = 8; K = 4, n = 4: 4 (4 + 2) = 24; K = 8, n = 2: 2 (8 + 1) = 18. The decode adds none. The
# iterations last 1 + 8/4 = 3, 1 + 24/4 = 7 and 1 + 18/4 = 5.5: they end at 3, 10 and 15.5; s1's two
# tokens are in the first two (done at 10). Tokens 5, 5, 2: 12 over 300; jobs 2, 2, 1.
ATTENTION = """
stage E : step { budget 100; chunk 4; cost 1 + attention / 4; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { run E prefill (10); } else { run E decode (2); }
  observe done = now;
}
run { horizon 20; }
"""

# One session, two holds of 4 on kv, each prefilling growing kv on an engine whose cost is attention / 2
# (chunk 4). The first hold computes 4 over [0, 4] (attention 4 · 2 = 8) and caches 4.
CACHED_ATTENTION = """
pool kv { cap 100; }
stage E : step { budget 100; chunk 4; cost attention / 2; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (4) { run E prefill (4) growing kv; } cache (100);
  observe a = now;
  hold kv (4) { run E prefill (6) growing kv; observe u = used(kv); } CACHE;
  observe b = now;
}
run { horizon 30; }
"""


@pytest.mark.parametrize("src, done, want, kv", [
    (ATTENTION, {1: 10.0, 0: 15.5},
     {"iterations": 3, "mixed": 2, "prefill_only": 1, "tokens": 4.0, "token_utilisation": 0.04,
      "utilisation": 0.775, "present": 1.275, "batch": 5 / 3}, None),
    # With cache (100) the second hold consumes the 4 cached (at most its allocation): its position
    # starts at 4, so its chunks are K = 4, n = 4: 24 (12 s, growing the hold to 8) and K = 8, n = 2: 18
    # (9 s, to 10): done at 4 + 12 + 9 = 25. used: 4 on [0, 4], 8 on [4, 16], 10 on [16, 25]: 202 over
    # 30; cached: 10 on [25, 30] (the 4 consumed at 4): 50 over 30.
    (CACHED_ATTENTION.replace("CACHE", "cache (100)"), {"u": 10.0, "b": 25.0},
     {"iterations": 3, "utilisation": 25 / 30}, {"used": 202 / 30, "cached": 50 / 30, "admissions": 2}),
    # Without cache the hold consumes nothing and its position starts at 0: K = 0, n = 4: 8 (4 s, within
    # its 4) and K = 4, n = 2: 10 (5 s, growing to 6): done at 13. used 16 + 16 + 30 = 62 over 30; the
    # first hold's 4 stay cached from 4 to 30: 104 over 30.
    (CACHED_ATTENTION.replace(" CACHE", ""), {"u": 6.0, "b": 13.0},
     {"iterations": 3, "utilisation": 13 / 30}, {"used": 62 / 30, "cached": 104 / 30, "admissions": 2}),
])
def test_the_cost_reads_attention_from_the_position_before_each_chunk(monkeypatch, src, done, want, kv):
    r, o = run(src, monkeypatch)
    if kv is None:
        assert _done(o["done"]) == done
    else:
        assert (o["u"][0][2], o["b"][0][1]) == (done["u"], done["b"])
        assert o["a"] == [(0, 4.0, 4.0)]
        pool = next(p for p in report_json(r)["pools"] if p["name"] == "kv")
        assert _fields(pool, kv) == pytest.approx(kv, rel=1e-12)
    assert _fields(_engine(r), want) == pytest.approx(want, rel=1e-12)


# A prefill of 10 on `budget now < 2 ? 2 : 6`: 2 over [0, 1], 2 over [1, 2] (the budget read at 1), and
# the 6 left over [2, 3], the budget read at 2 being 6. Tokens 10 over budgets 2 + 2 + 6 = 10.
BUDGET_READS_NOW = """
stage E : step { budget now < 2 ? 2 : 6; cost 1; }
workload { arrive batch(1); }
session { run E prefill (10); observe done = now; }
run { horizon 10; }
"""
# s0 prefills 12 from 0 on `budget 5; chunk residents >= 2 ? 2 : 100`; s1 comes to the engine at 1.5
# with 3. [0, 1] and [1, 2]: one resident, chunk 100: s0 5 and 5. At 2 both are resident: chunk 2, s0
# its 2 (done at 3), s1 2; at 3 one again: s1 its last 1 over [3, 4]. Tokens 5, 5, 4, 1: 15 over 20;
# present s0 3, s1 2.5: 5.5 over 10.
CHUNK_READS_RESIDENTS = """
stage E : step { budget 5; chunk residents >= 2 ? 2 : 100; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run E prefill (12); } else { run d (1.5); run E prefill (3); }
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("src, done, want", [
    (BUDGET_READS_NOW, {0: 3.0}, {"iterations": 3, "tokens": 10 / 3, "token_utilisation": 1.0}),
    (CHUNK_READS_RESIDENTS, {0: 3.0, 1: 4.0},
     {"iterations": 4, "tokens": 3.75, "token_utilisation": 0.75, "present": 0.55, "batch": 1.25}),
])
def test_a_budget_and_a_chunk_are_read_again_at_every_iteration(monkeypatch, src, done, want):
    r, o = run(src, monkeypatch)
    assert _done(o["done"]) == done
    assert _fields(_engine(r), want) == want


# Three decodes of 3 arriving at 0, 0.5 and 1 through `admit via` on `budget 1 + 2 · decoders`, each
# taking `budget_left(E)` units of a probe pool when it is admitted (used(probe), read in the body, sums
# them).
BUDGET_READS_DECODERS = """
pool reqs { cap 10; admit via E; }
pool probe { cap 100; }
stage E : step { budget 1 + 2 * decoders; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial * 0.5);
  hold reqs (1), probe (budget_left(E)) { observe b = used(probe); run E decode (3); }
  observe done = now;
}
run { horizon 20; }
"""


def test_a_budget_reads_the_decoders_resident_before_the_iteration(monkeypatch):
    """At 0 no resident: budget 1; s0 is admitted with budget_left 1 and takes it. At 1 (s2's delay ends
    before the iteration it was scheduled beside: both at 1, planned after both) one decoder: budget 3; s0
    takes 1, s1 is admitted with budget_left 2 and takes 1, s2 with 1 and takes the last. At 2 three
    decoders: budget 7, three tokens; s0 is done at 3; at 3 two: budget 5, two tokens; s1 and s2 done at
    4. probe: 1, 1 + 2, 3 + 1. Tokens 1 + 3 + 3 + 2 = 9 over budgets 1 + 3 + 7 + 5 = 16; reqs waits 0,
    0.5, 0."""
    r, o = run(BUDGET_READS_DECODERS, monkeypatch)
    assert o["b"] == [(0, 0.0, 1.0), (1, 1.0, 3.0), (2, 1.0, 4.0)]
    assert _done(o["done"]) == {0: 3.0, 1: 4.0, 2: 4.0}
    want = {"iterations": 4, "tokens": 2.25, "token_utilisation": 9 / 16, "batch": 2.25}
    assert _fields(_engine(r), want) == want
    reqs = next(p for p in report_json(r)["pools"] if p["name"] == "reqs")
    assert (reqs["admissions"], reqs["wait"], reqs["queue"]) == (3, 0.5 / 3, 0.025)


# s0 holds 8 of kv and decodes 3; s1 holds 4 and prefills 8; the budget reads the decoders' KV and the
# chunk the prefills'.
BUDGET_READS_KV = """
pool kv { cap 100; }
stage E : step { budget 2 + kv_decode / 4; chunk kv_prefill / 2; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (8) { run E decode (3); } } else { hold kv (4) { run E prefill (8); } }
  observe done = now;
}
run { horizon 10; }
"""


def test_a_budget_and_a_chunk_read_the_residents_kv(monkeypatch):
    """kv_decode is the 8 s0 holds while it decodes, kv_prefill the 4 s1 holds: budget 2 + 8/4 = 4, chunk
    4/2 = 2. [0, 1], [1, 2], [2, 3]: s0 1, s1 2 (s0 done at 3, s1 has 2 left); at 3 kv_decode is 0: budget
    2, chunk 2: s1's last 2, done at 4. Tokens 3, 3, 3, 2: 11 over budgets 4 + 4 + 4 + 2 = 14; three
    mixed iterations and one prefill-only."""
    r, o = run(BUDGET_READS_KV, monkeypatch)
    assert _done(o["done"]) == {0: 3.0, 1: 4.0}
    want = {"iterations": 4, "mixed": 3, "prefill_only": 1, "tokens": 2.75, "token_utilisation": 11 / 14,
            "batch": 1.75}
    assert _fields(_engine(r), want) == want


# s0 decodes 4 growing a hold of 2 on kv (cap 5, preempt none); s1 holds 3 of kv outside the engine until
# 2.5; s2 comes to the engine at 1.5 with a decode of 3 that holds nothing.
A_STALLED_GROWER = """
pool kv { cap 5; preempt none; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (2) { run E decode (4) growing kv; } }
  branch (serial == 1) { hold kv (3) { run d (2.5); } }
  branch (serial == 2) { run d (1.5); run E decode (3); }
  observe done = now;
}
run { horizon 10; }
"""


def test_a_grower_that_waits_takes_no_token_and_the_others_go_on(monkeypatch):
    """§3 grow: "If it does not fit: with preempt none the session waits and resumes where it was"; a
    growing job "first grows its hold to the position it will reach". s0's tokens 1 and 2 fit its 2 ([0,
    1], [1, 2]); at 2 its third needs 3 units, 3 + 3 > 5: it waits and takes nothing, and s2 takes 1 over
    [2, 3]. s1's release at 2.5 lets the growth through (used 3 + 0); at 3 s0 takes its third token and s2
    its second, at 4 s0 grows to 4 for its last and s2 takes its last: both done at 5. Tokens 1, 1, 1, 2,
    2: 7 over 5 iterations; used s0 2 · 2.5 + 3 · 1.5 + 4, s1 3 · 2.5: 21 over 10."""
    r, o = run(A_STALLED_GROWER, monkeypatch)
    assert _done(o["done"]) == {1: 2.5, 0: 5.0, 2: 5.0}
    want = {"iterations": 5, "decode_only": 5, "tokens": 1.4, "utilisation": 0.5, "present": 0.85}
    assert _fields(_engine(r), want) == want
    kv = next(p for p in report_json(r)["pools"] if p["name"] == "kv")
    assert (kv["used"], kv["holders"], kv["preemptions"], kv["admissions"]) == (2.1, 0.75, 0, 2)


# s0 prefills 6 and decodes 3; s1 comes at 2.5 and prefills 2, decodes 2; both through `admit via`.
EXCLUSIVE = """
pool reqs { cap 10; admit via E; }
stage E : step { budget 4; cost 1; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (2.5); }
  hold reqs (1) { run E prefill (serial == 0 ? 6 : 2); set ft = now; run E decode (serial == 0 ? 3 : 2); }
  observe first = ft;
  observe done = now;
}
run { horizon 10; }
"""


def test_exclusive_prefill_displaces_the_tentative_decodes(monkeypatch):
    """§3: "serve exclusive prefill selects either one prefill alone or a decode-only batch. A resident
    prefill takes precedence. Otherwise resident decodes are tentative: while budget is left, a waiting
    prefill that fits can replace them and use the full budget". s0 is admitted at 0 and prefills alone,
    4 then 2 (done at 2); at 2 its decode is a batch of one ([2, 3]). At 3 s1 waits (from 2.5): its
    prefill displaces s0's tentative decode and takes the budget, 2 over [3, 4]; from 4 both decode, s0
    its last 2 and s1 its 2: both done at 6. Three prefill-only iterations (4, 2, 2 tokens) and three
    decode-only (1, 2, 2): 13 over 24; present s0 on [0, 6], s1 on [3, 6]."""
    r, o = run(EXCLUSIVE, monkeypatch)
    assert _done(o["done"]) == {0: 6.0, 1: 6.0}
    assert {s: v for s, _t, v in o["first"]} == {0: 2.0, 1: 4.0}
    want = {"iterations": 6, "prefill_only": 3, "decode_only": 3, "mixed": 0, "tokens": 13 / 6,
            "token_utilisation": 13 / 24, "batch": 8 / 6, "present": 0.9, "completions": 4}
    assert _fields(_engine(r), want) == want


# Decodes of 400 (s0 at 0), 100 (s1 at 10.1) and 50 (s2 at 20.2) tokens on two tokens a step of 0.25 s:
# long stretches of decode-only steps, the engine's quiet rounds.
LONG_DECODES = """
stage E : step { budget 2; cost 0.25; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial * 10.1);
  run E decode (serial == 0 ? 400 : serial == 1 ? 100 : 50);
  observe done = now;
}
run { horizon 200; }
"""


def test_long_decodes_share_the_budget_in_admission_order(monkeypatch):
    """Steps at every multiple of 0.25 (exact in binary) from 0 to 100, s0 one token in each: done at 100.
    s1 joins at 10.1 and is first served at 10.25: its 100 tokens end at 35.25. s2 joins at 20.2 but s0
    and s1, admitted before it, take the budget until 35.25; its 50 tokens then end at 47.75. 400 steps;
    tokens 400 + 100 + 50 = 550 over budgets of 800; present 100 + 25.15 + 27.55 over 200."""
    r, o = run(LONG_DECODES, monkeypatch)
    assert _done(o["done"]) == {1: 35.25, 2: 47.75, 0: 100.0}
    want = {"iterations": 400, "decode_only": 400, "tokens": 1.375, "token_utilisation": 0.6875,
            "utilisation": 0.5, "completions": 3}
    assert _fields(_engine(r), want) == want
    assert _engine(r)["present"] == pytest.approx(152.7 / 200, rel=1e-12)


# Two decodes of 20 growing holds of 4 on kv (cap 32, blocks of 4, preempt lifo): s0 from 0, s1 from 2.
GROWING_IN_BLOCKS = """
pool kv { cap 32; block 4; preempt lifo; }
stage E : step { budget 2; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 2);
  hold kv (4) { observe a = now; run E decode (20) growing kv; }
  observe done = now;
}
run { horizon 50; }
"""


def test_decodes_growing_block_by_block_until_one_preempts_the_other(monkeypatch):
    """§3: "a growing job first grows its hold to the position it will reach (block by block, preempting
    if needed)"; preempt lifo's victim "was admitted last"; it "re-enters the head of the pool's queue".
    The step at t takes s0 to t + 1 and s1 (from 2) to t - 1, each hold grown to the block its position
    reaches. At 15 they hold 16 and 16 (32); at 16 s0 needs 20: s1, admitted last, is preempted (its
    16 released, nothing cached: no cache clause) and gives its token back; s0 grows to 20. kv is no
    engine's queue, so s1 is admitted again at the next settle, at 17 (20 + 4 ≤ 32), and decodes its 20
    from the start: done at 37; s0 at 20.

    used: s0 4 · (4 + 8 + 12 + 16 + 20) = 240; s1 first 4 · 4 + 4 · 8 + 4 · 12 + 2 · 16 = 128; again 240:
    608 over 50. Tokens 2 · 1 + 14 · 2 + 1 + 3 · 2 + 17 · 1 = 54 in 37 steps."""
    r, o = run(GROWING_IN_BLOCKS, monkeypatch)
    assert [(s, t) for s, t, _v in o["a"]] == [(0, 0.0), (1, 2.0), (1, 17.0)]
    assert _done(o["done"]) == {0: 20.0, 1: 37.0}
    kv = next(p for p in report_json(r)["pools"] if p["name"] == "kv")
    assert _fields(kv, {"used": 12.16, "queue": 0.02, "wait": 1 / 3, "admissions": 3, "preemptions": 1,
                        "stuck": 0, "cached": 0.0}) == \
        {"used": 12.16, "queue": 0.02, "wait": 1 / 3, "admissions": 3, "preemptions": 1, "stuck": 0,
         "cached": 0.0}
    want = {"iterations": 37, "tokens": 54 / 37, "completions": 2, "service": 20.0, "present": 1.08}
    assert _fields(_engine(r), want) == want


# The same two decodes through `admit via E`, caching what they computed and resuming from `computed`.
RESUMED_FROM_COMPUTED = """
pool reqs { cap 10; admit via E; }
pool kv { cap 32; block 4; preempt lifo; }
stage E : step { budget 2; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 2);
  hold reqs (1), kv (max(4, computed)) {
    observe a = now;
    observe c = cached;
    run E decode (20 - computed) growing kv;
  } cache (100);
  observe k = cachedin(kv);
}
run { horizon 50; }
"""


def test_a_victim_caches_its_position_and_resumes_from_it(monkeypatch):
    """As above until 16, where s1 is preempted at position 14: its hold "is released with its computed
    prefix cached" (14 in blocks of 4: 12), `computed` is 14, and it re-enters the head of reqs' queue
    (its hold's first pool). No admission in the step that preempted; at 17, 18, 19 its header asks kv for
    max(4, 14) = 16 beside s0's 20: no room, and the head blocks. s0 is done at 20 and caches 20; s1 is
    admitted then, consumes its 12 (cached 12) and, the allocation of 16 beside s0's 20 cached, evicts a
    block of s0's tail; it decodes 20 - 14 = 6 from position 12, growing to 20 at 24 (another block of
    s0's evicted) and caching 18, in blocks 16, at 26.

    kv used: 240 (s0) + 128 (s1 to 16) + 16 · 4 + 20 · 2 = 472 over 50; cached: s1's 12 on [16, 20], s0's
    16 on [20, 24] and 12 on [24, 26], then 12 + 16 on [26, 50]: 808 over 50. reqs: waits 0, 0 and 4
    (from 16 to 20). Tokens 2 + 28 + 4 + 6 = 40 in 26 steps."""
    r, o = run(RESUMED_FROM_COMPUTED, monkeypatch)
    assert [(s, t, v) for s, t, v in o["c"]] == [(0, 0.0, 0.0), (1, 2.0, 0.0), (1, 20.0, 12.0)]
    assert o["k"] == [(0, 20.0, 20.0), (1, 26.0, 16.0)]
    j = report_json(r)
    kv = next(p for p in j["pools"] if p["name"] == "kv")
    reqs = next(p for p in j["pools"] if p["name"] == "reqs")
    assert _fields(kv, {"used": 9.44, "cached": 16.16, "evicted_units": 8.0, "evicted_entries": 0,
                        "preemptions": 1, "admissions": 3}) == \
        {"used": 9.44, "cached": 16.16, "evicted_units": 8.0, "evicted_entries": 0, "preemptions": 1,
         "admissions": 3}
    assert (reqs["wait"], reqs["queue"], reqs["admissions"]) == (4 / 3, 0.08, 3)
    want = {"iterations": 26, "tokens": 40 / 26, "completions": 2, "service": 13.0}
    assert _fields(_engine(r), want) == want
