"""Conformance cases on the less travelled constructs, each a small program whose outcome follows by hand
from language.txt §2-§3, pool-reference.txt and program-reference.txt (and docs/language.md where the spec
leaves the rule open):

(a) offload tiers: a spill chain of two tiers (a pool's evictions spilled to a tier whose own evictions
    spill to a second), each tier's figures (spills, evicted entries and units, cached, the links' work),
    and the second tier read back with `load`, under a warm-up too; a tier full of a hold's allocation
    takes what its room leaves, and a tier with no room spills nothing; blocks of two sizes over a fifo
    link; two pools spilling to each other; a tier member named by the evicted entry's session, and
    `waiting` in the predicate; a request table's hit rate counting what a tier gave back;
(b) families: `choose` over a computed count with ties, `sum` / `max j in n` aggregates with a computed
    member index in observes and gauges, a step family paired with a pool family member for member,
    `member(...)` in a record;
(c) trace replay: the columns, trace sessions numbered by first appearance and their turns by `turn`,
    `ordered` wrapping, think times, and a `turn;` past a trace session's last turn;
(d) record tables: a row per `record` run (a preempted hold's body records again), rows kept by `sent`
    at the warm-up, none for a request the horizon cuts;
(e) gauges: read at the end of every instant, their mean, least and greatest value over [warmup, end],
    a value reached at the horizon, a step stage's `busy` and `queue`;
(f) `lease` expiry by time, by the session's end and at an arrival's instant, a lease as no preemption
    candidate, `release` of a lease, `transfer (X) from P to Q (n)` out of a lease and out of an enclosing
    hold, `release` of nested holds, and `drop` beside a dead remainder.

Every program runs on the tier serQ picks and on SERQ_SIM_TIER=general, whose reports and samples must be
the same bytes (conform.run). `stage d : delay;` runs every job at rate 1 without waiting, so `run d (w)`
lasts w; `arrive renewal(1)` arrives at 1, 2, 3, …; `arrive batch(n)` n sessions at 0.

Power: each test was run with a mutated expectation (the value named in its comment) and failed.
"""

from __future__ import annotations

import pytest
from conform import close, pool, run, stage

pytestmark = pytest.mark.timeout(60)


def by_session(samples):
    return {s: v for s, _, v in samples}


# --- (a) a spill chain of two tiers, the second read back ------------------------------------------------

CHAIN = """
pool kv { cap 4; spill t1 via l1 (size / 8) when (1); }
pool t1 { cap 4; spill t2 via l2 (size) when (size >= 4); }
pool t2 { cap 10; }
stage l1 : delay;
stage l2 : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  hold kv (4) { run d (0.5); } cache (4);
  run d (10 - now);
  observe a = cachedin(kv) * 100 + cachedin(t1) * 10 + cachedin(t2);
  branch (serial == 0) {
    run d (1);
    hold t2 (x) reuse (4) at admission (x = min(cachedin(t2), 4)) {
      set c = cached;
      hold kv (c) reuse (0) { run l1 (c / 8); load kv (c); } cache (c);
    } cache (0);
    observe back = cachedin(kv) * 100 + cachedin(t1) * 10 + cachedin(t2);
  } else {
    run d (10);
    observe z = cachedin(kv) * 100 + cachedin(t1) * 10 + cachedin(t2);
  }
}
run { horizon 40; arrivals 3; }
"""


def test_a_spill_chain_of_two_tiers_and_the_second_read_back(monkeypatch):
    """pool-reference `spill`: evicted prefixes are written to TIER, `work` on LINK, when `pred`; a tier is
    a pool, so its own evictions follow its own `spill` clause; §3: "Other entries are evicted in the
    pool's order until allocations and cache fit"; docs/language.md: the written units take the tier's
    room from the eviction and are usable when the write lands.

    s0, s1, s2 arrive at 1, 2, 3 and each caches 4 on kv (cap 4) half a second later. At 2 s1's hold
    evicts s0's 4: spilled to t1, work 4 / 8 = 0.5 on l1, landing at 2.5. At 3 s2's evicts s1's 4: t1 is
    full (s0's landed 4), so t1 evicts s0's 4 (4 >= 4: spilled to t2, work 4 on l2, [3, 7]) and takes
    s1's (on l1 [3, 3.5]). At 10 (a = kv*100 + t1*10 + t2): s0 4 (in t2), s1 40, s2 400.
    At 11 s0 takes its 4 from t2 (cached 4, the hold's cache (0) keeps nothing there after) and holds kv
    (4): s2's 4 are evicted (to t1, [11, 11.5]), t1 evicts s1's 4 to t2 (room 10 - 4 held: 4 written,
    [11, 15]); s0 reads for 0.5 on l1, loads 4 and caches min(4, computed 4) = 4 on kv: back 400.
    At 20 s1 finds its 4 in t2 (landed at 15), s2 its 4 in t1.
    Counts: kv evicted 3 entries (12 units), all spilled; t1 evicted 2 (8), both spilled; t2 none.
    Time averages over [0, 20]: kv used 4 on three half seconds and [11, 11.5]: 8; kv cached s0 [1.5, 2),
    s1 [2.5, 3), s2 [3.5, 11), s0 [11.5, 20]: 68; t1 cached s0 [2, 3), s1 [3, 11), s2 [11, 20]: 72 (a
    write under way counts, as its room is taken); t2 cached s0 [3, 11), s1 [11, 20]: 68; t2 used 4 on
    [11, 11.5]: 2. l1 ran 4 jobs of 0.5 (present 2 / 20); l2 two of 4 (utilisation 8 / 20).
    Mutation: expecting t1 to spill s0's prefix on to t2 only when it lands (t2 cached 3.2) fails, as does
    expecting s1's z to be 40 (t1 not evicting in its own order)."""
    rep, obs = run(CHAIN, monkeypatch)
    assert by_session(obs["a"]) == {0: 4.0, 1: 40.0, 2: 400.0}
    assert obs["back"] == [(0, 11.5, 400.0)]
    assert by_session(obs["z"]) == {1: 4.0, 2: 40.0}
    assert rep.result.end == 20.0
    kv, t1, t2 = pool(rep, "kv"), pool(rep, "t1"), pool(rep, "t2")
    assert (kv.admissions, kv.evicted_entries, kv.evicted_units, kv.spills) == (4, 3, 12.0, 3)
    assert (t1.admissions, t1.evicted_entries, t1.evicted_units, t1.spills) == (0, 2, 8.0, 2)
    assert (t2.admissions, t2.evicted_entries, t2.evicted_units, t2.spills) == (1, 0, 0.0, 0)
    assert all(close(a, b) for a, b in [(kv.used, 0.4), (kv.cached, 3.4), (t1.cached, 3.6), (t1.used, 0.0),
                                        (t2.cached, 3.4), (t2.used, 0.1)])
    l1, l2 = stage(rep, "l1"), stage(rep, "l2")
    assert (l1.completions, close(l1.present, 0.1)) == (4, True)
    assert (l2.completions, close(l2.utilisation, 0.4)) == (2, True)


FULL = """
pool kv { cap 4; spill t via l (size) when (size == 4); }
pool t { cap 4; }
stage l : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) { hold t (H) { run d (10); } }
  else { hold kv (4) { run d (0.5); } cache (4); run d (8 - now); observe b = cachedin(t); }
}
run { horizon 20; arrivals 3; }
"""


