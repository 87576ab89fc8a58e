"""A conformance audit of language.txt §3 (and the in-scope additions of pool-reference.txt and
program-reference.txt) against the simulator: small deterministic programs whose outcome is worked out by
hand from the spec (the comment above each assertion), on the rules test_conformance_hand.py,
test_conformance_more.py, test_conformance_sem.py and test_conformance_pd.py leave out. Each program runs
on the tier serQ picks and on the general engine (SERQ_SIM_TIER=general): `conform.run` also requires the
two reports to be byte-identical. A case the implementation gets wrong is marked xfail (strict) with the
defect in its reason, and checks the hand-computed outcome on each tier separately (`each_tier`), so that it
flips when the defect is fixed."""

from __future__ import annotations

import pytest
import serq_sim
from conform import _run, pool, run


def times(samples):
    return [t for _, t, _ in samples]


def each_tier(src: str, monkeypatch):
    """``{tier: {observe: [(session, time, value), …]}}`` for the picked tier ("") and the general engine,
    without requiring them to agree (a defect may be in one of them)."""
    out = {}
    for tier in ("", "general"):
        r = _run(src, monkeypatch, tier)
        obs = {}
        for name, o in r.observes.items():
            rows = zip(o.sessions.tolist(), o.times.tolist(), o.values.tolist())
            obs[name] = sorted(rows, key=lambda x: (x[1], x[0]))
        out[tier] = obs
    return out


# --- the step engine ----------------------------------------------------------------------------------------


def test_growth_comes_before_the_tokens_and_observables_read_mid_iteration(monkeypatch):
    # §3 step: "a growing job first grows its hold to the position it will reach (block by block …)"; "its
    # tokens are applied when it ends"; settle: an iteration starts only when no other event is pending at
    # that instant. block 4, cost 1 + 0.5 decoders. s0, s1 hold 2 (-> 4 each, used 8), prefill 2 on [0, 1];
    # then decode 6 and 7 at 2 s an iteration: [1,3] pos 3, [3,5] pos 4, [5,7] pos 5 (both grow to 8:
    # used 16), … s0's 6th token ends [11,13]; s1's 7th alone costs 1.5: 14.5. At 13 s0's release leaves 8
    # (s1), at s1's [13, 14.5] iteration s1 grows pos 8 -> 9: 12. The observer reads every 1.25 s: at 5.0
    # the iteration that ended at 5 has not started its successor (the observer's event is pending there):
    # busy 0 and used 8; work is the residents' tokens left (13 until the first decode iteration ends at 3).
    _, o = run("""
pool kv { cap 100; block 4; }
stage E : step { budget 10; cost 1 + 0.5 * decoders; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (2) { run E prefill (2) growing kv; run E decode (6 + serial) growing kv; } cache (100);
    observe done = now;
  } else {
    loop { run d (1.25); observe u = used(kv); observe w = work(E); observe b = busy(E);
           branch (now > 14) { end; } }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["done"] == [(0, 13.0, 13.0), (1, 14.5, 14.5)]
    assert [v for _, _, v in o["u"]] == [8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 12, 0]
    assert [v for _, _, v in o["w"]] == [13, 13, 11, 9, 9, 7, 7, 5, 3, 3, 1, 0]
    assert [v for _, _, v in o["b"]] == [2, 2, 2, 0, 2, 2, 2, 2, 2, 2, 1, 0]


def test_admission_happens_only_while_the_iteration_has_budget_left(monkeypatch):
    # §3 admit via: the queue is served "after the residents have taken their tokens, while the iteration
    # has budget left". Budget 2: s0 (admitted at 0) prefills 5 as 2, 2, 1; s1 has a free slot all along
    # but is admitted only at 2, the first iteration the resident leaves budget in, reading budget_left 1;
    # it prefills its 1 there: both done at 3.
    _, o = run("""
pool reqs { cap 10; admit via E; }
stage E : step { budget 2; cost 1; }
workload { arrive batch(2); }
session {
  hold reqs (1) { observe a = now; observe b = budget_left(E); run E prefill (serial == 0 ? 5 : 1); }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 2.0, 2.0)]
    assert o["b"] == [(0, 0.0, 2.0), (1, 2.0, 1.0)]
    assert o["done"] == [(0, 3.0, 3.0), (1, 3.0, 3.0)]


def test_a_budget_of_zero_schedules_no_iteration_until_it_changes(monkeypatch):
    # §3 step: "An iteration that schedules no token is not an iteration"; amounts (docs/language.md): "0
    # schedules nothing". budget (residents >= 2 ? 10 : 0): s0 is alone on E from 0 (budget 0: nothing, no
    # iteration, no time passes on E); s1 joins at 1.5, the budget is 10: both prefill their 1 on
    # [1.5, 2.5].
    r, o = run("""
stage E : step { budget residents >= 2 ? 10 : 0; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session { run d (serial * 1.5); run E prefill (1); observe done = now; }
run { horizon 100; }
""", monkeypatch)
    assert o["done"] == [(0, 2.5, 2.5), (1, 2.5, 2.5)]
    assert r.stage("E").iterations == 1


