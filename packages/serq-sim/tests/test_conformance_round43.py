"""Conformance of language.txt §2, §3 and pool-reference.txt / program-reference.txt by hand, round 43: the
keywords the earlier rounds exercised least, each in small programs on constant times whose figures are
worked out by hand.

* `transfer` (§2, The serving vocabulary: "run link (X); load Q (n); release P; — the KV of n tokens moves
  from the session's lease (or hold) on P to its hold on Q: the link takes the time, the tokens count as
  computed at Q, and P is given back"): a link's time and its sharing between transfers, from a lease and
  from an enclosing hold, and `transfer on E, I` under both `share` policies.
* `load` (§3, Pools: "load m (n) advances the innermost enclosing hold's position on m by n tokens, which
  its allocation must cover"): loads that add up, the cache they leave.
* `pull`, `latency`, `nic` (§2, Queues): a read waits the relation's latency on the reader's own delay
  stage, then divides the two NICs by the relation's share.
* `drop` (§3, Pools: "A program that models dropping them writes drop POOL; before end;"): what the
  report counts for it (no eviction) and what a later hold finds.
* `trace` and `ordered` (§3, Workload: "with a trace, turn loads the next turn's new, out, think, forced
  and sets more (ordered: session i replays trace session i)").
* `gauge` (§3, Gauges: "the report gives its time average over [warmup, end] … and the least and greatest
  value held for a positive time").
* `record` (docs/language.md: "The report keeps the rows whose column `sent` (without one: whose `time`) is
  at or after the warm-up's end").
* `arrive closed`, `init`, `hidden` (§2, §3 Workload: "init runs at arrival").
* `choose` (§3, Ties: "choose: the keys, in order, then the smallest index").
* `serve exclusive prefill` (§3, Stages).

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the
reports and every observe's samples the same bytes); observes are asserted as (session, time, value) and
the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import check_by_hand, run, run_error, stage

# ---------------------------------------------------------------------------------------------------------
# transfer and load: a link's time, its sharing, the cache at both ends
# ---------------------------------------------------------------------------------------------------------

TRANSFERS = [
    # Two sessions at 0: hold p (4) with no work, leased (inf), then hold q (4) and transfer (2) from p to
    # q (3) on link ps(1): two transfers of 2 at once, each at 1/2, both end at 4 (service 4, the time each
    # spent; the runs of 0 complete at once and are no completion of the stage, 2). release p
    # ends the leases: cache (4) of the allocation 4 → 4 each on p. q's hold ends at 4 with cache (4) of the
    # position the load reached, 3 → 3 each. Horizon 10: p used 2·4 on [0,4] = 32/10 = 3.2, cached 8 on
    # [4,10] = 48/10 = 4.8; q used 3.2, cached 6·6/10 = 3.6; holders 2·4/10 = 0.8 at both (a lease holds).
    ("two_transfers_share_a_ps_link", """
stage link : ps(1);
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(2); }
session {
  hold p (4) { run link (0); } cache (4) lease p (inf);
  hold q (4) {
    transfer (2) from p to q (3);
    observe x = now;
  } cache (4);
}
run { horizon 10; }
""", {"x": [(0, 4.0, 4.0), (1, 4.0, 4.0)]},
     {("link", None): {"completions": 2, "service": 4.0, "utilisation": 0.4},
      ("p", None): {"used": 3.2, "cached": 4.8, "holders": 0.8, "admissions": 2, "evicted_entries": 0},
      ("q", None): {"used": 3.2, "cached": 3.6, "holders": 0.8}}),
    # From an enclosing hold, not a lease: hold p (5) around hold q (5); transfer (1) on a delay link gives
    # p's allocation back at 1 (used(p) 0 after it), cached per p's hold, cache (5) of 5 → 5; the hold's
    # scope then has nothing left on p. q's hold caches min(5, 2) = 2, the load's position, at 3 (run d 2).
    # Horizon 5: p used 5·1/5 = 1, cached 5·4/5 = 4; q used 5·3/5 = 3, cached 2·2/5 = 0.8.
    ("a_transfer_from_the_enclosing_hold", """
stage link : delay;
stage d : delay;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(1); }
session {
  hold p (5) {
    hold q (5) {
      transfer (1) from p to q (2);
      observe up = used(p);
      observe cp = cachedin(p);
      run d (2);
    } cache (5);
    observe uq = used(q);
  } cache (5);
}
run { horizon 5; }
""", {"up": [(0, 1.0, 0.0)], "cp": [(0, 1.0, 5.0)], "uq": [(0, 3.0, 0.0)]},
     {("p", None): {"used": 1.0, "cached": 4.0}, ("q", None): {"used": 3.0, "cached": 0.8}}),
    # transfer on e, i: one flow over both stages. e ps(3), i ps(1); s0 transfers 4 over e and i, s1 runs 4
    # on e alone (a flow of the policy: e is held by a run with another). maxmin: both rise to 1, i fills
    # (s0 stops at 1), s1 goes on to 2 where e fills (1 + 2 = 3): s1 done at 4/2 = 2, s0 at 4/1 = 4.
    ("transfer_on_two_stages_maxmin", """
stage e : ps(3);
stage i : ps(1);
share maxmin;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold p (4) {
      hold q (4) { transfer on e, i (4) from p to q (4); observe t = now; } cache (4);
    } cache (4);
  } else {
    run e (4);
    observe t = now;
  }
}
run { horizon inf; }
""", {"t": [(1, 2.0, 2.0), (0, 4.0, 4.0)]}, {"end": 4.0, ("i", None): {"utilisation": 1.0}}),
    # The same under bottleneck: s0 gets min(3/2, 1/1) = 1, s1 its equal share 3/2 at e: s1 done at 4 / 1.5
    # = 8/3; s0 alone then gets min(3/1, 1/1) = 1: done at 4. e carries (1 + 1.5)/3 on [0, 8/3] and 1/3 on
    # [8/3, 4]: utilisation ((2.5/3)(8/3) + (1/3)(4/3)) / 4 = (20/9 + 4/9) / 4 = 2/3.
    ("transfer_on_two_stages_bottleneck", """
stage e : ps(3);
stage i : ps(1);
share bottleneck;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold p (4) {
      hold q (4) { transfer on e, i (4) from p to q (4); observe t = now; } cache (4);
    } cache (4);
  } else {
    run e (4);
    observe t = now;
  }
}
run { horizon inf; }
""", {"t": [(1, 8 / 3, 8 / 3), (0, 4.0, 4.0)]}, {"end": 4.0, ("e", None): {"utilisation": 2 / 3}}),
    # load: two loads add up (4 + 3 = 7 within the allocation 10), cache (10) keeps min(10, 7) = 7; a
    # second hold with cache consumes it: cached 7. Horizon 4: used 10 on [0,1] (run d 1) and on [1,2]
    # (the second hold, run d 1): 20 / 4 = 5; cached 7 on [1,1]: nothing (consumed at once), then 10 on
    # [2,4] (the second hold's allocation, no load): 20 / 4 = 5.
    ("loads_add_up_to_the_position_the_cache_keeps", """
stage d : delay;
pool q { cap 10; }
workload { arrive batch(1); }
session {
  hold q (10) { load q (4); load q (3); run d (1); } cache (10);
  hold q (10) { observe c = cached; run d (1); } cache (10);
}
run { horizon 4; }
""", {"c": [(0, 1.0, 7.0)]}, {("q", None): {"used": 5.0, "cached": 5.0}}),
    # A hold's position starts at 0 and a load advances it (the case above: 3 of 4 cached); a load of 0
    # reaches 0, so cache (6) keeps min(6, 0) = 0 and the next hold finds nothing. (Without the load the
    # position is the allocation, 6.)
    ("a_load_of_zero_caches_nothing", """
pool q { cap 10; }
workload { arrive batch(1); }
session {
  hold q (6) { load q (0); } cache (6);
  hold q (6) { observe c = cached; } cache (6);
}
run { horizon 1; }
""", {"c": [(0, 0.0, 0.0)]}, {}),
    # A loaded hold preempted on a pool no engine counts ("preempts its most recently admitted holder"):
    # s1 holds 2 at 0; s0 holds 3 at 0.5 and loads 2 (2 - cached 0); at 1 s1 grows 2: 2 + 3 + 2 > 6, the
    # victim is s0 (admitted last): its run leaves d, its position 2 is cached (cache (3) of 2) and it
    # waits at the head. s1's growth fits (4 + the cached 2 = 6); s1 ends at 2 and s0 is admitted again:
    # computed 2, cached 2 (its prefix), it loads 0 and runs 2: e 4. used 2·1 + 4·1 + 3·0.5 + 3·2 = 13.5
    # over 10; cached 2 on [1,2] and 2 on [4,10] (the position, cached 2 + 0): 1.4; queue 1 on [1,2];
    # admissions 3 (the re-admission counts) with waits 0, 0, 1; holders 4.5 / 10. d completes 0.5, 1, 1
    # and 2 (the preempted run is no completion): service 4.5 / 4.
    ("a_loaded_hold_preempted_resumes_from_its_position", """