def test_a_tier_full_of_a_hold_takes_what_its_room_leaves(monkeypatch):
    """pool-reference `spill`: `pred` "May read `size`"; docs/language.md ("A spill's work is what it
    writes"): the tier takes what fits beside what it has allocated, `pred` reads the units evicted and
    `work` the units written. s0 holds 3 of the tier's 4 over [1, 11]. s1 caches 4 on kv at 2.5; s2's
    hold at 3 evicts them: size 4 == 4, spilled; the tier's room is 1, so 1 is written, work 1 on l
    ([3, 4]), and s1 finds 1 there at 8. Over [0, 11]: the tier caches 1 from 3 to 11 (8 / 11), l busy
    1 / 11. Mutation: expecting b = 4 (the whole prefix written) fails, as does expecting work 4 (l's
    utilisation 4 / 11)."""
    rep, obs = run(FULL.replace("H", "3"), monkeypatch)
    assert by_session(obs["b"]) == {1: 1.0, 2: 0.0}
    kv, t = pool(rep, "kv"), pool(rep, "t")
    assert (kv.evicted_entries, kv.evicted_units, kv.spills, t.evicted_entries) == (1, 4.0, 1, 0)
    assert (rep.result.end, close(t.cached, 8 / 11), close(t.used, 30 / 11)) == (11.0, True, True)
    assert (stage(rep, "l").completions, close(stage(rep, "l").utilisation, 1 / 11)) == (1, True)


def test_a_tier_with_no_room_spills_nothing(monkeypatch):
    """The same with the tier held whole (4 of 4): nothing fits, nothing is written, the link runs no job
    and the pool counts no spill (docs/language.md: "A spill that writes nothing evaluates no `work`", and
    is no spill: the report's `spills` counts the writes). s1 finds nothing in the tier.
    Mutation: expecting kv.spills 1 fails."""
    rep, obs = run(FULL.replace("H", "4"), monkeypatch)
    assert by_session(obs["b"]) == {1: 0.0, 2: 0.0}
    kv, t = pool(rep, "kv"), pool(rep, "t")
    assert (kv.evicted_entries, kv.spills, t.cached, stage(rep, "l").completions) == (1, 0, 0.0, 0)


# --- (b) families, choose, aggregates, member ---------------------------------------------------------------

CHOOSE = """
pool m { cap 1; }
pool kv[3] { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  choose j in (serial + 1) by (0 * j);
  observe pick = j;
  hold kv[serial] (serial + 1) {
    observe agg = sum k in 2 (used(kv[1 - k]) * (k + 1));
    observe top = max k in 3 (used(kv[k]));
    hold m (1) { run d (1); }
  }
}
gauge u = used(m);
gauge q = queued(m);
gauge w = sum k in 3 (used(kv[k]) * (k + 1));
run { horizon 10; warmup W; }
"""


def test_choose_ties_go_to_the_smallest_index_and_aggregates_write_their_terms_out(monkeypatch):
    """§2 `choose NAME in expr by (…)`: "NAME := argmin over 0..n", §3 Ties: "choose: the keys, in order,
    then the smallest index": every key ties at 0, over 1, 2 and 3 candidates (the count computed from
    `serial`), so each session picks 0. §2 aggregates: "the linker writes the terms out with j = 0 …
    n-1", so `sum k in 2 (used(kv[1 - k]) * (k + 1))` is used(kv[1]) + 2 used(kv[0]). §3: the settle
    "runs every ready session, then retries … admissions at every pool": the three sessions of the batch
    join kv[0], kv[1], kv[2] (1, 2 and 3 units), are admitted in that pass, and then each reads 2 + 2 * 1
    = 4, and max k in 3 (used(kv[k])) = 3. Mutation: `by (-j)` (the largest index) makes pick 0, 1, 2 and
    fails; so does expecting agg to read kv[k] (1 + 2 * 2 = 5)."""
    _, obs = run(CHOOSE.replace("W", "0"), monkeypatch)
    assert by_session(obs["pick"]) == {0: 0.0, 1: 0.0, 2: 0.0}
    assert by_session(obs["agg"]) == {0: 4.0, 1: 4.0, 2: 4.0}
    assert by_session(obs["top"]) == {0: 3.0, 1: 3.0, 2: 3.0}


def test_a_gauge_is_read_at_the_end_of_each_instant_and_summarised_over_the_warm_up(monkeypatch):
    """language.txt Gauges: "read at the end of every instant (the state the instant's last event leaves
    …; what the instant passes through on the way is not read)", the report gives "its time average over
    [warmup, end] … and the least and greatest value held for a positive time".
    m (cap 1) is held by s0 [0, 1], s1 [1, 2], s2 [2, 3]: at 1 and 2 a release leaves used(m) 0 and the
    settle admits the next, so the instant ends at 1 and the gauge u changes only at 0 (1) and 3 (0).
    q: 2 on [0, 1), 1 on [1, 2), 0 after. w = Σ (k + 1) used(kv[k]): kv[k] holds k + 1 over [0, k + 1],
    so w is 1 + 4 + 9 = 14 on [0, 1), 13 on [1, 2), 9 on [2, 3), 0 after.
    Warm-up 0.5, end 10 (9.5 measured): u 2.5 / 9.5, least 0, greatest 1; q (1 + 1) / 9.5, greatest 2;
    w (7 + 13 + 9) / 9.5, greatest 14. Without a warm-up q's mean is 3 / 10.
    Mutation: expecting a change point of u at 1 (reading the release's 0) fails, as does expecting q's
    mean over [0, 10] with the warm-up (0.3)."""
    rep, _ = run(CHOOSE.replace("W", "0.5"), monkeypatch)
    g = rep._gauges["u"]
    assert list(zip(g.times.tolist(), g.values.tolist())) == [(0.0, 1.0), (3.0, 0.0)]
    assert [x.tolist() for x in (rep._gauges["q"].times, rep._gauges["q"].values)] == [[0, 1, 2], [2, 1, 0]]
    u, q, w = (rep.result.gauges[n] for n in ("u", "q", "w"))
    assert (close(u.mean, 2.5 / 9.5), u.min, u.max) == (True, 0.0, 1.0)
    assert (close(q.mean, 2 / 9.5), q.min, q.max) == (True, 0.0, 2.0)
    assert (close(w.mean, 29 / 9.5), w.min, w.max) == (True, 0.0, 14.0)
    assert close(pool(rep, "m").used, u.mean)  # the gauge of used(m) is the pool's time-average used
    rep0, _ = run(CHOOSE.replace("W", "0"), monkeypatch)
    assert close(rep0.result.gauges["q"].mean, 0.3)


def test_a_gauge_held_only_at_an_instant_past_the_warm_up_has_that_value_nowhere(monkeypatch):
    """The same program with warm-up 2.5: w is 9 on [2.5, 3) and 0 after; the values 14 and 13, held
    before the warm-up, are not its greatest. Over 7.5: 4.5 / 7.5. Mutation: expecting max 14 fails."""
    rep, _ = run(CHOOSE.replace("W", "2.5"), monkeypatch)
    w = rep.result.gauges["w"]
    assert (close(w.mean, 4.5 / 7.5), w.min, w.max) == (True, 0.0, 9.0)


