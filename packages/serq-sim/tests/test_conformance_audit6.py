"""A sixth conformance audit of language.txt §2–§3 (and pool-reference.txt, program-reference.txt), on rules
the earlier rounds (test_conformance_hand.py, _more, _sem, _pd, _audit … _audit5) leave out or touch only in
passing:

(a) queues: a family sized by a let, a family of one called and leased from by index (`D[j].decode (…)
    from P[i]`), `D.kv` and `D[0].kv` as one pool, `self` in an entry's header and body, an entry's `set`
    and `mark` read by the caller without a member index;
(b) `choose` whose keys draw: each candidate's keys are drawn for it, the argmin then the least index;
(c) the warm-up boundary: what an instant at the warm-up's end counts, for stages, pools, gauges and the
    run's counts;
(d) a family of step engines with routing, each member admitting its own queue and reading its own
    `budget_left` in the header;
(e) `serve exclusive prefill` with a chunk cap;
(f) a trace's `forced` and `think` driving reuse and think times, and the dead entry a forced miss leaves;
(g) the observe note's threshold of 40 samples, counted after the warm-up, and which expressions are tests;
(h) events at the horizon itself: an iteration ending there, a lease of no time, an admission.

Each program is small and deterministic (but the draws of (b), checked against their exact probabilities)
and its outcome is worked out by hand in the docstring; `run` runs it on the tier serQ picks and on the
general engine (SERQ_SIM_TIER=general) and requires byte-identical reports."""

from __future__ import annotations

import math

import pytest
from conform import at, pool, run, stage, vals

# --- (a) queues ----------------------------------------------------------------------------------------------

FAMILY_OF_ONE = """
let NP = 1;
let ND = 1;
queue P[NP] : prefill {
  pool kv { cap 100; }
  serve fifo;
  prefill (prompt) {
    hold kv (prompt) { run (prompt / 10); observe pself = self; } cache (prompt) lease kv (inf);
  }
}
queue D[ND] : decode {
  pool kv { cap 100; }
  serve fifo;
  decode (prompt) from src {
    hold kv (prompt) {
      observe dself = self;
      observe leased = used(src);
      transfer on link (1) from src to kv (prompt);
      observe after = used(src) + 100 * used(kv);
      run (2);
    } cache (prompt);
  }
}
stage link : delay;
workload { arrive batch(2); session { request gw; } }
queue gw : gateway { route {
  set prompt = 10 + 10 * serial;
  choose i in NP by (serial);
  choose j in ND by (serial);
  P[i].prefill (prompt);
  D[j].decode (prompt) from P[i];
  observe done = now;
} }
run { horizon 50; }
"""


def test_a_family_of_one_is_called_and_leased_from_by_index(monkeypatch):
    """§2 Queues: "A family's size may be a let constant (queue D[ND]), and a family of one is still a
    family: its entries are called D[j].decode (…) and its lease taken from D[j], as at any size"; "Inside
    the entry the from name is that pool"; `self` is the member's index (0).

    Prompts 10 (s0) and 20 (s1). P fifo: s0 [0, 1], s1 [1, 3]; each leases its 10 or 20 on P.kv. At 1 s0's
    decode holds D.kv (10) and reads used(src) = its lease 10 + s1's hold 20 = 30; the transfer's link run
    [1, 2], then the load and the release of the lease: used(src) 20 (s1's), used(kv) 10: 1020; D fifo
    [2, 4]. s1 at 3: used(src) = its own lease 20; link [3, 4], then 0 + 100 * 20 = 2000; D fifo [4, 6].
    P.kv used: s0 10 on [0, 2], s1 20 on [0, 4]: 100 / 50 = 2; cached: 10 from 2, 20 from 4: (480 + 920)
    / 50 = 28. D.kv used 10 on [1, 4] and 20 on [3, 6]: 90 / 50 = 1.8; cached 10 from 4, 20 from 6: (460 +
    880) / 50 = 26.8. P's stage: s1 waited 1: mean 0.5."""
    r, o = run(FAMILY_OF_ONE, monkeypatch)
    assert o["pself"] == [(0, 1.0, 0.0), (1, 3.0, 0.0)] and vals(o["dself"]) == [0.0, 0.0]
    assert o["leased"] == [(0, 1.0, 30.0), (1, 3.0, 20.0)]
    assert o["after"] == [(0, 2.0, 1020.0), (1, 4.0, 2000.0)]
    assert at(o["done"]) == [(0, 4.0), (1, 6.0)]
    pk, dk = pool(r, "P.kv"), pool(r, "D.kv")
    assert (pk.index, dk.index) == (0, 0)
    assert (pk.used, pk.cached, dk.used, dk.cached) == (2.0, 28.0, 1.8, 26.8)
    assert (stage(r, "P", 0).wait, stage(r, "D", 0).wait, stage(r, "link").completions) == (0.5, 0.0, 2)


