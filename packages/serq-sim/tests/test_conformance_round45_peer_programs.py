"""Conformance round 45, programs a peer would write from the specification pages alone: each modelled on a
code example of language.txt or pool-reference.txt (the pool reference's complete program in this dialect,
its priority lanes with aging, its priority queue with `preempt by … requeue tail`, `reserve held`, a finite
run of `run { arrivals }`, a lease, `drop` before `end`, a step engine whose cost reads `attention`, and the
Queues section's prefill/decode pair with its pull relation), small enough that every figure is worked out
by hand from the pages' words, event by event, in the comment above the case.

Each case runs on the tier serQ picks and on the general engine (conform.run: the JSON reports and every
observe's samples the same bytes); observes are asserted as (session, time, value), report figures as the
JSON reads them.
"""

from __future__ import annotations

import pytest
from conform import check_by_hand, report_json, run

PROGRAMS = [
    # pool-reference.txt, Examples ("A complete program"), its `fn main`, `cost(…)` wrappers dropped and the
    # server requested by a workload session (program-reference.txt: a server that is never requested is an
    # error). cap 2: s0 and s1 are admitted at 0 and leave at 2; s2 waits [0,2] and leaves at 4. Responses
    # 2, 2, 4; the pool's mean wait (0 + 0 + 2)/3, queue 2/10; svc: 3 runs of 2, 6/10 present, throughput 0.3.
    ("the_pool_references_complete_program", """
pool reqs { cap 2; }
stage svc : delay;
workload {
  arrive batch(3);
  session { request; }
}
server {
  set t0 = now;
  hold reqs (1) { run svc (2); }
  observe response = now - t0;
}
run { horizon 10; }
""", {"response": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, 4.0, 4.0)]},
     {("reqs", None): {"used": 0.6, "queue": 0.2, "wait": 2 / 3, "admissions": 3},
      ("svc", None): {"present": 0.6, "throughput": 0.3, "service": 2.0}}),
    # pool-reference.txt, `queue`: "priority lanes with a three-second aging threshold". Five sessions join
    # at 0 (the settle admits after every ready session ran); prompts 50, 200, 100, 300, 50, s4 immediate.
    # t=0: lanes s0 2, s1 3, s2 2, s3 3, s4 0: s4 (done 2). t=2, waited 2: s0 (lane 2, serial 0; done 4).
    # t=4, waited 4 >= 3: s1 and s3 lane 1, s2 lane 2: s1 (done 6), then s3 (8), then s2 (10). Waits
    # 0, 2, 4, 6, 8: mean 4; queue (4·2 + 3·2 + 2·2 + 1·2)/100.
    ("priority_lanes_with_aging", """
pool lanes { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,
                             serial); }
stage svc : fifo;
workload { arrive batch(5); }
session {
  set immediate = serial == 4;
  set prompt = serial == 1 ? 200 : serial == 2 ? 100 : serial == 3 ? 300 : 50;
  hold lanes (1) { run svc (2); }
  observe done = now;
}
run { horizon 100; }
""", {"done": [(4, 2.0, 2.0), (0, 4.0, 4.0), (1, 6.0, 6.0), (3, 8.0, 8.0), (2, 10.0, 10.0)]},
     {("lanes", None): {"wait": 4.0, "queue": 0.2, "admissions": 5}}),
    # pool-reference.txt, `preempt`: "queue by (priority, t0); preempt by (-priority, -t0) requeue tail;"
    # (larger priority values lose first). cap 10, no stage names kv: the candidates are the holders.
    # s0 (prio 2) holds 4 at 0; at 1 s1 (prio 1) joins and s0 grows 2 at once (6), then s1 is admitted (10).
    # At 2 s2 (prio 0) joins, then s1's growth fails: victim the least (-prio, -t0), s0 (-2): it frees 6,
    # s1 grows (6), s0 goes to the tail, behind s2 by the keys (0 < 2): s2 admitted (10). At 3 s2's growth
    # takes s1 (-1 < 0), s1 is admitted again (4 + 6); at 4 and 5 s1's own growth makes s1 its own victim
    # (-1 < 0) and it is admitted again at once. At 6 s2 leaves (done 6), s1 grows, s0 is admitted (10); at 7
    # and 8 s0 is its own victim (-2); at 9 s1 leaves (done 9), s0 grows; s0 done 12. Preemptions at 2, 3,
    # 4, 5, 7, 8; admissions 9; s1 (3, 4, 5 at position 4) and s0 (2 at 6, then 7 at 4) stuck. Used 4 on
    # [0,1], 10 on [1,9], 6 on [9,12]: 102/100; the queue s0 on [2,6]; holders 20/100. computed is 0 after
    # a hold completes.
    ("a_priority_queue_preempted_by_keys_requeued_at_the_tail", """
pool kv { cap 10; queue by (priority, t0); preempt by (-priority, -t0) requeue tail; }
stage d : delay;
workload { arrive batch(3); }
session {
  set priority = serial == 0 ? 2 : serial == 1 ? 1 : 0;
  set t0 = serial;
  run d (serial);
  hold kv (4) {
    run d (1);
    grow kv (2);
    run d (3);
  }
  observe done = now;
  observe comp = computed;
}
run { horizon 100; }
""", {"done": [(2, 6.0, 6.0), (1, 9.0, 9.0), (0, 12.0, 12.0)], "comp": [(2, 6.0, 0.0), (1, 9.0, 0.0), (0, 12.0, 0.0)]},
     {("kv", None): {"preemptions": 6, "admissions": 9, "stuck": 2, "used": 1.02, "queue": 0.04, "holders": 0.2,
                     "wait": 4 / 9}}),
    # pool-reference.txt, `reserve held`: s0's hold of 2 reserve 8 leaves u = 6 unallocated; at 1 s1's
    # reservation of 8 needs used 2 + 6 + 8 = 16 <= 10: it waits until s0 leaves at 5 (admitted 5, leaves
    # 10). Used 2 on [0,10]: 0.2; queue [1,5]: 0.04; waits 0 and 4.
    ("reserve_held_keeps_a_later_reservation_out", """
pool kv { cap 10; reserve held; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold kv (2) reserve (8) { observe adm = now; run d (5); }
}
run { horizon 100; }
""", {"adm": [(0, 0.0, 0.0), (1, 5.0, 5.0)]},
     {("kv", None): {"used": 0.2, "queue": 0.04, "wait": 2.0}}),
    # language.txt §2 and program-reference.txt, A finite run: "The first renewal arrival occurs after one
    # gap": renewal(2) sends at 2, 4, 6, 8, 10; each run of 1 on a fifo, no waiting; the fifth ends at 11,
    # which is `end`, and rates and time averages are over end - warmup = 11.
    ("a_finite_run_of_renewal_arrivals_ends_when_it_drains", """
stage s : fifo;
workload { arrive renewal(2); }
session { set t0 = now; run s (1); observe a = t0; }
run { horizon 1e5; warmup 0; arrivals 5; }
""", {"a": [(0, 3.0, 2.0), (1, 5.0, 4.0), (2, 7.0, 6.0), (3, 9.0, 8.0), (4, 11.0, 10.0)]},
     {"end": 11.0, "horizon": 1e5, "arrivals": 5, "ended": 5,
      ("s", None): {"utilisation": 5 / 11, "throughput": 5 / 11}}),
    # §3, Pools: a lease "keeps its allocation on m past the scope's end … until … t seconds … and cache
    # applies then". s0 holds 6 on [0,1], leased until 3, then cached 6. s1 asks 6 at 2: 6 + 6 > 10, it
    # waits for the lease's end; at 3 it is admitted and s0's entry is evicted (6 + 6 > 10): s0 reads 0 at
    # 6. Used 6 on [0,3], 6 on [3,4]: 24/20; the queue [2,3]: 0.05.
    ("a_lease_of_two_seconds_then_its_cache", """
pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (6) { run d (1); } cache (6) lease kv (2);
    run d (5);
    observe c0 = cachedin(kv);
  } else {
    run d (2);
    hold kv (6) { observe t1 = now; run d (1); }
  }
}
run { horizon 20; }
""", {"c0": [(0, 6.0, 0.0)], "t1": [(1, 3.0, 3.0)]},
     {("kv", None): {"used": 1.2, "cached": 0.0, "queue": 0.05, "evicted_entries": 1, "evicted_units": 6.0}}),
    # §3, Pools: "end releases every hold but keeps the session's cached prefixes … A program that models
    # dropping them writes drop POOL; before end;". block 4: 10 units allocate 12 (used 24/10) and cache
    # min(10, 12) rounded down to 8. s0 drops its 8, s1's stay past its end: cached 8 on [1,10].
    ("drop_before_end_and_end_keeps_the_cache", """
pool kv { cap 100; block 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv (10) { run d (1); } cache (10);
  branch (serial == 0) { drop kv; }
  end;
}
run { horizon 10; }
""", {}, {("kv", None): {"used": 2.4, "cached": 7.2, "evicted_entries": 0}}),
    # §3, Stages: cost 1 + attention, attention = Σ n (K + n/2) over the prefill chunks. chunk 4: the
    # prefill of 8 is 4 at K = 0 (1 + 8 = 9) and 4 at K = 4 (1 + 24 = 25): first token at 34; two decode
    # iterations of 1: done 36. kv block 4, growing: 4 on [0,9], 8 on [9,34], 12 on [34,36] (positions 9,
    # 10): 260/100; cache (10): min(10, 10) rounded down to 8, on [36,100]: 512/100, read back as 8. The
    # engine's two runs took 34 and 2.
    ("a_step_engine_whose_cost_reads_attention", """
pool reqs { cap 10; admit via e; }
pool kv { cap 100; block 4; }
stage e : step { budget 8; cost 1 + attention; chunk 4; memory kv; }
workload { arrive batch(1); }
session {
  hold reqs (1), kv (1) {
    prefill (8) growing kv;
    observe ttft = now;
    decode (2) growing kv;
  } cache (10);
  observe done = now;
  observe c = cachedin(kv);
}
run { horizon 100; }
""", {"ttft": [(0, 34.0, 34.0)], "done": [(0, 36.0, 36.0)], "c": [(0, 36.0, 8.0)]},
     {("kv", None): {"used": 2.6, "cached": 5.12}, ("e", None): {"service": 18.0, "throughput": 0.02}}),
    # language.txt §2, Queues: a prefill queue and a decode queue with `D pull P latency 0.5 share maxmin`.
    # t=0: P admits (budget_left 8, hit 0: units min(8, 0 + 8) = 8, reserve 8) and prefills 8 in one
    # iteration: done at 1; the slot goes, the 8 blocks are leased. D's hold (kv 8, reqs 0 reserve 1) is
    # admitted at 1 (kv is no engine's queue); the read: D.nic.latency 0.5 (to 1.5), then one flow over
    # P.nic (ps 4) and D.nic (ps 2), max-min rate 2: 7 tokens in 3.5 (to 5); load 7; release P's lease,
    # which caches 8. Then D's slot at 5: one token of prefill (5-6), two decodes (6-8): done 8.
    # P.kv: 8 used on [0,5], cached on [5,20]; D.kv: 8 on [1,6], 12 on [6,8] (positions 9, 10), cache
    # (11) keeps min(11, 10) rounded down to 8 on [8,20]; D.reqs 1 on [5,8]. NIC utilisations: rate / φ
    # on [1.5,5]: 0.5 at P's, 1 at D's.
    ("a_prefill_and_a_decode_queue_with_a_pull_relation", """
let bs = 4;
def reusable(x, b) = floor((x - 1) / b) * b;
queue P[1] : prefill {
  pool reqs { cap 4; admit via P; }
  pool kv { cap 64; block bs; evict lru; preempt lifo; }
  serve step { budget 8; cost 1; memory kv; }
  nic ps(4);
  prefill (prompt) {
    hold reqs (1), kv (min(prompt, hit + budget_left(P))) reserve (prompt)
         at admission (hit = min(cachedin(kv), reusable(prompt, bs))) {
      set c = cached;
      prefill (prompt - c) growing kv;
    } cache (prompt) lease kv (inf);
  }
}
queue D[1] : decode {
  pool reqs { cap 4; admit via D; }
  pool kv { cap 64; block bs; evict lru; preempt lifo; }
  serve step { budget 8; cost 1; memory kv; }
  nic ps(2);
  decode (prompt) from src {
    hold kv (prompt) reserve (prompt), reqs (0) reserve (1) {
      transfer (prompt - 1) from src to kv (prompt - 1);
      hold reqs (1) { prefill (1) growing kv; decode (o - 1) growing kv; }
    } cache (prompt + o);
  }
}
D pull P latency 0.5 share maxmin;
workload { arrive batch(1); hidden o; }
session {
  set prompt = 8;
  set o = 3;
  P[0].prefill (prompt);
  observe pdone = now;
  D[0].decode (prompt) from P[0];
  observe done = now;
  observe pc = cachedin(P.kv[0]);
  observe dc = cachedin(D.kv[0]);
}
run { horizon 20; }
""", {"pdone": [(0, 1.0, 1.0)], "done": [(0, 8.0, 8.0)], "pc": [(0, 8.0, 8.0)], "dc": [(0, 8.0, 8.0)]},
     {("P.kv", 0): {"used": 2.0, "cached": 6.0}, ("D.kv", 0): {"used": 3.2, "cached": 4.8},
      ("D.reqs", 0): {"used": 0.15, "admissions": 2}, ("P.nic", 0): {"utilisation": 0.0875},
      ("D.nic", 0): {"utilisation": 0.175}, ("D.nic.latency", 0): {"service": 0.5}}),
    # §3, Pools: "end releases every hold" (its cache clause applies: s1's 4 are cached from 2) and a lease
    # lasts "until … the session's end, and cache applies then" (s2's 3, leased from 1, cached from 4).
    # A gauge reads "the state the instant's last event leaves": s0's hold of 10 with a body of zero work
    # allocates and releases within t=1, so used(kv) is 0 whenever it is read, max 0 and a time average 0.
    # m: used 4 on [0,2] and 3 on [0,4]: 20/10; cached 4 on [2,10] and 3 on [4,10]: 50/10.
    ("end_inside_a_hold_and_a_lease_to_the_sessions_end", """
pool kv { cap 10; }
pool m { cap 10; }
stage d : delay;
gauge u = used(kv);
workload { arrive batch(3); }
session {
  branch (serial == 0) { run d (1); hold kv (10) { run d (0); } }
  else { branch (serial == 1) { hold m (4) { run d (2); end; } cache (4); }
  else { hold m (3) { run d (1); } cache (3) lease m (inf); run d (3); end; } }
}
run { horizon 10; }
""", {}, {("kv", None): {"used": 0.0, "admissions": 1}, ("m", None): {"used": 2.0, "cached": 5.0},
          ("gauge", "u"): {"mean": 0.0, "min": 0.0, "max": 0.0}}),
    # The serving vocabulary in a statement definition, and a transfer that takes a lease. At 0 every
    # session chooses prefill[0]: a `hold` joins p's queue and the settle admits after every ready session
    # ran, so no run is at a stage yet (queue 0, 0 for each). p admits s0 and s1 (8 of 10); s2 waits.
    # prefill[0] (fifo): s0 [0,3], s1 [3,6] (waits 3); tool 1.5: s0 to 4.5, s1 to 7.5, when each leases its 4
    # and takes q: the link (ps 1, alone each time) s0 [4.5,6.5], s1 [7.5,9.5]; load 3; release p: the
    # lease ends into the cache. At 6.5 s2 is admitted (4 + 4 + s0's cached 4 > 10: s0's entry is evicted)
    # and prefills on [6.5,9.5] (no wait), tool to 11, link [11,13]. Decodes of 1 end at 7.5, 10.5, 14; q
    # caches min(4, 3) (the position the load reached). p: used 4 on [0,6.5], [0,9.5], [6.5,13]: 90/50;
    # cached s1's 4 from 9.5 and s2's from 13: 310/50; wait 6.5/3. q: used 4 for 3 each: 36/50; cached 3
    # from 7.5, 10.5, 14: 354/50.
    ("a_definition_of_serving_forms_and_a_transfer_that_takes_a_lease", """
pool p { cap 10; }
pool q { cap 10; }
stage prefill[2] : fifo;
stage link : ps(1);
stage decode : delay;
stage tool : delay;
def turnaround(j, w) { prefill[j] w; tool (w / 2); }
workload { arrive batch(3); }
session {
  choose j in 2 by (queue(prefill[j]));
  observe pick = j;
  set w = 3;
  hold p (4) { turnaround(j, w); } cache (4) lease p (inf);
  hold q (4) {
    transfer (2) from p to q (3);
    decode 1;
  } cache (4);
  observe done = now;
}
run { horizon 50; }
""", {"pick": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0)],
      "done": [(0, 7.5, 7.5), (1, 10.5, 10.5), (2, 14.0, 14.0)]},
     {("p", None): {"used": 1.8, "cached": 6.2, "wait": 6.5 / 3, "evicted_entries": 1},
      ("q", None): {"used": 0.72, "cached": 7.08}, ("prefill", 0): {"utilisation": 0.18, "wait": 1.0},
      ("prefill", 1): {"throughput": 0.0}, ("link", None): {"service": 2.0}}),
    # language.txt §2, Queues: a gateway's route calls a decode queue's entry; `mark first_token;` in the entry
    # is read by the caller as D.first_token. Budget 8: s0 prefills 5 and s1 3 of its 5 on [0,1]; s0's first
    # token at 1, decodes to 3; s1's last 2 on [1,2] (first token 2), decodes to 4. The engine's runs: 1, 2,
    # 2, 2.
    ("a_gateway_route_and_a_mark_read_by_the_caller", """
queue D : decode {
  pool reqs { cap 4; admit via D; }
  serve step { budget 8; cost 1; }
  decode (prompt) {
    hold reqs (1) { prefill (prompt); mark first_token; decode (o - 1); }
  }
}
queue gw : gateway {
  route { set prompt = 5; D.decode (prompt); }
}
workload {
  arrive batch(2);
  hidden o;
  session { set o = 3; set t0 = now; request gw; observe ttft = D.first_token - t0; observe done = now; }
}
run { horizon 20; }
""", {"ttft": [(0, 3.0, 1.0), (1, 4.0, 2.0)], "done": [(0, 3.0, 3.0), (1, 4.0, 4.0)]}, {("D", None): {"service": 1.75}}),
    # A queue of two roles (prefill, decode) whose decode entry a gateway calls, its KV kept in a block
    # pool: budget 8. s0 prefills 8 on [0,1] (s1 waits: no budget left); at 1 s0 decodes (position 9: 12
    # allocated) and s1 is admitted with the 7 left; at 2 s0's second decode, s1's last prefill token; s0
    # done 3; s1 decodes on [3,5]. kv: 8 on [0,1], 20 on [1,3], 12 on [3,5]: 72/20; caches min(10, 10)
    # rounded down to 8 at 3 and 5: 8 · 17 + 8 · 15 = 256/20.
    ("a_queue_of_two_roles_behind_a_gateway", """
queue W : prefill, decode {
  pool reqs { cap 4; admit via W; }
  pool kv { cap 64; block 4; preempt lifo; }
  serve step { budget 8; cost 1; memory kv; }
  prefill (prompt) {
    hold reqs (1), kv (prompt) { prefill (prompt) growing kv; } cache (prompt) lease kv (inf);
  }
  decode (prompt) {
    hold reqs (1), kv (prompt) { set c = cached; prefill (prompt - c) growing kv; decode (o) growing kv; }
      cache (prompt + o);
  }
}
queue G : gateway {
  route { set prompt = 8; W.decode (prompt); }
}
workload { arrive batch(2); hidden o; session { set o = 2; request G; observe done = now; } }
run { horizon 20; }
""", {"done": [(0, 3.0, 3.0), (1, 5.0, 5.0)]},
     {("W.reqs", None): {"wait": 0.5}, ("W.kv", None): {"used": 3.6, "cached": 12.8}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in PROGRAMS], ids=[c[0] for c in PROGRAMS])
