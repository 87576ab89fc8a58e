"""Conformance of what the language refuses and what it allows: every rule of language.txt (§2, §3),
pool-reference.txt and program-reference.txt that says a program is an error, refused, rejected, does not
link, may not, must or only, in the dialect docs/language.md describes (its "differs" and "silent"
sections decide where the pages part). The checklist below lists each rule, the line it is read from and
the test that holds the implementation to it: an earlier test (found by its message or its program) or a
test of this file. For the rules this file covers, the refused program and the nearest program the rule
allows are both here: the refused one at its place (the ``⟨`` in the source), the allowed one compiled and
run, with an outcome computed by hand from the spec's words.

Checklist (L = language.txt, P = pool-reference.txt, R = program-reference.txt; a file named is an earlier
test that checks the rule, found by its message or its program; "here" is this file):

  id   line     rule                                                       test
  r01  L90      renewal gaps positive and finite (a constant gap)          serq-sim test_conformance_audit3
  r02  L90      a drawn gap that is not positive: run-time error           serq-sim test_conformance_audit3, test_errors
  r03  L92      N arrivals not reached or drained by the horizon: error    serq-sim test_conformance_round14_b, test_workload
  r04  L92      draining at or before the warmup: error                    serq-sim test_workload
  r05  R127     arrivals only with an open workload                        test_link, test_conformance_syntax
  r06  R127     arrivals a positive whole number                           serq-ir test_validate, serq-sim
                                                                           test_hostile_round18_arrivals_bound
  r07  R125     warmup below horizon                                       test_link
  r08  L96      only a branch guard is held to 0 or 1 (c ? a : b, &&)      here: test_a_test_operand_is_any_number
  r09  L96      an aggregate's index is no name the program has            test_aggregate_index_says_what_to_write;
                (a definition's name included: here, the one disagreement) here: test_an_aggregate_index_*
  r10  L96      a context variable read outside its place does not link    test_link, test_audit_frontend
  r11  L96      attribute, let, context variable, inf: one name each       test_link, test_audit_frontend
  r12  L96      a constant that evaluates to NaN does not link             test_link, test_audit_frontend
  r13  L114     a serving form with no stage or several: error             test_link, test_conformance_syntax
  r14  L114     a mode on a step stage required, elsewhere refused         test_link
  r15  L114     transfer and tool on a step engine refused as run E (X)    test_link, test_conformance_syntax
  r16  L131     transfer without from P to Q (n): parse error              serq-sim test_conformance_audit4
  r17  L56      init and turn hold only set and observe                    here: test_init_and_turn_*
  r18  L60      request; only in the workload's session                    test_diagnostics (and here)
  r19  L195     request; twice splices the server twice (allowed)          here: test_request_twice_*
  r20  L195     a workload session without a server: error                 test_diagnostics, test_conformance_syntax
  r21  L195     a server never requested: error                            test_diagnostics, test_conformance_syntax
  r22  R96      a server next to a top-level session: error               here: test_a_server_next_to_*
  r23  L189     turn; and end; refused in a server                         serq-sim test_conformance_audit4
  r24  L190     request; refused in a server                               serq-sim test_conformance_audit4
  r25  R76      at most one workload                                       here: test_one_workload
  r26  L277     hidden: refused in units, reserve, reuse                   test_conformance_round17, serq-sim
                                                                           test_conformance_round12
  r27  L277     hidden: refused in queue and eviction keys, spill          serq-sim test_conformance_audit3,
                                                                           test_known_defects_round3
  r28  L277     hidden: refused in a step stage's serve keys               here: test_hidden_attribute_in_a_serve_key_*
  r29  L277     hidden: allowed in a run and a hold's cache                here: test_hidden_attribute_in_a_run_*
  r30  L277     cached, computed cannot be hidden                          test_link, test_conformance_syntax
  r31  L281     a constant guard strictly between 0 and 1: refused         test_link, test_conformance_syntax
  r32  L281     a constant guard outside [0, 1]: refused                   here: test_a_constant_guard_*
  r33  L281     a computed guard not 0 or 1: run-time error                serq-sim test_conformance_audit, test_errors
  r34  L285     lint: a set from live state reaches a header               test_link, test_spec_rules
  r35  L273     a binding may not draw                                     here: test_a_binding_may_not_draw
  r36  L275     a binding reads only the ones before it                    test_audit_frontend
  r37  L275     the body may not read a binding of live state              test_link
  r38  L275     a binding's name is its own                                test_link, test_audit_frontend
  r39  L256     cached / reuse on a hold without cache: refused            test_link
  r40  L262,P80 a queue key may not draw                                   here: test_a_queue_key_*
  r41  P66      a preemption key may not draw                              here: test_a_preemption_key_*
  r42  P66      a preemption key may not read budget_left or computed      serq-ir test_hostile_round19_moment_reads
  r43  P66      a preemption key reads its own moment's names (no waited)  here: test_a_preemption_key_*
  r44  P47      eviction keys read size, age, last, waiting, attributes    test_link
  r45  P47      eviction keys may draw (no rule forbids; L283 a stream)    here: test_an_eviction_key_may_draw
  r46  L266     a serve key may not draw                                   serq-sim test_ir_draw_moments
  r47  L266     one serve per step stage; exclusive prefill is no order    here: test_a_step_stage_serves_one_way
  r48  R103     share required when a run holds several stages             here: test_a_run_over_two_stages_*
  r49  R103     share with no run over several stages: error               test_link, serq-sim test_conformance_audit4
  r50  L266     every stage of a several-stage run is ps(constant > 0)     serq-sim test_conformance_audit4
  r51  L266     a run names each stage array once                          serq-sim test_conformance_audit4
  r52  L289     a gauge reads no attribute, draw, now, cachedin, work,     test_link, test_audit_frontend
                budget_left
  r53  R116     a gauge's name: no observe's, no other gauge's             test_link
  r54  R63,L214 a family size a whole number >= 1 (a let allowed)         test_audit_frontend, test_conformance_round17
  r55  R33      a def's name: no keyword, function, distribution, pool,   here: test_a_definition_has_a_name_*
                stage or let
  r56  R33      a def: not twice, before its first use, not itself         test_audit_frontend, test_link
  r57  R34      a parameter: no keyword or function, not assigned          test_audit_frontend, test_conformance_round17
  r58  R35      an argument that draws: only to a parameter read once      here: test_a_drawing_argument_*
  r59  R37      an argument may not read a name the body assigns           test_link, test_spec_rules
  r60  R37      a statement def's argument: no clock, no live state        test_link, test_conformance_round17
  r61  R23      a def's statements follow the block they are used in       serq-sim test_conformance_audit4
  r62  R16      a let reads only earlier constants                         test_let_order_and_else
  r63  L228     from on a queue whose entries lease nothing: no link       here: test_from_a_queue_*
  r64  L228     every entry of P leases on every way through it            test_conformance_round17, serq-sim
                                                                           test_conformance_audit4
  r65  L242     a transfer without on in a queue that pulls from none      serq-sim test_conformance_audit4
  r66  L242     a reader has one source                                    serq-sim test_conformance_audit4
  r67  L242     a program with a pull writes no share of its own           here: test_a_pull_names_the_share_*
  r68  L240     a pull's latency: a number or a constant over lets         serq-sim test_conformance_audit4
  r69  L244     only a link without an entry takes a latency               serq-sim test_conformance_syntax
  r70  L224     request gw: gw declared, and a gateway                     serq-sim test_conformance_audit4
  r71  L224     declarations after the workload; several gateways          test_conformance_round17
  r72  L246     an entry reads its own, holds its queue's pools            test_conformance_round17, test_sugar
  r73  L82      mark is an entry's statement                               here: test_mark_*
  r74  L258     family pairs: one size, or a family of one                 test_link, test_hostile_round6_admit_via
  r75  P105     admit via ENGINE (refused there) is this dialect's         every vLLM program (test_examples);
                pool option                                                docs/language.md "differs"
  r76  L50      a step stage's cost is required                            here: test_a_step_stage_needs_its_cost
  r77  L49      a ps capacity reads present, not a step's residents        here: test_a_ps_capacity_*
  r78  P24,L256 units or reserve above the cap: rejected, the session ends serq-sim test_conformance_sem
  r79  L256     grow and load act in a hold; a load within the allocation serq-sim test_conformance_audit2, audit4
  r80  P117     a spill predicate may read size                            serq-sim test_spill_semantics

Counts: 80 rules; 58 checked by earlier tests, 22 newly here (r08, r17, r19, r22, r25, r28, r29, r32, r35,
r40, r41, r43, r45, r47, r48, r55, r58, r63, r67, r73, r76, r77; r18 is checked again); one disagreement,
fixed: r09 took an aggregate's index named as a definition (`max g in 2 (g)` beside `def g() = …;`), which
the rule refuses as it refuses a pool's or a gauge's name. Where the pages part (a family's size, admit via, a program
given as text that uses a library, branch in init and turn) docs/language.md says which reading holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sim
from sqhelpers import compile_src, refused

pytestmark = pytest.mark.timeout(60)

# a fifo stage, a pool, two sessions at time 0
BASE = """stage s : fifo;
pool kv { cap 10; }
workload { arrive batch(2); }
session { SESS }
run { horizon 100; }
"""


def prog(sess: str, pre: str = "", wl: str = "arrive batch(2);", pool: str = "cap 10;", stage: str = "fifo;") -> str:
    return pre + BASE.replace("SESS", sess).replace("arrive batch(2);", wl).replace("cap 10;", pool) \
        .replace("fifo;", stage)


def observed(src: str, name: str) -> list[float]:
    """The samples of observe ``name`` when ``src`` runs (seed 1)."""
    return [float(v) for v in serq_sim.run(compile_src(src), seed=1).observe(name).values]


# -- r08: only a guard is a test ------------------------------------------------------------------------

def test_a_test_operand_is_any_number():
    """L96 "c ? a : b (a non-zero operand is true; only a branch guard is held to 0 or 1)": 2 ? 5 : 6 is 5,
    -1 && 3 is 1, !0.5 is 0, 0 || 0.25 is 1; the same numbers refused as a constant guard (below)."""
    src = prog("observe a = 2 ? 5 : 6; observe b = -1 && 3; observe c = !0.5; observe d = 0 || 0.25; end;",
               wl="arrive batch(1);")
    assert [observed(src, n) for n in "abcd"] == [[5.0], [1.0], [0.0], [1.0]]


# -- r17: init and turn hold only set and observe ----------------------------------------------------------

def test_init_and_turn_refuse_other_statements():
    """L56 "init block | turn block -- only set / observe". Mutation: dropping the check of the workload's
    blocks lets a `run` through, where no session has a stage to run on yet."""
    refused(prog("end;", wl="arrive batch(1); init { ⟨run s (1); }"),
            "`run` in the workload's `init` block: `init` holds only `set` and `observe`")
    refused(prog("turn; end;", wl="arrive batch(1); turn { ⟨hold kv (1) { } }"),
            "`hold` in the workload's `turn` block: `turn` holds only `set` and `observe`")


def test_init_and_turn_allow_set_observe_and_branch():
    """The nearest allowed program: set and observe in init (and a branch over them, docs/language.md
    "init and turn accept branch"), read by the session: a = 2, b = 3, x = a + b = 5 for each session."""
    src = prog("turn; observe x = a + b + c; end;",
               wl="arrive batch(2); init { set a = 2; branch (a == 2) { set b = 3; } else { set b = 0; } } "
                  "turn { set c = 0; observe seen = 1; }")
    assert observed(src, "x") == [5.0, 5.0]
    assert observed(src, "seen") == [1.0, 1.0]


# -- r18, r19, r22, r25: the two sides and the workload ----------------------------------------------------

TWO_SIDES = """stage s : fifo;
workload { arrive batch(1); session { SESSION } }
server { run s (1); }
run { horizon 100; }
"""


def test_request_only_in_the_workload_session():
    """L60 "request ; -- the server block, once (workload `session` only)"; R84 "request; only inside
    workload". Mutation: accepting `request;` in a top-level session would splice no server there."""
    refused(prog("⟨request; end;"), "`request;` in a top-level session")