MARKED = """
let ND = 1;
queue P : prefill {
  pool kv { cap 100; }
  serve delay;
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D[ND] : decode {
  pool kv { cap 100; }
  pool reqs { cap 1; }
  serve fifo;
  decode (prompt) from src {
    hold reqs (1), kv (prompt + self) {
      transfer on link (1) from src to kv (prompt);
      mark first_token;
      run (2);
    } cache (prompt);
  }
}
stage link : delay;
workload { arrive batch(2); session { request gw; } }
queue gw : gateway { route {
  set prompt = 10;
  choose j in ND by (holders(D[j].reqs) + queued(D[j].reqs));
  P.prefill (prompt);
  observe hd = holders(D.kv) + 10 * holders(D[0].kv) + 100 * used(D[j].kv);
  D[j].decode (prompt) from P;
  observe ft = D.first_token;
  observe done = now;
} }
run { horizon 50; }
"""


def test_a_family_of_ones_pool_is_one_pool_by_either_name_and_a_mark_is_read_without_an_index(monkeypatch):
    """§2 Queues: "A reference to a member's pool or stage (holders(D[j].kv)) is the kernel's array
    reference, which at size one also takes D.kv"; "a moment the caller needs is mark first_token;, read
    afterwards as D.first_token — the request's attribute, so without a member index".

    Both prefill on P (delay) [0, 1] and lease 10. At 1 s0 reads 0, holds D.reqs and D.kv (10): s1 then
    reads holders 1 by both names and used 10: 1 + 10 + 1000. s0: link [1, 2] (first_token 2), fifo
    [2, 4]. s1 waits for D.reqs until 4: link [4, 5] (first_token 5), fifo [5, 7]. D.reqs waits 0 and 3."""
    r, o = run(MARKED, monkeypatch)
    assert o["hd"] == [(0, 1.0, 0.0), (1, 1.0, 1011.0)]
    assert o["ft"] == [(0, 4.0, 2.0), (1, 7.0, 5.0)]
    assert at(o["done"]) == [(0, 4.0), (1, 7.0)]
    assert (pool(r, "D.reqs").wait, pool(r, "P.kv").used) == (1.5, (10 * 2 + 10 * 5) / 50)


ENTRY_OF_TWO = """
queue D[2] : decode {
  pool kv { cap 100; }
  serve ps(2);
  decode (prompt) {
    hold kv (prompt + self) {
      set known = prompt + 10 * self;
      observe u = used(kv);
      run (prompt);
      mark first_token;
    } cache (prompt);
  }
}
workload { arrive batch(3); session { request gw; } }
queue gw : gateway { route {
  set prompt = 1 + serial;
  choose j in 2 by (holders(D[j].kv), -j);
  D[j].decode (prompt);
  observe k = D.known;
  observe ft = D.first_token;
  observe c = cachedin(D[j].kv) + 100 * j;
} }
run { horizon 50; }
"""


def test_self_in_an_entrys_header_and_body_and_what_the_body_sets_is_the_queues(monkeypatch):
    """§2 Queues: "self is the member's index in a family"; "What the body sets is the queue's (D.known)".
    The three sessions choose at 0, before any admission (holds are admitted by the settle after the
    ready sessions ran): holders 0 everywhere, and -j prefers member 1 for all three. Units prompt + self:
    2 + 3 + 4 = 9 used on D[1].kv at 0. ps(2) with works 1, 2, 3: 2/3 each until 1.5 (s0 done), then 1
    each until 2.5 (s1), then 2: s2 at 3. known = prompt + 10; each caches its prompt on D[1].kv."""
    r, o = run(ENTRY_OF_TWO, monkeypatch)
    assert o["u"] == [(0, 0.0, 9.0), (1, 0.0, 9.0), (2, 0.0, 9.0)]
    assert o["ft"] == [(0, 1.5, 1.5), (1, 2.5, 2.5), (2, 3.0, 3.0)]
    assert vals(o["k"]) == [11.0, 12.0, 13.0] and vals(o["c"]) == [101.0, 102.0, 103.0]
    assert (stage(r, "D", 0).completions, stage(r, "D", 1).completions) == (0, 3)


