"""Every run-time error of a program names where it happened, when and for whom: ``FILE:LINE:COL: error: at
t=T, session N: MESSAGE``, the source line and a caret (serq_sim.errors.session_error, the one way they are
made), on both simulator tiers in the same words (tiers.same_error), never a traceback.

One case a place that raises or reports such an error, each the smallest program that reaches it and its
whole message written out from the program's text: a statement, a definition's body with a note at each use
(docs/language.md, Diagnostics), a used library's own file, the workload's init and turn blocks, the keys of
queue by, serve by, choose, preempt by and evict by, a spill's clauses, a step stage's budget, chunk and cost,
observes and records, the warm-up's and the horizon's instants, a family's member (its index), a queue's
entry, the no-progress guards, a trace's row, a run setting, and a plugin's own refusal. An error that is a
stage's or a pool's and no session's (a ps capacity, a step stage's cost, an arrival's gap, a block too small
to evict) names the time and no session; one read for a cached entry (an evict by key, a spill's clause)
names the entry's session, live or ended (docs/simulator.md, the decisions).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim
import serq_vllm
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_sim.policies import EvictionOrder
from serq_sim.stages import StageKind
from tiers import same_error

pytestmark = pytest.mark.timeout(120)

# (name, the files, {"p.sq": the program, ...}, the whole message, {d} the folder the files are in)
CASES = [
    # a session's statement: a guard that is no test
    ('branch_guard',
     {'p.sq': 'stage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  branch (serial * 0.5) { end; }\n}\n'},
     '{d}/p.sq:5:3: error: at t=2, session 1: branch guard is 0.5, not 0 or 1 (a draw is written `branch with (p)`)\n' +
     '    branch (serial * 0.5) { end; }\n' +
     '    ^'),
    # a draw whose computed mean is negative, in a run's work
    ('draw_domain',
     {'p.sq': 'stage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  run s (~exp(serial - 1));\n}\n'},
     '{d}/p.sq:5:10: error: at t=1, session 0: ~exp(-1): the mean is negative\n' +
     '    run s (~exp(serial - 1));\n' +
     '           ^'),
    # a computed pool index past the family (the member's index named)
    ('pool_member',
     {'p.sq': 'pool p[2] { cap 4; }\nstage s : fifo;\nworkload { arrive batch(3); }\nsession {\n  run s (1);\n  hold p[serial] (1) { run s (1); }\n}\n'},
     '{d}/p.sq:6:8: error: at t=3, session 2: pool p: index 2 out of range (the family has 2)\n' +
     '    hold p[serial] (1) { run s (1); }\n' +
     '         ^'),
    # a computed stage index past the family
    ('stage_member',
     {'p.sq': 'stage s[2] : fifo;\nworkload { arrive batch(3); }\nsession {\n  run s[0] (1);\n  run s[serial] (1);\n}\n'},
     '{d}/p.sq:5:7: error: at t=3, session 2: stage s: index 2 out of range (the family has 2)\n' +
     '    run s[serial] (1);\n' +
     '        ^'),
    # a loop whose passes take no time
    ('loop_spin',
     {'p.sq': 'stage s : fifo;\nworkload { arrive batch(1); }\nsession {\n  run s (1);\n  loop { set x = 1; }\n}\n'},
     '{d}/p.sq:5:3: error: at t=1, session 0: loop: 1000000 passes at one instant without simulated time passing (none of them reached a run, hold or grow that took time; a `choose` of n candidates in it counts n passes; at t=1 a time below 1.11022e-16 does not move the clock: its doubles there are 2.22045e-16 apart)\n' +
     '    loop { set x = 1; }\n' +
     '    ^'),
    # a run's computed work below 0
    ('work_negative',
     {'p.sq': 'stage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  run s (serial - 1);\n}\n'},
     "{d}/p.sq:5:3: error: at t=1, session 0: the run's work is negative (-1)\n" +
     '    run s (serial - 1);\n' +
     '    ^'),
    # a hold's units below 0 on a family's member (p[1] named)
    ('units_of_member',
     {'p.sq': 'pool p[2] { cap 4; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { hold p[serial] (2 - 3 * serial) { run s (1); } }\n'},
     '{d}/p.sq:4:27: error: at t=0, session 1: the units of p[1] are negative (-1)\n' +
     '  session { hold p[serial] (2 - 3 * serial) { run s (1); } }\n' +
     '                            ^'),
    # a hold's reserve below 0
    ('reserve_negative',
     {'p.sq': 'pool p { cap 4; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  hold p (1) reserve (serial - 1) { run s (1); }\n}\n'},
     '{d}/p.sq:6:23: error: at t=1, session 0: the reserve of p is negative (-1)\n' +
     '    hold p (1) reserve (serial - 1) { run s (1); }\n' +
     '                        ^'),
    # a choose over a computed count below 1
    ('choose_count',
     {'p.sq': 'stage s[3] : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s[0] (1);\n  choose j in serial - 1 by (queue(s[j]));\n  run s[j] (1);\n}\n'},
     '{d}/p.sq:5:15: error: at t=1, session 0: choose j: the count of candidates is -1, not a whole number from 1 to 100000\n' +
     '    choose j in serial - 1 by (queue(s[j]));\n' +
     '                ^'),
    # an arrival's gap of 0 (no session: the arrival makes one)
    ('renewal_gap',
     {'p.sq': 'stage s : fifo;\nworkload { arrive renewal(1 - now); }\nsession {\n  run s (1);\n}\nrun { horizon 5; }\n'},
     '{d}/p.sq:2:27: error: at t=1: arrive renewal: the gap is 0; gaps must be positive and finite\n' +
     '  workload { arrive renewal(1 - now); }\n' +
     '                            ^'),
    # a ps capacity below 0, of a family's member (s[1]; a stage's, no session)
    ('ps_capacity_of_member',
     {'p.sq': 'stage s[2] : ps(1 - present);\nworkload { arrive batch(3); }\nsession { run s[1] (1); }\n'},
     "{d}/p.sq:1:17: error: at t=0: stage s[1]: the capacity is negative (-2) at present = 3; a ps stage's capacity is at least 0\n" +
     '  stage s[2] : ps(1 - present);\n' +
     '                  ^'),
    # a step stage's chunk below 0
    ('step_chunk',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\nstage E : step { budget 10; cost 0.01; chunk 2 - holders(reqs); memory kv; }\nworkload { arrive batch(4); }\nsession {\n  hold reqs (1), kv (4) { prefill on E 4; decode on E 3; }\n}\n'},
     '{d}/p.sq:3:46: error: at t=0.01: stage E: the chunk is negative (-2)\n' +
     '  stage E : step { budget 10; cost 0.01; chunk 2 - holders(reqs); memory kv; }\n' +
     '                                               ^'),
    # a step stage's budget below 0
    ('step_budget',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\nstage E : step { budget 2.5 - now; cost 1; }\nworkload { arrive batch(1); }\nsession { hold reqs (1) { run E prefill (10); } }\n'},
     '{d}/p.sq:2:25: error: at t=3: stage E: the budget is negative (-0.5)\n' +
     '  stage E : step { budget 2.5 - now; cost 1; }\n' +
     '                          ^'),
    # a step stage's cost below 0, of a family's member (E[1])
    ('step_cost_of_member',
     {'p.sq': 'pool reqs[2] { cap 8; admit via E; }\nstage E[2] : step { budget 10; cost 0.01 * (tokens - 5); }\nworkload { arrive batch(2); }\nsession { hold reqs[1] (1) { run E[1] prefill (4 + 3 * serial); } }\n'},
     "{d}/p.sq:2:37: error: at t=0.05, session 1: stage E[1]: the iteration's cost is negative (-0.04) "
     "(its batch: tokens 1, decoders 0, prefilled 1, residents 1, kv_decode 0, kv_prefill 0)\n" +
     '  stage E[2] : step { budget 10; cost 0.01 * (tokens - 5); }\n' +
     '                                      ^'),
    # a cache length of NaN, at the release
    ('cache_nan',
     {'p.sq': 'pool p { cap 2; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { hold p (1) { run s (1); } cache (ln(serial - 1)); }\n'},
     '{d}/p.sq:4:44: error: at t=1, session 0: the cache length is NaN\n' +
     '  session { hold p (1) { run s (1); } cache (ln(serial - 1)); }\n' +
     '                                             ^'),
    # a reuse bound of NaN, at the admission
    ('reuse_nan',
     {'p.sq': 'pool p { cap 2; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { hold p (1) reuse (ln(serial - 1)) { run s (1); } cache (1); }\n'},
     '{d}/p.sq:4:29: error: at t=0, session 0: the reuse bound is NaN\n' +
     '  session { hold p (1) reuse (ln(serial - 1)) { run s (1); } cache (1); }\n' +
     '                              ^'),
    # a lease time of NaN
    ('lease_nan',
     {'p.sq': 'pool p { cap 2; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { hold p (1) { run s (1); } lease p (ln(serial - 1)); }\n'},
     '{d}/p.sq:4:46: error: at t=1, session 0: the lease time is NaN\n' +
     '  session { hold p (1) { run s (1); } lease p (ln(serial - 1)); }\n' +
     '                                               ^'),
    # a grow of a computed member the session does not hold
    ('grow_outside',
     {'p.sq': 'pool p[2] { cap 10; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); hold p[0] (1) { grow p[serial] (1); run s (1); } }\n'},
     '{d}/p.sq:4:38: error: at t=2, session 1: grow p[1]: outside a hold of p[1]\n' +
     '  session { run s (1); hold p[0] (1) { grow p[serial] (1); run s (1); } }\n' +
     '                                       ^'),
    # a grow by a negative amount
    ('grow_amount',
     {'p.sq': 'pool p { cap 10; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); hold p (1) { grow p (serial - 1); run s (1); } }\n'},
     '{d}/p.sq:4:35: error: at t=1, session 0: grow p: the amount is negative (-1)\n' +
     '  session { run s (1); hold p (1) { grow p (serial - 1); run s (1); } }\n' +
     '                                    ^'),
    # a load past the hold's allocation
    ('load_beyond',
     {'p.sq': 'pool p { cap 10; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); hold p (1) { load p (1 + serial); run s (1); } }\n'},
     '{d}/p.sq:4:35: error: at t=2, session 1: load p (2): the hold has 1 allocated and 0 computed; a load must fit the allocation (grow first)\n' +
     '  session { run s (1); hold p (1) { load p (1 + serial); run s (1); } }\n' +
     '                                    ^'),
    # a hold whose computed indexes name one member twice
    ('same_member_twice',
     {'p.sq': 'pool p[2] { cap 10; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); hold p[0] (1), p[serial] (1) { run s (1); } }\n'},
     '{d}/p.sq:4:22: error: at t=1, session 0: the hold names pool p[0] twice; a hold takes one amount of each pool (write one amount, the sum)\n' +
     '  session { run s (1); hold p[0] (1), p[serial] (1) { run s (1); } }\n' +
     '                       ^'),
    # a lease of a computed member past the family
    ('lease_member',
     {'p.sq': 'pool p[2] { cap 10; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); hold p[0] (1), p[1] (1) { run s (1); } lease p[serial * 2] (1); }\n'},
     '{d}/p.sq:4:67: error: at t=4, session 1: pool p: index 2 out of range (the family has 2)\n' +
     '  session { run s (1); hold p[0] (1), p[1] (1) { run s (1); } lease p[serial * 2] (1); }\n' +
     '                                                                    ^'),
    # a transfer whose computed from and to are one member
    ('transfer_to_itself',
     {'p.sq': 'pool p[2] { cap 10; block 1; }\nstage L : delay;\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); hold p[0] (4), p[1] (4) { transfer on L 1 from p[0] to p[1 - serial] (2); } }\n'},
     '{d}/p.sq:5:48: error: at t=3, session 1: `transfer … from p[0] to p[0]`: a transfer moves the KV from one pool to another, and both name `p[0]`; it ends with `release p[0]`, which would give back the hold on `p[0]` its load has just filled. `from` names the pool the KV is leased or held on, `to` the pool of the hold it moves into\n' +
     '  session { run s (1); hold p[0] (4), p[1] (4) { transfer on L 1 from p[0] to p[1 - serial] (2); } }\n' +
     '                                                 ^'),
    # in a statement definition's body: at the body, a note at the use that expanded it (the second)
    ('def_statement',
     {'p.sq': 'stage s : fifo;\ndef go(w) { run s (w); }\nworkload { arrive batch(2); }\nsession {\n  go(1);\n  go(serial - 1);\n}\n'},
     "{d}/p.sq:2:13: error: at t=1, session 0: the run's work is negative (-1)\n" +
     '  def go(w) { run s (w); }\n' +
     '              ^\n' +
     '{d}/p.sq:6:3: note: in the expansion of `go`, used here\n' +
     '    go(serial - 1);\n' +
     '    ^'),
    # in an expression definition's body
    ('def_expression',
     {'p.sq': 'stage s : fifo;\ndef m(x) = ~exp(x);\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  run s (m(serial - 1));\n}\n'},
     '{d}/p.sq:2:12: error: at t=1, session 0: ~exp(-1): the mean is negative\n' +
     '  def m(x) = ~exp(x);\n' +
     '             ^\n' +
     '{d}/p.sq:6:10: note: in the expansion of `m`, used here\n' +
     '    run s (m(serial - 1));\n' +
     '           ^'),
    # a definition used in another's body: a note at each use, the innermost first
    ('def_in_def',
     {'p.sq': 'stage s : fifo;\ndef inner(w) { run s (w); }\ndef outer(w) { inner(w - 1); }\nworkload { arrive batch(2); }\nsession {\n  outer(1 + serial);\n  outer(serial);\n}\n'},
     "{d}/p.sq:2:16: error: at t=0, session 0: the run's work is negative (-1)\n" +
     '  def inner(w) { run s (w); }\n' +
     '                 ^\n' +
     '{d}/p.sq:3:16: note: in the expansion of `inner`, used here\n' +
     '  def outer(w) { inner(w - 1); }\n' +
     '                 ^\n' +
     '{d}/p.sq:7:3: note: in the expansion of `outer`, used here\n' +
     '    outer(serial);\n' +
     '    ^'),
    # in a used library's definition: the library's own path and line
    ('used_library',
     {'p.sq': 'use "lib.sq";\nstage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  go(serial - 1);\n}\n', 'lib.sq': '// a library\ndef go(w) {\n  run s (w);\n}\n'},
     "{d}/lib.sq:3:3: error: at t=0, session 0: the run's work is negative (-1)\n" +
     '    run s (w);\n' +
     '    ^\n' +
     '{d}/p.sq:5:3: note: in the expansion of `go`, used here\n' +
     '    go(serial - 1);\n' +
     '    ^'),
    # in the workload's init block
    ('init_block',
     {'p.sq': 'stage s : fifo;\nworkload {\n  arrive batch(2);\n  init { set k = ~exp(serial - 1); }\n  session { request; }\n}\nserver { run s (1); }\n'},
     '{d}/p.sq:4:18: error: at t=0, session 0: ~exp(-1): the mean is negative\n' +
     '    init { set k = ~exp(serial - 1); }\n' +
     '                   ^'),
    # in the workload's turn block
    ('turn_block',
     {'p.sq': 'stage s : fifo;\nworkload {\n  arrive batch(2);\n  turn { set k = ~exp(serial - 1); }\n  session { turn; request; }\n}\nserver { run s (1); }\n'},
     '{d}/p.sq:4:18: error: at t=0, session 0: ~exp(-1): the mean is negative\n' +
     '    turn { set k = ~exp(serial - 1); }\n' +
     '                   ^'),
    # a branch guard in init
    ('init_guard',
     {'p.sq': 'stage s : fifo;\nworkload {\n  arrive batch(2);\n  init { branch (serial * 0.5) { set k = 1; } }\n  session { request; }\n}\nserver { run s (1); }\n'},
     '{d}/p.sq:4:10: error: at t=0, session 1: branch guard is 0.5, not 0 or 1 (a draw is written `branch with (p)`)\n' +
     '    init { branch (serial * 0.5) { set k = 1; } }\n' +
     '           ^'),
    # a queue by key: the waiting session's
    ('queue_by_key',
     {'p.sq': 'pool q[2] { cap 1; queue by (used(q[serial])); }\nstage s : fifo;\nworkload { arrive batch(4); }\nsession {\n  hold q[0] (1) { run s (1); }\n}\n'},
     '{d}/p.sq:1:35: error: at t=0, session 2: pool q: index 2 out of range (the family has 2)\n' +
     '  pool q[2] { cap 1; queue by (used(q[serial])); }\n' +
     '                                    ^'),
    # a serve by key: the resident's session
    ('serve_by_key',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\npool x[2] { cap 1; }\nstage E : step { budget 10; cost 0.01; memory kv; serve by (used(x[serial])); }\nworkload { arrive batch(4); }\nsession {\n  hold reqs (1), kv (4) { prefill on E 4; decode on E 3; }\n}\n'},
     '{d}/p.sq:4:66: error: at t=0, session 2: pool x: index 2 out of range (the family has 2)\n' +
     '  stage E : step { budget 10; cost 0.01; memory kv; serve by (used(x[serial])); }\n' +
     '                                                                   ^'),
    # a choose key
    ('choose_key',
     {'p.sq': 'stage s[2] : fifo;\npool p[2] { cap 1; }\nworkload { arrive batch(4); }\nsession {\n  run s[0] (1);\n  choose j in 2 by (used(p[j + serial]));\n  run s[j] (1);\n}\n'},
     '{d}/p.sq:6:26: error: at t=2, session 1: pool p: index 2 out of range (the family has 2)\n' +
     '    choose j in 2 by (used(p[j + serial]));\n' +
     '                           ^'),
    # a preempt by key: the candidate, and a note naming the grower and its statement
    ('preempt_by_key',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool x[2] { cap 1; }\npool kv { cap 8; preempt by (used(x[serial])); }\nstage E : step { budget 10; cost 0.01; memory kv; }\nworkload { arrive batch(4); }\nsession {\n  hold reqs (1), kv (2) { run E prefill (2) growing kv; run E decode (6) growing kv; }\n}\n'},
     '{d}/p.sq:3:35: error: at t=0.01, session 2: pool x: index 2 out of range (the family has 2)\n' +
     '  pool kv { cap 8; preempt by (used(x[serial])); }\n' +
     '                                    ^\n' +
     'note: while choosing whom pool kv preempts for the growth of session 0 at t=0.01 by the statement at {d}/p.sq:7:57 (its keys are evaluated for each candidate)'),
    # an evict by key of an entry whose session lives: that session
    ('evict_by_key_live',
     {'p.sq': 'pool p[2] { cap 2; evict by (used(p[serial - 2])); }\nstage s : fifo;\nstage t : delay;\nworkload { arrive batch(6); }\nsession {\n  hold p[0] (1) { run s (1); } cache (2);\n  run t (100);\n}\n'},
     '{d}/p.sq:1:35: error: at t=1, session 0: pool p: index -2 out of range (the family has 2)\n' +
     '  pool p[2] { cap 2; evict by (used(p[serial - 2])); }\n' +
     '                                    ^'),
    # an evict by key of an entry whose session ended: that session too
    ('evict_by_key_ended',
     {'p.sq': 'pool p[2] { cap 2; evict by (used(p[serial - 2])); }\nstage s : fifo;\nworkload { arrive batch(6); }\nsession {\n  hold p[0] (1) { run s (1); } cache (2);\n}\n'},
     '{d}/p.sq:1:35: error: at t=1, session 0: pool p: index -2 out of range (the family has 2)\n' +
     '  pool p[2] { cap 2; evict by (used(p[serial - 2])); }\n' +
     '                                    ^'),
    # an evict by key of an ended session's entry that replayed a trace: the note of its row too
    ('evict_by_key_trace',
     {'p.sq': 'pool p[2] { cap 2; evict by (used(p[serial - 2])); }\nstage s : fifo;\nworkload { arrive batch(4); trace "t.csv"; session { turn; request; } }\nserver { hold p[0] (1) { run s (new); } cache (2); }\n',
      't.csv': 'session,turn,new,out,think,forced\n0,1,1,1,0,0\n1,1,1,1,0,0\n2,1,1,1,0,0\n3,1,1,1,0,0\n'},
     '{d}/p.sq:1:35: error: at t=1, session 0: pool p: index -2 out of range (the family has 2)\n' +
     '  pool p[2] { cap 2; evict by (used(p[serial - 2])); }\n' +
     '                                    ^\n' +
     '{d}/t.csv:5:1: note: session 0 replays the trace\'s session 3, turn 1: new 1, out 1, think 0, forced 0\n' +
     '  3,1,1,1,0,0\n' +
     '  ^'),
    # a spill's work of an entry whose session lives
    ('spill_work_live',
     {'p.sq': 'pool p { cap 2; spill q via L (serial - 2) when (1); }\npool q { cap 100; }\nstage L : delay;\nstage s : fifo;\nstage t : delay;\nworkload { arrive batch(6); }\nsession {\n  hold p (1) { run s (1); } cache (2);\n  run t (100);\n}\n'},
     "{d}/p.sq:1:32: error: at t=1, session 0: pool p: the spill's work is negative (-2)\n" +
     '  pool p { cap 2; spill q via L (serial - 2) when (1); }\n' +
     '                                 ^'),
    # a spill's tier index of an entry whose session ended
    ('spill_tier_ended',
     {'p.sq': 'pool p { cap 2; spill q[serial] via L (1) when (1); }\npool q[2] { cap 100; }\nstage L : delay;\nstage s : fifo;\nworkload { arrive batch(6); }\nsession {\n  hold p (1) { run s (1); } cache (2);\n}\n'},
     "{d}/p.sq:1:25: error: at t=3, session 2: pool p: the spill's pool q: index 2 out of range (the family has 2)\n" +
     '  pool p { cap 2; spill q[serial] via L (1) when (1); }\n' +
     '                          ^'),
    # an observe's value
    ('observe_value',
     {'p.sq': 'stage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  observe a = 1;\n  observe x = ~exp(serial - 1);\n}\n'},
     '{d}/p.sq:6:15: error: at t=1, session 0: ~exp(-1): the mean is negative\n' +
     '    observe x = ~exp(serial - 1);\n' +
     '                ^'),
    # a record's column
    ('record_column',
     {'p.sq': 'stage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  record r { a = 1; x = ~exp(serial - 1); }\n}\n'},
     '{d}/p.sq:5:25: error: at t=1, session 0: ~exp(-1): the mean is negative\n' +
     '    record r { a = 1; x = ~exp(serial - 1); }\n' +
     '                          ^'),
    # at the warm-up's instant
    ('at_warmup',
     {'p.sq': 'stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (3); run s (~exp(-now)); }\nrun { horizon 10; warmup 3; seed 1; }\n'},
     '{d}/p.sq:3:29: error: at t=3, session 0: ~exp(-3): the mean is negative\n' +
     '  session { run s (3); run s (~exp(-now)); }\n' +
     '                              ^'),
    # at the horizon's instant
    ('at_horizon',
     {'p.sq': 'stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (5); run s (~exp(-now)); }\nrun { horizon 5; }\n'},
     '{d}/p.sq:3:29: error: at t=5, session 0: ~exp(-5): the mean is negative\n' +
     '  session { run s (5); run s (~exp(-now)); }\n' +
     '                              ^'),
    # in a queue's entry: at the entry's statement, a note at its call
    ('queue_entry',
     {'p.sq': 'queue P[2] : prefill {\n  pool kv { cap 64; }\n  serve step { budget 32; cost 0.01; memory kv; }\n  prefill (prompt) {\n    hold kv (4) {\n      prefill (prompt - 5) growing kv;\n    }\n  }\n}\nstage s : delay;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  P[serial].prefill (4 + serial);\n}\n'},
     "{d}/p.sq:6:7: error: at t=1, session 0: the run's work is negative (-1)\n" +
     '        prefill (prompt - 5) growing kv;\n' +
     '        ^\n' +
     '{d}/p.sq:14:3: note: in the expansion of `P.prefill`, used here\n' +
     '    P[serial].prefill (4 + serial);\n' +
     '    ^'),
    # a call of a queue's member past the family
    ('queue_member',
     {'p.sq': 'queue P[2] : prefill {\n  pool kv { cap 64; }\n  serve step { budget 32; cost 0.01; memory kv; }\n  prefill (prompt) {\n    hold kv (4) {\n      prefill (prompt) growing kv;\n    }\n  }\n}\nstage s : delay;\nworkload { arrive batch(3); }\nsession {\n  run s (1);\n  P[serial].prefill (4);\n}\n'},
     '{d}/p.sq:5:10: error: at t=1, session 2: pool P.kv: index 2 out of range (the family has 2)\n' +
     '      hold kv (4) {\n' +
     '           ^\n' +
     '{d}/p.sq:14:3: note: in the expansion of `P.prefill`, used here\n' +
     '    P[serial].prefill (4);\n' +
     '    ^'),
    # a hold preempted and executed again at one instant without end
    ('redo_guard',
     {'p.sq': 'pool m { cap 4; preempt lifo; }\nstage d : delay;\nworkload { arrive batch(2); }\nsession { run d (1); hold m (2) { grow m (serial); run d (1); } }\n'},
     '{d}/p.sq:4:22: error: at t=1, session 1: hold: preempted and re-executed 10000 times at one instant without simulated time passing (its body makes the pool preempt it again before any time passes, as a grow beyond what the pool can ever give does, or one that the other holders leave no room for, where the pool preempts the grower itself)\n' +
     '  session { run d (1); hold m (2) { grow m (serial); run d (1); } }\n' +
     '                       ^'),
    # arrivals within next to no time: at the arrive (no session)
    ('arrivals_guard',
     {'p.sq': 'stage s : delay;\nworkload { arrive renewal(1e-300); }\nsession { run s (1); }\nrun { horizon 10; }\n'},
     '{d}/p.sq:2:12: error: at t=2e-296: no progress: more than 10000 arrivals in 2e-296 s of simulated time since t=0 (steps far below any time scale: at that pace the run would not reach its end); the events due now: arrive renewal\n' +
     '  workload { arrive renewal(1e-300); }\n' +
     '             ^'),
    # a closed workload whose sessions end at once: at the arrive
    ('closed_guard',
     {'p.sq': 'stage d : delay;\nworkload { arrive closed(1); }\nsession { end; }\nrun { horizon 10; }\n'},
     '{d}/p.sq:2:12: error: at t=0, session 100100: no progress: the closed workload replaced more than 100100 ended sessions at one instant without simulated time passing (sessions ended at the instant they started, having reached no run, hold or grow that took time or met a hold rejected as never fitting, and each was replaced at once)\n' +
     '  workload { arrive closed(1); }\n' +
     '             ^'),
    # a step stage whose iterations move no work: its residents' runs
    ('dust_guard',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\nstage E : step { budget 1e-300; cost 1; memory kv; }\nworkload { arrive batch(1); }\nsession {\n  hold reqs (1), kv (1) { run E prefill (8); }\n}\n'},
     '{d}/p.sq:6:27: error: at t=1001, session 0: no progress: 1000 iterations of stage E in a row gave its jobs 1e-300 tokens, too few to change the work any of them has left (below its floating-point precision), and nothing else happened: no iteration would ever end one (its budget or chunk is too small for the work): its residents are the run at {d}/p.sq:6:27 of session 0\n' +
     '    hold reqs (1), kv (1) { run E prefill (8); }\n' +
     '                            ^'),
    # a block too small to shrink an entry: at the pool (no session)
    ('block_below_precision',
     {'p.sq': 'pool p { cap 8; block 1e-30; spill q via L (1) when (1); }\npool q { cap 100; }\nstage L : delay;\nstage s : fifo;\nworkload { arrive batch(6); }\nsession {\n  hold p (4) { run s (1); } cache (8);\n}\n'},
     "{d}/p.sq:1:1: error: at t=1: pool p: a block of 1e-30 units evicted from a cached entry of 4 units leaves it 4 (the block is below half the entry's precision in doubles, 4.44089e-16): evicting a block at a time, as a pool that spills does, it would never make room\n" +
     '  pool p { cap 8; block 1e-30; spill q via L (1) when (1); }\n' +
     '  ^'),
    # a session replaying a trace: a note naming the row
    ('trace_row',
     {'p.sq': 'stage s : delay;\nworkload { arrive batch(1); trace "t.csv"; session { turn; loop { request; branch (more) { turn; } else { end; } } } }\nserver { run s (out - 0.5); }\n', 't.csv': 'session,turn,new,out,think,forced\n0,1,5,1,0,0\n0,2,6,0,0,0\n'},
     "{d}/p.sq:3:10: error: at t=0.5, session 0: the run's work is negative (-0.5)\n" +
     '  server { run s (out - 0.5); }\n' +
     '           ^\n' +
     "{d}/t.csv:3:1: note: session 0 replays the trace's session 0, turn 2: new 6, out 0, think 0, forced 0\n" +
     '  0,2,6,0,0,0\n' +
     '  ^'),
    # a run setting not met: at the setting
    ('arrivals_setting',
     {'p.sq': 'stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 3; arrivals 100; }\n'},
     '{d}/p.sq:4:18: error: at t=3: run { arrivals 100; }: only 4 arrivals by the horizon\n' +
     '  run { horizon 3; arrivals 100; }\n' +
     '                   ^'),

    # a lease of a computed member the hold does not hold, at the lease's pool
    ('lease_unheld',
     {'p.sq': 'pool p[2] { cap 10; }\nstage s : fifo;\nworkload { arrive batch(2); }\nsession { run s (1); hold p[0] (1) { run s (1); } lease p[serial] (1); }\n'},
     '{d}/p.sq:4:57: error: at t=4, session 1: `lease p[1]`: the hold does not hold `p[1]`; a lease names one of its pools\n' +
     '  session { run s (1); hold p[0] (1) { run s (1); } lease p[serial] (1); }\n' +
     '                                                          ^'),
    # a growing run of a computed member the session does not hold
    ('run_growing_outside',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv[2] { cap 100; }\nstage E : step { budget 10; cost 0.01; }\nworkload { arrive batch(2); }\nsession {\n  hold reqs (1), kv[0] (4) { run E prefill (4) growing kv[serial]; }\n}\n'},
     '{d}/p.sq:6:30: error: at t=0, session 1: run E … growing kv[1]: outside a hold of kv[1]\n' +
     '    hold reqs (1), kv[0] (4) { run E prefill (4) growing kv[serial]; }\n' +
     '                               ^'),
    # an at admission binding, read at the admission
    ('at_admission',
     {'p.sq': 'pool p { cap 8; }\npool x[2] { cap 1; }\nstage s : fifo;\nworkload { arrive batch(3); }\nsession {\n  run s (1);\n  hold p (h) at admission (h = 1 + used(x[serial])) { run s (1); }\n}\n'},
     '{d}/p.sq:7:41: error: at t=3, session 2: pool x: index 2 out of range (the family has 2)\n' +
     '    hold p (h) at admission (h = 1 + used(x[serial])) { run s (1); }\n' +
     '                                          ^'),
    # a queue by key that reads attributes alone (read at the join, kept in order)
    ('queue_by_key_kept',
     {'p.sq': 'pool q { cap 1; queue by (member(q2[serial])); }\npool q2[2] { cap 1; }\nstage s : fifo;\nworkload { arrive batch(4); }\nsession {\n  hold q (1) { run s (1); }\n}\n'},
     '{d}/p.sq:1:34: error: at t=0, session 2: pool q2: index 2 out of range (the family has 2)\n' +
     '  pool q { cap 1; queue by (member(q2[serial])); }\n' +
     '                                   ^'),
    # a serve by key that reads attributes alone
    ('serve_by_key_kept',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\npool x[2] { cap 1; }\nstage E : step { budget 10; cost 0.01; memory kv; serve by (member(x[serial])); }\nworkload { arrive batch(4); }\nsession {\n  hold reqs (1), kv (4) { prefill on E 4; decode on E 3; }\n}\n'},
     '{d}/p.sq:4:68: error: at t=0, session 2: pool x: index 2 out of range (the family has 2)\n' +
     '  stage E : step { budget 10; cost 0.01; memory kv; serve by (member(x[serial])); }\n' +
     '                                                                     ^'),
    # a preempt by key that reads attributes alone (the kept order)
    ('preempt_by_key_kept',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool x[2] { cap 1; }\npool kv { cap 8; preempt by (member(x[serial])); }\nstage E : step { budget 10; cost 0.01; memory kv; }\nworkload { arrive batch(4); }\nsession {\n  hold reqs (1), kv (2) { run E prefill (2) growing kv; run E decode (6) growing kv; }\n}\n'},
     '{d}/p.sq:3:37: error: at t=0.01, session 2: pool x: index 2 out of range (the family has 2)\n' +
     '  pool kv { cap 8; preempt by (member(x[serial])); }\n' +
     '                                      ^\n' +
     'note: while choosing whom pool kv preempts for the growth of session 0 at t=0.01 by the statement at {d}/p.sq:7:57 (its keys are evaluated for each candidate)'),
    # a definition used in a queue by key: at its body, a note at the key
    ('def_in_queue_key',
     {'p.sq': 'def k(i) = used(q2[i]);\npool q { cap 1; queue by (k(serial)); }\npool q2[2] { cap 1; }\nstage s : fifo;\nworkload { arrive batch(4); }\nsession {\n  hold q (1) { run s (1); }\n}\n'},
     '{d}/p.sq:1:17: error: at t=0, session 2: pool q2: index 2 out of range (the family has 2)\n' +
     '  def k(i) = used(q2[i]);\n' +
     '                  ^\n' +
     '{d}/p.sq:2:27: note: in the expansion of `k`, used here\n' +
     '  pool q { cap 1; queue by (k(serial)); }\n' +
     '                            ^'),
    # a definition used in a step stage's cost
    ('def_in_cost',
     {'p.sq': 'def c(t) = 0.01 * (t - 5);\npool reqs { cap 8; admit via E; }\nstage E : step { budget 10; cost c(tokens); }\nworkload { arrive batch(1); }\nsession { hold reqs (1) { run E prefill (4); } }\n'},
     "{d}/p.sq:1:12: error: at t=0, session 0: stage E: the iteration's cost is negative (-0.01) "
     "(its batch: tokens 4, decoders 0, prefilled 4, residents 1, kv_decode 0, kv_prefill 0)\n" +
     '  def c(t) = 0.01 * (t - 5);\n' +
     '             ^\n' +
     '{d}/p.sq:3:34: note: in the expansion of `c`, used here\n' +
     '  stage E : step { budget 10; cost c(tokens); }\n' +
     '                                   ^'),
    # a definition used in the turn block
    ('def_in_turn',
     {'p.sq': 'def d(m) = ~exp(m);\nstage s : fifo;\nworkload {\n  arrive batch(2);\n  turn { set k = d(serial - 1); }\n  session { turn; request; }\n}\nserver { run s (1); }\n'},
     '{d}/p.sq:1:12: error: at t=0, session 0: ~exp(-1): the mean is negative\n' +
     '  def d(m) = ~exp(m);\n' +
     '             ^\n' +
     '{d}/p.sq:5:18: note: in the expansion of `d`, used here\n' +
     '    turn { set k = d(serial - 1); }\n' +
     '                   ^'),
    # a definition used in an evict by key, of an ended session's entry
    ('def_in_evict_key',
     {'p.sq': 'def k(i) = used(p[i - 2]);\npool p[2] { cap 2; evict by (k(serial)); }\nstage s : fifo;\nworkload { arrive batch(6); }\nsession {\n  hold p[0] (1) { run s (1); } cache (2);\n}\n'},
     '{d}/p.sq:1:17: error: at t=1, session 0: pool p: index -2 out of range (the family has 2)\n' +
     '  def k(i) = used(p[i - 2]);\n' +
     '                  ^\n' +
     '{d}/p.sq:2:30: note: in the expansion of `k`, used here\n' +
     '  pool p[2] { cap 2; evict by (k(serial)); }\n' +
     '                               ^'),

    # a ps capacity whose share per job is below the doubles' precision (the stage's, no session)
    ('ps_share_below_precision',
     {'p.sq': 'stage s : ps(present * 1e-310);\nworkload { arrive batch(2); }\nsession { run s (1); }\n'},
     "{d}/p.sq:1:14: error: at t=0: stage s: the capacity 2e-310 at present = 2 gives each job a share of 1e-310, below the smallest normal double (2.22507e-308), where a share loses its precision; a ps stage's capacity is 0 or at least present times that\n" +
     '  stage s : ps(present * 1e-310);\n' +
     '               ^'),
    # a run over several stages whose share is below the doubles' precision: its session
    ('flow_share_below_precision',
     {'p.sq': 'stage a : ps(1e-307);\nstage b : ps(1e-307);\nshare maxmin;\nworkload { arrive batch(100); }\nsession { run a, b (1); }\n'},
     '{d}/p.sq:5:11: error: at t=0, session 0: the run over stages a, b gets a rate of 1e-309 under share maxmin, below the smallest normal double (2.22507e-308), where a share loses its precision; the capacities of its stages shared among the flows give each run at least that\n' +
     '  session { run a, b (1); }\n' +
     '            ^'),

    # in a gateway's route: at the route's statement, a note at the request
    ('gateway_route',
     {'p.sq': 'stage s : delay;\nqueue gw : gateway {\n  route {\n    run s (serial - 1);\n  }\n}\nworkload {\n  arrive batch(2);\n  session { request gw; end; }\n}\n'},
     "{d}/p.sq:4:5: error: at t=0, session 0: the run's work is negative (-1)\n" +
     '      run s (serial - 1);\n' +
     '      ^\n' +
     '{d}/p.sq:9:13: note: in the expansion of `gw.route`, used here\n' +
     '    session { request gw; end; }\n' +
     '              ^'),
    # branch with a probability outside 0 .. 1: told as written, not as the draw it is
    ('branch_with',
     {'p.sq': 'stage s : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s (1);\n  branch with (serial * 2) { end; }\n}\n'},
     '{d}/p.sq:5:16: error: at t=2, session 1: branch with (…): a probability is between 0 and 1, got 2\n' +
     '    branch with (serial * 2) { end; }\n' +
     '                 ^'),
    # in an aggregate's body, written out
    ('aggregate',
     {'p.sq': 'stage s[2] : fifo;\nworkload { arrive batch(2); }\nsession {\n  run s[0] (1);\n  set m = max j in 2 (queue(s[j + serial]));\n}\n'},
     '{d}/p.sq:5:29: error: at t=2, session 1: stage s: index 2 out of range (the family has 2)\n' +
     '    set m = max j in 2 (queue(s[j + serial]));\n' +
     '                              ^'),

    # a hold's units below 0 where a step stage admits it (the prepared admission on the default tier)
    ('admitted_units',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\nstage E : step { budget 10; cost 0.01; memory kv; }\nworkload { arrive batch(2); }\nsession {\n  hold reqs (1), kv (4 - 5 * serial) { prefill on E 4; }\n}\n'},
     '{d}/p.sq:6:22: error: at t=0, session 1: the units of kv are negative (-1)\n' +
     '    hold reqs (1), kv (4 - 5 * serial) { prefill on E 4; }\n' +
     '                       ^'),
    # its reserve below 0 there
    ('admitted_reserve',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\nstage E : step { budget 10; cost 0.01; memory kv; }\nworkload { arrive batch(2); }\nsession {\n  hold reqs (1), kv (4) reserve (4 - 5 * serial) { prefill on E 4; }\n}\n'},
     '{d}/p.sq:6:34: error: at t=0, session 1: the reserve of kv is negative (-1)\n' +
     '    hold reqs (1), kv (4) reserve (4 - 5 * serial) { prefill on E 4; }\n' +
     '                                   ^'),
    # its reuse bound NaN there
    ('admitted_reuse',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\nstage E : step { budget 10; cost 0.01; memory kv; }\nworkload { arrive batch(2); }\nsession {\n  hold reqs (1), kv (4) reuse (ln(1 - 2 * serial)) { prefill on E 4; } cache (4);\n}\n'},
     '{d}/p.sq:6:32: error: at t=0, session 1: the reuse bound is NaN\n' +
     '    hold reqs (1), kv (4) reuse (ln(1 - 2 * serial)) { prefill on E 4; } cache (4);\n' +
     '                                 ^'),
    # a computed member past the family in its header there
    ('admitted_member',
     {'p.sq': 'pool reqs { cap 8; admit via E; }\npool kv { cap 100; }\npool x[2] { cap 1; }\nstage E : step { budget 10; cost 0.01; memory kv; }\nworkload { arrive batch(3); }\nsession {\n  hold reqs (1), kv (4 + used(x[serial])) { prefill on E 4; }\n}\n'},
     '{d}/p.sq:7:31: error: at t=0, session 2: pool x: index 2 out of range (the family has 2)\n' +
     '    hold reqs (1), kv (4 + used(x[serial])) { prefill on E 4; }\n' +
     '                                ^'),

    # a run drained before its warm-up ends: at the setting, with the time
    ('warmup_drained',
     {'p.sq': 'stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon inf; warmup 50; arrivals 3; seed 1; }\n'},
     '{d}/p.sq:4:31: error: at t=3.08408: run { arrivals 3; }: drained at t=3.08408, at or before the warmup 50 (nothing to measure)\n' +
     '  run { horizon inf; warmup 50; arrivals 3; seed 1; }\n' +
     '                                ^'),

]


@pytest.mark.parametrize(("files", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_runtime_error_names_its_place_time_and_session(tmp_path, monkeypatch, files, want):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    prog = serq_frontend.compile(tmp_path / "p.sq")
    assert same_error(prog, monkeypatch) == want.replace("{d}", str(tmp_path))


def test_a_library_of_the_library_path_is_named_by_its_own_path_and_line(tmp_path, monkeypatch):
    # lib/vllm.sq's request with an output of 0 tokens (1 - serial at session 1): its decode of o - 1 tokens
    lib = Path(serq_vllm.__file__).parent / "lib" / "vllm.sq"
    text = lib.read_text().splitlines()
    decode = next(i for i, x in enumerate(text) if "decode on engine (o - 1 - (known - prompt))" in x)
    at = next(i for i, x in enumerate(text) if x.strip().startswith("vllm_request_at(reqs, kv, engine, prompt, o, t0"))
    (tmp_path / "p.sq").write_text(
        'use "vllm.sq";\npool reqs { cap 4; admit via engine; }\npool kv { cap 1600; block 16; evict lru; preempt lifo; }\n'
        "stage engine : step { budget 64; cost 0.01; memory kv; }\nworkload { arrive batch(2); }\n"
        "session {\n  set t0 = now;\n  vllm_request(reqs, kv, engine, 10, 1 - serial, t0);\n}\n")
    col = text[decode].index("decode") + 1
    want = (f"{lib}:{decode + 1}:{col}: error: at t=0.01, session 1: the run's work is negative (-1)\n"
            f"  {text[decode]}\n" + " " * (col + 1) + "^\n"
            f"{lib}:{at + 1}:3: note: in the expansion of `vllm_request_at`, used here\n"
            f"  {text[at]}\n    ^\n"
            f"{tmp_path}/p.sq:8:3: note: in the expansion of `vllm_request`, used here\n"
            "    vllm_request(reqs, kv, engine, 10, 1 - serial, t0);\n    ^")
    assert same_error(serq_frontend.compile(tmp_path / "p.sq"), monkeypatch) == want


class _Limited(StageKind):
    """A plugin's stage kind that refuses a job of more than 1 when it arrives, and wears out in its own
    event at its second completion."""

    done = 0

    def attach(self, job):
        if job.work > 1:
            raise serq_sim.SimError(f"stage {self.node.name}: a job of {job.work:g} is over its limit")
        self.acc()
        self.present += 1
        job.stage = self
        self.sim.at(self.sim.now + job.work, self.finish, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        self.done += 1
        if self.done == 2:
            raise serq_sim.SimError(f"stage {self.node.name}: worn out")
        self.acc()
        self.present -= 1
        job.stage = None
        self.sim.job_done(self, job)


class _Refusing(EvictionOrder):
    """A plugin's eviction order that refuses every entry."""

    def key(self, entry):
        raise serq_sim.SimError(f"pool {self.pool.node.name}: this order evicts nothing")


