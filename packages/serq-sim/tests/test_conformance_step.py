"""A conformance audit of the iteration-level `step` engine as a language construct (language.txt §2-§3:
`stage E : step { budget B; cost C; chunk K; serve …; memory P; }`, `run E prefill|decode (W)`, growing
runs, the context variables of the budget, chunk, cost and serve keys, `budget_left`, families, preemption
inside an iteration, `admit via`), on the sentences the earlier rounds (test_conformance_hand.py, _more,
_audit … _audit7, test_step*.py) leave out or touch only in passing: a fractional budget and work, serve
keys that read the totals, a victim already served, a cost, budget and chunk that read `now`, a run of
zero work inside an admission, a family routed by `choose`, exclusive prefill between resident prefills.

Each program runs on the step clock (a constant cost, or one whose value the trace gives), its schedule is
worked out by hand from the spec in the docstring, and `run` runs it on the tier serQ picks and on the
general engine (SERQ_SIM_TIER=general: the per-job planning), which must give byte-identical reports."""

from __future__ import annotations

import pytest
from conform import at, pool, run, stage


def kinds(report, name="E", index=None):
    e = stage(report, name, index)
    return e.iterations, e.prefill_only, e.decode_only, e.mixed


def test_a_fractional_budget_gives_the_last_decoder_the_part_left(monkeypatch):
    """§3: "One token to a decoding job, up to chunk to a prefilling one, until the budget is spent"; the
    spec does not say what a decoder gets when less than a token is left (docs/language.md, rules chosen:
    the part left, as a prefill is cut at the budget).

    budget 2.5, three decoders of 4 (s2 joins at 0.5, after the first iteration's planning). [0,1]: s0 1,
    s1 1 (s2 not there). [1,2], [2,3], [3,4]: s0 1, s1 1, s2 0.5: s0, s1 done at 4, s2 has 2.5 left.
    [4,5] 1, [5,6] 1, [6,7] 0.5: s2 done at 7. 7 iterations, all decode-only, 2+2.5·3+1+1+0.5 = 12
    tokens, 2+3·3+1·3 = 14 jobs."""
    r, o = run("""
stage E : step { budget 2.5; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session { branch (serial == 2) { run d (0.5); } run E decode (4); observe t = now; }
run { horizon 100; }
""", monkeypatch)
    assert at(o["t"]) == [(0, 4.0), (1, 4.0), (2, 7.0)]
    assert kinds(r) == (7, 0, 7, 0)
    e = stage(r, "E", None)
    assert (e.tokens, e.batch) == (12 / 7, 14 / 7)


def test_a_fractional_budget_under_exclusive_prefill(monkeypatch):
    """§3 serve exclusive prefill with budget 2.5: the resident prefill s3 (3 tokens) goes alone, 2.5 in
    [0,1] and 0.5 in [1,2] (done at 2); then the decoders of 2: [2,3] s0 1, s1 1, s2 0.5; [3,4] s0 1,
    s1 1 (done at 4), s2 0.5; [4,5] s2 1 (done at 5). 5 iterations: 2 prefill-only, 3 decode-only; tokens
    2.5 + 0.5 + 2.5 + 2.5 + 1 = 9; jobs 1 + 1 + 3 + 3 + 1 = 9."""
    r, o = run("""
stage E : step { budget 2.5; cost 1; serve exclusive prefill; }
workload { arrive batch(4); }
session { branch (serial < 3) { run E decode (2); } else { run E prefill (3); } observe t = now; }
run { horizon 100; }
""", monkeypatch)
    assert at(o["t"]) == [(3, 2.0), (0, 4.0), (1, 4.0), (2, 5.0)]
    assert kinds(r) == (5, 2, 3, 0)
    e = stage(r, "E", None)
    assert (e.tokens, e.batch) == (9 / 5, 9 / 5)