def test_request_twice_runs_the_server_twice():
    """L195-196 "The parser splices the server's statements in its place — at any depth, as often as it
    is written": `once` in the grammar is per `request;`. Two requests of a one-second fifo run, alone in
    the system: the response is 2."""
    src = TWO_SIDES.replace("SESSION", "set t0 = now; request; request; observe r = now - t0; end;")
    assert observed(src, "r") == [2.0]


def test_a_server_next_to_a_top_level_session_is_refused():
    """R96 "a server next to a top-level session are errors"; L195 "The two forms are exclusive". The
    error is at the later of the two items, the one that makes the program two forms."""
    src = "stage s : fifo;\nworkload { arrive batch(1); }\nsession { end; }\n⟨server { run s (1); }\n" \
          "run { horizon 10; }\n"
    refused(src, "a top-level `session` and the two sides")


def test_one_workload():
    """R76 "At most one per program (a second is duplicate workload)", at the second; the base program
    has one, and its two sessions each take the observe."""
    refused(prog("end;") + "⟨workload { arrive batch(1); }\n", "duplicate workload")
    assert len(observed(prog("observe one = 1; end;"), "one")) == 2


# -- r28, r29: hidden in a step stage's serve keys -----------------------------------------------------------

def test_hidden_attribute_in_a_serve_key_is_refused():
    """L277 "a hidden attribute … is a link error in … a step stage's budget, cost, chunk or serve keys"."""
    src = ("stage E : step { budget 1; cost 1; serve by (⟨o); };\n"
           "workload { arrive batch(1); hidden o; init { set o = 3; } }\n"
           "session { run E decode (o); end; }\nrun { horizon 100; }\n")
    refused(src, "`o` is hidden: a step stage's serve key is the scheduler's")