def test_peer_programs_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


ARRIVALS = """
stage s : delay;
workload { arrive FORM; }
session { observe a = now; run s (1); }
run { horizon 1e5; arrivals 4; seed 7; }
"""


def test_poisson_arrives_at_zero_then_the_renewal_schedule(monkeypatch):
    """language.txt §2: "poisson(rate) starts with an arrival at time zero, then uses exponential gaps of mean
    1 / rate. Thus renewal(~exp(1 / rate)) has the same subsequent arrival schedule for the same seed, without
    the initial arrival at zero"; a finite run ends when its last session does (`end`)."""
    rp, op = run(ARRIVALS.replace("FORM", "poisson(2)"), monkeypatch)
    rr, orr = run(ARRIVALS.replace("FORM", "renewal(~exp(0.5))"), monkeypatch)
    tp = [t for _s, t, _v in op["a"]]
    tr = [t for _s, t, _v in orr["a"]]
    assert tp[0] == 0.0 and tr[0] > 0.0
    assert tp[1:] == tr[:3]
    assert report_json(rp)["end"] == tp[-1] + 1 and report_json(rr)["end"] == tr[-1] + 1


TRACE = "session,turn,new,out,think,forced\n0,1,3,1,2,0\n0,2,5,1,0,0\n1,1,4,2,1,0\n"
REPLAY = """
stage s : fifo;
stage pause : delay;
workload { arrive batch(2); trace "t.csv" ordered; }
session {
  turn;
  loop {
    run s (new);
    observe m = more;
    observe tn = turn_no;
    branch (more) { run pause (think); turn; } else { end; }
  }
}
run { horizon 20; }
"""


