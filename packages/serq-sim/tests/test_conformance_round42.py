"""Conformance of language.txt §2 and §3 (and pool-reference.txt) by hand, round 42: the `step` stage's
iteration, sentence by sentence, in small programs on constant costs whose iterations are traced by hand.

§3, Stages: "One token to a decoding job, up to chunk to a prefilling one, until the budget is spent; a
growing job first grows its hold to the position it will reach (block by block, preempting if needed);
then the stage admits from the queues it serves. The iteration advances the clock by C, an expression in
tokens, decoders, prefilled, residents, kv_decode, kv_prefill, attention … A run of zero work completes at
once. An iteration that schedules no token is not an iteration, unless it preempted"; "The residents are
served the way serve names … ties in admission order"; §3, Pools: "with preempt lifo the holder that is a
resident of the step stage the pool is the memory of and was admitted last … a pool that is no engine's
memory preempts its most recently admitted holder"; "At the end of the body the units are released and
min(ℓ, computed) units stay cached, rounded down to blocks"; §4: "cached (units found), block-rounded";
pool-reference.txt, `preempt`: "`by (k, …)` Preempt the candidate with the least keys … requeue tail treats
it as a newcomer".

The header (budget and chunk, an infinite budget, a chunk that reads the slots as vLLM's long-prefill
threshold does), the serving order (keys, totals that tie every resident, a NaN key, ties in admission
order where admission and serial part, newcomers after the residents), chunked prefill and fractional
tokens, the cost's sums, blocks as a hold's position advances (an exact multiple of the block, a budget
below a block, a hold of 0), prefix hits (block-aligned, a reuse bound that is not, the whole prompt), preemption on an
engine's memory and on a pool no engine counts (two victims of one growth, requeue head and tail, `reserve
held`), several engines on one pool, iterations with nothing to do and iterations that only preempt (until
a holder away from the engine releases: the no-progress guard ran out first), what a session reads of an
engine, warm-ups inside stretches of decodes, §7 on lib/vllm.sq's engine, and `cachedin`, refused where
no session reads it (a step stage's budget, chunk and cost: it read 0).

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the observes are asserted as (session, time, value)
and the report's figures as its JSON reads them. Every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
from conform import check_by_hand, report_json, request_rows, run, run_error

# ---------------------------------------------------------------------------------------------------------
# The header: budget, chunk, and the budget split across prefills and decodes
# ---------------------------------------------------------------------------------------------------------

HEADER = [
    # budget 10, chunk 4; prefills of 9, 3, 5 then 2 decodes each, no holds (admission order is serial).
    # [0,1]: s0 4, s1 3 (done), s2 min(5, 4, 10 - 7) = 3 → 10 tokens. [1,2]: s0 4 (1 left), s1's decode 1,
    # s2 2 (done) → 7. [2,3]: s0 1 (done), s1 1 (its 2nd: done), s2 1 → 3. [3,4]: s0 1, s2 1 (done) → 2.
    # [4,5]: s0 1 (done). f: s1 1, s2 2, s0 3; d: s1 3, s2 4, s0 5. 23 tokens in 5 iterations (4.6, 0.46
    # of 10); jobs 3, 3, 3, 2, 1: batch 2.4; [0,1] prefill only, [1,2] and [2,3] mixed, 2 decode only.
    ("three_prefills_share_the_budget_and_the_chunk", """
stage e : step { budget 10; cost 1; chunk 4; }
workload { arrive batch(3); }
session {
  prefill (serial == 0 ? 9 : serial == 1 ? 3 : 5);
  observe f = now;
  decode (2);
  observe d = now;
}
run { horizon 100; }
""", {"f": [(1, 1.0, 1.0), (2, 2.0, 2.0), (0, 3.0, 3.0)], "d": [(1, 3.0, 3.0), (2, 4.0, 4.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "tokens": 4.6, "token_utilisation": 0.46, "batch": 2.4,
                    "prefill_only": 1, "mixed": 2, "decode_only": 2}}),
    # chunk 2.5: a prefill of 6 takes 2.5, 2.5 and 1 (f 3); its decode of 1 at [3,4]. 7 tokens / 4 = 1.75.
    ("a_fractional_chunk", """