def test_exclusive_prefill_serves_resident_prefills_one_at_a_time(monkeypatch):
    """§3 serve exclusive prefill "selects either one prefill alone or a decode-only batch. A resident
    prefill takes precedence" (the first in admission order). s0 decodes 3, s1 prefills 3, s2 prefills 2,
    all resident at 0, budget 10: [0,1] s1 alone (done at 1), [1,2] s2 alone (done at 2), then s0's
    three tokens at [2,3], [3,4], [4,5]: done at 5. 2 prefill-only, 3 decode-only, none mixed."""
    r, o = run("""
stage E : step { budget 10; cost 1; serve exclusive prefill; }
workload { arrive batch(3); }
session { branch (serial == 0) { run E decode (3); } else { run E prefill (serial == 1 ? 3 : 2); }
          observe t = now; }
run { horizon 100; }
""", monkeypatch)
    assert at(o["t"]) == [(1, 1.0), (2, 2.0), (0, 5.0)]
    assert kinds(r) == (5, 2, 3, 0)


def test_serve_keys_read_the_totals(monkeypatch):
    """§2/§3: the serve by keys read decoding, admission, remaining "and the totals residents, decoders,
    kv_decode, kv_prefill". serve by (decoders > 0 ? -remaining : remaining), budget 3: s0 decodes 5 from
    0; s1 (prefill 2) and s2 (prefill 3) join at 1. [0,1]: s0 1 (4 left). At 1 decoders = 1: keys s0 -4,
    s2 -3, s1 -2: s0 1, s2 2, s1 nothing. At 2: s0 -3, s1 -2, s2 -1: s0 1, s1 2 (done at 3). At 3: s0 1,
    s2 1 (done at 4). At 4: s0 1 (done at 5). (Without the totals, by remaining, s1 would be served first
    at 1.) 5 iterations: decode-only at [0,1] and [4,5], mixed between; 1+3+3+2+1 = 10 tokens."""
    r, o = run("""
stage E : step { budget 3; cost 1; serve by (decoders > 0 ? -remaining : remaining); }
stage d : delay;
workload { arrive batch(3); }
session {
  set w = serial == 0 ? 5 : serial == 1 ? 2 : 3;
  branch (serial == 0) { run E decode (w); } else { run d (1); run E prefill (w); }
  observe t = now;
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["t"]) == [(1, 3.0), (2, 4.0), (0, 5.0)]
    assert kinds(r) == (5, 0, 2, 3)
    assert stage(r, "E", None).tokens == 2.0


def test_a_fractional_prefill_under_a_chunk_with_a_cost_reading_attention(monkeypatch):
    """§2 attention = Σ n (K + n/2) over the prefill chunks; a decode adds none. prefill (2.5), chunk 1,
    cost 1 + attention: chunks 1 (K 0: 0.5) -> 1.5, 1 (K 1: 1.5) -> 2.5, 0.5 (K 2: 0.5 · 2.25) -> 2.125:
    the prefill ends at 6.125. decode (1.5): one token then the half left, cost 1 each: 8.125.
    5 iterations, 3 prefill-only and 2 decode-only; 4 tokens."""
    r, o = run("""
stage E : step { budget 10; chunk 1; cost 1 + attention; }
workload { arrive batch(1); }
session { run E prefill (2.5); observe f = now; run E decode (1.5); observe t = now; }
run { horizon 100; }
""", monkeypatch)
    assert at(o["f"]) == [(0, 6.125)] and at(o["t"]) == [(0, 8.125)]
    assert kinds(r) == (5, 3, 2, 0)
    assert stage(r, "E", None).tokens == 4 / 5


def test_a_victim_already_served_gives_its_token_back(monkeypatch):
    """§3 step + preempt lifo, serve by (-admission) (the last admitted first), cost tokens. kv cap 5, no
    block; s0 and s1 hold 2, prefill 2 growing and decode 3 growing. [0,4]: both prefill 2 (4 tokens).
    At 4 s1 is served first (grows to 3: 5 used), then s0's growth to 3 does not fit: the victim is s1
    (last admitted), which gives its token back: the iteration has 1 token, [4,5]. s1 is re-admitted at
    5 (2 + 3 ≤ 5), served first again (its prefill needs no growth), and s0's growth to 4 preempts it
    again: [5,6], 1 token (s1's second preemption at no further position: stuck). At 6 s1 does not fit
    (2 + 4 > 5); s0 grows to 5 alone, [6,7], done at 7. s1 is admitted at 7: prefill [7,9], decode
    [9,10], [10,11], [11,12]. 8 iterations (prefill-only 2, decode-only 6), 12 tokens, 9 jobs."""
    r, o = run("""
pool kv { cap 5; preempt lifo; }
stage E : step { budget 10; cost tokens; memory kv; serve by (-admission); }
workload { arrive batch(2); }
session {
  hold kv (2) { observe a = now; run E prefill (2) growing kv; observe f = now; run E decode (3) growing kv; }
  observe t = now;
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 0.0), (1, 5.0), (1, 7.0)]
    assert at(o["f"]) == [(0, 4.0), (1, 4.0), (1, 9.0)]
    assert at(o["t"]) == [(0, 7.0), (1, 12.0)]
    assert kinds(r) == (8, 2, 6, 0)
    e = stage(r, "E", None)
    assert (e.tokens, e.batch) == (12 / 8, 9 / 8)
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck) == (2, 1)