FAMILY = """
pool q[2] { cap 1; admit via S; }
stage S[2] : step { budget 4; cost 1; }
workload { arrive batch(3); }
session {
  choose j in 2 by (queued(q[j]) + holders(q[j]));
  observe load = sum k in 2 (queued(q[k]) + holders(q[k]));
  hold q[j] (1) { run S[j] prefill (6); }
  record r { engine = member(S[j]); slot = member(q[j]); done = now; }
}
gauge busy = sum k in 2 (holders(q[k]));
run { horizon 20; }
"""


def test_a_step_family_serves_its_pool_family_member_for_member(monkeypatch):
    """§3: "Families are joined member for member: pool q[N] { admit via S; } next to stage S[N] serves
    q[i] by S[i]"; `member(X)` is the index of the member X names (docs/language.md). At 0 the three
    sessions choose in order, each waiting (admission is the engine's, at an iteration's start): s0 sees
    (0, 0) and takes q[0]; s1 (1, 0): q[1]; s2 (1, 1): the tie to q[0]. S[0] serves s0's 6 tokens in
    iterations [0, 1) (4) and [1, 2) (2); its iteration at 2 admits s2 (q[0] freed at 2), done at 4. S[1]
    serves s1 over [0, 2]. Records (engine, slot, done): s0 (0, 0, 2), s1 (1, 1, 2), s2 (0, 0, 4). q[0]
    waits 0 and 2 (mean 1), S[0] is busy 4 of 20, S[1] 2. busy = Σ holders: 2 on [0, 2), 1 on [2, 4):
    6 / 20, greatest 2. Mutation: expecting s2 on S[1] (the larger index on the tie) fails."""
    rep, obs = run(FAMILY, monkeypatch)
    assert by_session(obs["load"]) == {0: 0.0, 1: 1.0, 2: 2.0}
    rows = rep.records("r", kind="numpy")
    got = sorted(zip(rows["session"].tolist(), rows["engine"].tolist(), rows["slot"].tolist(),
                     rows["done"].tolist()))
    assert got == [(0, 0, 0, 2.0), (1, 1, 1, 2.0), (2, 0, 0, 4.0)]
    q0, q1 = (p for p in rep.result.pools if p.name == "q")
    assert (q0.admissions, q0.wait, q1.admissions, q1.wait) == (2, 1.0, 1, 0.0)
    assert (stage(rep, "S", 0).iterations, stage(rep, "S", 1).iterations) == (4, 2)
    assert (close(stage(rep, "S", 0).utilisation, 0.2), close(stage(rep, "S", 1).utilisation, 0.1)) == (True, True)
    busy = rep.result.gauges["busy"]
    assert (close(busy.mean, 0.3), busy.max) == (True, 2.0)


# --- (c) trace replay ---------------------------------------------------------------------------------------

TRACE_CSV = """session,turn,new,out,think,forced
7,2,20,3,0,1
3,1,5,1,4,0
7,1,10,2,1.5,0
"""

TRACE = """
stage d : delay;
workload { arrive renewal(1); trace "t.csv" ordered; }
session {
  loop {
    turn;
    observe n = new;
    observe f = forced;
    observe mo = more;
    observe tn = turn_no;
    run d (out);
    branch (more) { run d (think); } else { end; }
  }
}
run { horizon 30; arrivals 3; }
"""


def test_a_trace_replays_its_sessions_by_first_appearance_and_their_turns_in_order(monkeypatch, tmp_path):
    """§2/§3 Workload: "with a trace, turn loads the next turn's new, out, think, forced and sets more
    (ordered: session i replays trace session i)"; docs/language.md: trace sessions are numbered in the
    order they first appear, a session's turns sorted by `turn`, and past the last trace session
    `ordered` goes on with serial mod the number of trace sessions.
    Trace session 0 is `7` (turns 1: new 10, out 2, think 1.5; 2: new 20, out 3, forced 1), 1 is `3`
    (one turn: new 5, out 1). s0 at 1: turn 1 (more 1), out 2 to 3, think 1.5 to 4.5, turn 2 at 4.5
    (more 0, forced 1), out 3 to 7.5, ends. s1 at 2: one turn (more 0), ends at 3. s2 at 3 replays
    session 0 again: turns at 3 and 6.5, ends 9.5. Turns 5.
    Mutation: expecting the file's row order as turn order (s0's first new 20) fails, as does s2 replaying
    `3` (its new 5)."""
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    (tmp_path / "p.sq").write_text(TRACE)
    rep, obs = run("", monkeypatch, path=tmp_path / "p.sq")
    assert obs["n"] == [(0, 1.0, 10.0), (1, 2.0, 5.0), (2, 3.0, 10.0), (0, 4.5, 20.0), (2, 6.5, 20.0)]
    assert [v for *_, v in obs["f"]] == [0.0, 0.0, 0.0, 1.0, 1.0]
    assert [v for *_, v in obs["mo"]] == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert [v for *_, v in obs["tn"]] == [1.0, 1.0, 1.0, 2.0, 2.0]
    assert (rep.result.end, rep.result.turns, rep.result.ended) == (9.5, 5, 3)


PAST = """
workload {
  arrive renewal(1);
  trace "t.csv" ordered;
  init { observe i0 = new + turn_no + more + 1; }
  turn { set x = new * 10 + turn_no; }
}
session {
  turn; turn; turn;
  observe x = x;
  observe mo = more;
  observe th = think + out + forced;
}
run { horizon 30; arrivals 2; }
"""


def test_a_turn_past_a_trace_sessions_last_turn_keeps_its_columns_and_counts(monkeypatch, tmp_path):
    """docs/language.md: "A `turn;` first loads the trace's next row (with a trace), then counts the turn,
    then runs the workload's `turn` block", `init` reads the trace attributes 0; "A `turn;` past the last
    turn of a trace session … leaves the trace attributes as the last turn set them and sets `more` to
    0; it still counts as a turn … and runs the workload's `turn` block". s0 replays `7` (two turns): its
    third turn keeps turn 2's columns: x = 20 * 10 + 3, think + out + forced = 0 + 3 + 1. s1 replays `3`
    (one turn): x = 5 * 10 + 3, 4 + 1 + 0. init reads 0 + 0 + 0 + 1. Six turns.
    Mutation: expecting the third turn's turn_no to stay 2 (x 202) fails."""
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    (tmp_path / "p.sq").write_text(PAST)
    rep, obs = run("", monkeypatch, path=tmp_path / "p.sq")
    assert [v for *_, v in obs["i0"]] == [1.0, 1.0]
    assert by_session(obs["x"]) == {0: 203.0, 1: 53.0}
    assert by_session(obs["mo"]) == {0: 0.0, 1: 0.0}
    assert by_session(obs["th"]) == {0: 4.0, 1: 5.0}
    assert rep.result.turns == 6


# --- (d) record tables ------------------------------------------------------------------------------------

RECORDS = """
pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 0.5);
  set t0 = now;
  hold kv (2) {
    record inner { sent = t0; c = computed; }
    run d (1);
    grow kv (2);
    run d (1);
  }
  record done { sent = t0; }
}
run { horizon 3.5; warmup W; }
"""