stage e : step { budget 10; cost 1; chunk 2.5; }
workload { arrive batch(1); }
session {
  prefill (6);
  observe f = now;
  decode (1);
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 3.0, 3.0)], "d": [(0, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "tokens": 1.75, "prefill_only": 3, "decode_only": 1}}),
    # chunk 5 above budget 3: the budget binds, a prefill of 7 takes 3, 3, 1 (f 3; 7 / 3 tokens an iteration).
    ("a_chunk_above_the_budget", """
stage e : step { budget 3; cost 1; chunk 5; }
workload { arrive batch(1); }
session { prefill (7); observe f = now; }
run { horizon 100; }
""", {"f": [(0, 3.0, 3.0)]}, {("e", None): {"iterations": 3, "tokens": 7 / 3}}),
    # no budget (infinite) and chunk 50: the chunk alone cuts a prefill of 120: 50, 50, 20 (f 3; 40 a step).
    ("no_budget_and_a_chunk", """
stage e : step { cost 1; chunk 50; }
workload { arrive batch(1); }
session { prefill (120); observe f = now; }
run { horizon 100; }
""", {"f": [(0, 3.0, 3.0)]}, {("e", None): {"iterations": 3, "tokens": 40.0}}),
    # the chunk as vLLM's long_prefill_token_threshold (lib/vllm.sq's long_prefill): 2 while more than one
    # request is running or waiting, read at the iteration's start, before it admits. s0 (prefill 20) is
    # admitted at 0 alone: chunk inf, 8 at [0,1] and 8 at [1,2] (holders 1, queued 0). s1 arrives at 1.5
    # and waits (budget spent at 1). At 2 holders 1 + queued 1: chunk 2: s0 2, s1 admitted with 6 left: 2
    # of its 3. At 3 (two holders): s0 its last 2, s1 its last 1: both f 4. 8, 8, 4, 3 tokens (5.75); s1
    # waited 0.5 (reqs wait 0.25 over two admissions).
    ("a_long_prefill_chunk_read_before_the_admissions", """
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; chunk holders(reqs) + queued(reqs) > 1 ? 2 : inf; }
stage w : delay;
workload { arrive batch(2); }
session {
  run w (1.5 * serial);
  hold reqs (1) { prefill (serial == 0 ? 20 : 3); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 4.0, 4.0), (1, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "tokens": 5.75}, ("reqs", None): {"wait": 0.25, "admissions": 2}}),
    # budget 2 spent by two decoding residents: the waiting loop runs "while the iteration has budget
    # left", so s2 (prefill 2, arrived at 0.5) waits until both have decoded their 3 tokens ([0,3]); the
    # iteration at 3 admits it with the whole budget: f 4. reqs wait (0 + 0 + 2.5) / 3.
    ("decodes_that_spend_the_budget_admit_nobody", """
pool reqs { admit via e; }
stage e : step { budget 2; cost 1; }
stage w : delay;
workload { arrive batch(3); }
session {
  run w (serial == 2 ? 0.5 : 0);
  hold reqs (1) { branch (serial < 2) { decode (3); } else { prefill (2); } }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 3.0, 3.0), (1, 3.0, 3.0), (2, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "tokens": 2.0, "prefill_only": 1, "decode_only": 3},
      ("reqs", None): {"wait": 2.5 / 3}}),
    # four decoders of 2 tokens and budget 3: one token each "until the budget is spent", in admission
    # order: s0, s1, s2 at [0,1] and [1,2] (d 2), s3 alone at [2,3] and [3,4] (d 4). 8 tokens / 4.
    ("more_decoders_than_the_budget", """
stage e : step { budget 3; cost 1; }
workload { arrive batch(4); }
session {
  decode (2);
  observe d = now;
}
run { horizon 100; }
""", {"d": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, 2.0, 2.0), (3, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "tokens": 2.0, "batch": 2.0}}),
    # a decode of 2.5 tokens: one token, one, then the half left; cost 1 + tokens: 2, 2, 1.5 → d 5.5.
    ("a_fractional_decode", """
stage e : step { budget 4; cost 1 + tokens; }
workload { arrive batch(1); }
session {
  decode (2.5);
  observe d = now;
}
run { horizon 100; }
""", {"d": [(0, 5.5, 5.5)]}, {("e", None): {"iterations": 3, "tokens": 2.5 / 3}}),
    # long stretches of decodes (the simulator's quiet rounds) and an arrival inside one: three decoders of
    # 100 at budget 4; s3 (prefill 2) joins at 50.5 and takes the 1 token left at [51,52] and [52,53] (f
    # 53); the decoders end at 100. 302 tokens in 100 iterations; busy [0,100]; present 3 · 100 + 2.5.
    ("a_prefill_joining_a_stretch_of_decodes_takes_the_budget_left", """
stage e : step { budget 4; cost 1; }
stage w : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) { decode (100); } else { run w (50.5); prefill (2); }
  observe f = now;
}
run { horizon 200; }
""", {"f": [(3, 53.0, 53.0), (0, 100.0, 100.0), (1, 100.0, 100.0), (2, 100.0, 100.0)]},
     {("e", None): {"iterations": 100, "tokens": 3.02, "mixed": 2, "utilisation": 0.5, "present": 302.5 / 200}}),
    # the same at budget 3: the decoders spend it all, s3 waits to 100 and prefills at [100,101]; work(e)
    # read at 100 is s3's 2 tokens, the decoders' gone.
    ("a_prefill_behind_a_stretch_of_decodes_that_spend_the_budget", """
stage e : step { budget 3; cost 1; }
stage w : delay;
workload { arrive batch(4); }
session {
  branch (serial < 3) { decode (100); } else { run w (50.5); prefill (2); }
  observe f = now;
  observe wk = work(e);
}
run { horizon 200; }
""", {"f": [(0, 100.0, 100.0), (1, 100.0, 100.0), (2, 100.0, 100.0), (3, 101.0, 101.0)],
      "wk": [(0, 100.0, 2.0), (1, 100.0, 2.0), (2, 100.0, 2.0), (3, 101.0, 0.0)]},
     {("e", None): {"iterations": 101, "prefill_only": 1, "decode_only": 100}}),
    # two engines, each in its own stretch: e1 (cost 1) decodes s0, s1 (50 each), e2 (cost 0.7) s2, s3 (40
    # each, done at 40 · 0.7 = 28). s4 joins e1 at 10.25: prefill 3 as 2 at [11,12] and 1 at [12,13]; its
    # decode of 2 joins e2 at 13, inside e2's iteration [12.6,13.3]: tokens at [13.3,14] and [14,14.7].
    ("two_engines_in_stretches_of_decodes_and_a_session_that_crosses", """
stage e1 : step { budget 4; cost 1; }
stage e2 : step { budget 4; cost 0.7; }
stage w : delay;
workload { arrive batch(5); }
session {
  branch (serial < 2) {
    run e1 decode (50);
  } else {
    branch (serial < 4) { run e2 decode (40); } else { run w (10.25); run e1 prefill (3); run e2 decode (2); }
  }
  observe f = now;
}
run { horizon 200; }
""", {"f": [(4, 14.7, 14.7), (2, 28.0, 28.0), (3, 28.0, 28.0), (0, 50.0, 50.0), (1, 50.0, 50.0)]},
     {("e1", None): {"iterations": 50, "utilisation": 0.25}, ("e2", None): {"iterations": 40, "utilisation": 0.14}}),
    # what a session reads of an engine between iterations (docs/language.md: work(s) "the residents'
    # tokens, which go down when an iteration ends"; budget_left read outside the waiting loop "an estimate
    # …: S's budget and chunk evaluated now, less what every resident would take at S's next iteration").
    # s0, s1 decode 10; s2 (prefill 10, chunk 3) joins at 0.5: [1,2] 3, [2,3] 3, [3,4] 3, [4,5] 1 (f 5). At
    # 4.5, inside [4,5]: work 6 + 6 + 1 = 13; budget_left 8 - (1 + 1 + min(1, 3)) = 5; queue and busy 3.
    ("what_a_session_reads_of_an_engine_inside_an_iteration", """
stage e : step { budget 8; cost 1; chunk 3; }
stage w : delay;
workload { arrive batch(4); }
session {
  branch (serial < 2) {
    decode (10);
  } else {
    branch (serial == 2) {
      run w (0.5);
      prefill (10);
    } else {
      run w (4.5);
      observe bl = budget_left(e);
      observe wk = work(e);
      observe q = queue(e);
      observe b = busy(e);
    }
  }
  observe f = now;
}
run { horizon 100; }
""", {"bl": [(3, 4.5, 5.0)], "wk": [(3, 4.5, 13.0)], "q": [(3, 4.5, 3.0)], "b": [(3, 4.5, 3.0)],
      "f": [(3, 4.5, 4.5), (2, 5.0, 5.0), (0, 10.0, 10.0), (1, 10.0, 10.0)]},
     {("e", None): {"iterations": 10, "tokens": 3.0, "mixed": 4}}),
    # a warm-up inside a stretch of decodes: three decoders of 100 at [0,100]; warm-up 50.5. The
    # iterations planned after it (at 51 … 99): 49; busy [50.5,100] over 200 - 50.5; present 3 times that.
    ("a_warm_up_inside_a_stretch_of_decodes", """
stage e : step { budget 4; cost 1; }
workload { arrive batch(3); }
session { decode (100); observe f = now; }
run { horizon 200; warmup 50.5; }
""", {"f": [(0, 100.0, 100.0), (1, 100.0, 100.0), (2, 100.0, 100.0)]},
     {("e", None): {"iterations": 49, "utilisation": 49.5 / 149.5, "present": 3 * 49.5 / 149.5}}),
    # growing decoders and a cost of their blocks across a warm-up: two decoders of 10 from holds of 0,
    # blocks of 4, cost 1 + kv_decode / 100: positions 0 → 4 at 1.08 an iteration (two blocks of 4: 8),
    # 4 → 8 at 1.16 (16), 8 → 10 at 1.24 (24): ends at 4 · 1.08, then 5.48, 6.64, 7.80, 8.96, then 10.20,
    # 11.44 (f). Warm-up 5.5: the iterations planned at 6.64, 7.80, 8.96, 10.20 count (4); kv used 16 on
    # [5.5,8.96] and 24 on [8.96,11.44] over 194.5.
    ("growing_decoders_across_a_warm_up", """
pool kv { cap 1000; block 4; }
stage e : step { budget 4; cost 1 + kv_decode / 100; memory kv; }
workload { arrive batch(2); }
session { hold kv (0) { decode (10) growing kv; } observe f = now; }
run { horizon 200; warmup 5.5; }
""", {"f": [(0, 11.44, 11.44), (1, 11.44, 11.44)]},
     {("e", None): {"iterations": 4}, ("kv", None): {"used": (16 * 3.46 + 24 * 2.48) / 194.5}}),
    # the chunk caps a prefill, not a decode (§3: "One token to a decoding job, up to chunk to a prefilling
    # one"): chunk 0.5; s0's decode of 2 takes a token at [0,1] and [1,2]; s1's prefill of 1 takes 0.5 each.
    ("the_chunk_caps_prefills_not_decodes", """
stage e : step { budget 4; cost 1; chunk 0.5; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { decode (2); } else { prefill (1); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 2.0, 2.0), (1, 2.0, 2.0)]}, {("e", None): {"iterations": 2, "tokens": 1.5, "mixed": 2}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in HEADER], ids=[c[0] for c in HEADER])
def test_header_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# The serving order
# ---------------------------------------------------------------------------------------------------------

SERVE = [
    # serve by (decoding): prefills (key 0) before decodes (1). Budget 3; s0 prefill 1 then decode 3, s1
    # prefill 5. [0,1]: s0 1, s1 2 (both prefills, ties in order). [1,2]: s1's prefill first, its last 3:
    # the budget is spent, s0's decode waits (f1 2). [2,5]: s0's 3 decode tokens (d 5). In admission order
    # s0's decode would take a token at [1,2] and s1 finish at 3.
    ("serve_by_decoding_serves_prefills_first", """
stage e : step { budget 3; cost 1; serve by (decoding); }
workload { arrive batch(2); }
session {
  prefill (serial == 0 ? 1 : 5);
  observe f = now;
  decode (serial == 0 ? 3 : 0);
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 1.0, 1.0), (1, 2.0, 2.0)], "d": [(1, 2.0, 2.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "tokens": 1.8}}),
    # serve by (-serial), an attribute: the last session first. Budget 4, prefills of 3: [0,1] s2 3, s1 1;
    # [1,2] s1 2, s0 2; [2,3] s0 1.
    ("serve_by_an_attribute_descending", """
stage e : step { budget 4; cost 1; serve by (-serial); }
workload { arrive batch(3); }
session {
  prefill (3);
  observe f = now;
}
run { horizon 100; }
""", {"f": [(2, 1.0, 1.0), (1, 2.0, 2.0), (0, 3.0, 3.0)]}, {("e", None): {"iterations": 3}}),
    # serve by (residents): a total, the same for every resident, so all tie and are served in admission
    # order: budget 3, prefills of 2: [0,1] s0 2, s1 1; [1,2] s1 1, s2 2.
    ("serve_by_a_total_ties_every_resident", """
stage e : step { budget 3; cost 1; serve by (residents); }
workload { arrive batch(3); }
session { prefill (2); observe f = now; }
run { horizon 100; }
""", {"f": [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]}, {("e", None): {"iterations": 2, "tokens": 3.0}}),
    # serve by (sqrt(serial - 1)): s0's key is NaN, served after every number (docs/language.md: a serve by
    # key that is NaN counts as inf); s1 (0) then s2 (1). Budget 2, prefills of 2: f 1, 2, 3.
    ("serve_by_a_nan_key_serves_it_last", """
stage e : step { budget 2; cost 1; serve by (sqrt(serial - 1)); }
workload { arrive batch(3); }
session { prefill (2); observe f = now; }
run { horizon 100; }
""", {"f": [(1, 1.0, 1.0), (2, 2.0, 2.0), (0, 3.0, 3.0)]}, {("e", None): {"iterations": 3}}),
    # ties in admission order, not in serial order: every prio 5, s1 admitted at 0, s0 (arrived at 0.5)
    # at 1. Budget 3, chunk 2. [0,1] s1 2 (alone); [1,2] s1 2, s0 admitted with 1 left: 1; [2,3] s1 its
    # last 2 (f1 3), s0 1; [3,4] s0 its last 2 (f0 4). By serial s0 would finish at 3 and s1 at 4.
    ("serve_by_ties_go_by_admission_not_serial", """
pool reqs { admit via e; }
stage e : step { budget 3; cost 1; chunk 2; serve by (prio); }
stage w : delay;
workload { arrive batch(2); }
session {
  set prio = 5;
  run w (serial == 0 ? 0.5 : 0);
  hold reqs (1) { prefill (serial == 0 ? 4 : 6); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(1, 3.0, 3.0), (0, 4.0, 4.0)]}, {("e", None): {"iterations": 4, "tokens": 2.5}}),
    # serve by (remaining): the run's tokens left, not the chunk. Budget 4, chunk 4; prefills 10 and 6.
    # [0,1] s1 (6) first: 4; [1,2] s1 (2) 2, s0 (10) 2 (f1 2); [2,3] and [3,4] s0 4 and 4 (f0 4).
    ("serve_by_remaining_under_a_chunk", """
stage e : step { budget 4; cost 1; chunk 4; serve by (remaining); }
workload { arrive batch(2); }
session {
  prefill (serial == 0 ? 10 : 6);
  observe f = now;
}
run { horizon 100; }
""", {"f": [(1, 2.0, 2.0), (0, 4.0, 4.0)]}, {("e", None): {"iterations": 4, "tokens": 4.0}}),
    # newcomers after the residents, whatever their keys: serve by (-admission) (newest first), budget 3.
    # s0 (prefill 2, decode 3) admitted at 0: [0,1] p 2 (f0 1); [1,2] d. s1 (prefill 6) arrives at 1.5:
    # at 2 the resident s0 is served first (d), then s1 is admitted with 2 left: p 2. From 3 s1 is first:
    # [3,4] s1 p 3 (1 left), nothing for s0; [4,5] s1 p 1 (f1 5), s0 its last decode (d0 5). Newest first
    # from the admitting iteration on would have given s1 3 at [2,3].
    ("serve_by_newest_first_serves_the_newcomer_after_the_residents", """
pool reqs { admit via e; }
stage e : step { budget 3; cost 1; serve by (-admission); }
stage w : delay;
workload { arrive batch(2); }
session {
  run w (1.5 * serial);
  hold reqs (1) {
    prefill (serial == 0 ? 2 : 6);
    observe f = now;
    decode (serial == 0 ? 3 : 0);
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 1.0, 1.0), (1, 5.0, 5.0)], "d": [(0, 5.0, 5.0), (1, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "tokens": 2.2}}),
    # serve exclusive prefill with chunk 3: the resident prefill takes precedence and is served alone, cut
    # by the chunk (docs/language.md): s1's 7 at [0,1], [1,2], [2,3] as 3, 3, 1 (f1 3) while s0's decode
    # waits; then s0 decodes 2 at [3,5] (d 5). 9 tokens / 5.
    ("exclusive_prefill_alone_under_a_chunk_beside_a_waiting_decode", """
stage e : step { budget 8; cost 1; chunk 3; serve exclusive prefill; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { decode (2); } else { prefill (7); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(1, 3.0, 3.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 5, "tokens": 1.8, "prefill_only": 3, "decode_only": 2}}),
    # two keys, (decoding ? 0 : 1, -remaining): decodes first, then the longest prefill. Budget 4; s0
    # prefill 3, s1 prefill 5, s2 decode 2. [0,1]: s2 (0, -2) 1, s1 (1, -5) 3. [1,2]: s2 (0, -1) its last
    # (d 2), then s0 (1, -3) before s1 (1, -2): 3, all of it (f0 2); nothing left for s1. [2,3] s1 its 2.
    ("serve_by_two_keys_decodes_then_the_longest_prefill", """
stage e : step { budget 4; cost 1; serve by (decoding ? 0 : 1, -remaining); }
workload { arrive batch(3); }
session {
  branch (serial == 2) { decode (2); } else { prefill (serial == 0 ? 3 : 5); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 2.0, 2.0), (2, 2.0, 2.0), (1, 3.0, 3.0)]}, {("e", None): {"iterations": 3, "mixed": 2}}),
    # serve by (-remaining) over decodes at budget 1: keys -2 (s0), -3 (s1): [0,1] s1; [1,2] -2, -2 tie:
    # admission order, s0; [2,3] -1, -2: s1; [3,4] -1, -1: s0 (d 4); [4,5] s1 (d 5).
    ("serve_by_minus_remaining_over_decodes_ties_in_admission_order", """
stage e : step { budget 1; cost 1; serve by (-remaining); }
workload { arrive batch(2); }
session { decode (serial == 0 ? 2 : 3); observe d = now; }
run { horizon 100; }
""", {"d": [(0, 4.0, 4.0), (1, 5.0, 5.0)]}, {("e", None): {"iterations": 5, "decode_only": 5}}),
    # serve decode first at budget 1: s1's decode takes every token until done ([0,3], d 3) while s0's
    # prefill of 2 waits; then [3,5] (f 5).
    ("serve_decode_first_starves_a_prefill_at_budget_one", """
stage e : step { budget 1; cost 1; serve decode first; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { prefill (2); } else { decode (3); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(1, 3.0, 3.0), (0, 5.0, 5.0)]}, {("e", None): {"iterations": 5, "prefill_only": 2, "decode_only": 3}}),
    # a session no hold admitted has no admission: docs/language.md ("Admission order for a session no hold
    # has admitted") places it before every admitted one. s0 is admitted at 0 and prefills 3 of 6 at [0,1];
    # s1 (no hold) joins at 0.5 and is served first at 1: its 3 (f1 2); s0 its last 3 at [2,3].
    ("a_session_no_hold_admitted_is_served_before_the_admitted", """
pool reqs { admit via e; }
stage e : step { budget 3; cost 1; }
stage w : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold reqs (1) { prefill (6); } } else { run w (0.5); prefill (3); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(1, 2.0, 2.0), (0, 3.0, 3.0)]}, {("e", None): {"iterations": 3, "tokens": 3.0}}),
    # serve by (prio) over a stretch of decodes: s0, s1, s2 (prio 2) decode 6 at budget 4, one token each
    # at [0,3]; s3 (prio 1, prefill 5) joins at 2.5 and goes first at 3: 4 tokens, the budget spent, no
    # decoder served at [3,4]; [4,5] s3 its last 1 (f 5), the decoders theirs; they end at 7.
    ("serve_by_a_key_puts_a_later_prefill_before_the_decoders", """
stage e : step { budget 4; cost 1; serve by (prio); }
stage w : delay;
workload { arrive batch(4); }
session {
  set prio = serial == 3 ? 1 : 2;
  branch (serial < 3) { decode (6); } else { run w (2.5); prefill (5); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(3, 5.0, 5.0), (0, 7.0, 7.0), (1, 7.0, 7.0), (2, 7.0, 7.0)]},
     {("e", None): {"iterations": 7, "decode_only": 5, "prefill_only": 1, "mixed": 1}}),
    # the same with every run growing a hold of 0 in blocks of 2 and cost 1 + kv_decode / 1000 (kv_decode:
    # the served decoders' blocks after the growth). Decoders at positions 0 → 1 (6 units: 1.006), 1 → 2
    # (1.006), 2 → 3 (12: 1.012): ends 1.006, 2.012, 3.024. At 3.024 s3 grows to 4 and takes the budget,
    # no decoder (cost 1): 4.024; then s3's last token (growing to 6) and the decoders 3 → 4 (12): 5.036
    # (f3); 4 → 5 (18): 6.054; 5 → 6: 7.072.
    ("serve_by_a_key_over_growing_decoders_and_their_blocks_in_the_cost", """
pool kv { cap 100; block 2; }
stage e : step { budget 4; cost 1 + kv_decode / 1000; serve by (prio); memory kv; }
stage w : delay;
workload { arrive batch(4); }
session {
  set prio = serial == 3 ? 1 : 2;
  branch (serial < 3) {
    hold kv (0) { decode (6) growing kv; }
  } else {
    run w (2.5);
    hold kv (0) { prefill (5) growing kv; }
  }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(3, 5.036, 5.036), (0, 7.072, 7.072), (1, 7.072, 7.072), (2, 7.072, 7.072)]},
     {("e", None): {"iterations": 7, "utilisation": 0.07072}}),
    # serve decode first orders the residents; a waiting decode is admitted only after them, "while the
    # iteration has budget left" (§3): budget 2; s0's prefill of 4 takes it at [0,1] and [1,2]; s1 (a hold
    # that only decodes 2, waiting from 0.5) is admitted at 2: [2,3], [3,4] (f 4); reqs wait (0 + 1.5) / 2.
    ("decode_first_orders_residents_a_waiting_decode_comes_after_them", """
pool reqs { admit via e; }
stage e : step { budget 2; cost 1; serve decode first; }
stage w : delay;
workload { arrive batch(2); }
session {
  run w (0.5 * serial);
  hold reqs (1) { branch (serial == 0) { prefill (4); } else { decode (2); } }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 2.0, 2.0), (1, 4.0, 4.0)]},
     {("e", None): {"iterations": 4, "prefill_only": 2, "decode_only": 2}, ("reqs", None): {"wait": 0.75}}),
    # a serve key's `admission` is the session's admission number (§3: "its admission sequence number"),
    # counted over every admission of the run: s0 (kv at 0) and s1 (kv at 0.5, after four holds of another
    # pool at 0.25) differ by 5, so serve by (admission + 4 · decoding) still serves s0's decode first
    # (by places, 0 + 4 against 1, s1 would go first). Budget 2: [0,1] s0 p 2; [1,2] … [4,5] s0 d 1 and
    # s1 p 1: both end at 5 (by places s1 would prefill 2 at [1,2], [2,3]: f1 3).
    ("a_serve_keys_admission_is_the_admission_number", """
pool kv { cap 100; }
pool side { cap 100; }
stage e : step { budget 2; cost 1; serve by (admission + 4 * decoding); }
stage w : delay;
workload { arrive batch(6); }
session {
  branch (serial == 0) {
    hold kv (4) { prefill (2); decode (4); }
  } else {
    branch (serial == 1) {
      run w (0.5);
      hold kv (4) { prefill (4); }
    } else {
      run w (0.25);
      hold side (1) { run w (100); }
    }
  }
  observe f = now;
}
run { horizon 200; }
""", {"f": [(0, 5.0, 5.0), (1, 5.0, 5.0), (2, 100.25, 100.25), (3, 100.25, 100.25), (4, 100.25, 100.25),
            (5, 100.25, 100.25)]},
     {("e", None): {"iterations": 5, "mixed": 4, "prefill_only": 1}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in SERVE], ids=[c[0] for c in SERVE])
def test_serving_order_by_hand(monkeypatch, src, obs, figures):
    _, js = check_by_hand(monkeypatch, src, obs, figures)
    # a NaN key is told once (docs/language.md: "The report warns of each such key once (code nan-key)"),
    # naming the run it was NaN for; no other key here is NaN
    nan = [n for n, c in zip(js["notes"], js["codes"]) if c == "nan-key"]
    if "sqrt(serial - 1)" in src:
        assert len(nan) == 1 and "first for the run of session 0 that joined the stage at t=0" in nan[0], nan
    else:
        assert nan == []


# ---------------------------------------------------------------------------------------------------------
# The cost, and iterations with nothing (or everything) to do
# ---------------------------------------------------------------------------------------------------------

COST = [
    # cost 0.5 + 0.25 · tokens, budget 4: a prefill of 6 as 4 (1.5) and 2 (1): f 2.5; its decode 1 token
    # (0.75): d 3.25. Busy 3.25 of 100.
    ("the_cost_reads_the_tokens", """
stage e : step { budget 4; cost 0.5 + 0.25 * tokens; }
workload { arrive batch(1); }
session {
  prefill (6);
  observe f = now;
  decode (1);
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 2.5, 2.5)], "d": [(0, 3.25, 3.25)]},
     {("e", None): {"iterations": 3, "utilisation": 0.0325}}),
    # cost 1 + prefilled / 4 + decoders: s0 decodes 2, s1 prefills 4. [0,3]: s0 1 token and s1 4 (1 + 1 +
    # 1 = 3): f1 3. [3,5]: s0 alone (1 + 0 + 1): d 5.
    ("the_cost_reads_prefilled_and_decoders_apart", """
stage e : step { budget 10; cost 1 + prefilled / 4 + decoders; }
workload { arrive batch(2); }
session {
  branch (serial == 0) { decode (2); } else { prefill (4); }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(1, 3.0, 3.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 2, "utilisation": 0.05, "mixed": 1, "decode_only": 1}}),
    # cost 0: every iteration ends at its own instant. Budget 2, prefill 3 then decode 3 each: s0 2 | s0 1,
    # s1 1 | s0 d, s1 1 | s0 d, s1 1 | s0 d, s1 d | s1 d | s1 d: 7 iterations at t = 0, 12 tokens; every
    # sample at 0, nothing present for a positive time.
    ("a_cost_of_zero_runs_every_iteration_at_one_instant", """
stage e : step { budget 2; cost 0; }
workload { arrive batch(2); }
session {
  prefill (3);
  observe f = now;
  decode (3);
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 0.0, 0.0), (1, 0.0, 0.0)], "d": [(0, 0.0, 0.0), (1, 0.0, 0.0)]},
     {("e", None): {"iterations": 7, "tokens": 12 / 7, "present": 0.0, "utilisation": 0.0}}),
    # every resident done in one iteration, then none: s0 (3) and s1 (5) at [0,2] (cost 2); the stage is
    # idle until s2 arrives at 3 ([3,5]). Busy 4 of 100, present 2 · 2 + 2 over 100.
    ("every_resident_done_in_one_iteration_then_idle", """
stage e : step { budget 10; cost 2; }
stage w : delay;
workload { arrive batch(3); }
session {
  run w (serial == 2 ? 3 : 0);
  prefill (serial == 0 ? 3 : serial == 1 ? 5 : 4);
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 2.0, 2.0), (1, 2.0, 2.0), (2, 5.0, 5.0)]},
     {("e", None): {"iterations": 2, "utilisation": 0.04, "present": 0.06, "tokens": 6.0}}),
    # a resident whose growth waits (preempt none) gets nothing, and an iteration of no token is none: kv
    # cap 8, blocks of 4; both hold 4 and prefill 4 at [0,1]; s1 then holds its 4 on a delay of 2, s0's
    # decode needs a second block: no room, it waits, no iteration. At 3 s1 releases, s0 grows (8) and
    # decodes at [3,4], [4,5]. 3 iterations; kv used 4 + 4 on [0,3], 8 on [3,5]: 40 / 100.
    ("a_stalled_grower_alone_is_no_iteration", """
pool kv { cap 8; block 4; }
stage e : step { budget 10; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv (4) {
    prefill (4) growing kv;
    observe f = now;
    branch (serial == 0) { decode (2) growing kv; } else { run d (2); }
  }
  observe x = now;
}
run { horizon 100; }
""", {"f": [(0, 1.0, 1.0), (1, 1.0, 1.0)], "x": [(1, 3.0, 3.0), (0, 5.0, 5.0)]},
     {("e", None): {"iterations": 3, "utilisation": 0.03}, ("kv", None): {"used": 0.4, "preemptions": 0}}),
    # a prompt of 0 tokens: the prefill completes at once (§3: "A run of zero work completes at once"), no
    # iteration, nothing grown; the decode of 1 from position 0 grows the hold of 0 to a block: one
    # iteration [0,1]. kv used 4 on [0,1].
    ("a_prefill_of_zero_then_one_decode_token", """
pool kv { cap 100; block 4; }
stage e : step { budget 10; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (0) {
    prefill (0) growing kv;
    observe f = now;
    decode (1) growing kv;
    observe u = used(kv);
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 0.0, 0.0)], "u": [(0, 1.0, 4.0)], "d": [(0, 1.0, 1.0)]},
     {("e", None): {"iterations": 1, "prefill_only": 0, "decode_only": 1}, ("kv", None): {"used": 0.04}}),
    # kv_decode in the cost is the decoders' allocation after the iteration's growth (docs/language.md, "What
    # kv_decode and kv_prefill count"): cost 1 + kv_decode / 4. [0,1] the prefill of 4 (kv_decode 0); at 1
    # the decode's first token grows the hold to 8: cost 3, [1,4]; [4,7] the second (8): d 7. Read before
    # the growth it would have been 2, then 3: d 6.
    ("the_cost_reads_kv_decode_after_the_growth", """
pool kv { cap 100; block 4; }
stage e : step { budget 8; cost 1 + kv_decode / 4; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (4) { prefill (4) growing kv; decode (2) growing kv; }
  observe d = now;
}
run { horizon 100; }
""", {"d": [(0, 7.0, 7.0)]}, {("e", None): {"iterations": 3}, ("kv", None): {"used": 0.52}}),
    # kv_prefill counts a newcomer admitted in the iteration, after its growth: s0 is admitted with 4 and
    # its chunk of 6 grows the hold to 8: cost 1 + 8 / 4 = 3 (f 3).
    ("the_cost_reads_a_newcomers_kv_prefill_after_its_growth", """
pool reqs { admit via e; }
pool kv { cap 100; block 4; }
stage e : step { budget 8; cost 1 + kv_prefill / 4; memory kv; }
workload { arrive batch(1); }
session {
  hold reqs (1), kv (4) { prefill (6) growing kv; }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 3.0, 3.0)]}, {("e", None): {"iterations": 1}, ("kv", None): {"used": 0.24}}),
    # budget_left(e) in e's own cost is the estimate of docs/language.md (budget less what every resident
    # would take), counting a grower that waits for room and got nothing. kv cap 8: s0 prefills 4 at [0,5]
    # (1 + 8 - 4 = 5: f 5), then its decode needs a second block while s1 holds 4 on a delay to 20: it
    # waits. s2's prefill of 2 (joined at 1) runs at 5 with cost 1 + 8 - (1 + 2) = 6: [5,11]. At 20 s1
    # releases, s0 grows and decodes at cost 1 + 8 - 1 = 8: d 28.
    ("budget_left_in_the_own_cost_is_the_estimate", """
pool kv { cap 8; block 4; }
stage e : step { budget 8; cost 1 + budget_left(e); memory kv; }
stage w : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (4) { prefill (4) growing kv; observe f = now; decode (1) growing kv; }
  } else {
    branch (serial == 1) { hold kv (4) { run w (20); } } else { run w (1); prefill (2); }
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 5.0, 5.0)], "d": [(2, 11.0, 11.0), (1, 20.0, 20.0), (0, 28.0, 28.0)]},
     {("e", None): {"iterations": 3, "utilisation": 0.19}}),
    # a resident whose growth waits takes no token, so the budget is left to the waiting loop: kv cap 8; s0
    # prefills 4 at [0,1], then its decode needs a second block while s1 holds 4 on a delay to 5 (no
    # iteration: nothing else to serve). s2 (slots only, prefill 3) arrives at 1.5: the engine, idle with a
    # waiting queue, admits it with the whole budget: [1.5,2.5]. At 5 s0 grows and decodes at [5,7].
    ("a_waiting_grower_leaves_the_budget_to_a_newcomer", """
pool kv { cap 8; block 4; }
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; memory kv; }
stage w : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (4) { prefill (4) growing kv; decode (2) growing kv; }
  } else {
    branch (serial == 1) { hold kv (4) { run w (5); } } else { run w (1.5); hold reqs (1) { prefill (3); } }
  }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(2, 2.5, 2.5), (1, 5.0, 5.0), (0, 7.0, 7.0)]},
     {("e", None): {"iterations": 4, "prefill_only": 2, "decode_only": 2}, ("reqs", None): {"wait": 0.0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in COST], ids=[c[0] for c in COST])
def test_cost_and_idle_iterations_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_a_negative_prefill_is_an_error_at_its_statement(monkeypatch):
    """§3: a run's work is an amount; s1's `prefill (serial - 1)` is 0 and completes at once, s0's is -1:
    the run-time error names the statement's place, the time and the session, on both tiers."""
    src = """
stage e : step { budget 10; cost 1; }
workload { arrive batch(2); }
session {
  prefill (serial - 1);
  observe f = now;
}
run { horizon 100; }
"""
    assert run_error(src, monkeypatch) == "<source>:5:3: error: at t=0, session 0: the run's work is negative (-1)"


# ---------------------------------------------------------------------------------------------------------
# Blocks as the position advances, and prefix hits
# ---------------------------------------------------------------------------------------------------------

BLOCKS = [
    # a prompt of exactly two blocks: hold kv (0), prefill 8 grows to 8 (no third block) at [0,1]: u1 8;
    # the decode's first token (position 8 → 9) needs a third block: 12 at [1,2]; the second (9 → 10)
    # fits. Released at 3, caching min(10, 10) rounded down to blocks: 8. kv used 8 · 1 + 12 · 2 = 32;
    # cached 8 on [3,100]: 776.
    ("a_prompt_of_exactly_two_blocks", """
pool kv { cap 100; block 4; }
stage e : step { budget 16; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (0) {
    prefill (8) growing kv;
    observe u1 = used(kv);
    decode (2) growing kv;
    observe u2 = used(kv);
  } cache (10);
  observe c = cachedin(kv);
}
run { horizon 100; }
""", {"u1": [(0, 1.0, 8.0)], "u2": [(0, 3.0, 12.0)], "c": [(0, 3.0, 8.0)]},
     {("kv", None): {"used": 0.32, "cached": 7.76}}),
    # a budget below the block: budget 2, blocks of 4, prefill 6 from a hold of 0: [0,1] positions 0 → 2
    # grow a block (4), [1,2] 2 → 4 fits, [2,3] 4 → 6 grows a second (8). kv used 4 · 2 + 8 · 1 = 16.
    ("a_budget_below_a_block", """
pool kv { cap 100; block 4; }
stage e : step { budget 2; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (0) { prefill (6) growing kv; }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 3.0, 3.0)]}, {("e", None): {"iterations": 3, "token_utilisation": 1.0}, ("kv", None): {"used": 0.16}}),
    # a block-aligned hit on the session's second hold: the first caches min(10, 10) → 8 (two blocks); the
    # second (14 units, reuse 13) consumes those 8: hit 8, prefills 14 - 8 = 6 from position 8 at [1,2],
    # then caches min(14, 14) → 12. kv used 12 on [0,1] (10 rounded up), 16 on [1,2]: 28; cached 8 for no
    # time at 1 (consumed at its release's instant), 12 on [2,100]: 1176.
    ("a_block_aligned_hit_on_the_next_hold", """
pool kv { cap 100; block 4; }
stage e : step { budget 16; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (10) { prefill (10) growing kv; } cache (10);
  observe c0 = cachedin(kv);
  hold kv (14) reuse (13) {
    observe hit = cached;
    prefill (14 - cached) growing kv;
  } cache (14);
  observe f = now;
  observe c1 = cachedin(kv);
}
run { horizon 100; }
""", {"c0": [(0, 1.0, 8.0)], "hit": [(0, 1.0, 8.0)], "f": [(0, 2.0, 2.0)], "c1": [(0, 2.0, 12.0)]},
     {("e", None): {"iterations": 2, "tokens": 8.0}, ("kv", None): {"used": 0.28, "cached": 11.76}}),
    # a reuse bound that is not a whole number of blocks: reuse (6) of the 8 cached consumes 4 (§4:
    # "cached (units found), block-rounded"); the entry's other block stays cached, dead. The second hold
    # prefills 14 - 4 = 10. cached: the dead 4 on [1,100] and the new 12 on [2,100]: 396 + 1176 = 1572.
    ("a_reuse_bound_inside_a_block_consumes_whole_blocks", """
pool kv { cap 100; block 4; }
stage e : step { budget 16; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (10) { prefill (10) growing kv; } cache (10);
  hold kv (14) reuse (6) {
    observe hit = cached;
    prefill (14 - cached) growing kv;
  } cache (14);
  observe f = now;
}
run { horizon 100; }
""", {"hit": [(0, 1.0, 4.0)], "f": [(0, 2.0, 2.0)]},
     {("e", None): {"iterations": 2, "tokens": 10.0}, ("kv", None): {"used": 0.28, "cached": 15.72}}),
    # a hit of the whole prompt: the second hold consumes the 8 the first cached, its prefill is 0 and
    # completes at once at the admission, and its decode joins the iteration that admitted it as a
    # newcomer: [1,2] (growing to 12) and [2,3]: d 3. kv used 8 on [0,1], 12 on [1,3]; cached 8 on [3,100].
    ("a_hit_of_the_whole_prompt_decodes_in_the_admitting_iteration", """
pool reqs { admit via e; }
pool kv { cap 100; block 4; }
stage e : step { budget 8; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold reqs (1), kv (8) { prefill (8) growing kv; } cache (8);
  hold reqs (1), kv (8) reuse (inf) {
    observe h = cached;
    prefill (8 - cached) growing kv;
    observe f = now;
    decode (2) growing kv;
  } cache (10);
  observe d = now;
}
run { horizon 100; }
""", {"h": [(0, 1.0, 8.0)], "f": [(0, 1.0, 1.0)], "d": [(0, 3.0, 3.0)]},
     {("e", None): {"iterations": 3, "prefill_only": 1, "decode_only": 2},
      ("kv", None): {"used": 0.32, "cached": 7.76}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in BLOCKS], ids=[c[0] for c in BLOCKS])
def test_blocks_and_hits_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# Preemption on a step stage, and several engines on one pool
# ---------------------------------------------------------------------------------------------------------

PREEMPT = [
    # lifo, the victim caching its computed prefix and consuming it again. kv cap 12, blocks of 4; both
    # hold 4 (reuse inf, cache 10) and prefill 4 - cached. [0,1] both 4. At 1 s0's decode grows to 8, s1's
    # cannot (16 > 12): s1 is the last admitted, its own victim; it caches min(10, 4) = 4; no admission in
    # that iteration. At 2 s1 is admitted again (computed 4, cached 4), its prefill is 0, its decode's
    # growth preempts it again (the same at 3): k and h 4 each time. s0 decodes 3: d 4; it caches min(10, 7)
    # → 4. At 4 s1 consumes its 4 again and decodes 6 (growing to 8 at 4 and to 12 at 8, evicting s0's 4):
    # d 10. Three preemptions at position 4: stuck 1 (preempted again without advancing). kv used: s0 4 + 24,
    # s1 4 + 8 · 4 + 12 · 2 = 88; cached s1's 4 on [1,4], s0's on [4,8], s1's 8 on [10,100]: 748.
    ("lifo_victim_caches_its_computed_prefix_and_consumes_it_again", """
pool kv { cap 12; block 4; preempt lifo; }
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (4) reuse (inf) {
    observe k = computed;
    observe h = cached;
    prefill (4 - cached) growing kv;
    decode (serial == 0 ? 3 : 6) growing kv;
  } cache (10);
  observe d = now;
}
run { horizon 100; }
""", {"k": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.0, 4.0), (1, 3.0, 4.0), (1, 4.0, 4.0)],
      "h": [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 2.0, 4.0), (1, 3.0, 4.0), (1, 4.0, 4.0)],
      "d": [(0, 4.0, 4.0), (1, 10.0, 10.0)]},
     {("e", None): {"iterations": 10},
      ("kv", None): {"used": 0.88, "cached": 7.48, "preemptions": 3, "stuck": 1, "admissions": 5,
                     "evicted_units": 4.0}}),
    # preempt by (-position) requeue tail: the resident with the most computed goes, though it is not the
    # grower, and the serving goes on (not lifo). kv cap 16. s0 holds 8, prefills 8 at [0,1]; at 1 grows to
    # 12 (position 9) and s1 is admitted (4) with the 7 left: prefills 2. At 4 s1's decode (position 4 →
    # 5) needs a block: no room; the keys are s0 -11 (its planned token given back), s1 -4: s0 goes,
    # releases 12, s1 grows to 8 and decodes. At 5 s0 is admitted again and prefills 8 again as 7 + 1 (f
    # 7), then decodes 6 at [7,13]; s1's 5 decodes end at 7.
    ("preempt_by_position_takes_the_furthest_resident", """
pool kv { cap 16; block 4; preempt by (-position) requeue tail; }
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold reqs (1), kv (serial == 0 ? 8 : 4) {
    prefill (serial == 0 ? 8 : 2) growing kv;
    observe f = now;
    decode (serial == 0 ? 6 : 5) growing kv;
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 1.0, 1.0), (1, 2.0, 2.0), (0, 7.0, 7.0)], "d": [(1, 7.0, 7.0), (0, 13.0, 13.0)]},
     {("e", None): {"iterations": 13}, ("kv", None): {"preemptions": 1, "admissions": 3}}),
    # the engine's memory: only its residents are candidates. s1 holds kv (4) from 0.5 on a delay of 10, away
    # from the engine; s0's decode needs a second block at 1: the only resident is s0, its own victim (not
    # s1, admitted later). The iteration that only preempted lasts 1; s0 (a victim on a pool no stage
    # admits) is admitted again at the next event, 2, prefills 4 at [2,3], and is preempted at 3, … until s1
    # releases at 10.5: admitted at 10 (a at 0, 2, 4, 6, 8, 10), its growth fits at 11: d 13. Preempted at
    # 1, 3, 5, 7, 9, each at position 4: stuck 1.
    ("a_holder_away_from_the_engine_is_no_victim", """
pool kv { cap 8; block 4; preempt lifo; }
stage e : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { observe a = now; prefill (4) growing kv; decode (2) growing kv; }
  } else {
    run d (0.5);
    hold kv (4) { run d (10); }
  }
  observe f = now;
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (0, 2.0, 2.0), (0, 4.0, 4.0), (0, 6.0, 6.0), (0, 8.0, 8.0), (0, 10.0, 10.0)],
      "f": [(1, 10.5, 10.5), (0, 13.0, 13.0)]},
     {("e", None): {"iterations": 13}, ("kv", None): {"preemptions": 5, "stuck": 1, "admissions": 7}}),
    # a pool no engine counts: its most recently admitted holder is the victim, wherever it is. side cap 8;
    # s0 prefills and decodes on the engine growing side; s1 holds side (4) on a delay of 10. At 1 s0's
    # decode needs a second block: s1 (admitted after s0) is preempted off its delay, re-enters side's
    # queue and waits until s0 releases at 5 (4 decodes at [1,5]); then its delay of 10 again: x 0 and 5,
    # f1 15. side wait (0 + 0 + 4) / 3.
    ("a_pool_no_engine_counts_preempts_its_latest_holder", """
pool side { cap 8; block 4; preempt lifo; }
stage e : step { budget 8; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold side (4) { prefill (4) growing side; decode (4) growing side; }
  } else {
    hold side (4) { observe x = now; run d (10); }
  }
  observe f = now;
}
run { horizon 100; }
""", {"x": [(1, 0.0, 0.0), (1, 5.0, 5.0)], "f": [(0, 5.0, 5.0), (1, 15.0, 15.0)]},
     {("e", None): {"iterations": 5}, ("side", None): {"preemptions": 1, "wait": 4 / 3}}),
    # two engines on one memory pool (kv cap 8): e1 (cost 1) admits s0 and e2 (cost 2) s1 at 0, 4 each.
    # At 1 s0's decode needs a second block: the candidates are both engines' residents, s1 was admitted
    # last: it leaves e2's running iteration (its tokens given back; that iteration still ends at 2). s1
    # waits in q2 until s0 ends at 3 (decodes at [1,3]); then e2 admits it: prefill [3,5] (f 5), decodes
    # [5,9]. e2: 4 iterations, the first of no token served; q2 wait (0 + 2) / 2.
    ("two_engines_on_one_pool_preempt_across", """