# --- (b) choose whose keys draw --------------------------------------------------------------------------------

CHOOSE_DRAWS = """
stage d : delay;
workload { arrive renewal(1); }
session {
  choose j in 2 by (~bernoulli(0.5));
  observe j1 = j;
  choose k in 3 by (~bernoulli(0.5), ~uniform(0, 1));
  observe k0 = k == 0;
  observe k2 = k == 2;
  choose m in 4 by (~exp(1));
  observe m3 = m == 3;
}
run { horizon 4000; }
"""


def test_choose_draws_its_keys_for_each_candidate(monkeypatch):
    """§2 `choose NAME in expr by (expr, …)`: "NAME := argmin over 0..n, keys in order"; Ties: "choose: the
    keys, in order, then the smallest index". A key that draws is drawn for each candidate. Two candidates
    keyed by a fair coin: 1 wins only with keys (1, 0), probability 1/4 (a key drawn once for all would
    never choose 1). Three keyed by (coin, uniform): by symmetry each 1/3. Four by ~exp(1): each 1/4.
    4000 sessions (fixed seed); each frequency within 3.5 standard errors of its probability."""
    _, o = run(CHOOSE_DRAWS, monkeypatch)
    for name, p in (("j1", 0.25), ("k0", 1 / 3), ("k2", 1 / 3), ("m3", 0.25)):
        v = vals(o[name])
        assert len(v) == 4000 and set(v) <= {0.0, 1.0}
        assert abs(sum(v) / len(v) - p) <= 3.5 * math.sqrt(p * (1 - p) / len(v)), (name, sum(v) / len(v))


# --- (c) the warm-up boundary ----------------------------------------------------------------------------------

WARM = """
pool m { cap 2; }
pool k { cap 4; preempt lifo; }
stage f : fifo;
stage d : delay;
gauge g = used(m) + 10 * used(k);
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold m (1) { run f (2); } cache (1);
    hold k (2) { run d (1); } cache (2);
    observe a = now;
    end;
  }
  branch (serial == 1) {
    hold k (2) { run d (2); grow k (1); observe gg = now; run d (1); } cache (3);
    turn;
    observe b = now;
    end;
  }
  run d (2);
  hold m (2) { observe c = now; run f (1); }
}
run { horizon 10; warmup 2; }
"""


def test_what_the_warm_up_instant_counts(monkeypatch):
    """docs/language.md: a stage's figures are "the runs completed at or after the warm-up (a run started in
    the warm-up and done after it counts whole); a pool's admissions and wait the admissions at or after it,
    evicted_*, spills, preemptions and rejections the events at or after it"; docs/simulator.md: "A sample
    taken at the warm-up instant counts"; §3 Gauges: the time average over [warmup, end], the least and
    greatest value held for a positive time (there).

    0: s0 holds m (1), fifo f [0, 2]; s1 holds k (2), d [0, 2]; s2 d [0, 2]. At 2 (the warm-up), in the
    order the events were scheduled: s0 releases m caching 1 and holds k (2) (4 of 4), d [2, 3]; s1 grows
    k by 1: no room, the last admitted, s0, is preempted at position 0 (nothing cached) and waits at the
    head; s1 grows (3 used), d [2, 3]; s2 holds m (2), evicting s0's 1, f [2, 3]. At 3 s1 releases k
    caching 3 and ends after a turn; s0 is admitted (wait 1), evicting s1's 3, d [3, 4], and caches 2 at 4.
    Over [2, 10] (8 s): k used 3 on [2, 3], 2 on [3, 4]: 5/8; cached 2 from 4: 12/8; queue 1/8; admissions
    s0 at 2 (wait 0) and 3 (wait 1); one preemption, one eviction (3 units). m: s2's admission, 2 on [2, 3],
    s0's 1 evicted. f: s0's [0, 2] and s2's [2, 3] complete at or after 2: service 1.5. d: s1 [0, 2], s2
    [0, 2], s1 [2, 3], s0 [3, 4] (s0's [2, 3] was left): 4, service 1.5. The gauge held 21 before 2, 32 on
    [2, 3], 20 on [3, 4], 0 after: mean 52/8, min 0, max 32. Arrivals 3, ended 3 (all after 2), turns 1."""
    r, o = run(WARM, monkeypatch)
    assert (at(o["a"]), at(o["gg"]), at(o["b"]), at(o["c"])) == ([(0, 4.0)], [(1, 2.0)], [(1, 3.0)], [(2, 2.0)])
    k, m = r.result.pools[1], r.result.pools[0]
    assert (k.name, k.used, k.cached, k.queue, k.holders, k.wait, k.admissions) == ("k", 5 / 8, 1.5, 1 / 8,
                                                                                    0.25, 0.5, 2)
    assert (k.preemptions, k.evicted_entries, k.evicted_units) == (1, 1, 3.0)
    assert (m.name, m.used, m.admissions, m.wait, m.evicted_entries, m.evicted_units) == ("m", 0.25, 1, 0.0,
                                                                                          1, 1.0)
    f, d = stage(r, "f"), stage(r, "d")
    assert (f.completions, f.service, f.utilisation, d.completions, d.service, d.present) == (2, 1.5, 1 / 8, 4,
                                                                                              1.5, 0.25)
    g = r.result.gauges["g"]
    assert (g.mean, g.min, g.max) == (6.5, 0.0, 32.0)
    assert (r.result.arrivals, r.result.ended, r.result.turns) == (3, 3, 1)