def test_records_are_written_per_statement_run_kept_by_sent_and_cut_at_the_horizon(monkeypatch):
    """docs/language.md `record`: "every column is evaluated when the statement runs, so a row is whole or
    absent (a request the run ends in has none)"; the report keeps "the rows whose column `sent` … is at
    or after the warm-up's end"; columns `session`, `turn`, `time`, then the declared ones. §3 `grow` under
    `preempt lifo` (a pool no engine counts preempts its most recently admitted holder), which re-executes
    the victim's hold.
    kv cap 4. s0 holds 2 at 0, s1 at 0.5. At 1 s0 grows by 2: no room, s1 (admitted last) is preempted
    and re-queued at the head; s0 runs [1, 2] and releases; s1 executes its hold again at 2 and records
    again, `computed` 0 (its body advanced no position: docs/language.md, a preemption caches computed
    prefixes); it grows at 3 and would end at 4, past the horizon 3.5: no `done` row. inner: (0, t 0,
    sent 0), (1, 0.5, 0.5), (1, 2, 0.5); done: s0's at 2. With warm-up 0.25 the rows sent at 0 go: inner
    keeps s1's two (sent 0.5), done none (s0's row, written at 2, was sent at 0). kv: 1 preemption; used 2, 4, 4, 2, 4 over [0, .5, 1, 2, 3, 3.5]: 11 / 3.5; s1 queued
    [1, 2). Mutation: a hold re-executed without its record (inner two rows) fails, as does keeping rows
    by `time` (s0's done row at 2 under the warm-up)."""
    rep, _ = run(RECORDS.replace("W", "0"), monkeypatch)
    inner = rep.records("inner", kind="numpy")
    assert list(inner) == ["session", "turn", "time", "sent", "c"]
    assert list(zip(inner["session"].tolist(), inner["time"].tolist(), inner["sent"].tolist(),
                    inner["c"].tolist())) == [(0, 0.0, 0.0, 0), (1, 0.5, 0.5, 0), (1, 2.0, 0.5, 0)]
    done = rep.records("done", kind="numpy")
    assert list(zip(done["session"].tolist(), done["time"].tolist())) == [(0, 2.0)]
    kv = pool(rep, "kv")
    assert (kv.preemptions, kv.admissions, close(kv.used, 11 / 3.5), close(kv.queue, 1 / 3.5)) == (1, 3, True, True)
    assert rep.result.records == {"inner": 3, "done": 1}
    rep, _ = run(RECORDS.replace("W", "0.25"), monkeypatch)
    inner = rep.records("inner", kind="numpy")
    assert list(zip(inner["session"].tolist(), inner["time"].tolist())) == [(1, 0.5), (1, 2.0)]
    assert len(rep.records("done", kind="numpy")["session"]) == 0
    assert rep.result.records == {"inner": 2, "done": 0}


# --- (f) lease, release, transfer, drop ---------------------------------------------------------------------

LEASE = """
pool kv { cap 4; }
stage d : delay;
workload { arrive renewal(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (3) lease kv (2);
    observe u = used(kv);
    run d (AFTER);
    observe c = cachedin(kv);
  } else {
    observe f = free(kv);
    hold kv (4) { observe a = now; run d (1); }
  }
}
run { horizon 20; arrivals 2; }
"""


def test_a_lease_ends_after_its_seconds_and_then_caches(monkeypatch):
    """§3: "A hold's lease m (t) keeps its allocation on m past the scope's end, neither evictable nor a
    preemption victim, until the session's release m, t seconds, or the session's end, and cache applies
    then". s0 holds kv (4) over [2, 3] and leases it to 5; at 3 it still uses 4. s1 arrives at 4 to free
    0 and waits: at 5 the lease ends, caching min(3, 4) = 3, which s1's admission evicts at once (a = 5).
    s0 finds nothing at 8. used 4 on [2, 6): 16 / 8; waits 0 and 1.
    Mutation: a lease of 2 counted from the admission (ending at 4: a = 4) fails."""
    rep, obs = run(LEASE.replace("AFTER", "5"), monkeypatch)
    assert (obs["u"], obs["c"], obs["f"], obs["a"]) == ([(0, 3.0, 4.0)], [(0, 8.0, 0.0)], [(1, 4.0, 0.0)],
                                                         [(1, 5.0, 5.0)])
    kv = pool(rep, "kv")
    assert (kv.evicted_entries, kv.evicted_units, kv.wait, close(kv.used, 2.0), kv.cached) == (1, 3.0, 0.5, True,
                                                                                               0.0)


def test_a_lease_ends_with_its_session_before_its_seconds(monkeypatch):
    """The same with s0 ending at 3.5, before its lease's 5: the lease ends with the session and its 3
    units are cached from 3.5 (not visible to s0 at 3.5, still leased then); s1 at 4 finds free 4 (cached
    prefixes never block) and evicts them. cached 3 on [3.5, 4): 1.5 / 5. Mutation: expecting the
    lease to outlive the session (s1 admitted at 5) fails."""
    rep, obs = run(LEASE.replace("AFTER", "0.5"), monkeypatch)
    assert (obs["c"], obs["f"], obs["a"]) == ([(0, 3.5, 0.0)], [(1, 4.0, 4.0)], [(1, 4.0, 4.0)])
    kv = pool(rep, "kv")
    assert (rep.result.end, kv.evicted_units, close(kv.cached, 0.3), close(kv.used, 2.0)) == (5.0, 3.0, True, True)


RELEASED = """
pool kv { cap 4; }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) {
    hold kv (4) { run d (1); } cache (4) lease kv (2);
    run d (0.5);
    release kv;
    observe c1 = cachedin(kv);
    hold kv (4) reuse (4) { observe got = cached; run d (0.5); } cache (4) lease kv (10);
    run d (2);
    observe u = used(kv);
  } else {
    hold kv (1) { observe a = now; }
  }
}
run { horizon 40; arrivals 2; }
"""


def test_a_released_lease_s_timer_does_not_end_a_later_lease(monkeypatch):
    """§3: "a release m outside any hold on m ends the lease"; the lease's t seconds bound that lease. s0
    holds kv (4) over [1, 2], leased to 4, and releases it at 2.5: 4 cached. s1, waiting since 2, is the
    queue's head: it evicts the entry (per entry, no block) for its 1 unit at 2.5 and is done; s0 then
    finds nothing (cached 0) and leases its new 4 from 3 for 10 s. At 4, when the first lease's 2 s were
    up, nothing happens: s0 still holds 4 at 5, and its session's end then ends the lease.
    Mutation: expecting used 0 at 5 (the first timer ending the second lease) fails."""
    rep, obs = run(RELEASED, monkeypatch)
    assert (obs["c1"], obs["got"], obs["a"], obs["u"]) == ([(0, 2.5, 4.0)], [(0, 2.5, 0.0)], [(1, 2.5, 2.5)],
                                                          [(0, 5.0, 4.0)])
    assert (rep.result.end, pool(rep, "kv").evicted_units) == (5.0, 4.0)


XFER = """
pool P { cap 8; }
pool Q { cap 8; }
stage link : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  hold P (4) { run d (1); } cache (4) lease P (inf);
  observe p0 = used(P);
  hold Q (5) {
    transfer (2) from P to Q (3);
    observe p1 = used(P) * 10 + cachedin(P);
    run d (1);
  } cache (5);
  observe cq = cachedin(Q);
  hold Q (5) reuse (5) { observe got = cached; release Q; observe uq = used(Q); run d (1); } cache (2);
  observe cq2 = cachedin(Q);
  drop P;
  observe cp2 = cachedin(P);
}
run { horizon 20; arrivals 1; }
"""