def test_hidden_attribute_in_a_run_is_allowed():
    """L277 "a hidden attribute may be read in a session statement (decode (o - 1)), a run or a hold's
    cache". A decode of o = 3 tokens on an engine of cost 1 per iteration, one token an iteration: 3
    iterations, a response of 3 (the serve key `remaining` is the scheduler's own)."""
    src = ("stage E : step { budget 1; cost 1; serve by (remaining); };\npool kv { cap 10; }\n"
           "workload { arrive batch(1); hidden o; init { set o = 3; } }\n"
           "session { set t0 = now; hold kv (1) { run E decode (o); } cache (o); observe r = now - t0; end; }\n"
           "run { horizon 100; }\n")
    assert observed(src, "r") == [3.0]


# -- r32: a constant guard ---------------------------------------------------------------------------------

@pytest.mark.parametrize("guard, msg", [
    ("2", "the guard is the constant 2; a guard is a test, 0 or 1"),
    ("-1", "the guard is the constant -1; a guard is a test, 0 or 1"),
    ("G", "the guard is the constant 7; a guard is a test, 0 or 1"),
])
def test_a_constant_guard_outside_0_1_is_refused(guard, msg):
    """L281 "A constant guard that is not 0 or 1 is refused at link time" (not only one strictly between,
    which test_conformance_sem checks): a count is no test either, also through a let."""
    refused(prog(f"branch (⟨{guard}) {{ }} end;", pre="let G = 7;\n"), msg)