def test_the_budget_chunk_and_cost_read_now(monkeypatch):
    """§2: now exists everywhere, so a budget, chunk and cost may read it (at the iteration's planning).
    budget 2 + floor(now / 3), chunk 1 + floor(now / 4), cost 1 + (now >= 5), reqs cap 4 admit via E;
    three sessions prefill 3 and decode 3 + serial. At 0 (budget 2, chunk 1): s0 1, s1 1, no budget for
    s2. [1,2], [2,3]: s0 1, s1 1 (prefills done at 3). At 3 (budget 3): s0 1, s1 1, s2 admitted, 1.
    At 4 (chunk 2): s0, s1, s2 1 each (budget 3). At 5 (cost 2): s0 1 (done at 7), s1 1, s2 1 (prefill
    done). At 7 (budget 4): s1 1 (done at 9), s2 1; then s2 alone at 9, 11, 13, 15: done at 17.
    11 iterations: prefill-only 3, mixed 3 ([3,4], [4,5], [5,7]), decode-only 5; 21 tokens.
    cost 1 + now, two decoders of 4 and 5: iterations at 0 (1), 1 (2), 3 (4), 7 (8): s0 done at 15; s1's
    last token at 15 costs 16: 31."""
    r, o = run("""
pool reqs { cap 4; admit via E; }
stage E : step { budget 2 + floor(now / 3); chunk 1 + floor(now / 4); cost 1 + (now >= 5 ? 1 : 0); }
workload { arrive batch(3); }
session { hold reqs (1) { observe a = now; run E prefill (3); run E decode (3 + serial); } observe t = now; }
run { horizon 1000; }
""", monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 3.0)]
    assert at(o["t"]) == [(0, 7.0), (1, 9.0), (2, 17.0)]
    assert kinds(r) == (11, 3, 5, 3)
    assert stage(r, "E", None).tokens == 21 / 11
    _, o = run("""
stage E : step { budget 10; cost 1 + now; }
workload { arrive batch(2); }
session { run E decode (4 + serial); observe t = now; }
run { horizon 1000; }
""", monkeypatch)
    assert at(o["t"]) == [(0, 15.0), (1, 31.0)]


def test_a_run_of_zero_work_in_an_admission_frees_its_slot_for_the_next_head(monkeypatch):
    """§3: "A run of zero work completes at once"; the admitted session "runs at once (zero time) until it
    joins the stage or blocks", and the admissions go on while budget is left. reqs cap 1, budget 2:
    at 0 s0 is admitted, its prefill (0) completes and its hold ends at once, so s1 is admitted in the
    same iteration and prefills 2 of 3 ([0,1]); s2 waits for the slot. [1,2]: s1's last token (done at
    2); at 2 s2 is admitted: 2 and 1 tokens, done at 4. 4 prefill-only iterations, 6 tokens."""
    r, o = run("""
pool reqs { cap 1; admit via E; }
stage E : step { budget 2; cost 1; }
workload { arrive batch(3); }
session { hold reqs (1) { observe a = now; run E prefill (serial == 0 ? 0 : 3); } observe t = now; }
run { horizon 100; }
""", monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 0.0), (2, 2.0)]
    assert at(o["t"]) == [(0, 0.0), (1, 2.0), (2, 4.0)]
    assert kinds(r) == (4, 4, 0, 0)
    assert stage(r, "E", None).tokens == 6 / 4