def test_transfer_release_and_drop(monkeypatch):
    """§2: `transfer (X) from P to Q (n)` is `run link (X); load Q (n); release P;`; §3: "load m (n)
    advances the innermost enclosing hold's position on m by n", "release m inside the body … gives its
    allocation there back, caching per its clause"; the end caches min(ℓ, computed), computed "the
    allocation, or the position a growing run or a load reached"; `drop POOL` discards the own cached
    prefix. s0 (at 1) holds P (4) over [1, 2], leased. Q (5) at 2: the link runs [2, 4], Q's position is
    3, the lease of P ends: P caches 4 (p1 = 0 used, 4 cached). Q's hold ends at 5 caching min(5, 3) = 3.
    The next hold on Q consumes them (got 3) and releases Q at once: min(2, 5) = 2 cached (its body
    advanced no position: its allocation), used 0; the scope's end at 6 has nothing left there. drop P
    leaves nothing. P: used 4 on [1, 4), cached 4 on [4, 6): 12 / 6, 8 / 6; Q: used 5 on [2, 5), cached
    2 on [5, 6): 15 / 6, 2 / 6; the link busy 2 of 6.
    Mutation: expecting Q to cache 5 at 5 (the allocation, not the loaded position) fails."""
    rep, obs = run(XFER, monkeypatch)
    got = {n: obs[n][0][1:] for n in ("p0", "p1", "cq", "got", "uq", "cq2", "cp2")}
    assert got == {"p0": (2.0, 4.0), "p1": (4.0, 4.0), "cq": (5.0, 3.0), "got": (5.0, 3.0), "uq": (5.0, 0.0),
                   "cq2": (6.0, 2.0), "cp2": (6.0, 0.0)}
    p, q = pool(rep, "P"), pool(rep, "Q")
    assert rep.result.end == 6.0
    assert all(close(a, b) for a, b in [(p.used, 2.0), (p.cached, 8 / 6), (q.used, 2.5), (q.cached, 2 / 6)])
    assert (q.admissions, q.evicted_entries, p.evicted_entries) == (2, 0, 0)
    assert close(stage(rep, "link").utilisation, 2 / 6)


# --- more offload tiers: blocks of two sizes over a fifo link; a cycle of two tiers ------------------------

BLOCKS = """
pool kv { cap 8; block 4; spill t via l (size) when (1); }
pool t { cap 12; block 3; }
stage l : fifo;
stage d : delay;
workload { arrive renewal(1); }
session {
  hold kv (8) { run d (0.5); } cache (8);
  run d (12 - now);
  observe a = cachedin(kv) * 100 + cachedin(t);
}
run { horizon 40; arrivals 2; }
"""


def test_a_spill_is_per_block_rounded_to_the_tiers_blocks_and_its_writes_queue_at_a_fifo_link(monkeypatch):
    """pool-reference `block`: "cache entries are kept and evicted, in blocks … An entry is evicted from
    its tail, block by block"; docs/language.md: each block is a spill of its own, the tier takes whole
    blocks of its own (3 of a 4), `work` reads the units written; §3 Stages: fifo(c) serves jobs in arrival
    order. s0 caches 8 (two blocks of 4) at 1.5; s1's 8 at 2 evict both: two spills of 3 units each (work
    3), the second waiting for the first at the fifo link: [2, 5] and [5, 8]. The writes join s0's one
    prefix in the tier: 6 at 12. kv: one entry evicted (8 units), 2 spills; t caches 6 from 2 to 12 (5 on
    average over 12); l busy 6 of 12 with 2 jobs present on [2, 5), 1 on [5, 8): 9 / 12.
    Mutation: expecting the block of 4 written whole (a = 8) fails, as does one spill per entry."""
    rep, obs = run(BLOCKS, monkeypatch)
    assert by_session(obs["a"]) == {0: 6.0, 1: 800.0}
    kv, t, link = pool(rep, "kv"), pool(rep, "t"), stage(rep, "l")
    assert (kv.evicted_entries, kv.evicted_units, kv.spills, t.evicted_entries) == (1, 8.0, 2, 0)
    assert (close(t.cached, 5.0), link.completions, close(link.utilisation, 0.5), close(link.present, 0.75)) == (
        True, 2, True, True)


CYCLE = """
pool kv { cap 4; spill t via l (0) when (1); }
pool t { cap 4; spill kv via l (0) when (1); }
stage l : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  hold kv (4) { run d (0.5); } cache (4);
  run d (12 - now);
  observe a = cachedin(kv) * 100 + cachedin(t);
}
run { horizon 40; arrivals 3; }
"""


def test_two_pools_spilling_to_each_other_do_not_spill_back_into_the_one_making_room(monkeypatch):
    """Two pools each the other's tier (the spec is silent on a cycle; `pools.cache.spill`: a tier that is
    itself making room has none, so a spill never breaks its invariant). A write of no work lands at
    once. s1's hold at 2 evicts s0's 4 from kv into t. s2's at 3 evicts s1's 4: t is full, evicts s0's 4
    (its evictions spill to kv, which is making room: nothing is written) and takes s1's. At 12: s0 has
    nothing anywhere, s1 4 in t, s2 4 in kv. kv: 2 entries evicted, 2 spills; t: 1 evicted, 0 spills; the
    link ran nothing. Mutation: expecting t's eviction spilled (t.spills 1) fails."""
    rep, obs = run(CYCLE, monkeypatch)
    assert by_session(obs["a"]) == {0: 0.0, 1: 4.0, 2: 400.0}
    kv, t = pool(rep, "kv"), pool(rep, "t")
    assert (kv.evicted_entries, kv.spills, t.evicted_entries, t.evicted_units, t.spills) == (2, 2, 1, 4.0, 0)
    assert stage(rep, "l").completions == 0


# --- a closed population replaying a trace; a transfer out of an enclosing hold ----------------------------

CLOSED = """
stage d : delay;
workload { arrive closed(1); trace "t.csv" ordered; }
session {
  loop {
    turn;
    observe n = new * 10 + turn_no;
    run d (out);
    branch (more) { run d (think); } else { end; }
  }
}
run { horizon 12; }
"""


def test_a_closed_population_replays_the_trace_session_of_each_replacement(monkeypatch, tmp_path):
    """§3 Workload: "ordered: session i replays trace session i"; a closed population replaces a session
    that ends at once (docs/language.md), and the replacement is a new session: its own serial and turns
    from 1. s0 (trace `7`) at 0: turn 1 (new 10), out 2, think 1.5, turn 2 at 3.5 (new 20), out 3, ends
    at 6.5; s1 (trace `3`) at 6.5: new 5, out 1, ends at 7.5; s2 (serial 2 mod 2: `7` again) at 7.5: turns
    at 7.5 and 11, cut by the horizon 12. Mutation: expecting turn_no to go on across sessions (s1's
    51 as 53) fails."""
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    (tmp_path / "p.sq").write_text(CLOSED)
    rep, obs = run("", monkeypatch, path=tmp_path / "p.sq")
    assert obs["n"] == [(0, 0.0, 101.0), (0, 3.5, 202.0), (1, 6.5, 51.0), (2, 7.5, 101.0), (2, 11.0, 202.0)]
    assert (rep.result.arrivals, rep.result.ended, rep.result.turns) == (3, 2, 5)