pool kv { cap 8; block 4; preempt lifo; }
pool q1 { admit via e1; }
pool q2 { admit via e2; }
stage e1 : step { budget 4; cost 1; memory kv; }
stage e2 : step { budget 4; cost 2; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold q1 (1), kv (4) { run e1 prefill (4) growing kv; observe f = now; run e1 decode (2) growing kv; }
  } else {
    hold q2 (1), kv (4) { run e2 prefill (4) growing kv; observe f = now; run e2 decode (2) growing kv; }
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 1.0, 1.0), (1, 5.0, 5.0)], "d": [(0, 3.0, 3.0), (1, 9.0, 9.0)]},
     {("e1", None): {"iterations": 3}, ("e2", None): {"iterations": 4, "utilisation": 0.08, "tokens": 1.5},
      ("kv", None): {"preemptions": 1}, ("q2", None): {"wait": 1.0}}),
    # two engines on one pool without preemption: e1's s0 holds all 8; e2's head (4) does not fit, and an
    # iteration of no token is none, so e2 tries again at every event, and admits s1 at 3, when s0
    # releases: f1 4; q2 wait 3.
    ("two_engines_on_one_pool_the_second_waits_for_room", """
pool kv { cap 8; block 4; }
pool q1 { admit via e1; }
pool q2 { admit via e2; }
stage e1 : step { budget 8; cost 1; memory kv; }
stage e2 : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold q1 (1), kv (8) { run e1 prefill (4) growing kv; run e1 decode (2) growing kv; }
  } else {
    hold q2 (1), kv (4) { run e2 prefill (2) growing kv; }
  }
  observe f = now;
}
run { horizon 100; }
""", {"f": [(0, 3.0, 3.0), (1, 4.0, 4.0)]},
     {("e1", None): {"iterations": 3}, ("e2", None): {"iterations": 1}, ("q2", None): {"wait": 3.0},
      ("kv", None): {"used": 0.28}}),
    # two victims of one growth, requeue head (lifo): kv cap 12; s0, s1, s2 admitted at 0 with 4 each (s0
    # prefills 4, s1 3 of its 3, s2 1 of its 7: budget 8). At 1 s0's second prefill (8 from position 4)
    # needs two more blocks: s2 (the last admitted) goes, then s1; each re-enters at the head, so the later
    # victim s1 is ahead of s2 (docs/language.md: "under requeue head the later victim is ahead of the
    # earlier", vLLM's prepend). s0 ends at 2 (f0 2). At 2 s1 is admitted first: prefills 3 (f 3), then s2
    # with the 5 left (growing to 8); [3,4] s1 decodes (d 4), s2 its last 2 (f 4); [4,5] s2 decodes (d 5).
    ("two_victims_of_one_growth_requeued_at_the_head", """
pool kv { cap 12; block 4; preempt lifo; }
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  hold reqs (1), kv (4) {
    branch (serial == 0) {
      prefill (4) growing kv;
      prefill (8) growing kv;
      observe f = now;
    } else {
      prefill (serial == 1 ? 3 : 7) growing kv;
      observe f = now;
      decode (1) growing kv;
    }
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(1, 1.0, 1.0), (0, 2.0, 2.0), (1, 3.0, 3.0), (2, 4.0, 4.0)],
      "d": [(0, 2.0, 2.0), (1, 4.0, 4.0), (2, 5.0, 5.0)]},
     {("e", None): {"iterations": 5}, ("kv", None): {"preemptions": 2, "admissions": 5}}),
    # the same victims under preempt by (-admission) requeue tail: s2 goes first and joins the queue's tail,
    # then s1 behind it. At 2 s2 is admitted first, prefills its 7 (f 3), s1 gets the 1 left; [3,4] s2
    # decodes (d 4), s1 its last 2 (f 4); [4,5] s1 decodes (d 5).
    ("two_victims_of_one_growth_requeued_at_the_tail", """
pool kv { cap 12; block 4; preempt by (-admission) requeue tail; }
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  hold reqs (1), kv (4) {
    branch (serial == 0) {
      prefill (4) growing kv;
      prefill (8) growing kv;
      observe f = now;
    } else {
      prefill (serial == 1 ? 3 : 7) growing kv;
      observe f = now;
      decode (1) growing kv;
    }
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(1, 1.0, 1.0), (0, 2.0, 2.0), (2, 3.0, 3.0), (1, 4.0, 4.0)],
      "d": [(0, 2.0, 2.0), (2, 4.0, 4.0), (1, 5.0, 5.0)]},
     {("e", None): {"iterations": 5}, ("kv", None): {"preemptions": 2, "admissions": 5}}),
    # a chunk that needs two blocks where there is room for one, preempt none: the growth is one, all or
    # none (docs/language.md, "A growth of several blocks takes them all or none"). kv cap 12; s0 holds 4 and
    # prefills 12 (8 more); s1 holds 4 on a delay of 5. At 0 the growth waits: at 0.5 used 8, free 4 (the
    # free block not taken). At 5 s1 releases, s0 grows to 12 and prefills at [5,6].
    ("a_growth_of_two_blocks_waits_for_both", """
pool kv { cap 12; block 4; }
stage e : step { budget 16; cost 1; memory kv; }
stage w : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (4) { prefill (12) growing kv; }
  } else {
    branch (serial == 1) {
      hold kv (4) { run w (5); }
    } else {
      run w (0.5);
      observe u = used(kv);
      observe fr = free(kv);
    }
  }
  observe f = now;
}
run { horizon 100; }
""", {"u": [(2, 0.5, 8.0)], "fr": [(2, 0.5, 4.0)], "f": [(2, 0.5, 0.5), (1, 5.0, 5.0), (0, 6.0, 6.0)]},
     {("e", None): {"iterations": 1}, ("kv", None): {"used": 0.52, "preemptions": 0}}),
    # serve exclusive prefill: the resident prefill's growth preempts the decoder (preempt by (-decoding):
    # decoders first). kv cap 12. s0 prefills 4 at [0,1] and its first decode token grows it to 8 at [1,2];
    # s1 (prefill 6) is admitted at 1.5 with 4 (used 12). At 2 s1's prefill, served alone, needs a second
    # block: s0 (key -1) goes, and s1 prefills its 6 at [2,3] (f, d 3). s0, a victim on a pool no stage
    # admits, is admitted again at 3, prefills again [3,4] and decodes 3 at [4,7]. kv used 12 + 10 + 28.
    ("exclusive_prefill_growth_preempts_the_decoder", """
pool kv { cap 12; block 4; preempt by (-decoding); }
stage e : step { budget 8; cost 1; serve exclusive prefill; memory kv; }
stage w : delay;
workload { arrive batch(2); }
session {
  run w (1.5 * serial);
  hold kv (4) {
    observe a = now;
    prefill (serial == 0 ? 4 : 6) growing kv;
    observe f = now;
    decode (serial == 0 ? 3 : 0) growing kv;
  }
  observe d = now;
}
run { horizon 100; }
""", {"a": [(0, 0.0, 0.0), (1, 1.5, 1.5), (0, 3.0, 3.0)], "f": [(0, 1.0, 1.0), (1, 3.0, 3.0), (0, 4.0, 4.0)],
      "d": [(1, 3.0, 3.0), (0, 7.0, 7.0)]},
     {("e", None): {"iterations": 7}, ("kv", None): {"used": 0.5, "preemptions": 1, "wait": 1 / 3}}),
    # reserve held on the engine's memory (pool-reference.txt: growth by d "requires used + Σ_{i≠grower} uᵢ
    # + d ≤ cap"; "Reservations end with the hold's scope, release or preemption"). kv cap 12. At 0 s0 (4)
    # and s1 (4, reserve 8: 4 unallocated) are admitted and prefill 4 each. At 1 s0's decode needs a block:
    # 8 + 4 (s1's reservation) + 4 > 12, so lifo takes s1 (admitted last), whose reservation ends with it;
    # s0 grows (8). s2 (waiting from 0.5) is not admitted then (the iteration preempted), nor at 2 …: s1, the
    # head again, needs 8 + 8 > 12 and blocks it. s0 grows to 12 at 5 and ends at 6 (d); at 6 s1 (prefill 4
    # again: f 7) and s2 (4 + 4 + 4 = 12: f, d 7) are admitted; s1 decodes into its own reservation at 7: d 8.
    # reqs wait (0 + 0 + 5 + 5.5) / 4.
    ("reserve_held_a_reservation_makes_its_holder_the_victim_and_ends_with_it", """
pool kv { cap 12; block 4; preempt lifo; reserve held; }
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; memory kv; }
stage w : delay;
workload { arrive batch(3); }
session {
  run w (serial == 2 ? 0.5 : 0);
  branch (serial == 0) {
    hold reqs (1), kv (4) { prefill (4) growing kv; observe f = now; decode (5) growing kv; }
  } else {
    branch (serial == 1) {
      hold reqs (1), kv (4) reserve (8) { prefill (4) growing kv; observe f = now; decode (1) growing kv; }
    } else {
      hold reqs (1), kv (4) { prefill (2) growing kv; observe f = now; }
    }
  }
  observe d = now;
}
run { horizon 100; }
""", {"f": [(0, 1.0, 1.0), (1, 1.0, 1.0), (1, 7.0, 7.0), (2, 7.0, 7.0)],
      "d": [(0, 6.0, 6.0), (2, 7.0, 7.0), (1, 8.0, 8.0)]},
     {("e", None): {"iterations": 8}, ("kv", None): {"preemptions": 1, "admissions": 4},
      ("reqs", None): {"wait": 2.625}}),
    # a victim key's `admission` is the candidate's place in the candidates' admission order (pool-reference
    # .txt: "its place in the candidates' admission order"), not the session's admission number: s0 (kv at 0)
    # and s1 (kv at 0.5) are places 0 and 1, though four holds of another pool were admitted between them.
    # preempt by (admission + 2 · decoding): at 1 s1's chunk (7 of 8, budget 8 less s0's decode) needs a
    # block (16 > 12): s0 decoding 0 + 2 = 2, s1 1 + 0 = 1: s1 goes (by admission numbers, 1 + 2 against 6,
    # s0 would). s1 is admitted again at 2, 3, 4, 5 and preempted each time; at 5 s0's own growth (position
    # 8 → 9) takes it; s0 ends at 7 (6 decodes at [1,7]); s1 prefills its 8 at [7,8]. a: each admission.
    ("a_victim_keys_admission_is_the_candidates_place", """
pool kv { cap 12; block 4; preempt by (admission + 2 * decoding); }
pool side { cap 100; }
stage e : step { budget 8; cost 1; memory kv; }
stage w : delay;
workload { arrive batch(6); }
session {
  branch (serial == 0) {
    hold kv (4) { prefill (4) growing kv; decode (6) growing kv; }
  } else {
    branch (serial == 1) {
      run w (0.5);
      hold kv (4) { observe a = now; prefill (8) growing kv; }
    } else {
      run w (0.25);
      hold side (1) { run w (100); }
    }
  }
  observe f = now;
}
run { horizon 200; }
""", {"a": [(1, 0.5, 0.5), (1, 2.0, 2.0), (1, 3.0, 3.0), (1, 4.0, 4.0), (1, 5.0, 5.0), (1, 7.0, 7.0)],
      "f": [(0, 7.0, 7.0), (1, 8.0, 8.0), (2, 100.25, 100.25), (3, 100.25, 100.25), (4, 100.25, 100.25),
            (5, 100.25, 100.25)]},
     {("e", None): {"iterations": 8}, ("kv", None): {"preemptions": 5, "stuck": 1, "admissions": 7}}),
    # two engines on one pool with a cache: s0 prefills 8 on a at [0,1] and caches 8; s1's hold of 8 on b
    # at 2 needs 8 beside it in 12: one block of s0's entry goes, from its tail (§3: "per block from the tail
    # of the entry"; 4 units evicted, no entry whole). s0's next hold at 6 finds 4: h 4, prefills 4 at [6,7].
    # kv used 8 on [0,1], [2,3], [6,7]; cached 8 on [1,2], 4 on [2,6], 8 on [7,100].
    ("two_engines_on_one_pool_evict_each_others_cached_blocks", """
pool kv { cap 12; block 4; evict lru; }
stage a : step { budget 8; cost 1; memory kv; }
stage b : step { budget 8; cost 1; memory kv; }
stage w : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (8) { run a prefill (8) growing kv; } cache (8);
    run w (5);
    hold kv (8) reuse (inf) { observe h = cached; run a prefill (8 - cached) growing kv; } cache (8);
  } else {
    run w (2);
    hold kv (8) { run b prefill (8) growing kv; }
  }
  observe f = now;
}
run { horizon 100; }
""", {"h": [(0, 6.0, 4.0)], "f": [(1, 3.0, 3.0), (0, 7.0, 7.0)]},
     {("a", None): {"iterations": 2, "tokens": 6.0}, ("b", None): {"iterations": 1},
      ("kv", None): {"used": 0.24, "cached": 7.68, "evicted_units": 4.0, "evicted_entries": 0}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in PREEMPT], ids=[c[0] for c in PREEMPT])