def test_a_constant_guard_of_1_and_0_takes_its_arm():
    """The allowed neighbours: branch (1) takes the first block, branch (0) the second."""
    src = prog("branch (1) { observe a = 1; } else { observe a = 0; } "
               "branch (0) { observe b = 1; } else { observe b = 0; } end;")
    assert observed(src, "a") == [1.0, 1.0] and observed(src, "b") == [0.0, 0.0]


# -- r35: a binding may not draw -----------------------------------------------------------------------------

def test_a_binding_may_not_draw():
    """L273 "A binding may not draw (~): it is substituted, so a name used twice would draw twice"."""
    refused(prog("hold kv (h + 1) at admission (h = ⟨~exp(1)) { } end;"), "the binding `h` draws")


def test_a_binding_over_an_attribute_is_the_header():
    """The allowed neighbour: a binding over an attribute the session set, h = d + 1 = 4 units of a pool
    no one else holds: used(kv) in the body is 4 (one session)."""
    src = prog("set d = 3; hold kv (h) at admission (h = d + 1) { observe u = used(kv); } end;",
               wl="arrive batch(1);")
    assert observed(src, "u") == [4.0]


# -- r40, r41, r43, r45: the keys of the pool's orders ---------------------------------------------------------

def test_a_queue_key_may_not_draw():
    """P80 "Keys may read visible session attributes, now and pool/stage queries, and may not draw";
    L262 "A key may not draw"."""
    refused(prog("hold kv (1) { } end;", pool="cap 1; queue by (⟨~exp(1));"), "a pool's queue key may not draw")