NESTED = """
pool P { cap 8; }
pool Q { cap 8; }
pool r { cap 1; }
stage link : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  hold P (4) {
    run d (1);
    hold Q (4), r (1) {
      transfer (1) from P to Q (4);
      observe a = used(P) * 100 + cachedin(P) * 10 + used(Q);
      release r;
      observe b = used(r) + holders(r);
      run d (1);
    } cache (4);
    observe c = used(P) * 100 + cachedin(P) * 10 + cachedin(Q);
  } cache (3);
  observe e = used(P) * 100 + cachedin(P) * 10 + cachedin(r);
}
run { horizon 12; arrivals 1; }
"""


def test_a_transfer_out_of_an_enclosing_hold_releases_that_hold_on_its_clause(monkeypatch):
    """§2: transfer moves "the KV of n tokens … from the session's lease (or hold) on P"; §3: "release m
    inside the body does the same for m alone, at that point: the innermost enclosing hold on m gives its
    allocation there back, caching per its clause, and holds m no longer"; docs/language.md: a body's
    advance is the hold's over all its pools (a pool it advanced nothing on computed the prefix it consumed
    plus what was added there: 0). s0 at 1 holds P (4); at 2 Q (4) and r (1); the link runs [2, 3], Q's
    position is 4, and the outer hold on P gives its 4 back caching min(3, 4) = 3 (a = 0, 3, 4). release r:
    r's position is 0, nothing cached (b = 0). Q's scope ends at 4 caching 4 (c = 0, 3, 4); the outer
    scope's end finds nothing left on P (e = 0, 3, r 0). P used 4 on [1, 3): 8 / 4. Mutation: caching P per
    the inner hold's clause (4: a = 44) fails, as does r caching its allocation (e = 31)."""
    rep, obs = run(NESTED, monkeypatch)
    assert [(n, obs[n][0][1:]) for n in ("a", "b", "c", "e")] == [
        ("a", (3.0, 34.0)), ("b", (3.0, 0.0)), ("c", (4.0, 34.0)), ("e", (4.0, 30.0))]
    p, r = pool(rep, "P"), pool(rep, "r")
    assert (rep.result.end, close(p.used, 2.0), close(p.cached, 0.75), close(r.used, 0.25)) == (4.0, True, True,
                                                                                                True)


HORIZON_GAUGE = """
pool m { cap 5; }
stage d : delay;
workload { arrive renewal(2); }
session { hold m (serial + 1) { run d (1.5 * (serial + 1)); } }
gauge u = used(m);
run { horizon 4; warmup 2; }
"""


def test_a_gauge_value_reached_at_the_horizon_is_not_held(monkeypatch):
    """Gauges: "the least and greatest value held for a positive time" over [warmup, end]. Arrivals at 2
    and 4 (the horizon's instant, docs/language.md: an arrival there runs). s0 holds 1 over [2, 3.5]; s1's
    2 from 4 are the state at the end, held for no time: greatest 1, least 0, mean 1.5 / 2. The change
    points: 0 at 0, 1 at 2, 0 at 3.5, 2 at 4. Mutation: expecting max 2 fails."""
    rep, _ = run(HORIZON_GAUGE, monkeypatch)
    u = rep.result.gauges["u"]
    assert (close(u.mean, 0.75), u.min, u.max) == (True, 0.0, 1.0)
    g = rep._gauges["u"]
    assert list(zip(g.times.tolist(), g.values.tolist())) == [(0.0, 0.0), (2.0, 1.0), (3.5, 0.0), (4.0, 2.0)]
    assert pool(rep, "m").admissions == 2


LEASED_ROOM = """
pool kv { cap 6; preempt lifo; }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) {
    hold kv (2) { run d (0.5); } cache (2) lease kv (10);
    run d (10);
  } else {
    hold kv (2) { run d (1); grow kv (3); observe g = now; run d (1); } cache (5);
    observe done = now;
  }
}
run { horizon 40; arrivals 3; }
"""


def test_a_lease_is_no_preemption_candidate_and_its_room_comes_back_when_it_ends(monkeypatch):
    """pool-reference `preempt`: "Leases are not candidates; the grower can be its own victim"; a pool no
    engine counts takes the holders with an active hold scope, the last admitted first; the victim
    re-enters at the head of the queue; §3 lease: the allocation is kept until t seconds or the session's
    end, then cached; docs/language.md: a hold preempted before it computed anything caches nothing.
    kv cap 6. s0 leases 2 from 1.5 to its end at 11.5. s1 (admitted at 2) and s2 (at 3) hold 2 each; at
    3 s1 grows by 3 with 0 free: s2 is preempted (4 used), still no room for 3, so s1 preempts itself; s1
    re-enters at the head ahead of s2, both are admitted again at once and grow again a second later: two
    preemptions at each of 3, 4, …, 11 (18). At 11.5 the lease's 2 are cached; at 12 s1's growth preempts
    s2 (19) and then fits by evicting those 2 (g = 12); s1 is done at 13 caching 5, which s2's admission
    at 13 evicts (7 units over 2 entries); s2 grows at 14 and is done at 15. Admissions: s0 1, s1 1 + 9,
    s2 1 + 9 + 1 = 22; both s1 and s2 were preempted again at the position of their last preemption:
    stuck 2. Mutation: expecting 18 preemptions (s2 not preempted at 12, the lease's cached 2 counted as
    room) fails, as does expecting stuck 0."""
    rep, obs = run(LEASED_ROOM, monkeypatch)
    assert (obs["g"], obs["done"]) == ([(1, 12.0, 12.0), (2, 14.0, 14.0)], [(1, 13.0, 13.0), (2, 15.0, 15.0)])
    kv = pool(rep, "kv")
    assert (kv.preemptions, kv.admissions, kv.evicted_entries, kv.evicted_units, kv.stuck) == (19, 22, 2, 7.0, 2)
    assert rep.result.end == 15.0


SPILL_MEMBER = """
pool kv { cap 4; spill cpu[home] via pcie[home] (size * (home + 1)) when (waiting == 0); }
pool cpu[2] { cap 10; }
stage pcie[2] : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  set home = serial % 2;
  hold kv (4) { run d (0.5); } cache (4);
  set home = 1 - home;
  branch (serial == 0) { run d (1); hold kv (1) { run d (5); } }
  run d (12 - now);
  observe a = cachedin(kv) * 100 + cachedin(cpu[0]) * 10 + cachedin(cpu[1]);
}
run { horizon 40; arrivals 3; }
"""


def test_a_spill_names_its_tier_and_link_by_the_entry_s_session_at_the_eviction(monkeypatch):
    """pool-reference `spill`: `work` and `pred` are evaluated at the Evict moment; `evict`: keys read "the
    entry's session's attributes: current while the session lives"; docs/language.md: a spill's TIER and
    LINK may name a member by a computed index read at that moment. `home` is serial % 2 at the hold and
    flipped after it. s0 (home 0 → 1) caches 4 at 1.5; s1's hold at 2 evicts it: s0 is not waiting, its
    home is now 1: cpu[1] over pcie[1], work 4 * 2 = 8 ([2, 10]). s1 (home 1 → 0) caches 4 at 2.5, when s0
    (first at that instant) joins the queue for 1 unit; s1's release comes next and s0's admission evicts
    s1's entry to cpu[0] (work 4, [2.5, 6.5]). s2 waits from 3 for the 4 until s0's release at 7.5.
    At 12: s0 finds its 4 in cpu[1], s1 in cpu[0], s2 on kv. kv waits 0, 0, 0, 4.5.
    Mutation: reading home as at the release (s0's prefix to cpu[0]: a = 40) fails."""
    rep, obs = run(SPILL_MEMBER, monkeypatch)
    assert by_session(obs["a"]) == {0: 4.0, 1: 40.0, 2: 400.0}
    kv = pool(rep, "kv")
    assert (kv.spills, kv.evicted_entries, kv.admissions, kv.wait) == (2, 2, 4, 1.125)
    assert (close(stage(rep, "pcie", 0).utilisation, 4 / 12), close(stage(rep, "pcie", 1).utilisation, 8 / 12)) == (
        True, True)
    c0, c1 = (p for p in rep.result.pools if p.name == "cpu")
    assert (close(c0.cached, 38 / 12), close(c1.cached, 40 / 12)) == (True, True)