def test_a_family_routed_by_choose_each_member_with_its_own_budget(monkeypatch):
    """§3 families: pool reqs[2] { admit via E; } next to stage E[2] serves reqs[i] by E[i], and the
    family's budget reads its own member of reqs (docs/language.md). budget 6 - 2 · holders(reqs) (at the
    budget moment, before the admissions); choose the member with the fewest queued + holding: s0 -> 0,
    s1 -> 1, s2 -> 0, s3 -> 1; s prefills 4 + 2j, decodes 2; the hold takes budget_left(E[j]) units of kv[j].
    E[0]: at 0 (budget 6) s0 sees 6, prefills 4; s2 sees 2, prefills 2. At 1 (budget 2): s0 1, s2 1; at 2:
    s0 1 (done at 3), s2 1 (prefill done at 3); s2 decodes [3,4], [4,5]: done at 5. 5 iterations:
    prefill-only 1, mixed 2, decode-only 2.
    E[1]: at 0 s1 sees 6, prefills 6: no budget left for s3. At 1 (budget 4): s1 1, s3 sees 3, prefills 3;
    at 2 (budget 2): s1 1 (done at 3), s3 1; at 3 (budget 4): s3's last 2 (prefill done at 4), decodes
    [4,5], [5,6]: done at 6. 6 iterations: prefill-only 2, mixed 2, decode-only 2."""
    r, o = run("""
pool reqs[2] { cap 2; admit via E; }
pool kv[2] { cap 100; }
stage E[2] : step { budget 6 - 2 * holders(reqs); cost 1; }
workload { arrive batch(4); }
session {
  choose j in 2 by (queued(reqs[j]) + holders(reqs[j]));
  set w = 4 + 2 * j;
  hold reqs[j] (1), kv[j] (budget_left(E[j])) {
    observe u = used(kv[j]); run E[j] prefill (w); observe f = now; run E[j] decode (2);
  }
  observe t = now;
}
run { horizon 100; }
""", monkeypatch)
    assert [(s, t, v) for s, t, v in o["u"]] == [(0, 0.0, 6.0), (1, 0.0, 6.0), (2, 0.0, 8.0), (3, 1.0, 9.0)]
    assert at(o["f"]) == [(0, 1.0), (1, 1.0), (2, 3.0), (3, 4.0)]
    assert at(o["t"]) == [(0, 3.0), (1, 3.0), (2, 5.0), (3, 6.0)]
    assert kinds(r, "E", 0) == (5, 1, 2, 2)
    assert kinds(r, "E", 1) == (6, 2, 2, 2)


@pytest.mark.parametrize("pre, stops", [("preempt lifo;", True), ("preempt by (-admission);", True),
                                        ("preempt by (-admission, 1);", True),
                                        ("preempt by (0 - admission);", True),
                                        ("preempt by (2, -1 * admission);", True),
                                        ("preempt by (-admission, position);", True),
                                        ("preempt by (0);", True), ("preempt by (1, 2);", True),
                                        ("preempt by (now);", True), ("preempt by (used(kv), -admission);", True),
                                        ("preempt by (now, -serial);", False),
                                        ("preempt by (decoding, -admission);", False)])