def test_preemption_and_shared_pools_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


# ---------------------------------------------------------------------------------------------------------
# What the cost (and the other moments without a session) may read
# ---------------------------------------------------------------------------------------------------------

NO_SESSION = """pool kv { cap 64; block 4; }
stage e : step { budget 8; cost 1 + used(kv); chunk 4; memory kv; }
stage p : ps(1);
workload { arrive renewal(2); }
session {
  hold kv (4) { run e prefill (4) growing kv; } cache (4);
  run p (1);
}
run { horizon 10; }
"""


@pytest.mark.parametrize("old, new, what", [
    ("cost 1 + used(kv)", "cost 1 + cachedin(kv)", "a step stage's cost"),
    ("budget 8", "budget 8 + cachedin(kv)", "a step stage's budget or chunk"),
    ("chunk 4", "chunk 4 + cachedin(kv)", "a step stage's budget or chunk"),
    ("ps(1)", "ps(1 + cachedin(kv))", "a ps stage's capacity"),
    ("renewal(2)", "renewal(2 + cachedin(kv))", "an arrival gap"),
], ids=["cost", "budget", "chunk", "ps", "arrival"])
def test_cachedin_is_refused_where_no_session_reads_it(old, new, what):
    """§2: `cachedin(p)` is the session's own prefix, and a gauge, which "has no session", may not read it.
    A step stage's budget, chunk and cost (docs/language.md, Moments: no attributes), a ps capacity and an
    arrival gap have none either; there it linked and read 0 (`cost 1 + cachedin(kv)` lasted 1 whatever
    the sessions had cached). Refused at its place, in source and in an IR file (at its JSON path)."""
    import json

    import serq_frontend
    import serq_ir
    from serq_ir.errors import IRError

    serq_frontend.compile(source=NO_SESSION)
    src = NO_SESSION.replace(old, new)
    with pytest.raises(serq_frontend.CompileError) as info:
        serq_frontend.compile(source=src)
    message = f"{what} has no session: it may not read `cachedin(…)` (the session's own prefix)"
    line, col = next((i, text.index("cachedin") + 1) for i, text in enumerate(src.splitlines(), 1) if new in text)
    assert str(info.value).splitlines()[0] == f"<source>:{line}:{col}: error: {message}"
    assert str(info.value).splitlines()[2].strip() == "^"
    # the same expression in an IR file: `used(kv)` of the cost made `cachedin(kv)`
    if old.startswith("cost"):
        d = json.loads(serq_ir.encode(serq_frontend.compile(source=NO_SESSION)))
        cost = d["stages"][0]["kind"]["cost"]
        assert cost["rhs"]["name"] == "used"
        cost["rhs"]["name"] = "cachedin"
        with pytest.raises(IRError) as info:
            serq_ir.decode(json.dumps(d), name="p.ir.json")
        assert str(info.value).splitlines()[0] == (f"error: p.ir.json: {message} - at "
                                                   "'$.stages[0].kind.cost.rhs'")