pool kv { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) {
    hold kv (2) { run d (1); grow kv (2); run d (1); }
  } else {
    run d (0.5);
    hold kv (3) { observe c = computed; observe k = cached; load kv (2 - cached); run d (2); } cache (3);
    observe e = now;
  }
}
run { horizon 10; }
""", {"c": [(0, 0.5, 0.0), (0, 2.0, 2.0)], "k": [(0, 0.5, 0.0), (0, 2.0, 2.0)], "e": [(0, 4.0, 4.0)]},
     {("kv", None): {"used": 1.35, "cached": 1.4, "queue": 0.1, "holders": 0.45, "wait": 1 / 3, "admissions": 3,
                     "preemptions": 1},
      ("d", None): {"completions": 4, "service": 1.125}}),
    # The transferred tokens are the position a growing run goes on from (§2: "the tokens count as
    # computed at Q"): hold kvD (5), transfer (1) [0,1] loads 4; decode (3) growing on E (cost 1): [1,2]
    # reaches 5 (within the 5), [2,3] 6 (grows to 6 at 2), [3,4] 7 (7 at 3). cache (8) keeps min(8, 7) = 7.
    # kvD used 5 on [0,2], 6, 7: 23 / 5; cached 7 on [4,5]: 1.4. kvP's lease ends at 1: used 5 on [0,1],
    # cached 5 on [1,5].
    ("a_growing_decode_goes_on_from_the_transferred_tokens", """
pool kvP { cap 20; }
pool kvD { cap 20; }
stage link : delay;
stage E : step { budget 10; cost 1; memory kvD; }
workload { arrive batch(1); }
session {
  hold kvP (5) { } cache (5) lease kvP (inf);
  hold kvD (5) {
    transfer (1) from kvP to kvD (4);
    decode (3) growing kvD;
    observe u = used(kvD);
  } cache (8);
  observe c = cachedin(kvD);
}
run { horizon 5; }
""", {"u": [(0, 4.0, 7.0)], "c": [(0, 4.0, 7.0)]},
     {("kvD", None): {"used": 4.6, "cached": 1.4}, ("kvP", None): {"used": 1.0, "cached": 4.0},
      ("E", None): {"iterations": 3, "service": 3.0}}),
    # A transfer's release takes the innermost enclosing hold of its pool, not the lease (§3: "release m
    # inside the body … the innermost enclosing hold on m gives its allocation there back"): the lease of
    # 3, then hold p (2) around the transfer: its 2 go back at 1, cached per its clause (2); used(p) 3 (the
    # lease) after. A release outside every hold then ends the lease: cache (3) of 3 replaces the entry of
    # 2 (the longer), used 0. p used 5 on [0,1], 3 on [1,2]: 8/3; cached 2 on [1,2], 3 on [2,3]: 5/3.
    ("a_transfer_releases_the_hold_before_the_lease", """
pool p { cap 10; }
pool q { cap 10; }
stage d : delay;
stage link : delay;
workload { arrive batch(1); }
session {
  hold p (3) { } cache (3) lease p (inf);
  hold p (2) {
    hold q (1) { transfer (1) from p to q (1); observe u = used(p); } cache (1);
    run d (1);
  } cache (2);
  observe c2 = cachedin(p);
  release p;
  observe u3 = used(p);
  observe c3 = cachedin(p);
}
run { horizon 3; }
""", {"u": [(0, 1.0, 3.0)], "c2": [(0, 2.0, 2.0)], "u3": [(0, 2.0, 0.0)], "c3": [(0, 2.0, 3.0)]},
     {("p", None): {"used": 8 / 3, "cached": 5 / 3, "admissions": 2}}),
    # A release inside a hold that leases: the allocation goes back at once, cached (2), and the scope's
    # end has nothing left there to lease: used 0 throughout, cached 2 from 0.
    ("a_release_inside_a_leasing_hold_leaves_nothing_to_lease", """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold p (2) { release p; observe u = used(p); run d (1); } cache (2) lease p (inf);
  observe u2 = used(p);
  observe c2 = cachedin(p);
  run d (1);
}
run { horizon 3; }
""", {"u": [(0, 0.0, 0.0)], "u2": [(0, 1.0, 0.0)], "c2": [(0, 1.0, 2.0)]},
     {("p", None): {"used": 0.0, "cached": 2.0, "holders": 0.0}}),
    # Blocks of 4: hold q (7) allocates 8; load 5 reaches 5; cache (100) keeps min(100, 5) rounded down to
    # blocks, 4. The next hold finds 4 (cached), loads 3 to 7, and caches 4 again (7 rounded down).
    ("a_loads_position_cached_in_whole_blocks", """
pool q { cap 16; block 4; }
workload { arrive batch(1); }
session {
  hold q (7) { load q (5); observe u = used(q); } cache (100);
  observe c = cachedin(q);
  hold q (8) { observe k = cached; load q (3); } cache (100);
  observe c2 = cachedin(q);
}
run { horizon 1; }
""", {"u": [(0, 0.0, 8.0)], "c": [(0, 0.0, 4.0)], "k": [(0, 0.0, 4.0)], "c2": [(0, 0.0, 4.0)]},
     {("q", None): {"cached": 4.0, "admissions": 2}}),
    # A transfer between pools of blocks of 4: the lease of 6 holds 8 (used(p) 8) and caches min(6, 8)
    # rounded down, 4, when the transfer's release ends it at 1; q's load of 6 caches 4 too. Horizon 2:
    # each pool used 8 on [0,1] (4), cached 4 on [1,2] (2).
    ("a_transfer_between_pools_of_blocks", """