# --- (d) a family of step engines with routing ----------------------------------------------------------------

ENGINES = """
pool reqs[2] { cap 2; admit via E; }
pool kv[2] { cap 100; }
stage E[2] : step { budget 4; cost 1; memory kv; }
workload { arrive batch(4); }
session {
  choose j in 2 by (holders(reqs[j]) + queued(reqs[j]));
  observe jj = j;
  hold reqs[j] (1), kv[j] (min(6, budget_left(E[j]))) {
    observe u = used(kv[j]);
    run E[j] prefill (6) growing kv[j];
    observe p = now;
    run E[j] decode (2) growing kv[j];
    observe u2 = used(kv[j]);
  } cache (8);
  observe done = now;
}
run { horizon 20; }
"""


def test_a_family_of_engines_each_admits_its_own_queue_with_its_own_budget(monkeypatch):
    """§3 admit via: "Families are joined member for member: pool q[N] { admit via S; } next to stage S[N]
    serves q[i] by S[i], and stage E[N] : step { memory kv; } next to pool kv[N] counts kv[i] for E[i]";
    "budget_left(S) then evaluates to the budget left". choose reads queued: s0 → 0, s1 → 1 (reqs[0] has
    one queued), s2 → 0, s3 → 1. Each engine (budget 4, cost 1) alike: at 0 it admits s0 with kv
    min(6, 4) = 4 and gives it 4 tokens; nothing is left for s2. At 1 s0 grows to 6 and takes 2; s2 is
    admitted with min(6, 2) = 2 (used 6 + 2 = 8) and takes 2. At 2 s0's prefill ends; its decode takes 1
    (7), s2 3 (5). At 3 s0 1 (8), s2 1 (6): s0 done at 4, s2's prefill at 4. s2 decodes [4, 6]. u2: s0 at
    4 reads its 8 and s2's 6; s2 at 6 its 8. kv used: 4 + 6 + 7 + 8 and 2 + 5 + 6 + 7 + 8: 53 / 20."""
    r, o = run(ENGINES, monkeypatch)
    assert vals(o["jj"]) == [0.0, 1.0, 0.0, 1.0]
    assert o["u"] == [(0, 0.0, 4.0), (1, 0.0, 4.0), (2, 1.0, 8.0), (3, 1.0, 8.0)]
    assert at(o["p"]) == [(0, 2.0), (1, 2.0), (2, 4.0), (3, 4.0)]
    assert vals(o["u2"]) == [14.0, 14.0, 8.0, 8.0]
    assert at(o["done"]) == [(0, 4.0), (1, 4.0), (2, 6.0), (3, 6.0)]
    for i in (0, 1):
        kv = next(p for p in r.result.pools if p.name == "kv" and p.index == i)
        reqs = next(p for p in r.result.pools if p.name == "reqs" and p.index == i)
        assert (kv.used, kv.cached, reqs.wait, reqs.admissions) == (2.65, 12.0, 0.5, 2)
        e = stage(r, "E", i)
        assert (e.utilisation, e.completions, e.service) == (0.3, 4, 2.25)


