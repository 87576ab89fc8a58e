"""Conformance cases whose outcome follows from language.txt §3, pool-reference.txt and program-reference.txt
by hand: leases and the release time their cache takes, reservations that end with a leased scope,
room freed by a preemption for the blocked heads of many queues, victims re-queued at the tail by keys
read at their re-entry, a hold's header (units, reserve, reuse bound) and the queue keys that choose an
engine's head read at one moment with the attempt's budget_left, eviction orders that read age, budget
splits among chunked prefills, and the other rules each case's docstring quotes.

Every case runs on the tier serQ picks and on SERQ_SIM_TIER=general (the per-job reference), whose reports
and every observe's samples must be the same bytes (conform.run). The many-queue cases run at 6 queues (the
settle tries every head at every pass) and at 12 (more than 8 pools with queues of their own: a blocked
head is tried again only when room frees in a pool its hold needs or its queue changes,
docs/simulator.md), with the same hand-computed times.

Conventions: `stage d : delay;` runs every job at rate 1 without waiting, so `run d (w)` lasts w.
"""

from __future__ import annotations

import pytest
from conform import pool, run


def by_session(obs, name):
    """{session: [values]} of an observe's samples, in time order."""
    out: dict = {}
    for s, _t, v in obs[name]:
        out.setdefault(s, []).append(v)
    return out


# --- leases -----------------------------------------------------------------------------------------------

def test_a_leases_entry_is_released_when_the_lease_ends_for_lru(monkeypatch):
    """§3 Pools: a lease keeps the allocation "until the session's release m, t seconds, or the session's
    end, and cache applies then"; `evict lru` orders "by release time and then release order".

    cap 10. s0 holds 4 from 0 to 1 and leases it for 4 s: its 4 are cached at 5, not at 1. s1 holds 4 from
    2 to 3 and caches them at 3. At 6 s2 asks 6: used 0 + cached 8 + 6 > 10, so 4 units go, and the older
    release is s1's (3), not s0's (5, though its scope ended first at 1). At 8 s0 still finds its 4,
    s1 none."""
    src = """
pool m { cap 10; evict lru; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (4) { run d (1); } cache (4) lease m (4); run d (7); }
  else { branch (serial == 1) { run d (2); hold m (4) { run d (1); } cache (4); run d (5); }
  else { run d (6); hold m (6) { run d (1); } } }
  observe c = cachedin(m);
  end;
}
run { horizon 100; }
"""
    rep, obs = run(src, monkeypatch)
    assert obs["c"] == [(2, 7.0, 0.0), (0, 8.0, 4.0), (1, 8.0, 0.0)]
    m = pool(rep, "m")
    assert (m.admissions, m.evicted_entries, m.evicted_units) == (3, 1, 4.0)
    # in blocks of 2, s2 asking 8: 6 units go, s1's 4 (released at 3) whole, then s0's tail block
    rep, obs = run(src.replace("evict lru;", "block 2; evict lru;").replace("hold m (6)", "hold m (8)"),
                   monkeypatch)
    assert obs["c"] == [(2, 7.0, 0.0), (0, 8.0, 2.0), (1, 8.0, 0.0)]
    m = pool(rep, "m")
    assert (m.admissions, m.evicted_entries, m.evicted_units) == (3, 1, 6.0)


def many_queues_lease(r: int) -> str:
    """Queues q0 … q(r-1) of their own (cap 1), one shared pool m (cap 4, reserve held). s0 holds q0 (1) and
    m (1) reserve (4) from 0 to 1 and leases m; s1 … s(r-1) each ask qk (1), m (1) at 0.5."""
    pools = "\n".join(f"pool q{k} {{ cap 1; }}" for k in range(r))
    body = ""
    for k in reversed(range(1, r)):
        hold = f"hold q{k} (1), m (1) {{ observe a = now; run d (1); }}"
        body = hold if k == r - 1 else f"branch (serial == {k}) {{ {hold} }} else {{ {body} }}"
    return f"""
pool m {{ cap 4; reserve held; }}
{pools}
stage d : delay;
workload {{ arrive batch({r}); }}
session {{
  branch (serial == 0) {{ hold q0 (1), m (1) reserve (4) {{ observe a = now; run d (1); }} lease m (10); run d (20); }}
  else {{ run d (0.5); {body} }}
  end;
}}
run {{ horizon 100; }}
"""