pool p { cap 16; block 4; }
pool q { cap 16; block 4; }
stage link : delay;
workload { arrive batch(1); }
session {
  hold p (6) { } cache (6) lease p (inf);
  observe up = used(p);
  hold q (6) { transfer (1) from p to q (6); } cache (6);
  observe cp = cachedin(p);
  observe cq = cachedin(q);
}
run { horizon 2; }
""", {"up": [(0, 0.0, 8.0)], "cp": [(0, 1.0, 4.0)], "cq": [(0, 1.0, 4.0)]},
     {("p", None): {"used": 4.0, "cached": 2.0}, ("q", None): {"used": 4.0, "cached": 2.0}}),
]

@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in TRANSFERS], ids=[c[0] for c in TRANSFERS])
def test_transfers_and_loads_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# pull, latency, nic: a read waits the relation's latency, then shares the two NICs
# ---------------------------------------------------------------------------------------------------------

PULL = """let NP = 2;
let ND = 1;
queue P[NP] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(4);
  prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); }
}
queue D[ND] : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(2);
  decode (prompt) from src {
    hold kv (prompt) {
      transfer (prompt - 2) from src to kv (prompt - 2);
      run (1);
    } cache (prompt);
  }
}
D pull P latency 0.5 share SHARE;
workload { arrive batch(2); }
session {
  set prompt = PROMPT;
  P[serial].prefill (prompt);
  observe f = now;
  D[0].decode (prompt) from P[serial];
  observe d = now;
}
run { horizon inf; }
"""

PULL_FAMILY = """let NP = 2;
let ND = 2;
queue P[NP] : prefill {
  pool kv { cap 100; }
  serve delay;
  nic ps(3);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D[ND] : decode {
  pool kv { cap 100; }
  serve delay;
  nic ps(4);
  decode (prompt) from src {
    hold kv (prompt) { transfer (prompt - 2) from src to kv (prompt - 2); } cache (prompt);
  }
}
D pull P share SHARE;
workload { arrive batch(4); }
session {
  set prompt = 8;
  set i = serial == 2 ? 1 : 0;
  set k = serial == 1 || serial == 2 ? 1 : 0;
  P[i].prefill (prompt);
  D[k].decode (prompt) from P[i];
  observe d = now;
}
run { horizon inf; }
"""

PULLS = [
    # Both prompts 9: the two prefills on P[0] and P[1] at once, 9 each (f 9). Each read waits 0.5 on
    # D's latency stage (a delay), then reads 7 over P.nic[i] (ps(4), one flow each) and D.nic[0] (ps(2),
    # both flows): maxmin gives each 1 (D's NIC fills at 1 + 1), 7 / 1 = 7: the reads end at 16.5, then
    # D's fifo serves run (1) in turn: 17.5 and 18.5. P's leases end at 16.5.
    ("two_reads_share_the_readers_nic_maxmin", PULL.replace("SHARE", "maxmin").replace("PROMPT", "9"),
     {"f": [(0, 9.0, 9.0), (1, 9.0, 9.0)], "d": [(0, 17.5, 17.5), (1, 18.5, 18.5)]},
     {"end": 18.5}),
    # The same under bottleneck: min(4/1, 2/2) = 1, the same 7 s.
    ("two_reads_share_the_readers_nic_bottleneck", PULL.replace("SHARE", "bottleneck").replace("PROMPT", "9"),
     {"f": [(0, 9.0, 9.0), (1, 9.0, 9.0)], "d": [(0, 17.5, 17.5), (1, 18.5, 18.5)]},
     {"end": 18.5}),
    # Prompts 5 and 9: s0's prefill ends at 5, its read (3) starts at 5.5 alone at min(4, 2) = 2: it ends at
    # 7, D's run (1) at 8. s1's prefill ends at 9, its read (7) from 9.5 at 2: 13, run (1): 14.
    ("reads_that_do_not_overlap_take_the_whole_nic",
     PULL.replace("SHARE", "maxmin").replace("PROMPT", "serial == 0 ? 5 : 9"),
     {"f": [(0, 5.0, 5.0), (1, 9.0, 9.0)], "d": [(0, 8.0, 8.0), (1, 14.0, 14.0)]},
     {"end": 14.0}),
    # Families: P[2] with nic ps(3) each, D[2] with nic ps(4) each, prompts 8 (reads of 6), the prefills
    # on delay stages, all done at 1. s0 P0→D0, s1 P0→D1, s2 P1→D1, s3 P0→D0: flows f0, f1, f3 share
    # P.nic[0]; f1 and f2 share D.nic[1]; f0 and f3 share D.nic[0]. maxmin: all rise to 1, where P.nic[0]
    # fills (f0, f1, f3 stop); f2 goes on to 3, where P.nic[1] fills (D.nic[1]: 1 + 3 = 4 fills too): s2
    # reads 6 at 3, done at 1 + 2 = 3; the others at 1, done at 7. P.nic[1] carries 3 of 3 for 2 s: 2/7;
    # D.nic[1] 4 of 4 for 2 s, 1 of 4 for 4 s: 3/7.
    ("reads_of_a_family_maxmin", PULL_FAMILY.replace("SHARE", "maxmin"),
     {"d": [(2, 3.0, 3.0), (0, 7.0, 7.0), (1, 7.0, 7.0), (3, 7.0, 7.0)]},
     {"end": 7.0, ("P.nic", 0): {"utilisation": 6 / 7, "service": 6.0}, ("P.nic", 1): {"utilisation": 2 / 7},
      ("D.nic", 1): {"utilisation": 3 / 7, "service": 4.0}, ("D.nic", 0): {"utilisation": 3 / 7}}),
    # bottleneck: f2 gets min(3/1, 4/2) = 2 (D.nic[1]'s equal share, one unit of P.nic[1] unused): s2 done
    # at 1 + 3 = 4; f0, f1, f3 min(3/3, ·) = 1: 7. P.nic[1]: 2 of 3 for 3 s = 2/7; D.nic[1]: 3 of 4 for 3
    # s, 1 of 4 for 3: 3/7; its mean service (6 + 3) / 2.
    ("reads_of_a_family_bottleneck", PULL_FAMILY.replace("SHARE", "bottleneck"),
     {"d": [(2, 4.0, 4.0), (0, 7.0, 7.0), (1, 7.0, 7.0), (3, 7.0, 7.0)]},
     {"end": 7.0, ("P.nic", 1): {"utilisation": 2 / 7, "service": 3.0},
      ("D.nic", 1): {"utilisation": 3 / 7, "service": 4.5}}),
    # Two reads in one entry, each its own wait: prefill [0,1] on a delay; the first read waits [1,1.5]
    # and moves 2 at min(4, 2) = 2: t1 2.5, where its release ends P's lease (cache (prompt): 6 cached);
    # the second waits [2.5,3] and moves 4 at 2: d 5 (its release finds nothing left). The latency stage:
    # 2 completions of 0.5; D.kv used 6 on [1,5]: 4.8; P.kv used 6 on [0,2.5], cached 6 on [2.5,5]: 3, 3.
    ("two_reads_in_one_entry_wait_twice", """queue P : prefill {
  pool kv { cap 100; }
  serve delay;
  nic ps(4);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D : decode {
  pool kv { cap 100; }
  serve delay;
  nic ps(2);
  decode (prompt) from src {
    hold kv (prompt) {
      transfer (2) from src to kv (2);
      observe t1 = now;
      transfer (4) from src to kv (3);
    } cache (prompt);
  }
}
D pull P latency 0.5 share maxmin;
workload { arrive batch(1); }
session { set prompt = 6; P.prefill (prompt); D.decode (prompt) from P; observe d = now; }
run { horizon inf; }
""", {"t1": [(0, 2.5, 2.5)], "d": [(0, 5.0, 5.0)]},
     {"end": 5.0, ("D.nic.latency", None): {"completions": 2, "service": 0.5},
      ("D.kv", None): {"used": 4.8}, ("P.kv", None): {"used": 3.0, "cached": 3.0},
      ("D.nic", None): {"completions": 2, "service": 1.5, "utilisation": 0.6}}),
]

@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in PULLS], ids=[c[0] for c in PULLS])
def test_pull_reads_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# drop: the session's own prefix, gone without an eviction
# ---------------------------------------------------------------------------------------------------------

DROPS = [
    # s0 holds p (2) for 1, s1 for 3, each caches 2 and drops it at once: cached is 0 throughout (the
    # entry and the drop at one instant), no eviction is counted; cachedin(p) after it 0. Used 2 + 2 on
    # [0,1], 2 on [1,3]: (4 + 4) / 4 = 2 over the horizon 4; the gauge of used(p) the same, least 0 (on
    # [3,4]) and greatest 4.
    ("drop_counts_no_eviction", """
pool p { cap 10; }
stage d : delay;
gauge u = used(p);
workload { arrive batch(2); }
session {
  hold p (2) { run d (serial == 0 ? 1 : 3); } cache (2);
  drop p;
  observe c = cachedin(p);
}
run { horizon 4; }
""", {"c": [(0, 1.0, 0.0), (1, 3.0, 0.0)]},
     {("p", None): {"used": 2.0, "cached": 0.0, "evicted_entries": 0, "evicted_units": 0.0, "admissions": 2},
      ("gauge", "u"): {"mean": 2.0, "min": 0.0, "max": 4.0}}),
    # s0 drops between its two holds, s1 does not: the second hold (cache) finds 0 for s0, 3 for s1.
    ("a_hold_after_a_drop_finds_nothing", """
pool p { cap 10; }
workload { arrive batch(2); }
session {
  hold p (3) { } cache (3);
  branch (serial == 0) { drop p; }
  hold p (3) { observe c = cached; } cache (3);
}
run { horizon 1; }
""", {"c": [(0, 0.0, 0.0), (1, 0.0, 3.0)]}, {}),
    # A hold without cache leaves the session's entry where it is (§3), so a drop inside it drops that
    # entry: s0 reads cachedin(p) 0 after its drop, s1 (no drop) 3. At the end of that hold nothing is
    # cached (no clause): s0 has 0 cached, s1 3 over [0,2]: cached 3 · 2 / 2 = 1.5 (horizon 2).
    ("a_drop_inside_a_hold_without_cache", """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold p (3) { } cache (3);
  hold p (2) {
    branch (serial == 0) { drop p; }
    observe c = cachedin(p);
    run d (2);
  }
}
run { horizon 2; }
""", {"c": [(0, 0.0, 0.0), (1, 0.0, 3.0)]}, {("p", None): {"cached": 3.0, "used": 4.0}}),
    # A drop with nothing cached, on a pool the session never held, is nothing: the run goes on (t 1).
    ("a_drop_of_nothing", """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { drop p; run d (1); observe t = now; }
run { horizon inf; }
""", {"t": [(0, 1.0, 1.0)]}, {("p", None): {"cached": 0.0, "evicted_entries": 0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in DROPS], ids=[c[0] for c in DROPS])
def test_drops_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# gauge: the time average over [warmup, end], the least and greatest value held for a positive time
# ---------------------------------------------------------------------------------------------------------

GAUGES = [
    # Warm-up 1, horizon 4: used 4 on [0,1] (cut), 2 on [1,3], 0 on [3,4]: (2·2 + 0) / 3 = 4/3; the least
    # 0, the greatest held after the warm-up 2.
    ("a_gauge_after_the_warm_up", """
pool p { cap 10; }
stage d : delay;
gauge u = used(p);
workload { arrive batch(2); }
session { hold p (2) { run d (serial == 0 ? 1 : 3); } }
run { horizon 4; warmup 1; }
""", {}, {("gauge", "u"): {"mean": 4 / 3, "min": 0.0, "max": 2.0}}),
    # At 1 the session releases 2 and holds 5 in the same instant: the gauge reads the instant's end, so
    # 0 is never held: 2 on [0,1], 5 on [1,2]; mean 3.5, least 2, greatest 5 (end 2, horizon inf).
    ("a_value_passed_through_in_an_instant_is_not_held", """
pool p { cap 10; }
stage d : delay;
gauge u = used(p);
workload { arrive batch(1); }
session { hold p (2) { run d (1); } hold p (5) { run d (1); } }
run { horizon inf; }
""", {}, {"end": 2.0, ("gauge", "u"): {"mean": 3.5, "min": 2.0, "max": 5.0}}),
    # A sum over a family: busy(s[0]) 1 on [0,2] (two jobs of 1 at a fifo), busy(s[1]) 1 on [0,3]; the sum
    # 2 on [0,2], 1 on [2,3], 0 on [3,4]: (4 + 1) / 4 = 1.25, least 0, greatest 2.
    ("a_gauge_of_a_sum_over_a_family", """
stage s[2] : fifo;
gauge b = sum j in 2 (busy(s[j]));
workload { arrive batch(3); }
session { branch (serial < 2) { run s[0] (1); } else { run s[1] (3); } }
run { horizon 4; }
""", {}, {("gauge", "b"): {"mean": 1.25, "min": 0.0, "max": 2.0}}),
    # A gauge of constants and holders: holders(p) + 0.5: 1.5 on [0,2] (one holder), 0.5 on [2,4]: mean 1,
    # least 0.5, greatest 1.5.
    ("a_gauge_with_a_constant_term", """
pool p { cap 10; }
stage d : delay;
gauge h = holders(p) + 0.5;
workload { arrive batch(1); }
session { hold p (1) { run d (2); } }
run { horizon 4; }
""", {}, {("gauge", "h"): {"mean": 1.0, "min": 0.5, "max": 1.5}}),
    # A step engine's busy (the jobs the running iteration serves) and queue (its residents), read at the
    # end of each instant, where the next iteration has started: [0,1] both prefills (2 and 3, budget
    # 10): 2 and 2; [1,2] s0's first decode (s1 left): 1 and 1; [2,3] its second: 1 and 1; then 0. Mean
    # (2 + 1 + 1) / 4 = 1 each, greatest 2. The stage: 3 completions (s1's decode of 0 is none), service
    # (1 + 1 + 2) / 3.
    ("gauges_of_a_step_engine", """
stage e : step { budget 10; cost 1; }
gauge b = busy(e);
gauge q = queue(e);
workload { arrive batch(2); }
session { prefill (serial == 0 ? 2 : 3); decode (serial == 0 ? 2 : 0); }
run { horizon 4; }
""", {}, {("gauge", "b"): {"mean": 1.0, "min": 0.0, "max": 2.0}, ("gauge", "q"): {"mean": 1.0, "max": 2.0},
          ("e", None): {"completions": 3, "service": 4 / 3, "utilisation": 0.75}}),
]

@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in GAUGES], ids=[c[0] for c in GAUGES])
def test_gauges_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# record: the rows, the warm-up cut by `sent` or by `time`
# ---------------------------------------------------------------------------------------------------------


def test_record_rows_are_cut_by_sent_else_by_time(monkeypatch):
    """Arrivals at 1, 2, 3, 4 (renewal(1): the first after one gap; arrivals 4), each recording at its
    arrival + 2 into `a` (a `sent` column, the arrival) and `b` (no `sent`: its `time`). Warm-up 2: `a`
    keeps the rows sent at or after 2, sessions 1, 2, 3 (2 at the boundary is kept); `b` keeps every row
    (times 3 … 6). The extra columns are the session, turn_no (0, no `turn;`) and now."""
    src = """
stage d : delay;
workload { arrive renewal(1); }
session {
  set t0 = now;
  run d (2);
  record a { sent = t0; x = serial * 10; }
  record b { y = serial; }
}
run { horizon 100; warmup 2; arrivals 4; }
"""
    r, js = check_by_hand(monkeypatch, src, {}, {"records": {"a": 3, "b": 4}, "end": 6.0})
    a = r.records("a", kind="numpy")
    assert list(a["session"]) == [1, 2, 3]
    assert list(a["sent"]) == [2.0, 3.0, 4.0]
    assert list(a["x"]) == [10.0, 20.0, 30.0]
    assert list(a["time"]) == [4.0, 5.0, 6.0]
    assert list(a["turn"]) == [0, 0, 0]
    b = r.records("b", kind="numpy")
    assert list(b["session"]) == [0, 1, 2, 3]
    assert list(b["time"]) == [3.0, 4.0, 5.0, 6.0]


def test_record_time_at_the_warm_up_is_kept(monkeypatch):
    """A row whose `time` is the warm-up's end is kept ("at or after"): arrivals at 1, 2, 3 (arrivals 3),
    each recording at arrival + 0.5; warm-up 2.5: the rows at 2.5 and 3.5, sessions 1 and 2."""
    src = """
stage d : delay;
workload { arrive renewal(1); }
session { run d (0.5); record r { v = serial; } }
run { horizon 100; warmup 2.5; arrivals 3; }
"""
    r, _ = check_by_hand(monkeypatch, src, {}, {"records": {"r": 2}})
    t = r.records("r", kind="numpy")
    assert list(t["session"]) == [1, 2]
    assert list(t["time"]) == [2.5, 3.5]


# ---------------------------------------------------------------------------------------------------------
# arrive closed, init, hidden
# ---------------------------------------------------------------------------------------------------------

CLOSED = [
    # closed(2): sessions 0 and 1 at 0 run 1 each and end at 1; 2 and 3 replace them at 1, end at 2; 4
    # and 5 at 2, end at 3; 6 and 7 at 3, still running at 3.5. init sets k = 10·serial at arrival.
    # arrivals 8, ended 6; mean live 2.
    ("a_closed_population_replaces_each_session_as_it_ends", """
stage d : delay;
workload { arrive closed(2); init { set k = 10 * serial; } }
session { run d (1); observe kk = k; }
run { horizon 3.5; }
""", {"kk": [(0, 1.0, 0.0), (1, 1.0, 10.0), (2, 2.0, 20.0), (3, 2.0, 30.0), (4, 3.0, 40.0), (5, 3.0, 50.0)]},
     {"arrivals": 8, "ended": 6, "mean_live": 2.0}),
    # closed(1) with a hidden attribute set in init and read by a run (a session statement may): session 0
    # runs 1 (ends 1), 1 runs 2 (ends 3), 2 runs 3 (ends 6), 3 arrives at 6 and runs 4: at 6.5 still running.
    # init reads now: the arrival times 0, 1, 3 observed at the ends.
    ("a_hidden_attribute_set_in_init", """
stage d : delay;
workload { arrive closed(1); hidden o; init { set o = serial + 1; set a = now; } }
session { run d (o); observe at = a; }
run { horizon 6.5; }
""", {"at": [(0, 1.0, 0.0), (1, 3.0, 1.0), (2, 6.0, 3.0)]}, {"arrivals": 4, "ended": 3, "mean_live": 1.0}),
    # closed(2) at a fifo server: the two at 0 queue (1 each): 0 ends at 1, its replacement 2 arrives at 1
    # and queues behind 1, which ends at 2; 3 arrives at 2, 2 ends at 3, … one completion a second: ended
    # at 1, 2, 3, 4 (sessions 0–3) by the horizon 4.5; arrivals 6; the response (now − a) 1, 2, 2, 2.
    ("a_closed_population_at_one_server", """
stage s : fifo;
workload { arrive closed(2); init { set a = now; } }
session { run s (1); observe r = now - a; }
run { horizon 4.5; }
""", {"r": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 3.0, 2.0), (3, 4.0, 2.0)]}, {"arrivals": 6, "ended": 4}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CLOSED], ids=[c[0] for c in CLOSED])
def test_closed_populations_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# choose: the keys in order, then the smallest index
# ---------------------------------------------------------------------------------------------------------

CHOOSES = [
    # Four sessions at 0, one after another: queue(s[j]) 0, 0, 0 → 0; then 1, 0, 0 → 1; 1, 1, 0 → 2; all
    # 1 → 0 (the smallest index). s[0] serves 0 then 3: done at 1, 1, 1, 2.
    ("ties_go_to_the_smallest_index", """
stage s[3] : fifo;
workload { arrive batch(4); }
session { choose j in 3 by (queue(s[j])); run s[j] (1); observe jj = j; }
run { horizon inf; }
""", {"jj": [(0, 1.0, 0.0), (1, 1.0, 1.0), (2, 1.0, 2.0), (3, 2.0, 0.0)]}, {}),
    # A second key breaks the first's ties: by (queue(s[j]), -j): 2, then 1, then 0, then 2 again.
    ("a_second_key_breaks_ties", """
stage s[3] : fifo;
workload { arrive batch(4); }
session { choose j in 3 by (queue(s[j]), -j); run s[j] (1); observe jj = j; }
run { horizon inf; }
""", {"jj": [(0, 1.0, 2.0), (1, 1.0, 1.0), (2, 1.0, 0.0), (3, 2.0, 2.0)]}, {}),
    # The count a let constant, the key an attribute of the session (serial % 2 on j's parity): session 0
    # wants even j: 0 (smallest); session 1 odd: 1; the chosen index is an attribute read afterwards.
    ("a_key_of_the_session_and_a_let_count", """
let N = 4;
stage d : delay;
workload { arrive batch(2); }
session { choose j in N by (abs(j % 2 - serial % 2), j == 0 ? 1 : 0); run d (j + 1); observe jj = j; }
run { horizon inf; }
""", {"jj": [(1, 2.0, 1.0), (0, 3.0, 2.0)]}, {}),
    # A family of one: choose j in 1 is 0 whatever the key.
    ("a_family_of_one", """
stage d : delay;
workload { arrive batch(1); }
session { choose j in 1 by (-inf); run d (1); observe jj = j; }
run { horizon inf; }
""", {"jj": [(0, 1.0, 0.0)]}, {}),
    # Routing by the session's own prefix over a family, after a drop: both cache 4 on kv[1] at 0; s1
    # drops it. At 1, s0's keys (-cachedin, j == 2 ? 0 : 1) are (0, 1), (-4, 1), (0, 0): kv[1], where its
    # hold finds 4; s1's are (0, 1), (0, 1), (0, 0): kv[2], cached 0. kv[1] keeps s0's 4 throughout (taken
    # and cached again at 1): cached 4; kv[2] s1's 4 on [1,2]: 2.
    ("by_the_sessions_own_prefix_after_a_drop", """
pool kv[3] { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv[1] (4) { } cache (4);
  branch (serial == 1) { drop kv[1]; }
  run d (1);
  choose j in 3 by (-cachedin(kv[j]), j == 2 ? 0 : 1);
  observe jj = j;
  hold kv[j] (4) { observe c = cached; } cache (4);
}
run { horizon 2; }
""", {"jj": [(0, 1.0, 1.0), (1, 1.0, 2.0)], "c": [(0, 1.0, 4.0), (1, 1.0, 0.0)]},
     {("kv", 1): {"cached": 4.0, "admissions": 3}, ("kv", 2): {"cached": 2.0, "admissions": 1},
      ("kv", 0): {"admissions": 0}}),
]

@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CHOOSES], ids=[c[0] for c in CHOOSES])
def test_choose_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# trace and ordered
# ---------------------------------------------------------------------------------------------------------

TRACE_SESSION = """stage d : delay;
workload { arrive batch(N); trace "t.csv"ORDERED; }
session {
  turn;
  loop {
    run d (new / 100);
    observe n = new + more;
    branch (more) { run d (think); turn; } else { end; }
  }
}
run { horizon inf; }
"""


def _trace_run(tmp_path, monkeypatch, csv: str, n: int, ordered: bool):
    (tmp_path / "t.csv").write_text(csv)
    prog = tmp_path / "p.sq"
    prog.write_text(TRACE_SESSION.replace("N", str(n)).replace("ORDERED", " ordered" if ordered else ""))
    return run("", monkeypatch, path=prog)


def test_a_trace_of_one_session_is_replayed_by_every_arrival(tmp_path, monkeypatch):
    """Without `ordered` each arrival replays a trace session drawn at random; with one trace session every
    arrival replays it (docs/language.md). Session 5's rows: new 100 (run 1, more 1), think 2, new 300
    (run 3, more 0): samples 101 at 1 and 300 at 1 + 2 + 3 = 6, for each of the three sessions; turns 2
    each, 6 in all."""
    r, obs = _trace_run(tmp_path, monkeypatch,
                        "session,turn,new,out,think,forced\n5,0,100,1,2,0\n5,1,300,1,0,0\n", 3, False)
    assert obs["n"] == [(0, 1.0, 101.0), (1, 1.0, 101.0), (2, 1.0, 101.0),
                        (0, 6.0, 300.0), (1, 6.0, 300.0), (2, 6.0, 300.0)]
    assert (r.result.turns, r.result.ended, r.result.end) == (6, 3, 6.0)


def test_ordered_replays_serial_mod_the_trace_sessions(tmp_path, monkeypatch):
    """`ordered` with 3 sessions over a trace of 2: session i replays trace session i mod 2 (docs/language.md:
    "`ordered` replays session `serial mod` the log's sessions"), in the file's order (4 first, then 1).
    Session 4: new 200 (run 2, more 1), think 1, new 100 (run 1): 201 at 2, 100 at 4. Session 1: new 50
    (more 0): 50 at 0.5. Sessions 0 and 2 replay 4, session 1 replays 1."""
    r, obs = _trace_run(tmp_path, monkeypatch,
                        "session,turn,new,out,think,forced\n4,0,200,1,1,0\n1,0,50,1,0,0\n4,1,100,1,0,0\n",
                        3, True)
    assert obs["n"] == [(1, 0.5, 50.0), (0, 2.0, 201.0), (2, 2.0, 201.0), (0, 4.0, 100.0), (2, 4.0, 100.0)]
    assert (r.result.turns, r.result.ended) == (5, 3)


# ---------------------------------------------------------------------------------------------------------
# serve exclusive prefill
# ---------------------------------------------------------------------------------------------------------

EXCLUSIVE = """
stage e : step { budget 10; cost 1; SERVE }
stage w : delay;
workload { arrive batch(2); }
session {
  run w (serial == 0 ? 0 : 1.5);
  prefill (4);
  observe f = now;
  decode (serial == 0 ? 3 : 1);
  observe d = now;
}
run { horizon inf; }
"""

EXCLUSIVES = [
    # s0 prefills 4 at [0,1] (f0 1), decodes its first token at [1,2]; s1 joins at 1.5. [2,3]: a resident
    # prefill goes first and alone: s1's 4 (f1 3), s0's decode waits. [3,4]: the decodes together, s0's
    # 2nd and s1's only (d1 4). [4,5]: s0's 3rd (d0 5). 5 iterations: prefill only 2, decode only 3; 12
    # tokens / 5 = 2.4.
    ("a_resident_prefill_goes_alone", EXCLUSIVE.replace("SERVE", "serve exclusive prefill;"),
     {"f": [(0, 1.0, 1.0), (1, 3.0, 3.0)], "d": [(1, 4.0, 4.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "prefill_only": 2, "decode_only": 3, "mixed": 0, "tokens": 2.4}}),
    # In admission order (the default): [2,3] serves s0's 2nd decode and s1's prefill together (mixed);
    # [3,4] s0's 3rd and s1's decode: both done at 4. 4 iterations, 12 tokens: 3 a step.
    ("the_same_in_admission_order", EXCLUSIVE.replace("SERVE", ""),
     {"f": [(0, 1.0, 1.0), (1, 3.0, 3.0)], "d": [(0, 4.0, 4.0), (1, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "prefill_only": 1, "decode_only": 2, "mixed": 1, "tokens": 3.0}}),
    # Through a pool the engine admits: s1 waits at reqs from 1.5; at 2 its prefill fits and displaces
    # s0's tentative decode (pool-reference.txt, admit via: "a fitting waiting prefill can displace
    # tentative resident decodes"): the same times as the resident case, s1 admitted at 2 (wait 0.5,
    # mean (0 + 0.5) / 2).
    ("a_waiting_prefill_displaces_the_decodes", """
pool reqs { admit via e; }
stage e : step { budget 10; cost 1; serve exclusive prefill; }
stage w : delay;
workload { arrive batch(2); }
session {
  run w (serial == 0 ? 0 : 1.5);
  hold reqs (1) {
    prefill (4);
    observe f = now;
    decode (serial == 0 ? 3 : 1);
  }
  observe d = now;
}
run { horizon inf; }
""", {"f": [(0, 1.0, 1.0), (1, 3.0, 3.0)], "d": [(1, 4.0, 4.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "prefill_only": 2, "decode_only": 3},
      ("reqs", None): {"wait": 0.25, "admissions": 2}}),
    # chunk still caps an exclusive prefill: budget 10, chunk 3, two prefills of 5: one prefill a step,
    # s0 3 then 2 (f 2), s1 3 then 2 (f 4). (In admission order both would take 3 then 2: f 2 and 2.)
    ("chunk_caps_a_prefill_served_alone", """
stage e : step { budget 10; cost 1; chunk 3; serve exclusive prefill; }
workload { arrive batch(2); }
session { prefill (5); observe f = now; }
run { horizon inf; }
""", {"f": [(0, 2.0, 2.0), (1, 4.0, 4.0)]}, {("e", None): {"iterations": 4, "prefill_only": 4, "tokens": 2.5}}),
]

@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in EXCLUSIVES], ids=[c[0] for c in EXCLUSIVES])
def test_exclusive_prefill_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# run-time errors of load and the latency stage's figures
# ---------------------------------------------------------------------------------------------------------


def test_a_load_beyond_the_allocation_is_an_error_at_its_statement(monkeypatch):
    """§3: a load advances the position "by n tokens, which its allocation must cover": 3 then 2 in a hold
    of 4 is the second load's error, at t=0, session 0, naming its place."""
    msg = run_error("""pool q { cap 10; }
workload { arrive batch(1); }
session {
  hold q (4) { load q (3); load q (2); }
}
run { horizon 1; }
""", monkeypatch)
    assert msg.startswith("<source>:4:28: error: at t=0, session 0: load q (2)"), msg
    assert "4 allocated and 3 computed" in msg


def test_the_latency_wait_is_a_delay_stage_of_the_reader(monkeypatch):
    """The relation's latency is the reader's own delay stage (§2, Queues: "run D.nic.latency[j] (x0)"):
    in the maxmin row above both reads wait 0.5 there at 9: two completions, service 0.5 each; D.nic
    carries the two reads (service 7, 2 completions) and each P.nic one."""
    src = PULL.replace("SHARE", "maxmin").replace("PROMPT", "9")
    r, _ = run(src, monkeypatch)
    lat = [s for s in r.result.stages if s.name.endswith("latency")]
    assert [(s.name, s.index, s.completions, s.service) for s in lat] == [("D.nic.latency", 0, 2, 0.5)]
    dn = stage(r, "D.nic", 0)
    assert (dn.completions, dn.service) == (2, 7.0)
    assert [(stage(r, "P.nic", i).completions, stage(r, "P.nic", i).service) for i in (0, 1)] == [(1, 7.0)] * 2


# ---------------------------------------------------------------------------------------------------------
# a lease that blocks the source's next admission until the read; links' own latencies
# ---------------------------------------------------------------------------------------------------------

PULL_BLOCKING = """let NP = 1;
let ND = 1;
queue P[NP] : prefill {
  pool kv { cap 5; }
  serve fifo;
  nic ps(4);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D[ND] : decode {
  pool kv { cap 5; }
  serve fifo;
  nic ps(2);
  decode (prompt) from src {
    hold kv (prompt) {
      transfer (prompt - 2) from src to kv (prompt - 2);
      run (1);
    } cache (prompt);
  }
}
D pull P latency 0.5 share maxmin;
workload { arrive batch(2); }
session {
  set prompt = 5;
  P[0].prefill (prompt);
  observe f = now;
  D[0].decode (prompt) from P[0];
  observe d = now;
}
run { horizon inf; }
"""

LINKS = [
    # P.kv holds one prompt (cap 5). s0 prefills [0,1] and leases its 5; s1 waits at P.kv. s0's read: the
    # latency [1,1.5], 3 tokens at min(4, 2) = 2: [1.5,3]; its release of P.kv at 3 caches 5 (cache
    # (prompt)) and admits s1, which evicts that entry (5 units); s1 prefills [3,4] (f 4). s0's run (1) on D
    # [3,4] (d 4). s1 at D.kv at 4, s0's hold ends there: its cache (5) keeps the load's position 3, which
    # s1's 5 evicts (cap 5); s1's read [4.5,6], run (1) [6,7] (d 7). P.kv: used 5 on [0,3] and [3,6]: 30 / 7;
    # queue 1 on [0,3]: 3 / 7, wait (0 + 3) / 2 = 1.5; cached 5 on [6,7]: 5 / 7. D.kv used 5 on [1,4] and
    # [4,7]: 30 / 7. P.nic carries rate 2 of 4 for 1.5 twice: 1.5 / 7; D.nic all of it: 3 / 7.
    ("a_lease_blocks_the_next_prefill_until_the_read", PULL_BLOCKING,
     {"f": [(0, 1.0, 1.0), (1, 4.0, 4.0)], "d": [(0, 4.0, 4.0), (1, 7.0, 7.0)]},
     {"end": 7.0,
      ("P.kv", 0): {"used": 30 / 7, "queue": 3 / 7, "wait": 1.5, "cached": 5 / 7, "evicted_entries": 1,
                    "evicted_units": 5.0, "admissions": 2},
      ("D.kv", 0): {"used": 30 / 7, "evicted_entries": 1, "evicted_units": 3.0},
      ("P.nic", 0): {"utilisation": 1.5 / 7, "service": 1.5}, ("D.nic", 0): {"utilisation": 3 / 7},
      ("D.nic.latency", 0): {"completions": 2, "service": 0.5}}),
    # transfer on two links, each with its latency: "one wait per link named, in the order named": 0.5 on
    # L1's, then 0.25 on L2's, then the flow over ps(2) and ps(1) at 1: 2 s. t = 2.75. L1 carries 1 of 2
    # for 2 s: utilisation 1 / 2.75.
    ("two_links_wait_their_latencies_in_order", """
queue L1 : link { serve ps(2) latency 0.5; }
queue L2 : link { serve ps(1) latency 0.25; }
share maxmin;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(1); }
session { hold p (2) { hold q (2) { transfer on L1, L2 (2) from p to q (1); observe t = now; } } }
run { horizon inf; }
""", {"t": [(0, 2.75, 2.75)]},
     {"end": 2.75, ("L1.latency", None): {"service": 0.5, "completions": 1},
      ("L2.latency", None): {"service": 0.25}, ("L1", None): {"utilisation": 1 / 2.75},
      ("L2", None): {"utilisation": 2 / 2.75}}),
    # A plain ps stage beside a link: only the link waits (0.5), then 2 at min(1, 2) = 1: t 2.5.
    ("a_plain_stage_beside_a_link_waits_nothing", """
queue L1 : link { serve ps(2) latency 0.5; }
stage e : ps(1);
share maxmin;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(1); }
session { hold p (2) { hold q (2) { transfer on e, L1 (2) from p to q (1); observe t = now; } } }
run { horizon inf; }
""", {"t": [(0, 2.5, 2.5)]}, {"end": 2.5, ("e", None): {"utilisation": 0.8}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in LINKS], ids=[c[0] for c in LINKS])
def test_leases_and_link_latencies_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


MORE = [
    # closed(2), init branching on the serial (k 1 for even, 2 for odd) and observing its arrival time:
    # 0 (k 1) and 1 (k 2) at 0; 0 ends at 1, 2 (k 1) arrives; 1 and 2 end at 2, 3 (k 2) and 4 (k 1) arrive;
    # 4 ends at 3, 5 (k 2) arrives; 3 ends at 4, 6 (k 1) arrives; at 4.5 5 and 6 run. Warm-up 1: init's
    # samples from 1 on (sessions 2 … 6); the runs completed from 1 on: 0, 2, 1, 4, 3, of 1, 1, 2, 1, 2:
    # service 7 / 5. arrivals 7, ended 5.
    ("init_branches_and_observes_at_each_arrival", """
stage d : delay;
workload {
  arrive closed(2);
  init { branch (serial % 2 == 0) { set k = 1; } else { set k = 2; } observe a = now; }
}
session { run d (k); }
run { horizon 4.5; warmup 1; }
""", {"a": [(2, 1.0, 1.0), (3, 2.0, 2.0), (4, 2.0, 2.0), (5, 3.0, 3.0), (6, 4.0, 4.0)]},
     {"arrivals": 7, "ended": 5, ("d", None): {"completions": 5, "service": 1.4}}),
    # choose's count read from the session: session 0 chooses among 1 (0), session 1 among 2 by -j (1).
    ("a_count_of_candidates_from_an_attribute", """
stage d : delay;
workload { arrive batch(2); }
session { choose j in serial + 1 by (-j); run d (1); observe jj = j; }
run { horizon inf; }
""", {"jj": [(0, 1.0, 0.0), (1, 1.0, 1.0)]}, {}),
    # queued(p) as a gauge: cap 1, three sessions of 1 s at 0: 2 waiting on [0,1], 1 on [1,2]: (2 + 1) / 4;
    # holders 1 on [0,3]: 3 / 4; the pool's own queue figure the same 0.75, its mean wait (0 + 1 + 2) / 3.
    ("a_gauge_of_the_queue", """
pool p { cap 1; }
stage d : delay;
gauge w = queued(p);
gauge h = holders(p);
workload { arrive batch(3); }
session { hold p (1) { run d (1); } }
run { horizon 4; }
""", {}, {("gauge", "w"): {"mean": 0.75, "min": 0.0, "max": 2.0}, ("gauge", "h"): {"mean": 0.75, "max": 1.0},
          ("p", None): {"queue": 0.75, "wait": 1.0}}),
    # A lease of 3 s: held (used 2) until 3, then cached per the hold's clause: cachedin 0 at 1, 2 at 4.
    # used 2 · 3 / 5, cached 2 · 2 / 5, holders 3 / 5.
    ("a_lease_ends_after_its_seconds", """
pool p { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold p (2) { } cache (2) lease p (3);
  run d (1);
  observe c1 = cachedin(p);
  run d (3);
  observe c4 = cachedin(p);
  observe u4 = used(p);
}
run { horizon 5; }
""", {"c1": [(0, 1.0, 0.0)], "c4": [(0, 4.0, 2.0)], "u4": [(0, 4.0, 0.0)]},
     {("p", None): {"used": 1.2, "cached": 0.8, "holders": 0.6}}),
    # A transfer after its lease ran out (1 s, the read at 2): the release ends nothing (the entry stays
    # cached on p, 2), the load still counts at q: cache (3) keeps 2. p used 2 on [0,1], cached 2 on [1,5].
    ("a_transfer_after_its_lease_ran_out", """
pool p { cap 10; }
pool q { cap 10; }
stage d : delay;
stage link : delay;
workload { arrive batch(1); }
session {
  hold p (2) { } cache (2) lease p (1);
  run d (2);
  hold q (3) { transfer (1) from p to q (2); observe c = cachedin(p); } cache (3);
  observe cq = cachedin(q);
}
run { horizon 5; }
""", {"c": [(0, 3.0, 2.0)], "cq": [(0, 3.0, 2.0)]},
     {("p", None): {"used": 0.4, "cached": 1.6}, ("q", None): {"used": 0.6, "cached": 0.8}}),
    # A gauge under `arrivals 3`: arrivals at 1, 2, 3 (renewal(1)), each holds 2 for 1.5; the run ends at
    # 4.5 and the average is over [1, 4.5]: 2 on [1,2], 4 on [2,2.5], 2 on [2.5,3], 4 on [3,3.5], 2 on
    # [3.5,4.5]: (2 + 2 + 1 + 2 + 2) / 3.5 = 18/7; least 2 (0 is held only before the warm-up), greatest 4.
    ("a_gauge_over_a_run_that_drains", """
pool p { cap 10; }
stage d : delay;
gauge u = used(p);
workload { arrive renewal(1); }
session { hold p (2) { run d (1.5); } }
run { horizon 100; warmup 1; arrivals 3; }
""", {}, {"end": 4.5, ("gauge", "u"): {"mean": 18 / 7, "min": 2.0, "max": 4.0}, ("p", None): {"used": 18 / 7}}),
    # spill: s0 caches 4 on kv (cap 4) at 0; s1's hold of 4 at 1 evicts it, spilled to cpu over pcie
    # (delay, work size = 4): it lands at 5. cachedin(cpu) 0 at 2, 4 at 6, and s0's hold of cpu finds 4.
    # cpu's cached counts the units from the eviction (they take their room): 4 on [1,6], then the
    # hold's cache (4) on [6,20]: (20 + 56) / 20 = 3.8. kv: cached 4 on [0,1], used 4 on [1,11]; 1 spill.
    ("a_spilled_prefix_is_found_once_its_write_lands", """
pool kv { cap 4; spill cpu via pcie (size) when (1); }
pool cpu { cap 10; }
stage pcie : delay;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { } cache (4);
    run d (2);
    observe c2 = cachedin(cpu);
    run d (4);
    observe c6 = cachedin(cpu);
    hold cpu (4) { observe got = cached; } cache (4);
  } else {
    run d (1);
    hold kv (4) { run d (10); }
  }
}
run { horizon 20; }
""", {"c2": [(0, 2.0, 0.0)], "c6": [(0, 6.0, 4.0)], "got": [(0, 6.0, 4.0)]},
     {("kv", None): {"used": 2.0, "cached": 0.2, "evicted_entries": 1, "evicted_units": 4.0, "spills": 1},
      ("cpu", None): {"cached": 3.8, "admissions": 1}, ("pcie", None): {"completions": 1, "service": 4.0}}),
    # Growers in the order they stalled, the head blocking the rest (§3, Ties): m cap 6 full with three
    # holds of 2; s0 stalls at 1 growing 3, s1 at 1.5 growing 1; s2 ends at 2 (4 used): s0 needs 3 (7 > 6)
    # and blocks s1, whose 1 would fit: neither grows again (no g0, g1 sample), ended 1. used 6 on [0,2],
    # 4 on [2,10]: 4.4; holders (6 + 16) / 10.
    ("the_head_grower_blocks_the_rest", """
pool m { cap 6; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (2) { run d (1); grow m (3); observe g0 = now; run d (1); } }
  branch (serial == 1) { hold m (2) { run d (1.5); grow m (1); observe g1 = now; run d (1); } }
  branch (serial == 2) { hold m (2) { run d (2); } }
}
run { horizon 10; }
""", {"g0": [], "g1": []}, {"ended": 1, ("m", None): {"used": 4.4, "holders": 2.2}}),
    # Two queues' heads waiting for room in one pool: the pool declared first is served first (§3, Ties),
    # not the head that waited longer: s2 (at 0.25, in a's queue) and s1 (at 0.5, in b's) both need m,
    # which s0 frees at 1: a is declared first, s2 at 1, s1 at 2.
    ("the_pool_declared_first_is_served_first", """
pool a { cap 10; }
pool b { cap 10; }
pool m { cap 2; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (2) { run d (1); } }
  branch (serial == 1) { run d (0.5); hold b (1), m (2) { observe tb = now; run d (1); } }
  branch (serial == 2) { run d (0.25); hold a (1), m (2) { observe ta = now; run d (1); } }
}
run { horizon 10; }
""", {"tb": [(1, 2.0, 2.0)], "ta": [(2, 1.0, 1.0)]}, {("a", None): {"wait": 0.75}, ("b", None): {"wait": 1.5}}),
    # The same with b declared first: s1 at 1, s2 at 2.
    ("the_pool_declared_first_is_served_first_swapped", """
pool b { cap 10; }
pool a { cap 10; }
pool m { cap 2; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (2) { run d (1); } }
  branch (serial == 1) { run d (0.5); hold b (1), m (2) { observe tb = now; run d (1); } }
  branch (serial == 2) { run d (0.25); hold a (1), m (2) { observe ta = now; run d (1); } }
}
run { horizon 10; }
""", {"tb": [(1, 1.0, 1.0)], "ta": [(2, 2.0, 2.0)]}, {("a", None): {"wait": 1.75}, ("b", None): {"wait": 0.5}}),
]

@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in MORE], ids=[c[0] for c in MORE])
def test_more_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