# --- (e) exclusive prefill with a chunk cap ----------------------------------------------------------------------

EXCLUSIVE_CHUNK = """
pool reqs { cap 4; admit via E; }
pool kv { cap 100; }
stage E : step { budget 8; cost 1; chunk 3; serve exclusive prefill; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (budget_left(E)) {
    observe u = used(kv);
    run E prefill (5);
    observe p = now;
    run E decode (2);
    observe d = now;
  }
}
run { horizon 20; }
"""


def test_exclusive_prefill_under_a_chunk_cap_runs_one_chunk_alone(monkeypatch):
    """§3: "serve exclusive prefill selects either one prefill alone or a decode-only batch. A resident
    prefill takes precedence. Otherwise resident decodes are tentative: while budget is left, a waiting
    prefill that fits can replace them and use the full budget, including in budget_left at admission. Once
    a prefill is selected, no further waiting request is admitted in that iteration." Budget 8, chunk 3.
    0: s0 is admitted (budget_left 8: kv 8) and prefills one chunk, 3; s1 is not admitted. 1: s0's prefill
    (2 left) goes alone. 2: s0 decodes, tentatively; s1 fits and displaces it, its header seeing the full
    8 (used 16), and prefills 3. 3: s1's 2, alone. 4, 5: both decode: done at 6."""
    r, o = run(EXCLUSIVE_CHUNK, monkeypatch)
    assert o["u"] == [(0, 0.0, 8.0), (1, 2.0, 16.0)]
    assert at(o["p"]) == [(0, 2.0), (1, 4.0)]
    assert at(o["d"]) == [(0, 6.0), (1, 6.0)]
    e = stage(r, "E")
    assert (e.utilisation, e.completions) == (6 / 20, 4)


# --- (f) a trace's forced misses and think times --------------------------------------------------------------

TRACE_FORCED = "session,turn,new,out,think,forced\n0,0,4,1,1,0\n0,1,2,1,2,1\n0,2,3,1,0,0\n"

TRACE_PROGRAM = """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); trace "t.csv" ordered; }
session {
  set K = 0;
  loop {
    turn;
    set prompt = K + new;
    hold kv (prompt) reuse (forced ? 0 : inf) { observe c = cached; observe ci = cachedin(kv); run d (out); }
      cache (prompt);
    set K = prompt;
    branch (more) { run d (think); } else { end; }
  }
}
run { horizon 10; }
"""


def test_a_forced_miss_consumes_nothing_and_leaves_the_old_prefix_dead(tmp_path, monkeypatch):
    """§3 Workload: "turn loads the next turn's new, out, think, forced and sets more"; Pools: "the session
    consumes at most ρ units of its own cached prefix (cached := what it consumed); the rest of that entry
    stays in the cache as a dead entry with the same age, unusable, until evicted"; §7: "a forced miss (a
    nonce at the head of the prompt) matches nothing; the old blocks stay — reuse (0)".
    Turn 1 at 0: prompt 4, run [0, 1] (out 1), caches 4; think 1. Turn 2 at 2, forced: prompt 6, reuse 0:
    cached 0, and the 4 stay dead (cachedin 0 in the body); run [2, 3], caches 6; think 2. Turn 3 at 5:
    prompt 9, cached 6 (its own entry, the dead 4 unusable); run [5, 6], caches 9. kv used 4 + 6 + 9 over
    10 s; cached 4 on [1, 2], 4 on [2, 3], 10 on [3, 5], 4 on [5, 6], 13 on [6, 10]: 84 / 10."""
    (tmp_path / "t.csv").write_text(TRACE_FORCED)
    (tmp_path / "p.sq").write_text(TRACE_PROGRAM)
    r, o = run("", monkeypatch, path=tmp_path / "p.sq")
    assert o["c"] == [(0, 0.0, 0.0), (0, 2.0, 0.0), (0, 5.0, 6.0)]
    assert vals(o["ci"]) == [0.0, 0.0, 0.0]
    kv = pool(r, "kv")
    assert (kv.used, kv.cached, kv.evicted_entries, kv.admissions) == (1.9, 8.4, 0, 3)
    assert (r.result.turns, r.result.ended) == (3, 1)