class _Plugin:
    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        register("lim", _Limited)

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        register("refuse", _Refusing)


@pytest.mark.parametrize(("src", "want"), [
    # its refusal of a job: at the run statement of the job, with the session
    ("stage svc : @lim;\nworkload { arrive batch(2); }\nsession {\n  run svc (1 + serial);\n}\n",
     "{d}/p.sq:4:3: error: at t=0, session 1: stage svc: a job of 2 is over its limit\n"
     "    run svc (1 + serial);\n    ^"),
    # raised in its own event: at the stage's declaration
    ("stage svc : @lim;\nworkload { arrive batch(2); }\nsession {\n  run svc (1);\n}\n",
     "{d}/p.sq:1:1: error: at t=1: stage svc: worn out\n  stage svc : @lim;\n  ^"),
    # an eviction order's: at the pool's declaration
    ("pool p { cap 2; evict @refuse; }\nstage s : fifo;\nworkload { arrive batch(4); }\n"
     "session {\n  hold p (1) { run s (1); } cache (1);\n}\n",
     "{d}/p.sq:1:1: error: at t=1: pool p: this order evicts nothing\n  pool p { cap 2; evict @refuse; }\n  ^"),
], ids=["job", "event", "order"])
def test_a_plugins_own_refusal_is_placed_as_the_runs_errors_are(tmp_path, monkeypatch, src, want):
    pm = get_plugin_manager(plugins=[_Plugin()])
    (tmp_path / "p.sq").write_text(src)
    prog = serq_frontend.compile(tmp_path / "p.sq", pm=pm)
    got = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(prog, pm=pm)
        got.append(str(e.value))
    assert got == [want.replace("{d}", str(tmp_path))] * 2


def test_the_command_line_prints_the_message_alone(tmp_path, serq):
    # one message on stderr, status 1, no traceback: a definition's body used from the program
    (tmp_path / "p.sq").write_text(CASES[[c[0] for c in CASES].index("def_statement")][1]["p.sq"]
                                   + "run { horizon 10; }\n")
    r = serq("run", str(tmp_path / "p.sq"))
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"{tmp_path}/p.sq:2:13: error: at t=1, session 0: the run's work is negative (-1)\n"
                        "  def go(w) { run s (w); }\n              ^\n"
                        f"{tmp_path}/p.sq:6:3: note: in the expansion of `go`, used here\n"
                        "    go(serial - 1);\n    ^\n")