@pytest.mark.parametrize("count, col, shown", [("serial", 23, "0"), ("n", 36, "2.5")])
def test_a_computed_count_of_candidates_is_checked_when_it_is_read(monkeypatch, count, col, shown):
    """A count the compiler cannot fold is checked at the choose, at run time, with its place, the time and
    the session: 0 (serial of session 0) and 2.5 (an attribute) are no whole number of candidates."""
    msg = run_error(f"""stage d : delay;
workload {{ arrive batch(1); }}
session {{ set n = 2.5; choose j in {count} by (-j); run d (1); }}
run {{ horizon inf; }}
""".replace("set n = 2.5; ", "set n = 2.5; " if count == "n" else ""), monkeypatch)
    assert msg == (f"<source>:3:{col}: error: at t=0, session 0: choose j: the count of candidates is {shown}, "
                   "not a whole number from 1 to 100000"), msg


def test_a_closed_population_replays_an_ordered_trace_into_records(tmp_path, monkeypatch):
    """closed(1) over an ordered trace of 2 sessions, `out` hidden and read by a run (a session statement
    may read it), one `request` row a turn, warm-up 5. Session 0 (trace 0): turn 1 (new 100, out 5) runs
    [0,5], sent 0: cut; think 1; turn 2 (new 200, out 6, forced 1) [6,12], sent 6: kept; more 0: it ends at
    12 and session 1 arrives (trace 1: new 300, out 7) [12,19]; session 2 at 19 replays trace 0 again
    (serial mod 2): [19,24], think [24,25], its second turn [25,31] past the horizon 30. Rows kept: sent 6,
    12, 19; arrivals 3, ended 2; turns from 5 on: at 6, 12, 19, 25."""
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n0,0,100,5,1,0\n0,1,200,6,0,1\n"
                                    "1,0,300,7,0,0\n")
    prog = tmp_path / "p.sq"
    prog.write_text("""stage d : delay;
workload { arrive closed(1); trace "t.csv" ordered; hidden out; }
session {
  turn;
  loop {
    set t0 = now;
    run d (out);
    record request { sent = t0; prompt = new; o = out; f = forced; }
    branch (more) { run d (think); turn; } else { end; }
  }
}
run { horizon 30; warmup 5; }
""")
    r, _ = run("", monkeypatch, path=prog)
    t = r.records("request", kind="numpy")
    rows = list(zip(*(t[c].tolist() for c in ("session", "turn", "time", "sent", "prompt", "o", "f"))))
    assert rows == [(0, 2, 12.0, 6.0, 200.0, 6.0, 1.0), (1, 1, 19.0, 12.0, 300.0, 7.0, 0.0),
                    (2, 1, 24.0, 19.0, 100.0, 5.0, 0.0)]
    assert (r.result.arrivals, r.result.ended, r.result.turns) == (3, 2, 4)