# --- (g) the observe note ----------------------------------------------------------------------------------------

NOTES = """
workload { arrive renewal(1); }
session {
  observe hit = serial < 0;
  observe one = serial >= 0;
  observe notx = !(serial + 1);
  observe plain = 0 * serial;
  observe mixed = serial == 45;
  observe sum = (serial < 0) + 0;
  observe cond = serial < 0 ? 1 : 0;
  observe both = (serial < 0) && (serial < -1);
}
run { horizon HORIZON; warmup WARMUP; }
"""


@pytest.mark.parametrize("horizon, warmup, n, noted", [
    # renewal(1): sessions at 1, 2, …, the horizon's instant included. 40 samples: every test constant 0 is
    # noted (hit, notx, mixed: serial 45 never comes, both); a test that always held (one), an expression
    # whose outermost operator is + or ?: (sum, cond) and a constant non-test (plain) are not.
    (40, 0, 40, ["hit", "notx", "mixed", "both"]),
    # 39 samples: no note (the warning about too few samples instead).
    (39, 0, 39, []),
    # The count is after the warm-up: samples at 6 … 45 are 40 (the one at 6 counts).
    (45, 6, 40, ["hit", "notx", "mixed", "both"]),
    (44, 6, 39, []),
    # serial 45 arrives at 46: mixed held once, so it is not noted.
    (46, 6, 41, ["hit", "notx", "both"]),
])
def test_the_note_on_a_test_constant_0_over_40_samples_after_the_warm_up(monkeypatch, horizon, warmup, n, noted):
    """§3 Statistics: "An observe whose expression is a test (its outermost operator a comparison, &&, || or
    !) and that was 0 over 40 or more samples gets a line under the table, note: observe hit is constant 0
    over 5357 samples … A test that always held is not noted." Samples are those after the warm-up."""
    r, o = run(NOTES.replace("HORIZON", str(horizon)).replace("WARMUP", str(warmup)), monkeypatch)
    assert all(len(v) == n for v in o.values())
    notes = [x for x in r.result.notes if x.startswith("note: observe")]
    assert notes == [f"note: observe {name} is constant 0 over {n} samples" for name in noted]


# --- (h) events at the horizon itself -------------------------------------------------------------------------

AT_HORIZON = """
pool reqs { cap 1; admit via E; }
pool m { cap 1; }
stage E : step { budget 4; cost 1; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold reqs (1) { observe a = now; run E prefill (8); observe p = now; }
  } else {
    hold m (1) { run d (4); } lease m (0);
    observe l = now;
    hold m (1) { observe b = now; }
  }
}
run { horizon 4; }
"""


def test_an_iteration_a_lease_and_an_admission_at_the_horizon_happen(monkeypatch):
    """docs/language.md: "Events at the horizon itself happen, as the reference's event loop stops only past
    it". Budget 4, cost 1, one request slot: s0 prefills 8 in [0, 2]; s1 is admitted at 2 by the next
    iteration and prefills in [2, 4]: its end at the horizon 4 completes the run. s2's hold ends at 4 with
    a lease of 0 s, which ends at 4 too, and its next hold is admitted at 4 and ends there with the
    session: all three end at the horizon. reqs: s1 waited 2 (mean 1);
    E: two completions, busy all along."""
    r, o = run(AT_HORIZON, monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 2.0)] and at(o["p"]) == [(0, 2.0), (1, 4.0)]
    assert at(o["l"]) == [(2, 4.0)] and at(o["b"]) == [(2, 4.0)]
    reqs, m, e = pool(r, "reqs"), pool(r, "m"), stage(r, "E")
    assert (reqs.admissions, reqs.wait, m.admissions, e.completions, e.utilisation) == (2, 1.0, 2, 2, 1.0)
    assert r.result.ended == 3 and r.result.end == 4.0


# --- (i) a closed workload replaying an ordered trace ------------------------------------------------------------

TRACE_CLOSED = "session,turn,new,out,think,forced\n0,0,1,1,0,0\n1,0,2,2,0,0\n2,0,3,3,0,0\n"