def test_a_self_victim_ends_the_serving_under_lifos_order_however_spelt(monkeypatch, pre, stops):
    """§3 growth "preempting if needed"; docs/language.md, rules chosen: a grower that is its own victim
    ends the iteration's serving under `preempt lifo` and the serving goes on under any other victim
    order. The order decides, not its spelling: a number beside `-admission` orders nothing, `0 -
    admission` is `-admission`, and a key after it orders nothing (no two candidates have one admission);
    a key that reads nothing of the candidate (a number, `now`, `used(kv)`) orders nothing, and keys that
    are all such leave every candidate tied, the tie going to the last admitted; they stop as lifo does.

    kv cap 5, serve by (-admission) (the last admitted first): s0 holds 3 and prefills 3, s1 holds 2
    and prefills 2, both growing, then decode 2. [0,1]: both prefills (5 tokens). At 1 s1 is served
    first; its growth to 3 does not fit (5 + 1) and the victim is s1 itself.
    Stops: s0 gets nothing, an iteration that only preempted lasts 1 ([1,2]). At 2 s1 is admitted again
    (3 + 2 ≤ 5), served first (prefill, no growth), and s0's growth to 4 preempts it again, after it was
    served (it gives its token back: stuck). s0 decodes [2,3], [3,4] (done at 4); s1 is admitted at 4,
    prefills [4,5], decodes [5,6], [6,7]: done at 7. 7 iterations: 2 prefill-only, 4 decode-only and
    the one that only preempted; 2 preemptions, 1 stuck.
    Goes on: s0's growth to 4 fits beside nothing else (3 + 1 ≤ 5): [1,2] s0 decodes, [2,3] s0 grows to
    5 (s1's 2 do not fit beside it) and is done at 3; s1 is admitted at 3, prefills [3,4], decodes [4,5],
    [5,6]: done at 6. 6 iterations: 2 prefill-only, 4 decode-only; 1 preemption."""
    r, o = run("""
pool kv { cap 5; PRE }
stage E : step { budget 10; cost 1; memory kv; serve by (-admission); }
workload { arrive batch(2); }
session {
  set p = serial == 0 ? 3 : 2;
  hold kv (p) { observe a = now; run E prefill (p) growing kv; run E decode (2) growing kv; }
  observe t = now;
}
run { horizon 100; }
""".replace("PRE", pre), monkeypatch)
    kv = pool(r, "kv")
    if stops:
        assert at(o["a"]) == [(0, 0.0), (1, 0.0), (1, 2.0), (1, 4.0)]
        assert at(o["t"]) == [(0, 4.0), (1, 7.0)]
        assert kinds(r) == (7, 2, 4, 0)
        assert (kv.preemptions, kv.stuck) == (2, 1)
    else:
        assert at(o["a"]) == [(0, 0.0), (1, 0.0), (1, 3.0)]
        assert at(o["t"]) == [(0, 3.0), (1, 6.0)]
        assert kinds(r) == (6, 2, 4, 0)
        assert (kv.preemptions, kv.stuck) == (1, 0)


def test_admission_with_a_fractional_budget_left(monkeypatch):
    """§3 admit via: the stage admits "while the iteration has budget left", and budget_left(S) is the
    budget left, a fraction too. budget 2.5; each hold takes budget_left(E) units of kv, prefills 2 and
    decodes 1. At 0 s0 sees 2.5 (used 2.5) and prefills 2; s1 sees 0.5 (used 3) and prefills 0.5; no
    budget is left for s2. At 1: s0's decode 1 (done at 2), s1 1.5 (prefill done at 2). At 2 (s0 gone):
    s1 decodes 1 (done at 3), s2 sees 1.5 (used 0.5 + 1.5) and prefills 1.5; at 3 its last 0.5 (done at
    4); it decodes [4,5]. 5 iterations: prefill-only [0,1] and [3,4], mixed [1,2] and [2,3], decode-only
    [4,5]; 2.5 + 2.5 + 2.5 + 0.5 + 1 = 9 tokens."""
    r, o = run("""
pool reqs { cap 4; admit via E; }
pool kv { cap 100; }
stage E : step { budget 2.5; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  hold reqs (1), kv (budget_left(E)) { observe u = used(kv); run E prefill (2); observe f = now;
                                       run E decode (1); }
  observe t = now;
}
run { horizon 100; }
""", monkeypatch)
    assert [(s, t, v) for s, t, v in o["u"]] == [(0, 0.0, 2.5), (1, 0.0, 3.0), (2, 2.0, 2.0)]
    assert at(o["f"]) == [(0, 1.0), (1, 2.0), (2, 4.0)]
    assert at(o["t"]) == [(0, 2.0), (1, 3.0), (2, 5.0)]
    assert kinds(r) == (5, 2, 1, 2)
    assert stage(r, "E", None).tokens == 9 / 5