# ---------------------------------------------------------------------------------------------------------
# §7 on lib/vllm.sq's engine (the step clock, cost 1, blocks of 4 tokens, budget 32)
# ---------------------------------------------------------------------------------------------------------

ENGINE = """
use "vllm.sq";
pool reqs { cap 256; admit via engine; }
pool kv { cap 400; block 4; evict lru; preempt lifo; }
stage engine : step { budget 32; cost 1; memory kv; }
stage w : delay;
workload { arrive batch(COUNT); hidden o; }
session {
  SESSION
}
run { horizon 100; }
"""


def _engine(n: int, session: str) -> str:
    return ENGINE.replace("COUNT", str(n)).replace("SESSION", session)


VLLM = [
    # a prompt of exactly two blocks and one output token: decode (o - 1) is 0, so the first token is the
    # last. Both admitted at 0 with min(8, 0 + 32) and min(8, 0 + 24) units: 8 each; [0,1] 16 tokens. Each
    # caches min(prompt + o, computed 8) = 8, two blocks. kv used 16 on [0,1]; cached 16 on [1,100].
    ("one_output_token_on_a_prompt_of_whole_blocks", _engine(2, """
  set prompt = 8;
  set o = 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);"""),
     {"hit": [(0, 0.0, 0.0), (1, 0.0, 0.0)], "first_token": [(0, 1.0, 1.0), (1, 1.0, 1.0)],
      "done": [(0, 1.0, 1.0), (1, 1.0, 1.0)]},
     {("engine", None): {"iterations": 1, "tokens": 16.0}, ("kv", None): {"used": 0.16, "cached": 15.84}}),
    # no hit across sessions (§7: cross-session prefix sharing is out of scope; cachedin is the session's
    # own prefix): s0's 8-token prompt (2 out) at [0,1], [1,2] caches min(10, 9) → 8; s1 sends the same
    # prompt at 2 and finds none: hit 0, first token 3, done 4. kv used 8 then 12 for each: 40; cached s0's
    # 8 on [2,100] and s1's on [4,100]: 1552.
    ("the_same_prompt_from_another_session_is_no_hit", _engine(2, """
  run w (2 * serial);
  set prompt = 8;
  set o = 2;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);"""),
     {"hit": [(0, 0.0, 0.0), (1, 2.0, 0.0)], "first_token": [(0, 1.0, 1.0), (1, 3.0, 3.0)],
      "done": [(0, 2.0, 2.0), (1, 4.0, 4.0)]},
     {("engine", None): {"iterations": 4}, ("kv", None): {"used": 0.4, "cached": 15.52}}),
    # the next turn hits the blocks of the previous one: prompt 6, 3 out: [0,1] prefill (first 1), decodes
    # at positions 6, 7 ([1,3]); computed 8, cached min(9, 8) = 8. The turn of prompt 11 (1 out) at 3: hit
    # min(8, floor(10 / 4) · 4 = 8) = 8, units min(11, 8 + 32) = 11 (12 allocated), prefill 11 - 8 = 3 at
    # [3,4]: first and last token 4. kv used 8 on [0,3], 12 on [3,4]: 36; it caches min(12, 11) → 8 at 4.
    ("the_next_turn_hits_the_whole_blocks_of_the_last", _engine(1, """
  set prompt = 6;
  set o = 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  set prompt = 11;
  set o = 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);"""),
     {"hit": [(0, 0.0, 0.0), (0, 3.0, 8.0)], "first_token": [(0, 1.0, 1.0), (0, 4.0, 4.0)],
      "done": [(0, 3.0, 3.0), (0, 4.0, 4.0)]},
     {("engine", None): {"iterations": 4}, ("kv", None): {"used": 0.36, "cached": 7.68}}),
    # a turn that shares only part of the previous one (vllm_request_at's match, the replayed trace's
    # "previous prompt"): prompt 9, 3 out at [0,3] caches min(12, 11) → 8; the next turn (prompt 20, 1 out,
    # match 6) hits floor(min(19, 6) / 4) · 4 = 4 of them; the entry's other block stays cached, dead. It
    # prefills 16 at [3,4] (20 allocated) and caches min(21, 20) = 20. kv used 12 · 3 + 20; cached the dead 4
    # on [3,100] and the 20 on [4,100].
    ("a_turn_matching_part_of_the_last_hits_the_blocks_of_the_match", _engine(1, """
  set prompt = 9;
  set o = 3;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  set prompt = 20;
  set o = 1;
  set t0 = now;
  vllm_request_at(reqs, kv, engine, prompt, o, t0, 6, inf);"""),
     {"hit": [(0, 0.0, 0.0), (0, 3.0, 4.0)], "first_token": [(0, 1.0, 1.0), (0, 4.0, 4.0)],
      "done": [(0, 3.0, 3.0), (0, 4.0, 4.0)]},
     {("engine", None): {"iterations": 4, "tokens": 6.75}, ("kv", None): {"used": 0.56, "cached": 23.08}}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in VLLM], ids=[c[0] for c in VLLM])