@pytest.mark.parametrize("serve, done", [
    # §3 step serve: budget 2; s0 decodes 3, s1 prefills 4. Admission order (the default): s0 1 token, s1 1
    # each iteration: s0 done at 3, s1's 4th token at 4.
    ("", [(0, 3.0), (1, 4.0)]),
    # serve by (decoding ? 1 : 0), prefill first: s1 takes the whole budget at [0,1], [1,2] (done at 2),
    # then s0 decodes alone: 3, 4, 5.
    ("serve by (decoding ? 1 : 0);", [(1, 2.0), (0, 5.0)]),
])
def test_serve_by_prefill_first(monkeypatch, serve, done):
    _, o = run(f"""
stage E : step {{ budget 2; cost 1; {serve} }}
workload {{ arrive batch(2); }}
session {{
  branch (serial == 0) {{ run E decode (3); }} else {{ run E prefill (4); }}
  observe done = now;
}}
run {{ horizon 100; }}
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["done"]] == done


def test_residents_are_served_in_admission_order_not_in_the_order_they_joined(monkeypatch):
    # §3 step: residents in admission order (vLLM's running list); Ties: "A step stage's residents: the
    # serve by keys, then admission order". Budget 2. s0 is admitted to reqs at 0 but reaches E at 1; s1 is
    # admitted at 0.5 and prefills 2 of its 4 on [0.5, 1.5]. At 1.5 s0 (admitted first) goes first: 2
    # tokens, done at 2.5; s1 gets its last 2 on [2.5, 3.5].
    _, o = run("""
pool reqs { cap 10; }
stage E : step { budget 2; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold reqs (1) { run d (1); run E prefill (2); } }
  else { run d (0.5); hold reqs (1) { run E prefill (4); } }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["done"] == [(0, 2.5, 2.5), (1, 3.5, 3.5)]


def test_a_chunk_that_reads_the_residents(monkeypatch):
    # §2 chunk reads residents (the residents before the iteration). chunk (residents > 1 ? 1 : 8), budget
    # 10. s0 prefills 12: alone at [0,1] it gets 8. s1 (prefill 2) joins at 0.5: at [1,2] and [2,3] two
    # residents, 1 token each (s1 done at 3); at [3,4] s0 alone again takes its last 2.
    _, o = run("""
stage E : step { budget 10; chunk residents > 1 ? 1 : 8; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session { run d (serial * 0.5); run E prefill (serial == 0 ? 12 : 2); observe done = now; }
run { horizon 100; }
""", monkeypatch)
    assert o["done"] == [(1, 3.0, 3.0), (0, 4.0, 4.0)]


def test_a_hold_whose_first_pool_is_admitted_at_settle_time_does_not_wait_for_the_engine(monkeypatch):
    # §3 Ties: "a hold on several pools waits in its first pool's [queue]"; §3: "A pool marked admit via S
    # is not admitted at settle time". s1's hold names kv (no engine's) first, so it waits in kv's queue and
    # is admitted at the settle at 0, before the engine's first iteration; s0 (reqs first) is admitted by
    # E at 0 after the residents (s1) have taken their token. Budget 2: [0,1] s1 1 (done), s0 1; then 2, 2.
    _, o = run("""
pool reqs { cap 10; admit via E; }
pool kv { cap 100; }
stage E : step { budget 2; cost 1; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold reqs (1) { observe a = now; run E prefill (5); } }
  else { hold kv (1), reqs (1) { observe a = now; run E prefill (1); } }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["done"] == [(1, 1.0, 1.0), (0, 3.0, 3.0)]


def test_a_decode_preemption_sets_computed_and_caches_the_position(monkeypatch):
    # §3 grow / preempt lifo on an engine: the victim "is preempted: its job leaves its stage, its hold is
    # released with its computed prefix cached, and it re-enters the head of the pool's queue"; the
    # re-executed hold finds computed = the position; with cache, it consumes its own prefix (cached).
    # cap 10, block 2; s0 and s1 hold 4 (used 8) and prefill 4 on [0,1].
    #   at 1: s0's decode grows to 6 (10); s1's to 6 does not fit: s1 (last admitted) is its own victim at
    #         position 4: computed 4, caches 4 (used 6 + cached 4 = 10). No token for s1.
    #   at 2 (the next event): s1 re-admitted, consumes its 4 (cached 4), prefill (4 - 4) = 0 completes at
    #         once, its decode starts at position 4: the growth to 6 again preempts s1 (stuck: no progress).
    #   at 3: s1 re-admitted (cached 4); s0 (pos 6) grows to 8: 8 + 4 > 10: the victim is s1 again, whose
    #         re-cached 4 must fit beside s0's 8: one block of it is evicted (2 left).
    #   at 4: s1's 4 do not fit beside s0's 8. s0's 4th decode token ends at 5: it releases, caching 8.
    #   at 5: s1 admitted, consumes its 2 (cached 2, computed still 4): prefill 2 on [5,6], then decode 6 on
    #         [6,12]; its allocation and growth evict s0's entry block by block (2 at admission, then at
    #         positions 5, 7, 9): all 8 of it.
    r, o = run("""
pool kv { cap 10; block 2; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (4) {
    observe a = now; observe k = cached; observe p = computed;
    run E prefill (4 - cached) growing kv;
    run E decode (serial == 0 ? 4 : 6) growing kv;
  } cache (inf);
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.0, 2.0), (1, 3.0, 3.0), (1, 5.0, 5.0)]
    assert [v for s, _, v in o["k"] if s == 1] == [0.0, 4.0, 4.0, 2.0]
    assert [v for s, _, v in o["p"] if s == 1] == [0.0, 4.0, 4.0, 4.0]
    assert o["done"] == [(0, 5.0, 5.0), (1, 12.0, 12.0)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, kv.admissions) == (3, 1, 5)
    assert (kv.evicted_entries, kv.evicted_units) == (1, 10.0)


@pytest.mark.parametrize("key, a, done, preemptions, stuck", [
    # pool-reference `preempt by`: keys read `decoding` (1 for a decoding resident) at the Victim moment;
    # docs/language.md: a grower that preempts itself stops the iteration's serving under `preempt lifo`
    # only (vLLM's FCFS `break`); under keys the residents after it are served (vLLM 0.33's priority
    # policy, `continue`). cap 8, chunk 1, budget 10. s0 holds 4 and prefills 6 (a token an iteration);
    # s1 holds 2, prefills 2 ([0,2]) and decodes 5 (grows 3 at [2,3], 4 at [3,4]). At 4 s0's growth to 5
    # does not fit (4 + 5 > 8). by (decoding): s0 (0) is the victim, itself (released: used 4); s1 is
    # still served: grows to 5 and decodes [4,5]; nothing is admitted in a step that preempted. At 5 s0,
    # at the head, needs 4 beside s1's 6: no; s1 decodes [5,6], [6,7] and ends at 7, and s0 is admitted
    # then, prefills 6 alone [7,13]. One preemption, not stuck.
    ("decoding", [(0, 0.0), (1, 0.0), (0, 7.0)], [(1, 7.0), (0, 13.0)], 1, 0),
    # by (-decoding): s1 (-1) is the victim at position 4; s0 grows and ends at 6; s1 is re-admitted at 5
    # (5 + 2 <= 8), prefills 2 again [5,7] and decodes 5: 12.
    ("-decoding", [(0, 0.0), (1, 0.0), (1, 5.0)], [(0, 6.0), (1, 12.0)], 1, 0),
])
def test_preempt_by_decoding(monkeypatch, key, a, done, preemptions, stuck):
    r, o = run(f"""
pool kv {{ cap 8; preempt by ({key}); }}
stage E : step {{ budget 10; chunk 1; cost 1; memory kv; }}
workload {{ arrive batch(2); }}
session {{
  branch (serial == 0) {{ hold kv (4) {{ observe a = now; run E prefill (6) growing kv; }} }}
  else {{ hold kv (2) {{ observe a = now; run E prefill (2) growing kv; run E decode (5) growing kv; }} }}
  observe done = now;
}}
run {{ horizon 100; }}
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["a"]] == a
    assert [(s, t) for s, t, _ in o["done"]] == done
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck) == (preemptions, stuck)


def test_a_waiting_head_is_admitted_at_the_first_iteration_after_an_outside_release(monkeypatch):
    # §3 admit via: the head is tried at the start of each iteration. cap 30: s0, s1 hold 10 each (no
    # growth) and decode 8 after a prefill of 1 (iterations of cost 1 at 0, 1, 2, …, ending at 9); s2 holds
    # 8 on a delay stage until 3.5; s3 joins at 0.5 wanting 4 (28 + 4 > 30: it waits). The release at 3.5
    # falls inside [3,4]; s3 is admitted at 4 with the budget the two decoders leave (4 - 2), prefills 3 as
    # 2 + 1 (to 6) and decodes 2: 8. E: 9 iterations; present 2 on [0,9], 3 on [4,8]: 22 / 100.
    r, o = run("""
pool reqs { cap 10; admit via E; }
pool kv { cap 30; }
stage E : step { budget 4; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 2) {
    hold reqs (1), kv (10) { run E prefill (1) growing kv; run E decode (8) growing kv; }
  } else { branch (serial == 2) {
    hold kv (8) { run d (3.5); }
  } else {
    run d (0.5);
    hold reqs (1), kv (4) { observe a = now; observe b = budget_left(E); run E prefill (3); observe p = now;
                            run E decode (2); }
  } }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert (o["a"], o["b"], o["p"]) == ([(3, 4.0, 4.0)], [(3, 4.0, 2.0)], [(3, 6.0, 6.0)])
    assert o["done"] == [(2, 3.5, 3.5), (3, 8.0, 8.0), (0, 9.0, 9.0), (1, 9.0, 9.0)]
    e = r.stage("E")
    assert (e.iterations, e.present, e.completions) == (9, 0.22, 6)


def test_a_prefill_beside_decoders_and_an_admission_once_budget_is_left(monkeypatch):
    # §3 step: budget 3. s0, s1 decode 6; s2 prefills 5 with the 1 token they leave ([0,5]), then decodes 1;
    # s3 (from 0.5) finds no budget left until the three decode alone at [5,6] (3 tokens: none left either);
    # at 6 it is admitted with budget_left 3 and prefills 3: 7. The stage's figures: 7 iterations, 5 mixed,
    # 1 decode-only, 1 prefill-only, 3 tokens each (token utilisation 1); batch 19 / 7.
    r, o = run("""
pool reqs { cap 10; admit via E; }
stage E : step { budget 3; cost 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 2) { hold reqs (1) { run E decode (6); } }
  else { branch (serial == 2) { hold reqs (1) { run E prefill (5); run E decode (1); } }
  else { run d (0.5); hold reqs (1) { observe a = now; observe b = budget_left(E); run E prefill (3); } } }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert (o["a"], o["b"]) == ([(3, 6.0, 6.0)], [(3, 6.0, 3.0)])
    assert o["done"] == [(0, 6.0, 6.0), (1, 6.0, 6.0), (2, 6.0, 6.0), (3, 7.0, 7.0)]
    e = r.stage("E")
    assert (e.iterations, e.mixed, e.decode_only, e.prefill_only) == (7, 5, 1, 1)
    assert (e.tokens, e.token_utilisation, e.batch, e.completions) == (3.0, 1.0, 19 / 7, 5)


BUDGET_BELOW_DECODERS = """
stage E : step { budget B; cost 1; CHUNK }
stage d : delay;
workload { arrive batch(3); }
session { run d (serial * STAGGER); run E decode (W); observe done = now; }
run { horizon 100; }
"""


@pytest.mark.parametrize("b, w, stagger, chunk, done", [
    # §3 step: "One token to a decoding job, up to chunk to a prefilling one, until the budget is spent",
    # in admission order (here arrival order: no hold). Budget 1, three decoders of 2 tokens: s0 takes the
    # token of [0,1] and [1,2], s1 of [2,3], [3,4], s2 of [4,5], [5,6]. (Observed on the default tier: all
    # three done at 2.)
    (1, 2, 0, "", [2.0, 4.0, 6.0]),
    # budget 2, three decoders of 3: s0, s1 at [0,3], s2 alone on [3,6]. (Observed: all at 3.)
    (2, 3, 0, "", [3.0, 3.0, 6.0]),
    # the same with a chunk cap (decodes take one token anyway). (Observed: all at 3.)
    (2, 3, 0, "chunk 1;", [3.0, 3.0, 6.0]),
    # budget 1, decoders joining at 0, 0.1, 0.2: s0 [0,2], s1 [2,4], s2 [4,6]. (Observed: 2, 3, 3.)
    (1, 2, 0.1, "", [2.0, 4.0, 6.0]),
])
def test_decoders_share_a_budget_below_their_count_in_admission_order(monkeypatch, b, w, stagger, chunk, done):
    src = (BUDGET_BELOW_DECODERS.replace("B;", f"{b};").replace("(W)", f"({w})")
           .replace("STAGGER", str(stagger)).replace("CHUNK", chunk))
    for tier, o in each_tier(src, monkeypatch).items():
        assert [(s, t) for s, t, _ in o["done"]] == list(enumerate(done)), tier


def test_decoders_in_holds_share_a_budget_below_their_count(monkeypatch):
    # The same rule with the decoders inside holds on a pool admitted at settle time (no memory, no
    # growth): budget 1, three decoders of 2: done at 2, 4, 6 (observed on the default tier: all at 2).
    # With `admit via` or a growing decode on the stage's memory the default tier gets it right.
    src = """
pool kv { cap 100; }
stage E : step { budget 1; cost 1; }
workload { arrive batch(3); }
session { hold kv (1) { run E decode (2); } observe done = now; }
run { horizon 100; }
"""
    for tier, o in each_tier(src, monkeypatch).items():
        assert o["done"] == [(0, 2.0, 2.0), (1, 4.0, 4.0), (2, 6.0, 6.0)], tier


# --- pools --------------------------------------------------------------------------------------------------

EVICT_FOR_ALLOCATION = """
pool kv { cap 10; block 2; HELD }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6);
    run d (1.5); observe c0 = cachedin(kv);
    run d (1); observe c0 = cachedin(kv);
  } else {
    run d (2);
    hold kv (2) reserve (8) { observe u = used(kv); run d (1); grow kv (3); observe u = used(kv); run d (1); }
  }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("held", ["", "reserve held;"])
def test_cached_prefixes_are_evicted_for_allocations_not_for_reservations(monkeypatch, held):
    # pool-reference `reserve held`: "Cached prefixes are evicted when units are allocated, not when
    # reserved"; §3 Pools: "cached prefixes never block", entries are evicted "until allocations and cache
    # fit", per block from the tail. cap 10, block 2: s0 caches 6 at 1. s1 at 2 holds 2 reserve 8: room
    # (2 + 8 <= 10, the cache does not block); 2 used + 6 cached fit: nothing evicted (s0 reads 6 at 2.5).
    # At 3 s1 grows 3 (-> 4, used 6): 6 + 6 > 10: one block of s0's entry goes (4 left at 3.5).
    # used: 6 on [0,1), 2 on [2,3), 6 on [3,4): 14 / 100; cached 6 on [1,3), 4 on [3,100]: 400 / 100.
    r, o = run(EVICT_FOR_ALLOCATION.replace("HELD", held), monkeypatch)
    assert o["c0"] == [(0, 2.5, 6.0), (0, 3.5, 4.0)]
    assert o["u"] == [(1, 2.0, 2.0), (1, 3.0, 6.0)]
    kv = pool(r, "kv")
    assert (kv.used, kv.cached, kv.evicted_entries, kv.evicted_units) == (0.14, 4.0, 0, 2.0)


EVICT_TIES = """
pool kv { cap 10; ORDER }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (4) { run d (0.5); run d (0.5); } cache (4); run d (2); observe c = cachedin(kv); }
  else { branch (serial == 1) { hold kv (4) { run d (1); } cache (4); run d (2); observe c = cachedin(kv); }
  else { run d (2); hold kv (4) { observe a = now; run d (1); } } }
}
run { horizon 100; }
"""


@pytest.mark.parametrize("order, c0, c1", [
    # §3 Ties: "Events at one instant: the order they were scheduled"; eviction: the keys or the release
    # time (lru), "then the order the entries were released". s1's run ending at 1 was scheduled at 0, s0's
    # at 0.5: s1 releases first at 1, then s0, both at time 1. At 2 s2's 4 need one entry to go (4 + 8 >
    # 10): lru ties on the time, so the first released, s1's; by (0) likewise; by (serial) s0's.
    ("evict lru;", 4.0, 0.0),
    ("evict by (0);", 4.0, 0.0),
    ("evict by (serial);", 0.0, 4.0),
])
def test_eviction_ties_go_to_the_release_order_within_an_instant(monkeypatch, order, c0, c1):
    _, o = run(EVICT_TIES.replace("ORDER", order), monkeypatch)
    assert o["a"] == [(2, 2.0, 2.0)]
    assert o["c"] == [(0, 3.0, c0), (1, 3.0, c1)]


def test_a_preemption_ends_the_victims_reservation(monkeypatch):
    # pool-reference `reserve held`: "Reservations end with the hold's scope, release or preemption"; `preempt
    # by (serial)`: the least key loses. cap 4: s0 holds 1 reserve 3 (u = 2); s1 at 0.1: 1 + 2 + 1 <= 4. At 1
    # s1 grows 1: 2 + 2 + 1 > 4: the victim is s0 (key 0), its reservation goes with it: s1's growth fits
    # (2). s0 re-enters at the head and needs 3: 2 + 3 > 4 until s1 ends at 4. Mean wait (0 + 0 + 3) / 3.
    r, o = run("""
pool m { cap 4; reserve held; preempt by (serial); }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (1) reserve (3) { observe a0 = now; run d (2); } }
  else { run d (0.1); hold m (1) { observe a1 = now; run d (0.9); grow m (1); observe g = now; run d (3); } }
}
run { horizon 100; }
""", monkeypatch)
    assert times(o["a0"]) == [0.0, 4.0] and times(o["a1"]) == [0.1] and times(o["g"]) == [1.0]
    m = pool(r, "m")
    assert (m.preemptions, m.admissions, m.wait) == (1, 3, 1.0)


@pytest.mark.parametrize("key, a", [
    # pool-reference `queue`: "Only the selected hold is tried: failure to fit blocks the rest". cap 3;
    # s0 holds 2 until 5; s1 (2 units) joins at 0.1, s2 (1 unit) at 0.2. by (-u): s1 is selected and does
    # not fit (2 + 2 > 3): s2 (which would fit) waits too; both at 5.
    ("-u", [(0, 0.0), (1, 5.0), (2, 5.0)]),
    # by (u): s2 is selected at 0.2 and fits; s1 at 5.
    ("u", [(0, 0.0), (2, 0.2), (1, 5.0)]),
])
def test_queue_by_tries_only_the_selected_hold(monkeypatch, key, a):
    _, o = run(f"""
pool m {{ cap 3; queue by ({key}); }}
stage d : delay;
workload {{ arrive batch(3); }}
session {{
  set u = serial == 2 ? 1 : 2;
  run d (serial * 0.1);
  hold m (u) {{ observe a = now; run d (serial == 0 ? 5 : 1); }}
}}
run {{ horizon 100; }}
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["a"]] == a


def test_units_are_evaluated_when_the_session_is_admitted(monkeypatch):
    # §3 Pools: "The unit expressions are evaluated when the session is admitted". s1 joins at 0.5 with
    # units 1 + now; s0 holds all 5 until 2; s1 is admitted at 2 with 3 units.
    _, o = run("""
pool m { cap 5; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (5) { run d (2); } }
  else { run d (0.5); hold m (1 + now) { observe u = used(m); run d (1); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["u"] == [(1, 2.0, 3.0)]


def test_a_hold_on_several_pools_is_queued_at_its_first_pool_only(monkeypatch):
    # §3 Ties: "a hold on several pools waits in its first pool's [queue]". s1's hold (A 1, B 1) waits from
    # 0.5 for B (held by s0 until 2): at 1 queued(A) is 1, queued(B) 0, holders(A) 0 (nothing is allocated
    # until every pool has room); admitted at 2.
    _, o = run("""
pool A { cap 5; }
pool B { cap 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold B (1) { run d (2); } }
  else { branch (serial == 1) { run d (0.5); hold A (1), B (1) { observe a = now; run d (1); } }
  else { run d (1); observe qa = queued(A); observe qb = queued(B); observe ha = holders(A); } }
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(1, 2.0, 2.0)]
    assert (o["qa"], o["qb"], o["ha"]) == ([(2, 1.0, 1.0)], [(2, 1.0, 0.0)], [(2, 1.0, 0.0)])


# --- choose, families, aggregates ---------------------------------------------------------------------------


def test_choose_among_a_computed_count_and_holds_on_computed_members(monkeypatch):
    # §2 choose NAME in expr by (keys): argmin over 0 .. n-1; here n = serial + 1 and the key -j, so j =
    # serial. Each holds m[j] (j + 1) and m[(j + 1) % 3] (1): at 1 (after all admissions at 0) used is
    # m0 1 + 1 (s2's second), m1 1 (s0's) + 2, m2 1 (s1's) + 3: sum 9 for s0's read; then s0 releases
    # (7 at s1's read), s1 releases (4 at s2's). holders(m[1]): 2, then 1, then 0.
    _, o = run("""
pool m[3] { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  choose j in serial + 1 by (-j);
  observe jj = j;
  hold m[j] (j + 1), m[(j + 1) % 3] (1) { run d (1); observe s = sum k in 3 (used(m[k])); observe h = holders(m[1]); }
}
run { horizon 100; }
""", monkeypatch)
    assert [v for _, _, v in o["jj"]] == [0.0, 1.0, 2.0]
    assert [v for _, _, v in o["s"]] == [9.0, 7.0, 4.0]
    assert [v for _, _, v in o["h"]] == [2.0, 1.0, 0.0]


# --- the step engine: lazy planning ------------------------------------------------------------------------


def test_the_cost_reads_kv_decode_after_each_iterations_growth(monkeypatch):
    # §2 cost context kv_decode; docs/language.md: in the cost, the decoding jobs the iteration gives a token
    # and their allocations after its growth. block 4: s0, s1 hold 2 (4 each), prefill 2 ([0,1], cost 1).
    # The k-th decode token reaches position 2 + k, so each allocation is 4 for k = 1, 2, 8 for k = 3..6, 12
    # for k = 7..10: iterations of 1.08 (x2), 1.16 (x4), 1.24 (x4): both done at 1 + 2.16 + 4.64 + 4.96.
    _, o = run("""
pool kv { cap 100; block 4; }
stage E : step { budget 10; cost 1 + 0.01 * kv_decode; memory kv; }
workload { arrive batch(2); }
session { hold kv (2) { run E prefill (2) growing kv; run E decode (10) growing kv; } observe done = now; }
run { horizon 100; }
""", monkeypatch)
    t = 1 + 2 * 1.08 + 4 * 1.16 + 4 * 1.24
    assert [s for s, _, _ in o["done"]] == [0, 1]
    assert times(o["done"]) == pytest.approx([t, t], rel=1e-12)


def test_a_holder_off_the_engine_preempts_a_resident_mid_iteration(monkeypatch):
    # pool-reference `preempt`: candidates are the holders resident in the stage whose memory the pool is
    # (s2, on a delay stage, is none); docs/simulator.md: a victim already served in the planned iteration
    # gives its tokens back (its position is restored). cap 14, block 1, lifo. s0, s1 hold 2, prefill 2
    # ([0,1]), decode 4; s2 holds 2 and grows 5 at 2.5, inside [2,3] (s0, s1 at 4 each, planned to position
    # 4): 10 + 5 > 14, the victim is s1 (last admitted resident) at its position before the iteration, 3
    # (computed 3). s2's growth fits (11 used); s1 re-enters kv's queue (admitted at settle time) and fits at
    # once (13): admitted at 2.5, prefills 2 at [3,4]. At 4 s0's growth to 6 (6 + 7 + 2 > 14) preempts s1
    # again (position 2, not past 3: stuck). s0 ends at 5; s1 is admitted at 5 (computed 2), prefills [5,6]
    # and decodes [6,10]; s2 ends at 12.5. used: 6, 8, 10 on [0,1), [1,2), [2,2.5); 13, 14, 13 on [2.5,3),
    # [3,4), [4,5); 9 .. 13 on [5,10) a unit a second; 7 on [10,12.5): 125 / 100.
    r, o = run("""
pool kv { cap 14; preempt lifo; }
stage E : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv (2) { observe a = now; observe p = computed; run E prefill (2) growing kv; run E decode (4) growing kv; }
  } else {
    hold kv (2) { run d (2.5); grow kv (5); observe g = now; observe u = used(kv); run d (10); }
  }
  observe done = now;
}
run { horizon 100; }
""", monkeypatch)
    assert o["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.5, 2.5), (1, 5.0, 5.0)]
    assert [v for s, _, v in o["p"] if s == 1] == [0.0, 3.0, 2.0]
    assert (o["g"], o["u"]) == ([(2, 2.5, 2.5)], [(2, 2.5, 11.0)])
    assert o["done"] == [(0, 5.0, 5.0), (1, 10.0, 10.0), (2, 12.5, 12.5)]
    kv = pool(r, "kv")
    assert (kv.preemptions, kv.stuck, kv.admissions, kv.used, kv.holders, kv.wait) == (2, 1, 5, 1.25, 0.265, 0.2)


# --- workload, turns, a finite run --------------------------------------------------------------------------


def test_turns_think_times_and_end_in_a_loop_of_a_finite_run(monkeypatch):
    # §3 Workload: init runs at arrival, turn at every turn statement; §2 end; program-reference `run`:
    # arrivals N ends the run when the N-th session has arrived and every session ended; time averages over
    # end - warmup; docs/simulator.md: `ended` and `turns` count after warm-up. renewal(10): s0 at 10, s1 at
    # 20. k = 100 serial, then + n at the n-th turn: s0 turns at 10 (k 1), 13 (3), 16 (6); s1 at 20 (101),
    # 23 (103), 26 (106); each turn serves 2 and thinks 1, the third ends (the observe after end never
    # runs): s0 at 18, s1 at 28 = end. Warm-up 12: the samples from 13 on, 5 turns, 2 ended; live: s0 on
    # [12,18], s1 on [20,28]: 14 / 16.
    r, o = run("""
stage svc : fifo;
stage think : delay;
workload {
  arrive renewal(10);
  init { set k = serial * 100; set n = 0; }
  turn { set n = n + 1; set k = k + n; }
}
session {
  loop {
    turn;
    observe kk = k;
    run svc (2);
    branch (turn_no >= 3) { end; observe never = 1; }
    run think (1);
  }
}
run { horizon 100; warmup 12; arrivals 2; }
""", monkeypatch)
    assert o["kk"] == [(0, 13.0, 3.0), (0, 16.0, 6.0), (1, 20.0, 101.0), (1, 23.0, 103.0), (1, 26.0, 106.0)]
    assert o["never"] == []
    res = r.result
    assert (res.arrivals, res.ended, res.turns, res.end, res.mean_live) == (2, 2, 5, 28.0, 0.875)


# --- run-time errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("decls, stmt, first", [
    # §3 Branching: a computed guard that is not 0 or 1 "is refused when it is evaluated".
    ("", "set g = serial + 1; branch (g) { run d (1); }",
     "<source>:4:42: error: at t=1, session 1: branch guard is 2, not 0 or 1: a guard is a test; write the "
     "comparison meant (`n > 0`, `x != 0`)"),
    # docs/language.md "Amounts are not negative": a computed negative work is an error at the run.
    ("", "run d (serial - 1);", "<source>:4:22: error: at t=1, session 0: the run's work is negative (-1)"),
    # docs/language.md: a computed choose count outside 1 .. 100 000 is an error at the choose.
    ("", "choose j in serial by (0);",
     "<source>:4:34: error: at t=1, session 0: choose j: the count of candidates is 0, not a whole number from 1 "
     "to 100000"),
    # a computed draw outside its domain is an error at the draw.
    ("", "set x = ~uniform(serial, 0);",
     "<source>:4:30: error: at t=1, session 1: ~uniform(1, 0): the low bound is above the high bound"),
    # docs/simulator.md: a hold preempted and re-executed 10 000 times at one instant is an error at the hold
    # (session 0's growth to 5 is beyond the cap 4: language.txt §3 re-executes it, and it grows again at once)
    ("pool m { cap 4; preempt lifo; }", "hold m (2) { grow m (3); }",
     "<source>:4:22: error: at t=1, session 0: hold: preempted and re-executed 10000 times at one instant without "
     "simulated time passing (its body makes the pool preempt it again before any time passes, as a grow beyond "
     "what the pool can ever give does, or one that the other holders leave no room for, where the pool preempts "
     "the grower itself)"),
    # (session 1's growth to 3 fits the cap but not beside session 0's 2: the same guard)
    ("pool m { cap 4; preempt lifo; }", "hold m (2) { grow m (serial); run d (1); }",
     "<source>:4:22: error: at t=1, session 1: hold: preempted and re-executed 10000 times at one instant without "
     "simulated time passing (its body makes the pool preempt it again before any time passes, as a grow beyond "
     "what the pool can ever give does, or one that the other holders leave no room for, where the pool preempts "
     "the grower itself)"),
    # a step stage's computed negative cost names the stage, the time and its batch's sessions, at the cost.
    ("stage E : step { budget 10; cost 1 - residents; }", "run E prefill (3);",
     "<source>:1:34: error: at t=1: stage E: the iteration's cost is negative (-1) "
     "(its batch: tokens 6, decoders 0, prefilled 6, residents 2, kv_decode 0, kv_prefill 0; sessions 0, 1)"),
])
def test_run_time_errors_name_the_statement_the_time_and_the_session(monkeypatch, tier, decls, stmt, first):
    src = f"{decls}\nstage d : delay;\nworkload {{ arrive batch(2); }}\nsession {{ run d (1); {stmt} }}\nrun {{ horizon 10; }}\n"
    with pytest.raises(serq_sim.SimError) as e:
        _run(src, monkeypatch, tier)
    assert str(e.value).splitlines()[0] == first
    assert "Traceback" not in str(e.value)


# --- the step engine: lazy planning, defects ----------------------------------------------------------------

POSITION_TIE = """
pool kv { cap 8; block 2; preempt by (position); }
stage E : step { budget 5; cost 1; chunk 2; MEMORY }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run d (0.5); hold kv (4) { observe a = now; run E prefill (3) growing kv; } }
  branch (serial == 1) { hold kv (1) { observe a = now; run E prefill (1) growing kv; run E decode (2) growing kv; } }
  branch (serial == 2) { run d (0.5); hold kv (1) { observe a = now; observe p = computed; run E prefill (4) growing kv; } }
  observe done = now;
}
run { horizon 60; }
"""
# pool-reference `preempt by`: keys read `position` ("the position its hold has computed on the pool") at the
# Victim moment; "ties go to the last admitted"; candidates are the holders with an active hold scope when
# no stage names the pool as memory (the residents when E has `memory kv`: the same three here). cap 8,
# block 2, budget 5, chunk 2. s1 holds 1 (2 units) and prefills 1 on [0,1]. At 0.5 s0 (4) and s2 (1 -> 2)
# are admitted (8 used). [1,2]: s1 decodes to 2, s0 and s2 prefill 2 each: all three at position 2. At 2
# s1's growth to 4 does not fit (10 > 8): the three tie at 2, so the last admitted, s2, is the victim
# (computed 2); s1 grows, s0 prefills its last token: both done at 3, when s2 is admitted again and
# prefills 4 on [3,5].
POSITION_TIE_WANT = {"a": [(1, 0.0), (0, 0.5), (2, 0.5), (2, 3.0)], "p": [(2, 0.5, 0.0), (2, 3.0, 2.0)],
                     "done": [(0, 3.0), (1, 3.0), (2, 5.0)]}


def test_a_victim_keyed_by_position_on_the_engines_memory(monkeypatch):
    r, o = run(POSITION_TIE.replace("MEMORY", "memory kv;"), monkeypatch)
    assert [(s, t) for s, t, _ in o["a"]] == POSITION_TIE_WANT["a"]
    assert o["p"] == POSITION_TIE_WANT["p"]
    assert [(s, t) for s, t, _ in o["done"]] == POSITION_TIE_WANT["done"]
    assert (pool(r, "kv").preemptions, pool(r, "kv").stuck) == (1, 0)


def test_a_victim_keyed_by_position_on_a_pool_that_is_no_engines_memory(monkeypatch):
    # The same program with E naming no memory: the same outcome by the same rule. (Observed on the default
    # tier: s1 is the victim at 2, re-admitted at 3 and preempted again at 4; done s0 4, s2 4, s1 7.)
    for tier, o in each_tier(POSITION_TIE.replace("MEMORY", ""), monkeypatch).items():
        assert [(s, t) for s, t, _ in o["a"]] == POSITION_TIE_WANT["a"], tier
        assert o["p"] == POSITION_TIE_WANT["p"], tier
        assert [(s, t) for s, t, _ in o["done"]] == POSITION_TIE_WANT["done"], tier


def test_a_budget_reading_a_pool_count_sees_the_last_iterations_admission(monkeypatch):
    # §2/§3: a step stage's budget is read before each iteration ("the residents before the iteration");
    # it may read pool observables. budget holders(reqs) + 1, reqs cap 1 (admit via E), block 2.
    #   0: holders 0, budget 1: s0 is admitted (kv 2) and prefills 1 on [0,1]; then 2, 1 on [1,2], [2,3]
    #      (budget 2: prefill done at 3), decode 1 on [3,4]: done at 4, reqs free.
    #   4: holders 0 before the iteration, budget 1: s1 (waiting since 0.5) is admitted and prefills 1 on
    #      [4,5]; from 5 holders is 1, budget 2: 2 on [5,6], 1 on [6,7]: its prefill ends at 7.
    # (Observed on the default tier: the budget stays 1 after the admission at 4: prefill done at 8.)
    src = """
pool reqs { cap 1; admit via E; }
pool kv { cap 12; block 2; preempt lifo; }
stage E : step { budget holders(reqs) + 1; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 0.5);
  hold reqs (1), kv (1 + serial * 2) {
    observe a = now; run E prefill (4) growing kv; observe p = now; run E decode (1 - serial) growing kv;
  }
  observe done = now;
}
run { horizon 60; }
"""
    for tier, o in each_tier(src, monkeypatch).items():
        assert [(s, t) for s, t, _ in o["a"]] == [(0, 0.0), (1, 4.0)], tier
        assert [(s, t) for s, t, _ in o["p"]] == [(0, 3.0), (1, 7.0)], tier
        assert [(s, t) for s, t, _ in o["done"]] == [(0, 4.0), (1, 7.0)], tier