def test_a_queue_key_orders_the_waiting():
    """The allowed neighbour, `queue by (-serial)`: three sessions at time 0 all join the queue before
    the settle admits (L250, settle: run every ready session, then retry admissions), and a pool of one
    unit admits the least key first: sessions 2, 1, 0, each holding the one-second fifo stage in turn."""
    src = prog("hold kv (1) { run s (1); } observe who = serial; observe at = now; end;",
               wl="arrive batch(3);", pool="cap 1; queue by (-serial, waited);")
    assert observed(src, "who") == [2.0, 1.0, 0.0]
    assert observed(src, "at") == [1.0, 2.0, 3.0]


def test_a_preemption_key_may_not_draw_nor_read_waited():
    """P66: a key may not draw; it reads the candidate's attributes, admission, decoding and position
    (`waited` is a queue key's, §Moments)."""
    refused(prog("end;", pool="cap 1; preempt by (⟨~uniform(0, 1));"), "a preemption key may not draw")
    refused(prog("end;", pool="cap 1; preempt by (⟨waited);"), "`waited` is not readable in a preemption key")


def test_a_preemption_key_of_the_candidates_own():
    """The allowed neighbour: keys of position, decoding and admission, and `requeue tail`. The program
    links and runs; with no growth nothing is preempted, and each session's one-second run on the fifo
    stage ends at 1 and 2 (two sessions at time 0, one server)."""
    src = prog("hold kv (1) { run s (1); } observe at = now; end;",
               pool="cap 1; preempt by (-position, decoding, -admission) requeue tail;")
    assert observed(src, "at") == [1.0, 2.0]


def test_an_eviction_key_may_draw():
    """P47 lists what eviction keys may read and says nothing against a draw (a queue key, a preemption
    key, a serve key and a binding each say they may not); L283 gives eviction a random stream of its own.
    So `evict by (~uniform(0, 1))` links. Two sessions each cache 1 unit of a pool of 2 and a third
    session's hold of 2 evicts both, whatever the keys drew: it is admitted at 2, after the first two
    (fifo stage, one second each), and its run ends at 3."""
    src = prog("hold kv (u) { run s (1); } cache (u); observe at = now; end;",
               wl="arrive batch(3); init { set u = serial < 2 ? 1 : 2; }",
               pool="cap 2; evict by (~uniform(0, 1), age);")
    assert observed(src, "at") == [1.0, 2.0, 3.0]


# -- r47, r82: one serve per step stage -------------------------------------------------------------------------

ENGINE = """stage E : step { budget 4; cost 1; SERVE };
pool kv { cap 100; }
workload { arrive batch(1); }
session { set t0 = now; hold kv (1) { run E prefill (8) growing kv; run E decode (2) growing kv; } observe r = now - t0; end; }
run { horizon 100; }
"""