@pytest.mark.parametrize("memory", ["kv", "x"])
def test_a_growth_on_a_pool_that_is_not_the_engines_memory(monkeypatch, memory):
    """§3 grow under preempt lifo: the victim is "the holder that is a resident of the step stage the pool
    is the memory of and was admitted last … a pool that is no engine's memory preempts its most recently
    admitted holder"; "The grower itself can be the victim", and an iteration that only preempted lasts
    its cost. x cap 4: s0 holds 2 and prefills 4 on E growing x; s1 holds 2 (admitted second) on the delay
    stage d for 5.
    E's memory kv: x is no engine's memory, s1 (away from E) is the victim; s0 grows to 4 and is done
    at 1; s1 is admitted again at 1 and runs d [1,6]. 1 prefill-only iteration.
    E's memory x: s1 is no resident, so s0 is the only candidate and preempts itself: iterations that
    only preempted at [0,1], …, [4,5], s0 admitted again at each next event (2 + 2 ≤ 4); at 5 s1's end
    (scheduled first) frees x, s0 grows to 4 and prefills [5,6]. 6 iterations, 1 prefill-only;
    5 preemptions, one session stuck."""
    r, o = run("""
pool x { cap 4; preempt lifo; }
pool kv { cap 100; }
stage E : step { budget 10; cost 1; memory MEM; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold x (2) { observe a = now; branch (serial == 0) { run E prefill (4) growing x; } else { run d (5); } }
  observe t = now;
}
run { horizon 100; }
""".replace("MEM", memory), monkeypatch)
    x = pool(r, "x")
    if memory == "kv":
        assert at(o["a"]) == [(0, 0.0), (1, 0.0), (1, 1.0)]
        assert at(o["t"]) == [(0, 1.0), (1, 6.0)]
        assert kinds(r) == (1, 1, 0, 0)
        assert (x.preemptions, x.stuck) == (1, 0)
    else:
        assert at(o["a"]) == [(0, 0.0), (1, 0.0)] + [(0, float(t)) for t in range(1, 6)]
        assert at(o["t"]) == [(1, 5.0), (0, 6.0)]
        assert kinds(r) == (6, 1, 0, 0)
        assert (x.preemptions, x.stuck) == (5, 1)