def test_a_load_on_top_of_the_cached_prefix_must_fit(monkeypatch):
    """The prefix a hold finds cached counts as computed, and a load adds to it (§3: "load m (n) advances
    the innermost enclosing hold's position on m by n tokens, which its allocation must cover"): the same
    preemption as above with `load kv (2)` re-admits s0 at 2 with 2 cached, and loading 2 more into an
    allocation of 3 is the run's error at the load, naming the prefix."""
    msg = run_error("""pool kv { cap 6; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) {
    hold kv (2) { run d (1); grow kv (2); run d (1); }
  } else {
    run d (0.5);
    hold kv (3) { load kv (2); run d (2); } cache (3);
  }
}
run { horizon 10; }
""", monkeypatch)
    assert msg.startswith("<source>:9:19: error: at t=2, session 0: load kv (2): the hold has 3 allocated and 2 "
                          "computed, the session's own prefix it found cached"), msg


RUN_ERRORS = [
    # a load of a computed negative amount, at the load
    ("pool q { cap 10; }\nworkload { arrive batch(1); }\nsession { set x = -1; hold q (4) { load q (x); } }\n"
     "run { horizon 1; }\n", "<source>:3:36: error: at t=0, session 0: load q: the amount is negative (-1)"),
    # a NaN amount
    ("pool q { cap 10; }\nworkload { arrive batch(1); }\nsession { set x = 0 / 0; hold q (4) { load q (x); } }\n"
     "run { horizon 1; }\n", "<source>:3:39: error: at t=0, session 0: load q: the amount is NaN"),
    # a transfer's tokens negative: its load fails when the link's run is done (t 1), at the transfer
    ("pool p { cap 10; }\npool q { cap 10; }\nstage link : delay;\nworkload { arrive batch(1); }\n"
     "session { set x = -2; hold p (1) { hold q (4) { transfer (1) from p to q (x); } } }\nrun { horizon 2; }\n",
     "<source>:5:49: error: at t=1, session 0: load q: the amount is negative (-2)"),
    # a transfer's link work negative, at the transfer, before any time passes
    ("pool p { cap 10; }\npool q { cap 10; }\nstage link : delay;\nworkload { arrive batch(1); }\n"
     "session { set x = -2; hold p (1) { hold q (4) { transfer (x) from p to q (1); } } }\nrun { horizon 2; }\n",
     "<source>:5:49: error: at t=0, session 0: the run's work is negative (-2)"),
    # branch with of a computed probability outside [0, 1] (§3: "a computed one is refused when it is
    # evaluated"), NaN and 1.5
    ("stage d : delay;\nworkload { arrive batch(1); }\nsession { set x = 0 / 0; branch with (x) { run d (1); } }\n"
     "run { horizon 1; }\n",
     "<source>:3:39: error: at t=0, session 0: branch with (…): a probability is between 0 and 1, got NaN"),
    ("stage d : delay;\nworkload { arrive batch(1); }\nsession { set x = 1.5; branch with (x) { run d (1); } }\n"
     "run { horizon 1; }\n",
     "<source>:3:37: error: at t=0, session 0: branch with (…): a probability is between 0 and 1, got 1.5"),
]