CLOSED_PROGRAM = """
stage d : delay;
workload {
  arrive closed(2);
  trace "t.csv" ordered;
  init { observe i = serial; }
  turn { observe tb = new * 10 + turn_no; }
}
session { turn; observe n = new; run d (out); }
run { horizon 6; warmup 1; }
"""


def test_a_closed_population_replays_an_ordered_trace_by_serial(tmp_path, monkeypatch):
    """§3 Workload: "init runs at arrival, turn at every turn statement; with a trace, turn loads the next
    turn's new, out, think, forced and sets more (ordered: session i replays trace session i)", past the
    last trace session serial mod their number (docs/language.md); `arrive closed(n)` replaces a session
    when it ends. Trace sessions of one turn, out 1, 2, 3. s0 (out 1) and s1 (2) at 0; s0 ends at 1: s2
    (trace 2, out 3) until 4; s1 ends at 2: s3 (trace 0) until 3: s4 (trace 1) until 5: s6 (trace 0) until
    6: s7 (trace 1); s2's end at 4 starts s5 (trace 2), live at the horizon. After the warm-up 1 (its
    instant included): init and turn samples of s2 … s7; ended s0 (at 1), s1, s3, s2, s4, s6; turns 6."""
    (tmp_path / "t.csv").write_text(TRACE_CLOSED)
    (tmp_path / "p.sq").write_text(CLOSED_PROGRAM)
    r, o = run("", monkeypatch, path=tmp_path / "p.sq")
    assert o["i"] == [(s, float(s - 1), float(s)) for s in range(2, 8)]
    assert vals(o["n"]) == [3.0, 1.0, 2.0, 3.0, 1.0, 2.0]
    assert vals(o["tb"]) == [31.0, 11.0, 21.0, 31.0, 11.0, 21.0]
    assert (r.result.arrivals, r.result.ended, r.result.turns) == (8, 6, 6)


# --- (j) eviction keys that draw ---------------------------------------------------------------------------------

EVICT_DRAWS = """
let T = 1000;
pool kv[T] { cap 4; evict by (~bernoulli(0.5)); }
stage d : delay;
workload { arrive batch(5 * T); }
session {
  set t = floor(serial / 5);
  set r = serial % 5;
  EXTRA
  branch (r < 4) {
    hold kv[t] (1) { run d (1 + r / 10); } cache (1);
    run d (2);
    observe g0 = r == 0 ? cachedin(kv[t]) == 0 : -1;
    observe g1 = r == 1 ? cachedin(kv[t]) == 0 : -1;
    observe g2 = r == 2 ? cachedin(kv[t]) == 0 : -1;
    observe g3 = r == 3 ? cachedin(kv[t]) == 0 : -1;
  } else {
    run d (2);
    hold kv[t] (1) { run d (1); }
  }
}
run { horizon 10; }
"""


def test_an_eviction_key_that_draws_is_drawn_per_entry_and_ties_go_to_the_release_order(monkeypatch):
    """pool-reference `evict`: "ascending keys, then release order"; keys "are evaluated per cache entry at
    the Evict moment" (which may draw, docs/language.md's Moments); §3 Workload: "Random draws use separate
    streams for arrivals, the workload, the session and eviction". In each of 1000 pools of cap 4, four
    sessions cache 1 each, released at 1, 1.1, 1.2, 1.3 (that order); at 2 a fifth needs 1 and one entry
    goes: the first in release order whose coin is 0, or the first when all are 1. Probabilities 1/2 + 1/16,
    1/4, 1/8, 1/16. Each frequency within 3.5 standard errors; draws added to the session block (its own
    stream) change no eviction."""
    src = EVICT_DRAWS.replace("EXTRA", "")
    _, o = run(src, monkeypatch)
    got = []
    for name, p in (("g0", 9 / 16), ("g1", 1 / 4), ("g2", 1 / 8), ("g3", 1 / 16)):
        v = [x for x in vals(o[name]) if x >= 0]
        assert len(v) == 1000
        assert abs(sum(v) / len(v) - p) <= 3.5 * math.sqrt(p * (1 - p) / len(v)), (name, sum(v) / len(v))
        got.append(o[name])
    _, o2 = run(src.replace("EXTRA", "set z = ~exp(1) + ~uniform(0, 1);"), monkeypatch)
    assert [o2[n] for n in ("g0", "g1", "g2", "g3")] == got