def test_vllm_engine_by_hand(monkeypatch, src, obs, figures):
    check_by_hand(monkeypatch, src, obs, figures)


def test_a_vllm_prompt_of_zero_tokens_is_the_runs_error(monkeypatch):
    """lib/vllm.sq: "vLLM refuses a request of an empty prompt; a prompt below one token makes this work
    negative, the run's error here": the message names the library's prefill and, in notes, the uses."""
    src = _engine(1, """
  set prompt = 0;
  set o = 1;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);""")
    msg = run_error(src, monkeypatch)
    assert msg.endswith("error: at t=0, session 0: the run's work is negative (-1)"), msg
    assert "vllm.sq:" in msg.split(": error:")[0], msg


# ---------------------------------------------------------------------------------------------------------
# Iterations that only preempt, again and again, until a holder away from the engine gives the room back
# ---------------------------------------------------------------------------------------------------------

AWAY = """pool kv { cap 8; block 4; preempt lifo; }
pool reqs { admit via e; }
stage e : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold reqs (1), kv (4) { prefill (4) growing kv; run d (AWAY); }
  } else {
    hold reqs (1), kv (4) { prefill (8) growing kv; }
  }
  observe f = now;
}
run { horizon HORIZON; }
"""


def test_iterations_that_only_preempt_go_on_until_the_holder_away_releases(monkeypatch):
    """§3: "An iteration that schedules no token is not an iteration, unless it preempted: then it is the
    scheduler step that only preempted … and the next iteration re-admits the victim. It lasts C at zero
    tokens"; "A hold whose body can never fit then preempts itself forever" is what the stuck counter is for.

    kv cap 8, blocks of 4. [0,1]: s0 and s1 admitted with 4 each; s0 prefills 4, s1 4 of its 8. From 1 s0
    holds its 4 on a delay of 2000, away from the engine (no candidate). At 1 s1's next chunk needs a second
    block: s1, the only resident, is its own victim (a step that only preempted, [1,2]); at every t = 2 …
    2000 it is admitted again, its chunk of 8 needs the block, it is preempted again: 2000 preemptions, each
    iteration of cost 1 and no token. At 2001 s0's delay ends (scheduled at 1, before the iteration's end
    at 2001) and it releases; the iteration at 2001 admits s1, whose chunk grows to 8: f1 2002. Iterations
    1 + 2000 + 1; kv admissions 2 + 1999 + 1; s1 stuck (preempted again at position 0, below its first 4).

    The simulator's guard against iterations that move nothing stopped this run at t=1002 (`no progress:
    1000 iterations of stage e in a row gave its jobs 0 tokens, … its budget or chunk is too small`) while
    s0's release was due; it judges the repetition only while no other event is due."""
    src = AWAY.replace("AWAY", "2000").replace("HORIZON", "5000")
    check_by_hand(monkeypatch, src, {"f": [(0, 2001.0, 2001.0), (1, 2002.0, 2002.0)]},
                  {("e", None): {"iterations": 2002, "decode_only": 0, "prefill_only": 2},
                   ("kv", None): {"preemptions": 2000, "stuck": 1, "admissions": 2002}})