@pytest.mark.parametrize("src, message", RUN_ERRORS)
def test_run_time_errors_name_the_statement_the_time_and_the_session(monkeypatch, src, message):
    assert run_error(src, monkeypatch) == message


def test_a_gauge_that_holds_nan_for_a_positive_time(monkeypatch):
    """used(p) / holders(p) is NaN while nobody holds p (0 / 0): over [0, 3] it is NaN on [0,1] and [2,3]
    and 2 on [1,2], so its mean, least and greatest are NaN (docs/simulator.md: "A gauge that holds NaN
    for a positive time has NaN mean, CI, min and max"; null in JSON); after a warm-up of 1 and a horizon
    of 2 the NaN is held only before the warm-up and at the horizon (for no time): 2 throughout."""
    src = """pool p { cap 10; }
stage d : delay;
gauge r = used(p) / holders(p);
workload { arrive batch(1); }
session { run d (1); hold p (2) { run d (1); } }
run { horizon 3; }
"""
    _, js = check_by_hand(monkeypatch, src, {}, {})
    assert js["gauges"]["r"] == {"mean": None, "ci": None, "min": None, "max": None}
    check_by_hand(monkeypatch, src.replace("horizon 3;", "horizon 2; warmup 1;"), {},
                  {("gauge", "r"): {"mean": 2.0, "min": 2.0, "max": 2.0}})