def test_a_spill_chain_counts_from_the_warm_up_s_instant(monkeypatch):
    """The chain of the first test with warm-up 3 (docs/language.md: a pool's evictions, spills and
    preemptions count the events at or after the warm-up's end; a stage counts the runs that end after
    it). The spill at 2 is left out; those at 3 (kv's of s1, t1's of s0) and 11 count: 2 and 2, as do kv's
    admissions at 3 and 11. l1's jobs end at 2.5 (left out), 3.5 and twice at 11.5; present 1.5 / 17. Over
    [3, 20]: t1 and t2 each cache 4 throughout (68 / 17); kv caches s2's 4 over [3.5, 11) and s0's over
    [11.5, 20]: 64 / 17. Mutation: expecting kv.spills 3 (the spill at 2 counted) fails."""
    rep, _ = run(CHAIN.replace("arrivals 3;", "arrivals 3; warmup 3;"), monkeypatch)
    kv, t1, t2 = pool(rep, "kv"), pool(rep, "t1"), pool(rep, "t2")
    assert (kv.spills, kv.evicted_entries, kv.admissions, t1.spills, t1.evicted_entries) == (2, 2, 2, 2, 2)
    assert all(close(a, b) for a, b in [(kv.cached, 64 / 17), (kv.used, 4 / 17), (t1.cached, 4.0),
                                        (t2.cached, 4.0), (t2.used, 2 / 17)])
    l1 = stage(rep, "l1")
    assert (l1.completions, close(l1.present, 1.5 / 17), close(stage(rep, "l2").utilisation, 8 / 17)) == (
        3, True, True)


HIT_RATE = """
pool kv { cap 8; spill cpu via pcie (size / 4) when (1); }
pool cpu { cap 100; }
stage pcie : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  set K = 0;
  loop {
    set prompt = K + 4 * (serial + 1);
    set t0 = now;
    hold kv (prompt) reuse (hg) at admission (hg = min(cachedin(kv), K)) {
      set cg = cached;
      hold cpu (hc) reuse (hc) at admission (hc = max(0, min(cachedin(cpu), K - cg))) {
        set back = cached;
        run pcie (back / 4);
      } cache (0);
      run d ((prompt - cg - back) / 4);
      set first = now;
      run d (1);
    } cache (prompt);
    record request { sent = t0; first_token = first; last_token = now; output = 2; prompt = prompt;
                     cached = cg + back; }
    set K = prompt;
    branch (serial == 0 && K == 4) { run d (4); } else { end; }
  }
}
run { horizon 40; arrivals 2; warmup W; }
"""


def test_a_request_table_s_hit_rate_counts_what_the_offload_tier_gave_back(monkeypatch):
    """docs/language.md: a table with `cached` and `prompt` gets the prefix-cache hit rate sum(cached) /
    sum(prompt) over its rows, the rows kept by `sent` at the warm-up; TTFT is first_token - sent, E2E
    last_token - sent. s0 (prompt 4) is sent at 1: prefill 1, first token 2, done 3, caches 4. s1 (prompt
    8) waits from 2 to 3 for kv, whose s0 entry is evicted and spilled (work 1, landing at 4): first 5,
    done 6, caches 8. s0's second turn (prompt 8, history 4) is sent at 7: kv's s1 entry is evicted (and
    spilled), kv gives 0 and the tier 4 (read in 1), the prefill (8 - 4) / 4 = 1: first 9, done 10.
    Rows (sent, first, last, prompt, cached): (1, 2, 3, 4, 0), (2, 5, 6, 8, 0), (7, 9, 10, 8, 4): hit rate
    4 / 20, TTFT 1, 3, 2, E2E 2, 4, 3, 3 requests over 10. With warm-up 2.5 only the last row: 4 / 8, one
    request over 7.5; kv's admissions and spills at 3 and 7 count, those at 1 do not.
    Mutation: expecting the hit rate of the GPU's hits alone (0) fails, as does 4 / 12 (prompts of the
    rows with a hit only)."""
    rep, _ = run(HIT_RATE.replace("W", "0"), monkeypatch)
    m = rep.result.requests
    rows = rep.records("request", kind="numpy")
    assert [rows[c].tolist() for c in ("sent", "first_token", "last_token", "prompt", "cached")] == [
        [1.0, 2.0, 7.0], [2.0, 5.0, 9.0], [3.0, 6.0, 10.0], [4, 8, 8], [0, 0, 4]]
    assert (m.completed, m.prefix_cache_hit_rate, m.ttft.mean, m.e2el.mean, m.total_input_tokens) == (
        3, 0.2, 2.0, 3.0, 20.0)
    assert close(m.request_throughput, 0.3)
    kv = pool(rep, "kv")
    assert (kv.spills, kv.evicted_entries, kv.admissions) == (2, 2, 3)
    rep, _ = run(HIT_RATE.replace("W", "2.5"), monkeypatch)
    m = rep.result.requests
    assert (m.completed, m.prefix_cache_hit_rate, m.ttft.mean, close(m.request_throughput, 1 / 7.5)) == (
        1, 0.5, 2.0, True)
    kv = pool(rep, "kv")
    assert (kv.spills, kv.evicted_entries, kv.admissions) == (2, 2, 2)


STEP_GAUGE = """
stage E : step { budget 4; cost 1; }
workload { arrive batch(2); }
session { run E prefill (6); observe t = now; }
gauge b = busy(E) * 10 + queue(E);
run { horizon 3; }
"""


def test_a_gauge_of_a_step_stage_reads_the_iteration_s_jobs_and_the_residents(monkeypatch):
    """docs/language.md: `queue(s)` of a step stage is its residents, `busy(s)` "the jobs the running
    iteration of a step stage serves"; §3: the residents are served in admission order, "up to chunk to a
    prefilling one, until the budget is spent". Two prefills of 6 on budget 4, cost 1: [0, 1) s0's 4
    (busy 1, 2 residents), [1, 2) s0's 2 and s1's 2 (busy 2), [2, 3) s1's 2 (busy 1, 1 resident): b = 12,
    22, 11, mean 45 / 3, least 11, greatest 22; s0 done at 2, s1 at 3. Mutation: expecting busy to count
    the residents (b 22 on [0, 1), greatest 22, mean 55 / 3) fails."""
    rep, obs = run(STEP_GAUGE, monkeypatch)
    assert obs["t"] == [(0, 2.0, 2.0), (1, 3.0, 3.0)]
    g = rep._gauges["b"]
    assert list(zip(g.times.tolist(), g.values.tolist())) == [(0.0, 12.0), (1.0, 22.0), (2.0, 11.0), (3.0, 0.0)]
    b = rep.result.gauges["b"]
    assert (b.mean, b.min, b.max) == (15.0, 11.0, 22.0)
    assert (stage(rep, "E").iterations, stage(rep, "E").utilisation) == (3, 1.0)