def test_an_ordered_trace_replayed_turn_by_turn(monkeypatch, tmp_path):
    """language.txt §3, Workload: "with a trace, turn loads the next turn's new, out, think, forced and sets
    more (ordered: session i replays trace session i)", the session written as docs/language.md's replay.
    s0 loads (3, think 2, more 1), s1 (4, more 0). The fifo: s0 on [0,3], s1 [3,7]; s0 pauses 2 (to 5),
    loads its second turn (5, more 0) and waits for s1: [7,12]. Three turns; the fifo's waits 0, 3, 2."""
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "p.sq").write_text(REPLAY)
    monkeypatch.chdir(tmp_path)
    r, obs = run(None, monkeypatch, path=tmp_path / "p.sq")
    assert obs["m"] == [(0, 3.0, 1.0), (1, 7.0, 0.0), (0, 12.0, 0.0)]
    assert obs["tn"] == [(0, 3.0, 1.0), (1, 7.0, 1.0), (0, 12.0, 2.0)]
    js = report_json(r)
    assert (js["turns"], js["ended"]) == (3, 2)
    (s,) = [st for st in js["stages"] if st["name"] == "s"]
    assert s["wait"] == pytest.approx(5 / 3, rel=1e-12) and s["service"] == pytest.approx(4.0, rel=1e-12)