def test_the_command_line_reports_the_lease_that_blocks_on_both_tiers(tmp_path):
    """`serq run FILE --json` of the blocking row above on the tier serQ picks and on the general engine
    (SERQ_SIM_TIER=general): the same bytes, and the figures worked out there: end 7, P.kv's queue 3/7 and
    wait 1.5, one eviction at each pool's second admission (5 units at P.kv, 3 at D.kv)."""
    import json
    import os
    import subprocess
    import sys

    prog = tmp_path / "p.sq"
    prog.write_text(PULL_BLOCKING)
    outs = []
    for tier in ("", "general"):
        env = {k: v for k, v in os.environ.items() if k != "SERQ_SIM_TIER"}
        if tier:
            env["SERQ_SIM_TIER"] = tier
        r = subprocess.run([sys.executable, "-m", "serq", "run", "p.sq", "--json", "--no-progress"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    js = json.loads(outs[0])
    assert js["end"] == 7.0
    pk = next(p for p in js["pools"] if p["name"] == "P.kv")
    dk = next(p for p in js["pools"] if p["name"] == "D.kv")
    assert (pk["queue"], pk["wait"], pk["evicted_entries"], pk["evicted_units"]) == pytest.approx((3 / 7, 1.5, 1, 5.0))
    assert (dk["evicted_entries"], dk["evicted_units"]) == (1, 3.0)


def test_a_record_in_a_queue_entry_is_the_programs_table(monkeypatch):
    """An entry's record is the program's table, as its observe is the program's (§2, Queues): D's fifo
    serves s0's run of 1 ([0,1]) then s1's of 2 ([1,3]); the rows at 1 and 3 with the entry's parameter.
    D.kv: 1 unit on [0,1] and 2 on [0,3]: 7/3; the stage's mean wait (0 + 1) / 2."""
    src = """queue D : decode {
  pool kv { cap 100; }
  serve fifo;
  decode (prompt) { hold kv (prompt) { run (prompt); record r { p = prompt; } } }
}
workload { arrive batch(2); }
session { set prompt = 1 + serial; D.decode (prompt); }
run { horizon inf; }
"""
    r, _ = check_by_hand(monkeypatch, src, {}, {"records": {"r": 2}, ("D.kv", None): {"used": 7 / 3},
                                                 ("D", None): {"wait": 0.5, "service": 1.5}})
    t = r.records("r", kind="numpy")
    assert list(zip(t["session"].tolist(), t["time"].tolist(), t["p"].tolist())) == [(0, 1.0, 1.0), (1, 3.0, 2.0)]