def test_iterations_that_only_preempt_with_nothing_due_are_the_no_progress_error(monkeypatch):
    """The same with s0's delay infinite (its end never happens) and no horizon: every iteration is the one
    before, for ever. After 1 000 of them in a row (the first at [1,2], the error at the end of the one
    past the bound), the run-time error says they only preempted, at the stage, on both tiers."""
    src = AWAY.replace("AWAY", "1 / 0").replace("HORIZON", "inf")
    assert run_error(src, monkeypatch) == (
        "<source>:3:1: error: at t=1002: no progress: 1000 iterations of stage e in a row only preempted (they "
        "served no token: each admitted a session again and preempted it at its growth), and nothing else is "
        "due: every iteration will be this one again (a hold on the engine's memory that cannot grow as its "
        "body needs beside what the other holders keep preempts itself for ever)")


def test_a_budget_below_a_token_runs_on_while_an_arrival_that_raises_it_is_due(monkeypatch):
    """The same guard over iterations of less than a token (a budget of 1e-300 against a prompt of 1 000:
    `1000 - 1e-300` is 1000) judges the repetition only while nothing else is due. The budget reads
    `residents`: 1e-300 while s0 is alone, 512 once s1 joins at 1500. [k,k+1] for k = 0 … 1499 move nothing;
    at 1500 s0 takes 512, at [1501,1502] its last 488 and s1 its 10: both f 1502; 1502 iterations, and the
    run (no horizon) ends then. It was stopped at t=1001 ("no progress …: its budget or chunk is too small")
    though s1's arrival, which raises the budget, was due."""
    src = """
stage e : step { budget residents > 1 ? 512 : 1e-300; cost 1; }
stage w : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { prefill (1000); } else { run w (1500); prefill (10); }
  observe f = now;
}
run { horizon inf; }
"""
    _, js = check_by_hand(monkeypatch, src, {"f": [(0, 1502.0, 1502.0), (1, 1502.0, 1502.0)]},
                          {("e", None): {"iterations": 1502, "utilisation": 1.0}})
    assert js["end"] == 1502.0