def test_a_leased_scope_ends_its_reservation_and_the_blocked_heads_of_many_queues_are_admitted(monkeypatch):
    """pool-reference `reserve held`: "Reservations end with the hold's scope, release or preemption;
    leases retain none"; a new reservation r requires used + Σ u_i + r <= cap.

    s0's hold takes 1 of m and reserves 4 (u = 3) at 0. At 0.5 each other session asks 1: 1 + 3 + 1 > 4,
    so every head waits. At 1 s0's scope ends: its lease keeps the 1 unit and no reservation, so 3 units
    are free and s1, s2, s3 are admitted (their queues in declaration order); each holds 1 s, so s4 … s6
    are admitted at 2, and so on: sk at 1 + floor((k - 1) / 3)."""
    for r in (6, 12):
        rep, obs = run(many_queues_lease(r), monkeypatch)
        want = {0: [0.0]} | {k: [1.0 + (k - 1) // 3] for k in range(1, r)}
        assert by_session(obs, "a") == want, r
        assert pool(rep, "m").admissions == r


def many_queues_victim(r: int) -> str:
    """Queues q0 … q(r-1) of their own (cap 1), one shared pool m (cap 4, preempt lifo, no stage's memory).
    s0 and s1 hold 2 of m each from 0; s0 grows by 1 at 1; s2 … s(r-1) ask 1 of m at 0.5 and hold it 1 s."""
    pools = "\n".join(f"pool q{k} {{ cap 1; }}" for k in range(r))
    body = ""
    for k in reversed(range(2, r)):
        hold = f"hold q{k} (1), m (1) {{ observe a = now; run d (1); }}"
        body = hold if k == r - 1 else f"branch (serial == {k}) {{ {hold} }} else {{ {body} }}"
    return f"""
pool m {{ cap 4; preempt lifo; }}
{pools}
stage d : delay;
workload {{ arrive batch({r}); }}
session {{
  branch (serial == 0) {{ hold q0 (1), m (2) {{ observe a = now; run d (1); grow m (1); run d (5); }} }}
  else {{ branch (serial == 1) {{ hold q1 (1), m (2) {{ observe a = now; run d (10); }} }}
  else {{ run d (0.5); {body} }} }}
  end;
}}
run {{ horizon 100; }}
"""


def test_room_a_preemption_leaves_admits_the_blocked_head_of_another_queue(monkeypatch):
    """§3 Pools, grow: "with preempt lifo … a pool that is no engine's memory preempts its most recently
    admitted holder: … its hold is released … and it re-enters the head of the pool's queue"; the settle
    then admits the heads that fit, the pools declared first first (§3 Ties).

    m is full at 0 (s0 2, s1 2); s2 … wait from 0.5. At 1 s0's grow of 1 preempts s1 (admitted last), which
    re-enters q1's queue asking 2; s0 now holds 3, 1 unit is free: q1's head does not fit, q2's does, so s2
    is admitted at 1, and each next sk at k - 1 while s0 holds 3. At 6 s0's release (its event was
    scheduled before s6's) frees 3 with s6 holding 1: s1 (2) and s7 (1) are admitted, then s6's release
    admits s8; s9 and s10 follow at 7, s11 at 8."""
    want = {6: {0: [0.0], 1: [0.0, 6.0], 2: [1.0], 3: [2.0], 4: [3.0], 5: [4.0]},
            12: {0: [0.0], 1: [0.0, 6.0], 2: [1.0], 3: [2.0], 4: [3.0], 5: [4.0], 6: [5.0], 7: [6.0], 8: [6.0],
                 9: [7.0], 10: [7.0], 11: [8.0]}}
    for r in (6, 12):
        rep, obs = run(many_queues_victim(r), monkeypatch)
        assert by_session(obs, "a") == want[r], r
        m = pool(rep, "m")
        assert (m.admissions, m.preemptions) == (r + 1, 1)


def test_a_victim_requeued_at_the_tail_is_placed_by_its_keys_at_its_re_entry(monkeypatch):
    """pool-reference `preempt`: "requeue tail treats it as a newcomer: … queue by places it by its keys";
    `queue` by: keys are reevaluated for every waiting hold before each admission attempt.

    cap 2, queue by (x). s0 and s1 hold 1 each at 0 (x = 0); s1 sets x = 9 in its body. s2 (x = 5) asks 2
    at 0.5 and waits. At 1 s0's grow of 1 preempts the last admitted, s1, which re-enters with x = 9, behind
    s2 (x = 5). At 2 s0 releases 2: s2 is the head and takes both; s1 waits for s2's release at 3. (By the
    x = 0 it joined with first, s1 would be the head at 2 and s2 would wait until 13.)"""
    src = """
pool m { cap 2; queue by (x); preempt by (-admission) requeue tail; }
stage d : delay;
workload { arrive batch(3); }
session {
  set x = 0;
  branch (serial == 0) { hold m (1) { run d (1); grow m (1); run d (1); } }
  else { branch (serial == 1) { hold m (1) { observe a = now; set x = 9; run d (10); } }
  else { run d (0.5); set x = 5; hold m (2) { observe a = now; run d (1); } } }
  observe done = now;
  end;
}
run { horizon 100; }
"""
    rep, obs = run(src, monkeypatch)
    assert by_session(obs, "a") == {1: [0.0, 3.0], 2: [2.0]}
    assert by_session(obs, "done") == {0: [2.0], 2: [3.0], 1: [13.0]}
    m = pool(rep, "m")
    assert (m.admissions, m.preemptions) == (4, 1)


# --- a hold's header is read at one moment ----------------------------------------------------------------

EXCLUSIVE_REUSE = """
pool kv { cap 1000; }
pool reqs { cap 10; admit via e; }
stage e : step { budget 10; cost 1; memory kv; SERVE}
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold reqs (1), kv (5) { decode on e (20); } }
  else {
    hold kv (30) { load kv (20); } cache (30);
    run d (0.5);
    hold reqs (1), kv (budget_left(e)) reuse (budget_left(e)) {
      set c = cached; observe cc = c; observe u = used(kv); prefill on e (5);
    } cache (30);
  }
  end;
}
run { horizon 100; }
"""


def test_the_reuse_bound_reads_the_budget_the_units_read(monkeypatch):
    """§3 at admission: "Everything in a hold's header — the units, reserve, reuse — is evaluated when the
    session is admitted"; §3 Pools: under `serve exclusive prefill` "a fitting waiting prefill can displace
    tentative decodes, and its header sees the full budget"; the admission "consumes at most ρ units of its
    own cached prefix".

    s1 leaves 20 units of its own prefix on kv at 0 (a load of 20 in a hold of 30, cached) and joins reqs at
    0.5; s0 decodes on e from 0. At 1 e plans with s0's decode resident: s1's header reads budget_left(e)
    in its units and its reuse bound. Under exclusive prefill both read the whole budget, 10: s1 takes 10
    units and consumes 10 of its 20 (used 5 + 10). In admission order s0's decode has taken 1 token: both
    read 9 (used 5 + 9, 9 consumed). (The reuse bound read the planning's remaining 9 under exclusive
    prefill, where the units read 10: 9 consumed of an allocation of 10.)"""
    for serve, want in (("serve exclusive prefill; ", (10.0, 15.0)), ("", (9.0, 14.0))):
        rep, obs = run(EXCLUSIVE_REUSE.replace("SERVE", serve), monkeypatch)
        assert (obs["cc"], obs["u"]) == ([(1, 1.0, want[0])], [(1, 1.0, want[1])]), serve


def test_the_reuse_bound_sees_the_queue_the_units_see(monkeypatch):
    """§3 at admission (the header is evaluated when the session is admitted, all of it at that moment);
    docs/language.md: `queued(p)` counts the holds waiting in p's queue.

    At a pool admitted at settle time: s0 caches 5 units on m, then asks queued(m) units with the reuse
    bound queued(m): at its admission it is the one hold waiting, so both read 1: it takes 1 unit and
    consumes 1 of its 5. On an engine's queue: s0 and s1 each leave 20 units of their own on kv at 0 and
    join reqs; the engine admits s0 with both waiting (units and bound 4 * 2 = 8: 8 consumed), then s1
    alone (4: 4 consumed, used 8 + 4). (The bound was read once the session had left its queue: 0 consumed
    at the pool; 4 and 0 on the engine.)"""
    src = """
pool m { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold m (5) { run d (1); } cache (5);
  hold m (queued(m)) reuse (queued(m)) { observe c = cached; observe u = used(m); } cache (1);
  end;
}
run { horizon 100; }
"""
    _rep, obs = run(src, monkeypatch)
    assert (obs["c"], obs["u"]) == ([(0, 1.0, 1.0)], [(0, 1.0, 1.0)])
    src = """
pool kv { cap 1000; }
pool reqs { cap 10; admit via e; }
stage e : step { budget 10; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (30) { load kv (20); } cache (30);
  hold reqs (1), kv (4 * queued(reqs)) reuse (4 * queued(reqs)) {
    set c = cached; observe cc = c; observe u = used(kv); prefill on e (1);
  } cache (30);
  end;
}
run { horizon 100; }
"""
    _rep, obs = run(src, monkeypatch)
    assert obs["cc"] == [(0, 0.0, 8.0), (1, 0.0, 4.0)]
    assert obs["u"] == [(0, 0.0, 8.0), (1, 0.0, 12.0)]


KEYED_BY_BUDGET = """
pool kv { cap 1000; }
pool reqs { cap 10; admit via e; queue by (p <= budget_left(e) ? 0 : 1, serial); }
stage e : step { budget 10; cost 1; memory kv; SERVE}
stage d : delay;
workload { arrive batch(3); }
session {
  set p = serial == 1 ? 10 : 9;
  branch (serial == 0) { hold reqs (1), kv (5) { decode on e (20); } }
  else {
    run d (0.5);
    hold reqs (1), kv (p) { observe a = now; prefill on e (p); }
  }
  end;
}
run { horizon 100; }
"""


def test_queue_keys_read_the_attempts_budget_under_exclusive_prefill(monkeypatch):
    """§3 Waiting selection: "With admit via, budget_left(stage) reads that attempt's remaining token
    budget"; §3 Stages: under `serve exclusive prefill` a waiting prefill that fits "can replace them and
    use the full budget, including in budget_left at admission"; "Once a prefill is selected, no further
    waiting request is admitted in that iteration".

    s0 decodes on e from 0; s1 (p = 10) and s2 (p = 9) wait from 0.5, keyed (p <= budget_left(e) ? 0 : 1,
    serial). At 1, under exclusive prefill, the attempt has the whole budget, 10: both keys are 0 and s1
    (serial 1) is the head; its prefill of 10 is selected and ends the admissions: s2 waits until 2. In
    admission order s0's decode has taken 1 token: the attempt has 9, s1's key is 1, so s2 is admitted at
    1 with its 9 tokens and s1 at 2. (The keys read the estimate of the next iteration, 9, under exclusive
    prefill too: s2 first.)"""
    for serve, want in (("serve exclusive prefill; ", {1: [1.0], 2: [2.0]}), ("", {2: [1.0], 1: [2.0]})):
        _rep, obs = run(KEYED_BY_BUDGET.replace("SERVE", serve), monkeypatch)
        assert by_session(obs, "a") == want, serve


def test_queue_keys_read_the_budget_a_waiting_growth_left(monkeypatch):
    """§3 Waiting selection (the keys' budget_left is the attempt's); §3 grow: "with preempt none the session
    waits and resumes where it was" (a resident whose growth waits takes no token of the iteration).

    kv (cap 32, block 16, preempt none) is full from 0: s3 holds 16 until 5, s0 16. s0's prefill of 20 takes
    10 tokens in [0, 1]; at 1 it must grow to 32 and waits, taking none, so the attempt at 1 has all 10
    left. s1 and s2 wait from 0.5, keyed (budget_left(e) > 5 ? serial : -serial): 10 > 5, so s1 is the
    head, admitted with s2 still waiting (queued 1), then s2 (queued 0); both finish at 2; s0 grows when
    s3 releases at 5 and finishes at 6. (The keys read S's estimate, 10 less the 10 tokens s0 would take,
    0: s2 first.)"""
    src = """
pool kv { cap 32; block 16; preempt none; }
pool reqs { cap 10; admit via e; queue by (budget_left(e) > 5 ? serial : -serial); }
stage e : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold reqs (1), kv (16) { prefill on e (20) growing kv; } }
  else { branch (serial == 3) { hold kv (16) { run d (5); } }
  else {
    run d (0.5);
    hold reqs (1) { observe q = queued(reqs); prefill on e (serial == 1 ? 5 : 3); }
  } }
  observe done = now;
  end;
}
run { horizon 100; }
"""
    _rep, obs = run(src, monkeypatch)
    assert obs["q"] == [(1, 1.0, 1.0), (2, 1.0, 0.0)]
    assert by_session(obs, "done") == {0: [6.0], 1: [2.0], 2: [2.0], 3: [5.0]}


# --- leases, loads and preemptions: what a session's prefix and position are ---------------------------------

def test_a_lease_and_a_later_hold_on_its_pool_leave_the_latest_release_as_the_prefix(monkeypatch):
    """§3 Pools: a lease keeps the allocation "until … t seconds …, and cache applies then"; "Other entries
    are evicted in the pool's order until allocations and cache fit"; docs/language.md: a session has one
    prefix of its own per pool, the one its latest release left (a replaced one leaves without an eviction).

    cap 10. s0 holds 4 on [0, 1] and leases it until 6, then holds 2 on [1, 2] (used 4 + 3 + 2 = 9 at 1:
    s1's first hold has not ended yet) and caches 2 at 2. s1 holds 3 on [0, 1] and leases it until 2; its
    second hold of 3 does not fit at 1 (9 + 3 > 10) and is admitted at 2 after s0's release (its event came
    first): used 4 + 3 + 3 = 10, so s0's cached 2 are evicted (1 entry, 2 units). s1's lease then ends and
    caches 3; s1's hold caches 1 at 5, which replaces the 3 (no eviction); s0's lease caches its 4 at 6."""
    src = """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (4) { run d (1); } cache (4) lease m (5);
    hold m (2) { observe u1 = used(m); run d (1); } cache (2);
    observe c2 = cachedin(m); observe u2 = used(m);
    run d (4.5);
    observe c3 = cachedin(m); observe u3 = used(m);
  } else {
    hold m (3) { run d (1); } cache (3) lease m (1);
    hold m (3) { run d (3); } cache (1);
    observe c2 = cachedin(m); observe u2 = used(m);
  }
  end;
}
run { horizon 100; }
"""
    rep, obs = run(src, monkeypatch)
    assert obs["u1"] == [(0, 1.0, 9.0)]
    assert obs["c2"] == [(0, 2.0, 2.0), (1, 5.0, 1.0)]
    assert obs["u2"] == [(0, 2.0, 7.0), (1, 5.0, 4.0)]
    assert (obs["c3"], obs["u3"]) == ([(0, 6.5, 4.0)], [(0, 6.5, 0.0)])
    m = pool(rep, "m")
    assert (m.admissions, m.evicted_entries, m.evicted_units) == (4, 1, 2.0)


def test_a_self_victims_loaded_position_is_its_computed_and_its_cached_prefix(monkeypatch):
    """§3 Pools: "load m (n) advances the innermost enclosing hold's position on m by n"; grow: the victim's
    "hold is released with its computed prefix cached", "the grower itself can be the victim", and "the
    re-executed hold finds computed set to the position the hold had computed"; cache keeps min(ℓ, computed).

    cap 10, preempt lifo. s0 holds 2 on [0, 3]. s1 holds 8 from 1 (cached 0, computed 0) and loads 6; at 2
    its grow of 1 finds no room and preempts the last admitted, itself: its position 6 is cached and it is
    admitted again at once (2 + 8 <= 10, its own 6 consumed): cached 6, computed 6. It loads the 0 it lacks
    and ends at 3, caching its position, 6."""
    src = """
pool q { cap 10; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold q (2) { run d (3); } }
  else {
    run d (1);
    hold q (8) {
      observe c = cached; observe k = computed; observe a = now;
      load q (6 - cached);
      branch (computed == 0) { run d (1); grow q (1); }
      run d (1);
    } cache (8);
    observe own = cachedin(q);
  }
  end;
}
run { horizon 100; }
"""
    rep, obs = run(src, monkeypatch)
    assert [v for _s, _t, v in obs["c"]] == [0.0, 6.0]
    assert [v for _s, _t, v in obs["k"]] == [0.0, 6.0]
    assert [t for _s, t, _v in obs["a"]] == [1.0, 2.0]
    assert obs["own"] == [(1, 3.0, 6.0)]
    q = pool(rep, "q")
    assert (q.admissions, q.preemptions) == (3, 1)


def test_a_victim_requeued_at_the_tail_is_keyed_by_the_computed_its_preemption_set(monkeypatch):
    """pool-reference `preempt`: requeue tail "treats it as a newcomer: … queue by places it by its keys";
    §3 grow: the preemption sets computed to the position the hold had computed.

    cap 2, queue by (-computed). s0 and s1 hold 1 each at 0; s1 loads 1. s2 asks 2 at 0.5 (key 0). At 1
    s0's grow preempts s1, whose computed is now 1: key -1, ahead of s2 though it joined after. At 2 s0
    releases 2: s1 is admitted (1 unit), s2 (2) waits for s1's release at 12. (Keyed by the computed of 0
    it first joined with, s1 would tie with s2 and follow it, the later to join.)"""
    src = """
pool m { cap 2; queue by (-computed); preempt by (-admission) requeue tail; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (1); run d (1); } }
  else { branch (serial == 1) { hold m (1) { observe a = now; load m (1); run d (10); } }
  else { run d (0.5); hold m (2) { observe a = now; run d (1); } } }
  observe done = now;
  end;
}
run { horizon 100; }
"""
    rep, obs = run(src, monkeypatch)
    assert by_session(obs, "a") == {1: [0.0, 2.0], 2: [12.0]}
    assert by_session(obs, "done") == {0: [2.0], 1: [12.0], 2: [13.0]}
    assert pool(rep, "m").preemptions == 1


def test_a_leased_scopes_reservation_ends_and_a_waiting_growth_takes_the_room(monkeypatch):
    """pool-reference `reserve held`: "Growth by d requires used + Σ_{i≠grower} u_i + d <= cap";
    "Reservations end with the hold's scope …; leases retain none"; `preempt none`: "Wait for room, then
    resume".

    cap 10. s0 holds 2 reserving 6 (u = 4) on [0, 1], then leases the 2. s1 holds 2 from 0 (2 + 4 + 2 <= 10)
    and grows by 3 at 0.5: 4 + 4 + 3 > 10, so it waits. At 1 s0's scope ends: its lease keeps 2 units and
    no reservation, 4 + 0 + 3 <= 10, and s1 grows then (used 7). s0's lease holds its 2 until it ends."""
    src = """
pool m { cap 10; reserve held; preempt none; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (2) reserve (6) { run d (1); } lease m (inf); run d (10); observe u0 = used(m); }
  else { hold m (2) { run d (0.5); grow m (3); observe g = now; observe u = used(m); run d (1); } }
  end;
}
run { horizon 100; }
"""
    _rep, obs = run(src, monkeypatch)
    assert (obs["g"], obs["u"], obs["u0"]) == ([(1, 1.0, 1.0)], [(1, 1.0, 7.0)], [(0, 11.0, 2.0)])


def test_exclusive_prefill_admits_only_while_the_tentative_decodes_leave_budget(monkeypatch):
    """§3 Stages, serve exclusive prefill: "resident decodes are tentative: while budget is left, a waiting
    prefill that fits can replace them and use the full budget"; admission happens "while the iteration
    has budget left".

    budget 2. s0 and s1 are admitted at 0 as decodes of 4 tokens, one token each an iteration: they spend
    the whole budget in [0, 4]. s2's prefill of 2 waits from 0.5: no budget is left at 1, 2 or 3, so it is
    not admitted (though it would fit and could displace them) until 4, when both decoders are done; it
    ends at 5."""
    src = """
pool kv { cap 1000; }
pool reqs { cap 10; admit via e; }
stage e : step { budget 2; cost 1; memory kv; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) { hold reqs (1), kv (5) { decode on e (4); } }
  else { run d (0.5); hold reqs (1), kv (2) { observe a = now; prefill on e (2); } }
  observe done = now;
  end;
}
run { horizon 100; }
"""
    _rep, obs = run(src, monkeypatch)
    assert obs["a"] == [(2, 4.0, 4.0)]
    assert by_session(obs, "done") == {0: [4.0], 1: [4.0], 2: [5.0]}


def test_a_pools_figures_after_the_warm_up_with_a_lease_and_a_whole_entry_evicted(monkeypatch):
    """§3 Statistics: per pool "the time-average used, cached, queue and holders, the mean queue wait,
    admissions, evictions"; docs/language.md: time averages over [warmup, end], admissions and evictions
    at or after the warm-up, a lease a holder; §3 Pools: without `block` eviction is per entry.

    cap 10, warm-up 2, horizon 6. s0 holds 4 on [1, 3] and leases them until 5, then caches 4. s1 asks 7 at
    1.5: 4 + 7 > 10, it waits until 5, when used 0 + cached 4 + 7 > 10 evicts s0's whole entry (4 units).
    Over [2, 6]: used 4 on [2, 5] and 7 on [5, 6]: 19 / 4; queue 1 on [2, 5]: 3 / 4; holders 1 throughout;
    cached 0 (s0's entry is cached and evicted at 5); one admission (at 5, waited 3.5); one entry of 4
    evicted. s0's admission at 1 is before the warm-up."""
    src = """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (1); hold m (4) { run d (2); } cache (4) lease m (2); run d (10); }
  else { run d (1.5); hold m (7) { run d (10); } }
  end;
}
run { horizon 6; warmup 2; }
"""
    rep, _obs = run(src, monkeypatch)
    m = pool(rep, "m")
    assert (m.used, m.queue, m.holders, m.cached) == (4.75, 0.75, 1.0, 0.0)
    assert (m.admissions, m.wait, m.evicted_entries, m.evicted_units) == (1, 3.5, 1, 4.0)


# --- eviction orders that read the entries' age ------------------------------------------------------------

AGED = """
pool m { cap 11; evict ORDER; }
stage d : delay;
workload { arrive batch(4); }
session {
  set z = serial == 1 ? 5 : 3;
  branch (serial < 3) { run d (1.5 * serial); hold m (z) { run d (1); } cache (z); run d (5 - 1.5 * serial); }
  else { run d (5); hold m (ASK) { run d (1); } }
  observe c = cachedin(m);
  end;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("order, ask, kept", [
    ("by (age)", 4, (3, 0, 0)),          # youngest first: s2, then s1 (12 > 11 after s2)
    ("by (-age)", 4, (0, 0, 3)),         # oldest first: s0, then s1
    ("by (-size, age)", 4, (3, 0, 3)),   # largest first: s1 alone (6 + 4 <= 11)
    ("by (size, age)", 4, (0, 5, 0)),    # smallest, ties youngest: s2, then s0
    ("by (size, age)", 1, (3, 5, 0)),    # s2 alone
    ("by (size, -age)", 1, (0, 5, 3)),   # smallest, ties oldest: s0 alone
    ("by (age / 3)", 1, (3, 5, 0)),      # a monotone function of age orders as age: s2
    ("by (-age * 2)", 1, (0, 5, 3)),     # as -age: s0
    ("by (size - age)", 1, (0, 5, 3)),   # keys -1, 2.5, 2: s0
    ("lru", 1, (0, 5, 3)),               # release time: s0
])
def test_eviction_orders_that_read_age_by_hand(monkeypatch, order, ask, kept):
    """pool-reference `evict`: "`by (k1, …)` ascending keys, then release order"; keys "may read size, age,
    last"; docs/language.md: `age` is now - `last`, the entry's release time; §3 Pools: entries are evicted
    "in the pool's order until allocations and cache fit" (per entry without `block`).

    cap 11. s0 caches 3 at 1, s1 5 at 2.5, s2 3 at 4 (at most 11 held or cached at any time, so nothing is
    evicted before 5); at 5 their ages are 4, 2.5 and 1. s3 asks ASK at 5 with 11 cached: entries go, in
    the order's keys, until 11 - evicted + ASK <= 11. ``kept`` is what s0, s1, s2 find at 6."""
    rep, obs = run(AGED.replace("ORDER", order).replace("ASK", str(ask)), monkeypatch)
    assert obs["c"] == [(0, 6.0, float(kept[0])), (1, 6.0, float(kept[1])), (2, 6.0, float(kept[2])),
                        (3, 6.0, 0.0)]
    m = pool(rep, "m")
    assert m.evicted_units == 11.0 - sum(kept)
    assert m.evicted_entries == sum(1 for k in kept if k == 0)


@pytest.mark.parametrize("r", [6, 12, 20])
def test_heads_of_a_family_waiting_for_one_pool_go_in_member_order(monkeypatch, r):
    """§3 Ties: "a hold on several pools waits in its first pool's queue; where the heads of two queues both
    wait for room in one pool … the pool declared first is served first" (a family's members in index
    order); the settle after every event admits the heads that fit.

    q[0] … q[r-1] (cap 1 each) and m (cap r / 2); 2r sessions at 0, session k holding q[k mod r] and m for
    1 s. At 0 sessions 0 … r/2 - 1 take m; the others wait, r/2 … r-1 for m alone, r … 2r-1 behind those
    on their member. Each release at 1 frees one unit of m and the member of the session released: the
    member's next head (r + k, declared first among the queues waiting) takes it. So r … 3r/2 - 1 go at 1,
    r/2 … r-1 at 2, 3r/2 … 2r-1 at 3. (At 12 and 20 members each blocked head is tried again only when
    room frees in a pool it needs.)"""
    src = f"""
pool m {{ cap {r // 2}; }}
pool q[{r}] {{ cap 1; }}
stage d : delay;
workload {{ arrive batch({2 * r}); }}
session {{
  set j = serial % {r};
  hold q[j] (1), m (1) {{ observe a = now; run d (1); }}
  end;
}}
run {{ horizon 100; }}
"""
    rep, obs = run(src, monkeypatch)
    h = r // 2
    want = {k: [0.0 if k < h else 2.0 if k < r else 1.0 if k < r + h else 3.0] for k in range(2 * r)}
    assert by_session(obs, "a") == want
    assert pool(rep, "m").admissions == 2 * r


def test_sessions_admitted_together_run_in_the_order_they_became_ready(monkeypatch):
    """§3: commands "run whenever a session is ready, in the order sessions became ready"; Ties: a pool's
    queue by its keys, then the join order; a fifo queue in join order.

    p (cap 3, queue by (-serial)) is held whole by s0 on [0, 1]; s1, s2, s3 wait in it from 0.5. At 1 the
    settle admits them by their keys, s3, s2, s1, and they become ready in that order, so they join r's
    FIFO queue (cap 1) in that order: s3 holds r on [1, 2], s2 on [2, 3], s1 on [3, 4]. (In serial order
    it would be s1 first.)"""
    src = """
pool p { cap 3; queue by (-serial); }
pool r { cap 1; }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold p (3) { run d (1); } }
  else {
    run d (0.5);
    hold p (1) { hold r (1) { observe a = now; run d (1); } }
  }
  end;
}
run { horizon 100; }
"""
    _rep, obs = run(src, monkeypatch)
    assert obs["a"] == [(3, 1.0, 1.0), (2, 2.0, 2.0), (1, 3.0, 3.0)]


def test_queue_keys_read_the_budget_quiet_decoders_leave(monkeypatch):
    """§3 Waiting selection (the keys' budget_left is the attempt's); §3 Stages: "One token to a decoding
    job, up to chunk to a prefilling one, until the budget is spent; … then the stage admits".

    budget 10. Three decoders from 0 and a fourth from 21 (50 and 30 tokens: one each an iteration, planned
    in stretches of quiet rounds on the picked tier, per job on the general one). s4 (p = 8) and s5 (p = 7)
    wait from 30.5, keyed (p <= budget_left(e) ? 0 : 1, serial). At 31 the decoders take 4: 6 left, both
    keys are 1 and s4 (serial) is the head; its prefill takes the 6, so s5 waits. At 32 s4's last 2 tokens
    and the decoders leave 4: s5 is admitted and takes them; s4 is done at 33, s5 (3 tokens left) at 34."""
    src = """
pool kv { cap 1000; }
pool reqs { cap 10; admit via e; queue by (p <= budget_left(e) ? 0 : 1, serial); }
stage e : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(6); }
session {
  set p = serial == 4 ? 8 : 7;
  branch (serial < 3) { hold reqs (1), kv (5) { decode on e (50); } }
  else { branch (serial == 3) { run d (20.5); hold reqs (1), kv (1) { observe a = now; decode on e (30); } }
  else {
    run d (30.5);
    hold reqs (1), kv (p) { observe a = now; prefill on e (p); }
  } }
  observe done = now;
  end;
}
run { horizon 200; }
"""
    _rep, obs = run(src, monkeypatch)
    assert obs["a"] == [(3, 21.0, 21.0), (4, 31.0, 31.0), (5, 32.0, 32.0)]
    assert by_session(obs, "done") == {0: [50.0], 1: [50.0], 2: [50.0], 3: [51.0], 4: [33.0], 5: [34.0]}


def test_under_exclusive_prefill_a_waiting_decodes_header_reads_the_whole_budget(monkeypatch):
    """docs/language.md (Moments; language.txt gives the whole budget to "a waiting prefill" and is silent
    on a waiting decode): under `serve exclusive prefill` every head's header reads the whole budget, since
    it is read before the body says whether the hold prefills or decodes.

    budget 10. s0 decodes from 0; s1 waits from 0.5 with units budget_left(e) and a body that decodes. At
    1 s0's tentative decode has taken 1 token, yet s1's header reads 10: used 5 + 10. Both decode in that
    iteration (a decode displaces nothing)."""
    src = """
pool kv { cap 1000; }
pool reqs { cap 10; admit via e; }
stage e : step { budget 10; cost 1; memory kv; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold reqs (1), kv (5) { decode on e (3); } }
  else { run d (0.5); hold reqs (1), kv (budget_left(e)) { observe u = used(kv); decode on e (3); } }
  observe done = now;
  end;
}
run { horizon 100; }
"""
    _rep, obs = run(src, monkeypatch)
    assert obs["u"] == [(1, 1.0, 15.0)]
    assert by_session(obs, "done") == {0: [3.0], 1: [4.0]}


def test_a_victims_position_is_what_it_computed_not_the_token_planned_for_it(monkeypatch):
    """pool-reference `preempt`: keys read `position` ("the position its hold has computed on the pool") at
    the Victim moment, ties to the last admitted; §3 Stages: "its tokens are applied when it ends"; a pool
    that no stage admits is admitted at the settle; §3 Statistics: stuck counts a session preempted a
    second time without having advanced past its previous preemption's position.

    cap 12, preempt by (position), no block. s0 (5) and s1 (6) prefill on [0, 1]: positions 5 and 6. At 1
    s0 decodes first: it grows to 6 (used 12) and is given a token; s1's growth to 7 does not fit. By what
    they computed s0 is at 5, s1 at 6: s0 is the victim (with s0's planned token counted they would tie at
    6 and the last admitted, s1, would go). s1 grows to 7 and decodes on [1, 2] and [2, 3]. At 2 the settle
    admits s0 again (7 + 5 <= 12), but s1's growth to 8 then preempts it at position 0 (stuck: not past 5);
    s1 is done at 3; s0 is admitted at 3, prefills on [3, 4], decodes on [4, 6]. Used: 11, 7, 8, 5, 6, 7 on
    [0, 6]: 44 over the horizon 100."""
    src = """
pool kv { cap 12; preempt by (position); }
stage E : step { budget 100; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  set p = serial == 0 ? 5 : 6;
  hold kv (p) { observe t = now; run E prefill (p) growing kv; run E decode (2) growing kv; }
  observe done = now;
}
run { horizon 100; }
"""
    rep, obs = run(src, monkeypatch)
    assert by_session(obs, "t") == {0: [0.0, 2.0, 3.0], 1: [0.0]}
    assert by_session(obs, "done") == {0: [6.0], 1: [3.0]}
    kv = pool(rep, "kv")
    assert (kv.admissions, kv.preemptions, kv.stuck) == (4, 2, 1)
    assert abs(kv.used - 0.44) < 1e-12


def test_an_iterations_victim_at_a_settle_pool_is_admitted_again_at_the_next_event(monkeypatch):
    """§3 settle: ready sessions, then growers and admissions "until nothing changes; then it starts an
    iteration on every idle step stage"; pool-reference `preempt by (-position)`: the victim has the least
    key, ties to the last admitted; docs/language.md: such a victim is admitted again at the next event.

    cap 12, chunk 4. s0 (hold 4, prefill 8) and s1 (hold 4, prefill 4 then decode 2) take 4 tokens each on
    [0, 1]: both have computed 4. At 1 s0 grows to 8 for its second chunk (used 12); s1's decode needs 5:
    the keys -4 and -4 tie and s1, admitted last, preempts itself (with s0's planned chunk counted s0 would
    go, at -8). s1's hold fits again at once (8 + 4 <= 12) but is re-queued after the settle's admissions:
    it is admitted at 2, when the iteration ends (s0 done), prefills on [2, 3] and decodes on [3, 5]."""
    src = """
pool kv { cap 12; preempt by (-position); }
stage E : step { budget 100; chunk 4; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { observe t = now; run E prefill (8) growing kv; } }
  else { hold kv (4) { observe t = now; run E prefill (4) growing kv; run E decode (2) growing kv; } }
  observe done = now;
}
run { horizon 100; }
"""
    rep, obs = run(src, monkeypatch)
    assert by_session(obs, "t") == {0: [0.0], 1: [0.0, 2.0]}
    assert by_session(obs, "done") == {0: [2.0], 1: [5.0]}
    kv = pool(rep, "kv")
    assert (kv.admissions, kv.preemptions, kv.stuck) == (3, 1, 0)


@pytest.mark.parametrize("serve, done", [
    ("", (2.0, 3.0, 4.0)),
    ("serve by (remaining); ", (2.0, 3.0, 4.0)),
    ("serve by (-remaining); ", (3.0, 3.0, 4.0)),
    ("serve decode first; ", (2.0, 3.0, 4.0)),
])
def test_a_budget_split_among_chunked_prefills_in_each_serving_order(monkeypatch, serve, done):
    """§3 Stages: "up to chunk to a prefilling one, until the budget is spent; … then the stage admits from
    the queues it serves"; serve by keys (remaining: "the tokens its run has left"), ties in admission
    order; "admission happens only while the iteration has budget left".

    budget 7, chunk 6. A (8 tokens), B (12), C (3) wait at 0. [0, 1]: A is admitted and takes 6, B takes
    the 1 left; C is not admitted. [1, 2]: in admission order (and by remaining, 2 < 11) A takes its last
    2 and B 5; by -remaining B takes 6 and A the 1 left. [2, 3]: B's 6 (admission order) or B's 5 and A's
    last 1 (-remaining), and C is admitted with the 1 left; [3, 4]: C's last 2."""
    src = f"""
pool reqs {{ cap 10; admit via e; }}
stage e : step {{ budget 7; chunk 6; cost 1; {serve}}}
workload {{ arrive batch(3); }}
session {{
  set p = serial == 0 ? 8 : serial == 1 ? 12 : 3;
  hold reqs (1) {{ observe a = now; prefill on e (p); }}
  observe done = now;
}}
run {{ horizon 100; }}
"""
    _rep, obs = run(src, monkeypatch)
    assert by_session(obs, "a") == {0: [0.0], 1: [0.0], 2: [2.0]}
    assert by_session(obs, "done") == {0: [done[0]], 1: [done[1]], 2: [done[2]]}