@pytest.mark.parametrize("serve", ["serve exclusive prefill; ⟨serve by (remaining);",
                                   "serve decode first; ⟨serve admission;"])
def test_a_step_stage_serves_one_way(serve):
    """L266 "the residents are served the way serve names, said once per stage: an order, … or the rule
    exclusive prefill, below, which is not an order and so cannot be combined with one"."""
    refused(ENGINE.replace("SERVE", serve), "`serve` is given twice in this step stage")


def test_exclusive_prefill_alone():
    """The allowed neighbour. One request: a prefill of 8 tokens at a budget of 4 is two iterations, then a
    decode of 2 tokens is two more, each iteration costing 1: a response of 4."""
    assert observed(ENGINE.replace("SERVE", "serve exclusive prefill;"), "r") == [4.0]


# -- r48: share is required by a run over several stages ------------------------------------------------------

def test_a_run_over_two_stages_needs_share():
    """R103 "Required when some run holds several stages … there is no default"."""
    refused(prog("⟨run a, c (1); end;", pre="stage a : ps(1);\nstage c : ps(2);\n"),
            "a run over several stages needs the program's `share maxmin;` or `share bottleneck;`")


@pytest.mark.parametrize("policy", ["maxmin", "bottleneck"])
def test_a_run_over_two_stages_with_share(policy):
    """One flow alone through ps(1) and ps(2): under max-min its rate rises until ps(1) fills, 1; under
    bottleneck it is min(1/1, 2/1) = 1. One unit of work takes 1."""
    src = prog("set t0 = now; run a, c (1); observe r = now - t0; end;", wl="arrive batch(1);",
               pre=f"stage a : ps(1);\nstage c : ps(2);\nshare {policy};\n")
    assert observed(src, "r") == [1.0]


# -- r55, r58: definitions -----------------------------------------------------------------------------------

@pytest.mark.parametrize("pre, msg", [
    ("def ⟨hold(x) = x;\n", "`hold` is a keyword; a definition needs another name"),
    ("def ⟨min(x) = x;\n", "`min` is a function of the language; a definition needs another name"),
    ("def ⟨erlang(x) = x;\n", "`erlang` is a function of the language; a definition needs another name"),
    ("def ⟨kv(x) = x;\n", "`kv` is a pool; a definition needs another name"),
    ("def ⟨s(x) = x;\n", "`s` is a stage; a definition needs another name"),
    ("let L = 1;\ndef ⟨L(x) = x;\n", "`L` is a `let`; a definition needs another name"),
])
def test_a_definition_has_a_name_of_its_own(pre, msg):
    """R33 "Not a keyword, a function, a distribution, a pool, a stage or a let"."""
    refused(prog("end;", pre=pre), msg)


def test_a_definition_with_a_name_of_its_own():
    """The allowed neighbour: `def svc()` beside the stage `s`, run once: the response is its value, 2."""
    src = prog("set t0 = now; run s (svc()); observe r = now - t0; end;", wl="arrive batch(1);",
               pre="def svc() = 2;\n")
    assert observed(src, "r") == [2.0]


def test_a_drawing_argument_to_a_parameter_read_twice():
    """R35 "An argument that draws (itself, or through a definition that draws) may be passed only to a
    parameter the body reads once"."""
    refused(prog("observe y = f(⟨~det(2)); end;", pre="def f(x) = x + x;\n"),
            "the argument for `x` of `f` draws, and the body reads `x` 2 times")


def test_a_drawing_argument_to_a_parameter_read_once():
    """The allowed neighbour: f(x) = x + 1 of ~det(2) is 3."""
    assert observed(prog("observe y = f(~det(2)); end;", pre="def f(x) = x + 1;\n"), "y") == [3.0, 3.0]


# -- r63, r67, r73: queues ---------------------------------------------------------------------------------------