def test_a_newcomer_whose_growth_does_not_fit_preempts_itself(monkeypatch):
    """§3: the stage admits after the residents' tokens, "a newcomer is served like a resident" (its
    growth first), the victim under lifo is the resident admitted last (here the newcomer itself), and no
    admission follows a preemption. reqs admit via E; kv cap 6, lifo. s0 (admitted at 0, kv 2) prefills 2
    [0,1] and decodes 3, growing a unit a token. s1 joins at 0.5 (kv 2, prefill 4 growing).
    At 1: s0 grows to 3 and takes its token; s1 is admitted (5 used) and its growth to 4 (+2: 7 > 6)
    preempts s1 itself: [1,2] has s0's token alone. At 2 the same (s0 to 4, s1 admitted: 6, +2 > 6).
    At 3 s0 grows to 5 and s1's 2 do not fit (7): s0's last token, done at 4. At 4 s1 is admitted,
    prefills [4,5] and decodes [5,6]. 6 iterations: prefill-only [0,1], [4,5]; 2 preemptions, 1 stuck."""
    r, o = run("""
pool reqs { cap 4; admit via E; }
pool kv { cap 6; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (0.5); }
  set p = serial == 0 ? 2 : 4;
  hold reqs (1), kv (2) { observe a = now; run E prefill (p) growing kv; observe f = now;
                          run E decode (serial == 0 ? 3 : 1) growing kv; }
  observe t = now;
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 1.0), (1, 2.0), (1, 4.0)]
    assert at(o["f"]) == [(0, 1.0), (1, 5.0)]
    assert at(o["t"]) == [(0, 4.0), (1, 6.0)]
    assert kinds(r) == (6, 2, 4, 0)
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck) == (2, 1)


@pytest.mark.parametrize("first", ["P", "D"])
def test_a_job_moving_between_engines_at_an_instant_is_in_the_next_planning(monkeypatch, first):
    """§3 settle: an iteration starts on an idle step stage "provided no other event is pending at the same
    instant". s0 prefills 2 on P [0,1] then decodes 3 on D; s1 decodes 2 on D from 0. Both iterations
    end at 1; whichever ends first, D plans at 1 with s0 in it: [1,2] s0 and s1 (s1 done at 2), s0 at
    [2,3], [3,4]: done at 4 (not 5). D: 4 decode-only iterations, 5 jobs; P: 1 prefill-only. The same
    whichever stage is declared first."""
    decl = {"P": "stage P : step { budget 10; cost 1; }", "D": "stage D : step { budget 10; cost 1; }"}
    order = [decl[first], decl["D" if first == "P" else "P"]]
    r, o = run("\n".join(order) + """
workload { arrive batch(2); }
session { branch (serial == 0) { run P prefill (2); run D decode (3); } else { run D decode (2); }
          observe t = now; }
run { horizon 100; }
""", monkeypatch)
    assert at(o["t"]) == [(1, 2.0), (0, 4.0)]
    assert kinds(r, "D") == (4, 0, 4, 0) and kinds(r, "P") == (1, 1, 0, 0)
    assert stage(r, "D", None).batch == 5 / 4


@pytest.mark.parametrize("n, done, counts", [(2, [(0, 3.0), (1, 4.0)], (4, 1, 3, 0)),
                                             (3, [(2, 2.0), (0, 4.0), (1, 5.0)], (5, 2, 3, 0))])
def test_exclusive_prefill_passes_over_a_prefill_whose_growth_waits(monkeypatch, n, done, counts):
    """§3 serve exclusive prefill: "A resident prefill takes precedence", and with preempt none a growth
    that does not fit makes the session wait ("the session waits and resumes where it was"): a waiting
    grower gets nothing, so it is not the prefill served alone; the next resident prefill is, or the
    decode batch (docs/language.md, rules chosen). kv cap 6, preempt none. s0 holds 4 and decodes 3 from
    0; s1 joins at 0.5 (holds 1, prefills 4 growing: 5 + 3 > 6, it waits for room).
    Two sessions: [0,1] s0; at 1 s1's growth waits and s0 decodes [1,2], [2,3]; its end at 3 frees 4, s1
    grows to 4 and prefills alone [3,4]. 4 iterations: 1 prefill-only, 3 decode-only.
    Three: s2 also joins at 0.5 (holds 1, prefills 1: no growth). At 1 s1 waits, s2 is served alone
    [1,2] (done at 2); s0 decodes [2,3], [3,4] (done at 4); s1 prefills [4,5]. 2 prefill-only, 3
    decode-only. (Before, the waiting prefill was chosen and got nothing: no iteration and no event, the
    run stopped serving at 1.)"""
    _r, o = run("""
pool kv { cap 6; preempt none; }
stage E : step { budget 10; cost 1; memory kv; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(N); }
session {
  branch (serial == 0) { hold kv (4) { run E decode (3); } }
  else { run d (0.5); hold kv (1) { run E prefill (serial == 1 ? 4 : 1) growing kv; } }
  observe t = now;
}
run { horizon 100; }
""".replace("N)", f"{n})"), monkeypatch)
    assert at(o["t"]) == done
    assert kinds(_r) == counts


def test_exclusive_prefill_a_newcomer_whose_growth_waits_leaves_the_decodes_their_tokens(monkeypatch):
    """§3 serve exclusive prefill: a waiting prefill that fits displaces the tentative decodes, and
    "Once a prefill is selected, no further waiting request is admitted". reqs admit via E, kv cap 6,
    preempt none. s0 (kv 4) decodes 3 from 0; s1 (kv 1) is admitted at 1 (5 used) and its prefill of 4
    needs 3 more: its growth waits. A waiting grower gets nothing, so the decodes keep their tokens: s0
    decodes [1,2], [2,3] and its end frees the room; s1 grows and prefills alone [3,4]. 4 iterations:
    3 decode-only, 1 prefill-only."""
    r, o = run("""
pool reqs { cap 4; admit via E; }
pool kv { cap 6; preempt none; }
stage E : step { budget 10; cost 1; memory kv; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) { run d (0.5); }
  hold reqs (1), kv (serial == 0 ? 4 : 1) { observe a = now;
    branch (serial == 0) { run E decode (3); } else { run E prefill (4) growing kv; } }
  observe t = now;
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 1.0)]
    assert at(o["t"]) == [(0, 3.0), (1, 4.0)]
    assert kinds(r) == (4, 1, 3, 0)