# ---------------------------------------------------------------------------------------------------------
# Two of vLLM's own answers (serq-vllm's oracle/generated, the real scheduler), traced by hand on lib/vllm.sq
# ---------------------------------------------------------------------------------------------------------

ORACLE_CASES = [
    # source_block_boundary: budget 2, max_seqs 2, blocks of 4, 6 blocks (one is vLLM's null block: 5 hold
    # KV, cap 20); r0 prompt 8 / 6 out, r1 prompt 4 / 8 out. r0 is admitted with 2 units (a block), chunks 2
    # at steps 0-3 (growing to 2 blocks at 2): first token 4. Step 4: its first decode grows a third block,
    # and r1 is admitted with the 1 token left; r1 prefills 1 a step at 4-7 (first 8) while r0 decodes.
    # Step 8: r0's last decode takes a fourth block (5 in use), r1's first decode needs a second: running[-1]
    # is r1, its own victim, caching its 4 computed (a full block). r0 done at 9. Step 9: r1 again, known 4
    # + 1 = 5, hit min(4, floor(4 / 4) · 4) = 4, recomputes 1 and decodes 8 - 1 - 1 = 6 (steps 10-15):
    # done 16. The real scheduler: first {0: 4, 1: 8}, done {0: 9, 1: 16}, preempted {1: 1}, 17 steps.
    ("source_block_boundary", """
use "vllm.sq";
pool reqs { cap 2; admit via engine; }
pool kv { cap 5 * 4; block 4; evict lru; preempt lifo; }
stage engine : step { budget 2; cost 1; memory kv; }
workload { arrive batch(2); hidden o; }
session {
  set prompt = serial == 0 ? 8 : 4;
  set o = serial == 0 ? 6 : 8;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 100; }
""", [(0, 0.0, 0.0, 4.0, 9.0, 0, 0), (1, 0.0, 4.0, 8.0, 16.0, 0, 1)], 1, 16),
    # source_prompt_one: budget 4, blocks of 2, 3 usable (cap 6); prompts of 1 token, 6, 6 and 5 out, r2 sent
    # at 1. Step 0: r0, r1 prefill 1 (first 1); step 1: both decode, r2 admitted (first 2): 3 blocks. Step
    # 2: r0's decode needs a fourth: running[-1] r2 goes (1 computed: no full block), then r1 (its own
    # victim: lifo stops there; 2 computed, a block cached). r0 grows at 4 (evicting r1's block) and ends at
    # 6. Step 6: r1 (known 3, hit 0) recomputes 3, then decodes 6 - 1 - 2 = 3 (done 10); r2 (known 2) is
    # admitted with the 1 token left and recomputes; at step 8 r1's growth preempts r2 again (running[-1]).
    # Step 10: r2 (known 3, hit 0) recomputes 3 and decodes 5 - 1 - 2 = 2: done 13. The real scheduler:
    # first {0: 1, 1: 1, 2: 2}, done {0: 6, 1: 10, 2: 13}, preempted {1: 1, 2: 2}, 14 steps.
    ("source_prompt_one", """
use "vllm.sq";
pool reqs { cap 4; admit via engine; }
pool kv { cap 3 * 2; block 2; evict lru; preempt lifo; }
stage engine : step { budget 4; cost 1; memory kv; }
stage w : delay;
workload { arrive batch(3); hidden o; }
session {
  run w (serial == 2 ? 1 : 0);
  set prompt = 1;
  set o = serial == 2 ? 5 : 6;
  set t0 = now;
  vllm_request(reqs, kv, engine, prompt, o, t0);
}
run { horizon 100; }
""", [(0, 0.0, 0.0, 1.0, 6.0, 0, 0), (1, 0.0, 0.0, 1.0, 10.0, 0, 1), (2, 1.0, 1.0, 2.0, 13.0, 0, 2)], 3, 13),
]


@pytest.mark.parametrize("src, rows, preemptions, iterations", [c[1:] for c in ORACLE_CASES],
                         ids=[c[0] for c in ORACLE_CASES])
def test_vllm_oracle_scenarios_traced_by_hand(monkeypatch, src, rows, preemptions, iterations):
    """(session, sent, admitted, first_token, last_token, cached, preemptions) of each request, the hand
    trace in the row's comment and the real scheduler's answer (its steps are the last done + 1)."""
    r, _ = run(src, monkeypatch)
    assert sorted(request_rows(r)) == rows
    js = report_json(r)
    assert next(p for p in js["pools"] if p["name"] == "kv")["preemptions"] == preemptions
    assert next(s for s in js["stages"] if s["name"] == "engine")["iterations"] == iterations