# a prefill family on fifo stages whose entry leases its KV, a decode family that reads it over the NICs
# (D pulls P), and a gateway; one request of prompt 32
QUEUES = """queue P[2] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  prefill (p) { PENTRY }
}
queue D[2] : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(1);
  decode (p) from src { DENTRY }
}
PULL
queue gw : gateway { route { ROUTE } }
workload { arrive batch(1); init { set prompt = 32; } session { set t0 = now; request gw; observe r = now - t0; end; } }
run { horizon 1000; }
"""


def queues(pentry: str = "hold kv (p) { run (p); } lease kv (inf);",
           dentry: str = "hold kv (p) { transfer (p) from src to kv (p); }",
           route: str = "P[0].prefill (prompt); D[1].decode (prompt) from P[0];",
           pull: str = "D pull P latency 1 share maxmin;") -> str:
    return QUEUES.replace("PENTRY", pentry).replace("DENTRY", dentry).replace("ROUTE", route) \
        .replace("PULL", pull)


def test_from_a_queue_that_leases_nothing_does_not_link():
    """L228 "a from on a queue that leases nothing does not link"."""
    refused(queues(pentry="hold kv (p) { run (p); }",
                   route="P[0].prefill (prompt); D[1].decode (prompt) from ⟨P[0];"),
            "`from P`: no entry of `P` leases a pool, so it has nothing to take")


def test_from_a_queue_that_leases_is_the_read():
    """The allowed neighbour, run: the prefill of 32 on P[0]'s fifo stage takes 32; the read waits the
    pull's latency 1, then moves 32 over P's NIC and D's, both ps(1), one flow under max-min: rate 1, 32.
    The response is 32 + 1 + 32 = 65 (L240-242: the kernel's `run D.nic.latency[j] (x0); run P.nic[i],
    D.nic[j] (…); load …; release …;`)."""
    assert observed(queues(), "r") == [65.0]


def test_a_pull_names_the_share_and_the_program_does_not_repeat_it():
    """L242 "A program with a relation does not also write share on its own"."""
    refused(queues(pull="D pull P latency 1 share maxmin;\n⟨share maxmin;"),
            "`share` is given twice: the pull relation `D pull P` names the program's share")


def test_mark_is_an_entry_statement():
    """L82 "mark NAME; -- in an entry: the moment, read by the caller as QUEUE.NAME"."""
    refused(prog("⟨mark x; end;"), "`mark` belongs in a queue's entry")


def test_mark_in_an_entry_is_read_by_the_caller():
    """The allowed neighbour: D's entry marks the end of its read, 32 + 1 + 32 = 65 after the request was
    sent (the session sent it at 0), and the caller reads it as D.done."""
    src = queues(dentry="hold kv (p) { transfer (p) from src to kv (p); mark done; }",
                 route="P[0].prefill (prompt); D[1].decode (prompt) from P[0]; observe at = D.done;")
    assert observed(src, "at") == [65.0]


# -- r76, r77: a step stage's cost, a ps stage's capacity ----------------------------------------------------

def test_a_step_stage_needs_its_cost():
    """L50 "step { budget expr ; cost expr ; [chunk expr ;] …": cost is not optional (docs/language.md:
    "cost is required"; without `budget` the budget is infinite)."""
    refused(prog("end;", pre="stage E : ⟨step { budget 4; };\n"), "step stage `E` has no `cost`")


def test_a_step_stage_without_a_budget():
    """The allowed neighbour: `step { cost 1; }`, an infinite budget: a prefill of 8 tokens is one
    iteration, a decode of 2 is two more; at cost 1 each, a response of 3."""
    assert observed(ENGINE.replace("budget 4; cost 1; SERVE", "cost 1;"), "r") == [3.0]


def test_a_ps_capacity_reads_present_only():
    """L49 "ps ( expr ) -- throughput phi(present) shared equally; expr reads present"; residents is a
    step stage's (L96: "each context variable exists at the one place named in its parenthesis")."""
    refused(prog("run s (1); end;", stage="ps(⟨residents);"), "`residents` is not readable in a ps stage's capacity")