WAITING = """
pool m { cap 1; }
pool kv { cap 4; spill t via l (0) when (waiting == W); }
pool t { cap 10; }
stage l : delay;
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) { hold m (1) { run d (5); } }
  else { branch (serial == 1) {
    hold kv (4) { run d (0.5); } cache (4);
    hold m (1) { observe got = now; }
    observe c = cachedin(t);
  } else { hold kv (4) { run d (1); } } }
}
run { horizon 20; arrivals 3; }
"""


@pytest.mark.parametrize("w, spilled", [(0, 0), (1, 1)])
def test_a_spill_predicate_reads_waiting_of_a_session_queued_at_another_pool(monkeypatch, w, spilled):
    """pool-reference `spill`: `pred` is read at the Evict moment; docs/language.md: `waiting` "is 1 when
    the entry's session … is alive and waiting in some pool's queue". s0 holds m over [1, 6]. s1 caches 4
    on kv at 2.5 and waits for m until 6. s2's hold at 3 evicts s1's entry while s1 waits: `waiting` is 1,
    so `when (waiting == 1)` spills it (a write of no work lands at once: s1 finds 4 in t at 6) and
    `when (waiting == 0)` does not (0). Mutation: expecting the other parameter's outcome fails."""
    rep, obs = run(WAITING.replace("W", str(w)), monkeypatch)
    assert (obs["got"], obs["c"]) == ([(1, 6.0, 6.0)], [(1, 6.0, 4.0 * spilled)])
    kv = pool(rep, "kv")
    assert (kv.evicted_entries, kv.evicted_units, kv.spills, close(kv.cached, 2 / 6)) == (1, 4.0, spilled, True)


NESTED_RELEASE = """
pool m { cap 4; }
stage d : delay;
workload { arrive renewal(1); }
session {
  hold m (1) {
    hold m (2) { release m; observe u1 = used(m) * 10 + cachedin(m); run d (1); } cache (2);
    observe u2 = used(m) * 10 + cachedin(m);
    release m;
    observe u3 = used(m) * 10 + cachedin(m);
    run d (1);
  } cache (1);
  observe c = used(m) * 10 + cachedin(m);
  release m;
  observe c2 = used(m) * 10 + cachedin(m);
}
run { horizon 20; arrivals 1; }
"""


def test_release_gives_back_the_innermost_hold_and_the_latest_release_is_the_prefix(monkeypatch):
    """§3: "release m inside the body … the innermost enclosing hold on m gives its allocation there back,
    caching per its clause, and holds m no longer", and then the scope's end "has nothing left there";
    docs/language.md: a session has one prefix per pool, the one its latest release left, which replaces
    the earlier whichever is longer; `release m` with no hold or lease releases nothing. At 1 the inner
    hold (2) is released at once: 1 used (the outer), 2 cached (u1 = 12); its scope's end at 2 has nothing
    left (u2 = 12); the outer's release caches 1 in place of the 2 (u3 = 01); the outer scope's end at 3
    and the last release change nothing (c = c2 = 1). m used 1 over [1, 2]: 1 / 3; cached 2 on [1, 2), 1 on
    [2, 3]: 3 / 3. Mutation: expecting the longer prefix kept (u3 = 2) fails."""
    rep, obs = run(NESTED_RELEASE, monkeypatch)
    assert [obs[n][0][1:] for n in ("u1", "u2", "u3", "c", "c2")] == [
        (1.0, 12.0), (2.0, 12.0), (2.0, 1.0), (3.0, 1.0), (3.0, 1.0)]
    m = pool(rep, "m")
    assert (m.admissions, close(m.used, 1 / 3), close(m.cached, 1.0), m.evicted_entries) == (2, True, True, 0)


DROP = """
pool kv { cap 8; }
stage d : delay;
workload { arrive renewal(1); }
session {
  hold kv (4) { run d (1); } cache (4);
  hold kv (2) reuse (1) { observe got = cached; run d (1); } cache (2);
  observe a = cachedin(kv);
  drop kv;
  observe b = cachedin(kv);
  run d (1);
}
run { horizon 20; arrivals 1; }
"""


def test_drop_discards_the_own_prefix_and_leaves_the_dead_remainder(monkeypatch):
    """§2 `drop POOL; -- discard the own cached prefix`; §3: a hold with cache consumes at most ρ of its own
    prefix, "the rest of that entry stays in the cache as a dead entry … unusable, until evicted"; the
    cache is "entries … per session or dead". s0 caches 4 at 2; its next hold consumes 1 of them (got 1),
    3 stay dead, and caches 2 at 3 (a = 2); drop discards those 2 (b = 0) and not the 3 dead units, which
    stay cached to the end at 4: cached 3 on [2, 4]: 6 / 4; used 4 on [1, 2), 2 on [2, 3): 6 / 4; nothing
    evicted. Mutation: expecting drop to take the dead units too (cached 3 / 4) fails."""
    rep, obs = run(DROP, monkeypatch)
    assert (obs["got"], obs["a"], obs["b"]) == ([(0, 2.0, 1.0)], [(0, 3.0, 2.0)], [(0, 3.0, 0.0)])
    kv = pool(rep, "kv")
    assert (rep.result.end, kv.cached, kv.used, kv.evicted_entries) == (4.0, 1.5, 1.5, 0)


LEASE_TIE = """
pool kv { cap 4; }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) { hold kv (4) { run d (H); } cache (4) lease kv (L); run d (10); }
  else { branch (serial == 3) { observe f = free(kv); hold kv (4) { observe a = now; } } }
}
run { horizon 40; arrivals 4; }
"""


@pytest.mark.parametrize("h, lease, free", [(0.5, 2.5, 4.0), (2.5, 0.5, 0.0)])
def test_a_lease_s_expiry_at_an_arrivals_instant_goes_in_the_order_scheduled(monkeypatch, h, lease, free):
    """§3 Ties: "Events at one instant: the order they were scheduled"; the lease ends t seconds after the
    scope's end, so its expiry is scheduled there; docs/language.md: a renewal arrival is scheduled at the
    arrival before it. s0 (at 1) holds kv (4) for h and leases it for t, h + t = 3: the lease ends at 4,
    the instant s3 arrives (scheduled at 3). With h = 0.5 the expiry was scheduled at 1.5, first: s3 reads
    free 4; with h = 2.5 at 3.5, after the arrival: s3 reads 0. Either way s3 is admitted at 4 (evicting
    the 4 the lease cached), and kv held 4 over [1, 4): 12 over the run's 1 + h + 10.
    Mutation: expecting free 4 in both cases (the expiry first at its instant) fails."""
    rep, obs = run(LEASE_TIE.replace("(H)", f"({h})").replace("(L)", f"({lease})"), monkeypatch)
    assert (obs["f"], obs["a"]) == ([(3, 4.0, free)], [(3, 4.0, 4.0)])
    kv = pool(rep, "kv")
    assert (rep.result.end, kv.evicted_units, kv.wait, close(kv.used, 12 / (11 + h))) == (11 + h, 4.0, 0.0, True)