def test_a_ps_capacity_of_present():
    """The allowed neighbour: ps(min(present, 2)) with two jobs of 1 at time 0: capacity 2 shared by 2,
    each at rate 1, both done at 1."""
    src = prog("set t0 = now; run s (1); observe r = now - t0; end;", stage="ps(min(present, 2));")
    assert observed(src, "r") == [1.0, 1.0]


# -- the command line: one message, its place and a caret, exit 1; the allowed program checks and runs ----------

CLI_CASES = [
    # (refused source, allowed source, line, col, message)
    (prog("end;", wl="arrive batch(1); init { run s (1); }"),
     prog("end;", wl="arrive batch(1); init { set a = 1; }"), 3, 36, "`init` holds only `set` and `observe`"),
    (prog("branch (2) { } end;"), prog("branch (1) { } end;"), 4, 19, "a guard is a test, 0 or 1"),
    (prog("run a, c (1); end;", pre="stage a : ps(1);\nstage c : ps(2);\n"),
     prog("run a, c (1); end;", pre="stage a : ps(1);\nstage c : ps(2);\nshare maxmin;\n"), 6, 11,
     "needs the program's `share maxmin;`"),
]


def serq(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


@pytest.mark.parametrize("bad, good, line, col, msg", CLI_CASES)
def test_the_command_line_says_it_once_and_runs_the_neighbour(tmp_path, bad, good, line, col, msg):
    """`serq check` of the refused program: exit 1, one error line `p.sq:LINE:COL: error: …`, the source
    line and a caret under the column, no traceback; the allowed one checks and runs (`--horizon 10`)."""
    (tmp_path / "p.sq").write_text(bad)
    r = serq("check", "p.sq", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"p.sq:{line}:{col}: error: ") and msg in lines[0]
    text = bad.splitlines()[line - 1]
    assert lines[1].endswith(text) and lines[2].index("^") == len(lines[1]) - len(text) + col - 1
    assert "Traceback" not in r.stderr and sum("error:" in x for x in lines) == 1
    (tmp_path / "q.sq").write_text(good)
    r = serq("run", "q.sq", "--horizon", "10", cwd=tmp_path)  # (run checks the program first)
    assert r.returncode == 0 and r.stderr == "", r.stderr


# -- r09: an aggregate's index and a definition's name ----------------------------------------------------------

@pytest.mark.parametrize("pre, body", [
    ("def g() = 1;\n", "max ⟨g in 2 (g + g())"),          # an expression definition
    ("def g(x) { run s (x); }\n", "sum ⟨g in 2 (g)"),      # a statement definition
])
def test_an_aggregate_index_is_no_definitions_name(pre, body):
    """L96 "j may not be a name the program already has": a definition's name is one (program-reference.txt
    gives it the namespace of the pools, stages and lets it may not take). The index and the definition
    could be told apart (`g` against `g(…)`), but the rule names no exception, and a pool's or a gauge's
    name, as unreadable as a bare name, is refused. Mutation: without the definitions' names in
    sugar.aggregates._names both linked (the defs layer writes the uses out before the aggregates)."""
    refused(prog(f"observe x = {body}; end;", pre=pre), "`g` is a name the program has already")


def test_a_library_definitions_name_is_the_programs():
    """program-reference.txt, use: "its definitions are the program's from here on", so lib/vllm.sq's
    `reusable` is a name the program has."""
    refused(prog("observe x = max ⟨reusable in 2 (reusable); end;", pre='use "vllm.sq";\n'),
            "`reusable` is a name the program has already")


def test_an_index_beside_a_definition_of_another_name():
    """The allowed neighbour: `max k in 2 (k + g())` beside `def g() = 1;` is max(0 + 1, 1 + 1) = 2."""
    assert observed(prog("observe x = max k in 2 (k + g()); end;", pre="def g() = 1;\n"), "x") == [2.0, 2.0]
