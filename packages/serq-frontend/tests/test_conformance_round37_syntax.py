"""language.txt §2 and §3 (and program-reference.txt), round 37: the errors the spec names, each at its
place with a caret, and the round trips of the text: `serq fmt` keeps a program's IR (the IR of the
formatted text is the program's, byte for byte) and its comments, and is idempotent; the sugar the spec
says the parser rewrites has the IR of the kernel written by hand; `serq ir` of an IR file is that file.

* The errors: an aggregate's index a name the program has (§2: "j may not be a name the program already
  has"), a context variable read outside its place ("set x = tokens; in a session, or evict by (tokens),
  does not link"), an attribute named as a context variable ("set present = …"), a constant that is NaN
  ("0/0, inf - inf"), the mode of a run ("required on a step stage and forbidden elsewhere"), transfer
  and tool on a step engine, a transfer without `from P to Q (n)`, each side's words (turn, end, request in
  a server; request in a top-level session), the two forms exclusive, a server never requested, a workload
  session without one, a constant guard strictly between 0 and 1, `hidden` of an attribute the scheduler
  sets and a hidden attribute read by a header, a key or a capacity, the live-state lint, a gauge's reads
  and name, one workload, a `let` that an attribute shadows, `share` without a run over several stages,
  `arrivals` with a closed workload, the warm-up below the horizon, several step engines for one form, a
  gateway that is none or is not declared, a `from` on a queue that leases nothing, families of other
  sizes paired, `cached` and `reuse` on a hold without `cache`; the pull relation's rules (a `from` on a
  queue that leases nothing, `share` beside a relation, a transfer without `on` where nothing is pulled,
  a relation above its queues or without a `nic`, a second source, an entry called from another queue,
  `latency` on a link with an entry, a family of one called without its index); names given twice (an
  attribute named `inf`, `now`, a built-in attribute or a pool, a `let` named `serial` or `inf`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from serq_frontend.fmt import format_source
from sqhelpers import compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(120)

D = "stage d : delay;\n"
B = "workload { arrive batch(1); }\n"
R = "run { horizon 1; }\n"

REFUSED = [
    # §2, aggregates: "j may not be a name the program already has"
    ("let j = 2;\n" + D + B + "session { observe x = max ⟨j in 2 (j); run d (1); }\n" + R,
     "`max j in …`: `j` is a name the program has already"),
    ("let k = 2;\n" + D + B + "session { observe x = sum ⟨k in 3 (k * 2); run d (1); }\n" + R,
     "`sum k in …`: `k` is a name the program has already"),
    # §2, context variables: "set x = tokens; in a session, or evict by (tokens), does not link"
    (D + B + "session { set x = ⟨tokens; run d (1); }\n" + R,
     "`tokens` is not readable in a session statement"),
    ("pool kv { cap 4; evict by (⟨tokens); }\n" + D + B + "session { hold kv (1) { run d (1); } cache (1); }\n" + R,
     "`tokens` is not readable in an eviction key or a spill clause"),
    ("pool kv { cap 4; queue by (⟨present); }\n" + D + B + "session { hold kv (1) { run d (1); } }\n" + R,
     "`present` is not readable in a pool's queue key"),
    # "set present = … would make ps(min(present, 16)) read the attribute"
    ("stage p : ps(min(present, 16));\n" + B + "session { ⟨set present = 1; run p (1); }\n" + R,
     "`present` is a context variable; an attribute needs another name"),
    # "one that evaluates to NaN (0/0, inf - inf) does not link"
    ("let a = ⟨0 / 0;\n" + D + B + "session { run d (a); }\n" + R, "`let a` evaluates to NaN"),
    ("pool kv { cap ⟨inf - inf; }\n" + D + B + "session { hold kv (1) { run d (1); } }\n" + R,
     "the cap of pool `kv` evaluates to NaN"),
    # §2, Which stage: "the mode is required on a step stage and forbidden elsewhere"; "transfer and tool on
    # a step engine are rejected by the linker as run E (X) would be"
    ("stage f : fifo;\n" + B + "session { ⟨run f prefill (1); }\n" + R,
     "`run f prefill (…)`: `f` is no step stage; a mode is for a step stage only"),
    ("stage E : step { budget 4; cost 1; }\n" + B + "session { ⟨run E (1); }\n" + R,
     "`run E (…)`: `E` is a step stage, and a run there says what it is"),
    ("stage E : step { budget 4; cost 1; }\n" + B + "session { ⟨tool on E 3; }\n" + R,
     "`run E (…)`: `E` is a step stage"),
    ("stage E1 : step { budget 4; cost 1; }\nstage E2 : step { budget 4; cost 1; }\n" + B
     + "session { ⟨prefill 3; }\n" + R, "`prefill`: several step engines qualify (E1, E2)"),
    # §2, A KV transfer: "without from P to Q (n) it is a parse error"
    ("stage link : fifo;\n" + B + "session { transfer 3⟨; }\n" + R,
     "unexpected `;`: a transfer says where the KV moves"),
    # §2, The two sides: each side owns its words
    (D + "workload { arrive batch(1); session { request; } }\nserver { run d (1); ⟨turn; }\n" + R,
     "`turn;` in a server"),
    (D + "workload { arrive batch(1); session { request; } }\nserver { run d (1); ⟨end; }\n" + R,
     "`end;` in a server"),
    (D + "workload { arrive batch(1); session { request; } }\nserver { run d (1); ⟨request; }\n" + R,
     "`request;` inside server: a server does not request itself"),
    (D + B + "session { ⟨request; }\n" + R, "`request;` in a top-level session"),
    # "a workload's session without a server, or a server that is never requested, is an error"; "The two
    # forms are exclusive in one program"
    (D + "workload { arrive batch(1); ⟨session { run d (1); } }\n" + R,
     "a workload's `session` with no `server` and no `request gw;`"),
    (D + "workload { arrive batch(1); session { run d (1); } }\n⟨server { run d (1); }\n" + R,
     "a `server` that is never requested"),
    (D + B + "session { run d (1); }\n⟨server { run d (1); }\n" + R,
     "a top-level `session` and the two sides (a workload's `session` and a `server`) are exclusive"),
    # §3, Branching: "A constant guard that is not 0 or 1 is refused at link time"
    (D + B + "session { branch (⟨0.5) { run d (1); } }\n" + R,
     "the guard is the constant 0.5, strictly between 0 and 1: that is a draw; write `branch with (0.5)`"),
    # §3, hidden: "An attribute the scheduler itself sets (cached, computed) cannot be hidden"; a hidden
    # attribute "is a link error in a hold's units, reserve or reuse …, a queue or eviction key, … a ps
    # stage's capacity"
    (D + "workload { arrive batch(1); hidden ⟨computed; }\nsession { run d (1); }\n" + R,
     "`computed` cannot be hidden: the scheduler itself sets it"),
    ("pool kv { cap 10; }\n" + D + "workload { arrive batch(1); hidden o; }\n"
     "session { set o = 2; hold kv (1) reserve (⟨o) { run d (1); } }\n" + R, "`o` is hidden: a hold's header"),
    ("pool kv { cap 10; evict by (⟨o); }\n" + D + "workload { arrive batch(1); hidden o; }\n"
     "session { set o = 1; hold kv (1) { run d (1); } cache (1); }\n" + R,
     "`o` is hidden: an eviction key or a spill clause is the scheduler's"),
    # §3, Lints: "A set that reads live pool or stage state … and is then used in a hold's header"
    ("pool kv { cap 10; }\n" + D + B + "session { set h = used(kv); hold kv (⟨h + 1) { run d (1); } }\n" + R,
     "`h` is set from live pool or stage state (at 4:11) and read in a hold's header"),
    # §3, Gauges: "an attribute, a draw, cachedin …, now or work(…) …, or budget_left(…) is a link error";
    # program-reference.txt: "Not also an observe's name"
    (D + "gauge g = ⟨serial;\n" + B + "session { run d (1); }\n" + R,
     "a gauge may not read an attribute: `serial` is a session attribute"),
    (D + "gauge g = ⟨now;\n" + B + "session { run d (1); }\n" + R, "a gauge may not read `now`"),
    (D + "gauge g = ⟨work(d);\n" + B + "session { run d (1); }\n" + R, "a gauge may not read `work"),
    (D + "⟨gauge x = busy(d);\n" + B + "session { run d (1); observe x = 1; }\n" + R,
     "gauge `x` has the name of an observe"),
    # program-reference.txt: workload "At most one per program (a second is duplicate workload)"; let: "May
    # not also be a session attribute"; share: "Required when some run holds several stages, an error
    # otherwise"
    (D + B + "⟨workload { arrive batch(1); }\nsession { run d (1); }\n" + R, "duplicate workload"),
    ("let x = 1;\n" + D + B + "session { ⟨set x = 2; run d (1); }\n" + R,
     "`x` is a `let` constant and an attribute this sets"),
    (D + "⟨share maxmin;\n" + B + "session { run d (1); }\n" + R, "`share` with no run over several stages"),
    # program-reference.txt, run: arrivals "Only with an open workload"; warmup "Must be below horizon"
    (D + "workload { arrive closed(2); }\nsession { run d (1); }\nrun { horizon 10; ⟨arrivals 3; }\n",
     "`arrivals` needs an open workload"),
    (D + B + "session { run d (1); }\nrun { horizon 10; ⟨warmup 10; }\n", "warmup 10 is not below the horizon 10"),
    # §2, Queues: "The parser checks that the target exists and plays that role"
    ("queue P : prefill { pool kv { cap 4; } serve fifo; prefill (prompt) { hold kv (1) { prefill (prompt); } } }\n"
     "workload { arrive batch(1); session { set prompt = 1; ⟨request P; } }\n" + R,
     "`request P;`: queue `P` is no gateway (its roles: prefill)"),
    (D + "workload { arrive batch(1); session { ⟨request gw; } }\n" + R, "`request gw;`: no queue `gw` is declared"),
    # §3: "any other pair of counts is a link error"
    ("pool kv[3] { cap 10; }\nstage E[2] : step { budget 4; cost 1; memory ⟨kv; }\n" + B
     + "session { hold kv[0] (1) { run E[0] prefill (1); } }\n" + R,
     "`E` is a family of 2 and `kv` a pool family of 3"),
    ("pool q[3] { cap 1; admit via ⟨E; }\nstage E[2] : step { budget 4; cost 1; }\n" + B
     + "session { hold q[0] (1) { run E[0] prefill (1); } }\n" + R,
     "`q` is a family of 3 and `E` a stage family of 2"),
    # §3, Pools: "cached is 0 in its body (the linker rejects a body that reads it there, and a reuse
    # there …)"
    ("pool kv { cap 10; }\n" + D + B + "session { hold kv (1) { run d (⟨cached); } }\n" + R,
     "`cached` in the body of a hold without `cache`"),
    ("pool kv { cap 10; }\n" + D + B + "session { hold kv (1) reuse (⟨1) { run d (1); } }\n" + R,
     "`reuse` on a hold without `cache`"),
    # program-reference.txt, use: "A program given as text rather than read from a file cannot use" (no
    # folder: only the library folders are looked in)
    ("⟨use \"nolib.sq\";\n" + D + B + "session { run d (1); }\n" + R, "`use \"nolib.sq\"`: no such library"),
]


# queues for the pull relation's refusals: P and Q lease their KV (with a NIC), D reads it
PQ = ("queue P[1] : prefill { pool kv { cap 4; } serve fifo; nic ps(1); prefill (prompt) { hold kv (1) { "
      "prefill (prompt); } cache (1) lease kv (inf); } }\n")
QQ = PQ.replace("queue P[1]", "queue Q[1]")
DQ = ("queue D[1] : decode { pool kv { cap 4; } serve fifo; nic ps(1); decode (prompt) from src { hold kv (1) { "
      "TRANSFER (prompt) from src to kv (1); } } }\n")
GW = ("queue gw : gateway { route { P[0].prefill (prompt); D[0].decode (prompt) from P[0]; } }\n"
      "workload { arrive batch(1); session { set prompt = 1; request gw; } }\n" + R)
D_ = DQ.replace("TRANSFER", "transfer")

REFUSED += [
    # §2, Queues: "a from on a queue that leases nothing does not link"
    ("queue P[1] : prefill { pool kv { cap 4; } serve fifo; prefill (prompt) { hold kv (1) { prefill (prompt); } "
     "cache (1); } }\nqueue D[1] : decode { pool kv { cap 4; } serve fifo; decode (prompt) from src { hold kv (1) "
     "{ decode (prompt); } } }\nqueue gw : gateway { route { P[0].prefill (prompt); D[0].decode (prompt) from "
     "⟨P[0]; } }\nworkload { arrive batch(1); session { set prompt = 1; request gw; } }\n" + R,
     "`from P`: no entry of `P` leases a pool, so it has nothing to take"),
    # "A program with a relation does not also write share"
    (PQ + D_ + "D pull P latency 0 share maxmin;\n⟨share maxmin;\n" + GW,
     "`share` is given twice: the pull relation `D pull P` names the program's share"),
    # "a transfer without on in a queue that pulls from none" is an error
    (PQ + DQ.replace("TRANSFER", "⟨transfer") + GW,
     "`D`'s `transfer` names no NIC and `D` pulls from no queue"),
    # "Both queues are declared above the relation and have a nic"
    ("⟨D pull P latency 0 share maxmin;\n" + PQ + D_ + GW, "`D pull P`: no queue `D` is declared above"),
    (PQ.replace(" nic ps(1);", "") + D_ + "⟨D pull P latency 0 share maxmin;\n" + GW,
     "`D pull P`: queue `P` has no `nic`; a pull reads over both queues' NICs"),
    # "a reader has one source"
    (PQ + QQ + D_ + "D pull P latency 0 share maxmin;\n⟨D pull Q latency 0 share maxmin;\n" + GW,
     "`D` pulls from `P` already; a reader has one source"),
    # "an entry of D called from another queue is an error": at the call's `from`, a note at the read (it was
    # at the read, with notes at the calls)
    (PQ + QQ + DQ.replace("TRANSFER", "transfer") + "D pull P latency 0 share maxmin;\n"
     + GW.replace("P[0].prefill (prompt); D[0].decode (prompt) from P[0]", "Q[0].prefill (prompt); D[0].decode "
                  "(prompt) from ⟨Q[0]"),
     "`D.decode` is called `from Q[…]`, and `D` pulls from `P`"),
    # "only a link without an entry takes one"
    ("queue L[1] : link { serve ps(1) ⟨latency 1; transfer (n) { run (n); } }\n" + D + B
     + "session { run d (1); }\n" + R, "`latency` on link `L`: only a link without an entry takes one"),
    # "a family of one is still a family: its entries are called D[j].decode (…)"
    ("queue P[1] : prefill { pool kv { cap 4; } serve fifo; prefill (prompt) { hold kv (1) { prefill (prompt); } } }"
     "\nqueue gw : gateway { route { ⟨P.prefill (prompt); } }\n"
     "workload { arrive batch(1); session { set prompt = 1; request gw; } }\n" + R,
     "`P.prefill`: `P` is a family of 1; index it, `P[i].prefill (…)`"),
    # the latency is "a number or a constant over lets": a wait that never ends is none
    (PQ + D_ + "D pull P latency ⟨inf share maxmin;\n" + GW, "the latency of `D pull P` is inf"),
]

REFUSED += [
    # §2: "Session attributes, let constants and the names the language supplies (the context variables,
    # inf) have names of their own: the linker rejects a program that gives two of them one name"
    (D + B + "session { ⟨set inf = 1; run d (1); }\n" + R, "`inf` is the language's infinity; an attribute needs "
     "another name"),
    (D + B + "session { ⟨set now = 1; run d (1); }\n" + R, "`now` is a context variable; an attribute needs another "
     "name"),
    ("let ⟨serial = 1;\n" + D + B + "session { run d (1); }\n" + R,
     "`let serial`: `serial` is a built-in attribute of a session"),
    ("let ⟨inf = 2;\n" + D + B + "session { run d (1); }\n" + R, "`let inf`: `inf` is the language's infinity"),
    (D + B + "session { ⟨set serial = 1; run d (1); }\n" + R, "`serial` is a built-in attribute; the language sets it"),
    # "Every name assigned by set or choose is a session attribute": not a built-in one
    ("stage d[2] : delay;\n" + B + "session { ⟨choose cached in 2 by (cached); run d[0] (1); }\n" + R,
     "`cached` is a built-in attribute; the language sets it"),
    # a pool, a stage and an attribute have names of their own
    ("pool d { cap 1; }\nstage ⟨d : delay;\n" + B + "session { run d (1); }\n" + R, "`d` is declared twice"),
    ("pool kv { cap 1; }\n" + D + B + "session { ⟨set kv = 1; run d (1); }\n" + R,
     "`kv` is a pool (at 1:6); an attribute needs another name"),
]

@pytest.mark.parametrize("src, message", REFUSED, ids=range(len(REFUSED)))
def test_an_error_the_spec_names_is_at_its_place(src, message):
    e = refused(src, message)
    lines = str(e).splitlines()
    # the source line quoted, and a caret under the place
    assert len(lines) >= 3 and lines[2].strip() == "^"
    assert lines[2].index("^") - 2 == e.col - 1


# ---------------------------------------------------------------------------------------------------------
# Round trips: the IR of `serq fmt`'s text is the program's; fmt is idempotent and keeps every comment
# ---------------------------------------------------------------------------------------------------------

ROUND_TRIPS = [
    # a pool family with every option, a step family reading member pools, keys, bindings, aggregates
    """pool kv[2] { cap 8; block 2; evict by (-size, age); preempt by (-admission, position) requeue tail; queue by (waited, serial); reserve held; spill cpu via pcie (size / 4) when (size >= 2); }
pool cpu[2] { cap 100; block 2; }
stage pcie[2] : ps(1);
stage E[2] : step { budget 8; cost 1 + 0.1 * tokens; chunk 4; serve by (decoding ? 0 : 1, -remaining); memory kv; }
workload { arrive poisson(1); hidden o; init { set o = 3; } }
session {
  choose j in 2 by (used(kv[j]), -j);
  hold kv[j] (2) reserve (4) reuse (2) at admission (h = min(cachedin(kv[j]), 2)) {
    run E[j] prefill (4 - cached) growing kv[j];
    run E[j] decode (o) growing kv[j];
  } cache (4 + o);
  observe m = max k in 2 (used(kv[k])) + sum k in 2 (member(kv[k]));
  branch with (0.5) { end; } else { set x = - -1 - !0; }
}
run { horizon 10; warmup 1; seed 3; }
""",
    # the two sides, defs of expressions and statements, serving forms, a renewal of a draw
    """stage prefill : fifo(2);
stage decode : ps(min(present, 4));
stage tool : delay;
def w(x) = x * 2;
def req(n) { prefill w(n); decode n / 2; }
workload { arrive renewal(~h2(2, 4)); init { set n = 3; } turn { set n = n + 1; } session { turn; loop { request; branch (turn_no >= 3) { end; } tool 0; turn; } } }
server { req(n); observe r = n; }
run { horizon 20; arrivals 5; }
""",
    # queues: a gateway, a prefill family leasing its KV, a decode family of one pulling it
    """let NP = 2;
let bs = 4;
def reusable(x, b) = floor((x - 1) / b) * b;
queue gw : gateway { route { choose i in NP by (holders(P[i].kv)); P[i].prefill (prompt); D[0].decode (prompt) from P[i]; } }
queue P[NP] : prefill {
  pool reqs { cap 2; admit via P; }
  pool kv { cap 64; block bs; evict lru; preempt lifo; }
  serve step { budget 16; cost 1; memory kv; }
  nic ps(100);
  prefill (prompt) {
    hold reqs (1), kv (min(prompt, hit + budget_left(P))) reserve (prompt) at admission (hit = min(cachedin(kv), reusable(prompt, bs))) {
      set c = cached;
      prefill (prompt - c) growing kv;
    } cache (prompt) lease kv (inf);
  }
}
queue D[1] : decode {
  pool reqs { cap 2; admit via D; }
  pool kv { cap 64; block bs; evict lru; preempt lifo; }
  serve step { budget 16; cost 1; memory kv; }
  nic ps(100);
  decode (prompt) from src {
    hold kv (prompt) reserve (prompt), reqs (1) {
      transfer (prompt) from src to kv (prompt - 1);
      decode on D (o) growing kv;
    } cache (prompt + o);
  }
}
D pull P latency 0.1 share maxmin;
workload { arrive batch(2); hidden o; session { set prompt = 8; set o = 3; request gw; observe t = now; } }
run { horizon 100; }
""",
    # comments at the end of lines, alone on lines, between a header and its block, after the last item
    """pool kv { cap 10; // cap
  block 2; // block
}
stage d : delay; // a delay
workload { arrive batch(1); } // wl
session {
  // first
  hold kv (1) // header
  { // open
    run d (1); // run
  } // close
  cache (1); // cache
  observe x = 1 + // plus
    2 * // times
    3;
  branch (serial == 0) { run d (1); } // then
  else { run d (2); } // else
  // last in the block
}
// before the run block
run { horizon 1; } // end
// the last line""",
    # several items on a line, unary operators, numbers in every form
    """let a = 1; let b = a * 2; // two on a line
stage d : delay; stage e : fifo(b);
workload { arrive batch(1); } session { set x = -2; set y = - - x; set z = !!x; set w = 2 - -x; set v = x ? -1 : 1; set n = 1e3 + .5 + 1. + 1e-3; run d (a); run e (b); } run { horizon 1; }
""",
]
ROUND_TRIPS += [
    # the remaining options and statements: evict lru, preempt none, queue fifo, a spill to named members,
    # share bottleneck, a gauge's aggregate, arrive none, hidden, serve exclusive prefill, grow, load,
    # release, drop, a lease, a run over two stages, loop and turn
    """let N = 2;
pool kv[N] { cap 16; block 2; evict lru; preempt none; queue fifo; spill cpu[1] via pcie[1] (size) when (waiting == 0); }
pool cpu[N] { cap 32; }
pool slots { cap 4; }
stage pcie[N] : ps(1);
stage egress[N] : ps(2);
stage ingress[N] : ps(2);
stage E[N] : step { budget 8; cost 1; serve exclusive prefill; memory kv; }
stage think : delay;
share bottleneck;
gauge full = max k in N (free(kv[k]) == 0);
workload { arrive none; hidden a, b; init { set a = 1; set b = 2; } }
session {
  choose j in N by (used(kv[j]));
  hold slots (1), kv[j] (2) reserve (4) {
    run E[j] prefill (2) growing kv[j];
    grow kv[j] (2);
    load kv[j] (1);
    run egress[0], ingress[1] (1);
    release kv[j];
  } cache (2);
  hold kv[j] (2) { drop kv[j]; run think (b); } lease kv[j] (3);
  release kv[j];
  loop { branch (turn_no > 2) { end; } else { run think (a); turn; } }
}
run { horizon 10; warmup 0; seed 7; }
""",
    # serving forms on named stages and on a member of an array
    """stage prefill : fifo;
stage decode[2] : fifo;
stage tool : delay;
workload { arrive poisson(0.5); }
session { set k = 3; prefill on prefill (k); decode[k % 2] k; tool 0.5; observe done = now; }
run { horizon 10; }
""",
]


@pytest.mark.parametrize("src", ROUND_TRIPS, ids=range(len(ROUND_TRIPS)))
def test_fmt_keeps_the_ir_and_the_comments(src):
    want = ir_bytes(compile_src(src))
    formatted = format_source(src)
    assert ir_bytes(compile_src(formatted)) == want
    assert format_source(formatted) == formatted
    # every comment kept, in order
    comments = [line.split("//", 1)[1].strip() for line in src.splitlines() if "//" in line]
    assert [line.split("//", 1)[1].strip() for line in formatted.splitlines() if "//" in line] == comments


# ---------------------------------------------------------------------------------------------------------
# Sugar has the IR of the kernel written by hand
# ---------------------------------------------------------------------------------------------------------

SUGAR = [
    # §3, Branching: "branch with (p) … is sugar the parser rewrites to branch (~bernoulli(p))"
    (D + B + "session { branch with (0.25) { run d (1); } else { run d (2); } }\n" + R,
     D + B + "session { branch (~bernoulli(0.25)) { run d (1); } else { run d (2); } }\n" + R),
    # pool-reference.txt: "lifo: Shorthand for by (-admission) requeue head"; §3, Stages: "decode first is by
    # (decoding ? 0 : 1)"
    ("pool kv { cap 8; preempt lifo; }\nstage E : step { budget 4; cost 1; serve decode first; memory kv; }\n" + B
     + "session { hold kv (1) { run E decode (3) growing kv; } }\n" + R,
     "pool kv { cap 8; preempt by (-admission) requeue head; }\n"
     "stage E : step { budget 4; cost 1; serve by (decoding ? 0 : 1); memory kv; }\n" + B
     + "session { hold kv (1) { run E decode (3) growing kv; } }\n" + R),
    # §3, Stages: "admission (… the default) is by with no keys"; §2, Which stage: on a step engine a form
    # gets the role's mode; growing passes through
    ("pool kv { cap 8; }\nstage E : step { budget 4; cost 1; serve admission; }\n" + B
     + "session { hold kv (1) { prefill 3 growing kv; decode 2; } }\n" + R,
     "pool kv { cap 8; }\nstage E : step { budget 4; cost 1; }\n" + B
     + "session { hold kv (1) { run E prefill (3) growing kv; run E decode (2); } }\n" + R),
    # "transfer (X) from P to Q (n); run link (X); load Q (n); release P;"
    ("pool p { cap 8; }\npool q { cap 8; }\nstage link : ps(1);\n" + B
     + "session { hold p (2) { run link (0); } lease p (inf); hold q (2) { transfer (1) from p to q (2); } cache (2); }\n"
     + R,
     "pool p { cap 8; }\npool q { cap 8; }\nstage link : ps(1);\n" + B
     + "session { hold p (2) { run link (0); } lease p (inf); hold q (2) { run link (1); load q (2); release p; } "
       "cache (2); }\n" + R),
    # §3, at admission: the bindings substituted into the header, a later one seeing the earlier ones
    ("pool kv { cap 10; }\n" + D + B + "session { set m = 2; hold kv (h + 1) reserve (g * 2) at admission (h = "
     "min(cachedin(kv), m), g = h + 1) { run d (1); } cache (3); }\n" + R,
     "pool kv { cap 10; }\n" + D + B + "session { set m = 2; hold kv (min(cachedin(kv), m) + 1) reserve "
     "((min(cachedin(kv), m) + 1) * 2) { run d (1); } cache (3); }\n" + R),
    # program-reference.txt, def: "a program with a def has the IR of the one written out"; an argument that
    # is not a reference "is put in inside parentheses"
    (D + "def w(a, b) = a * b + 1;\ndef step2(x) { run d (w(x, 2)); observe o = x; }\n" + B
     + "session { set y = 3; step2(y); step2(y + 1); }\n" + R,
     D + B + "session { set y = 3; run d ((y) * (2) + 1); observe o = y; run d ((y + 1) * (2) + 1); "
     "observe o = y + 1; }\n" + R),
    # §2, serving forms: "prefill[j] W; run prefill[j] (W);"
    ("stage prefill[2] : fifo;\n" + B + "session { choose j in 2 by (queue(prefill[j])); prefill[j] 3; }\n" + R,
     "stage prefill[2] : fifo;\n" + B + "session { choose j in 2 by (queue(prefill[j])); run prefill[j] (3); }\n"
     + R),
    # §2, aggregates: "the linker writes the terms out with j = 0 … n-1"
    (D + B + "session { observe m = max k in 3 (k * 2) + sum k in 2 (k + 1) + min k in 2 (3 - k); run d (1); }\n"
     + R,
     D + B + "session { observe m = max(max(0 * 2, 1 * 2), 2 * 2) + ((0 + 1) + (1 + 1)) + min(3 - 0, 3 - 1); "
     "run d (1); }\n" + R),
    # program-reference.txt, server: "The parser splices the block in place of request;"
    (D + "workload { arrive batch(1); init { set k = 1; } session { request; set k = k + 1; request; } }\n"
     "server { run d (k); observe o = k; }\n" + R,
     D + "workload { arrive batch(1); init { set k = 1; } }\n"
     "session { run d (k); observe o = k; set k = k + 1; run d (k); observe o = k; }\n" + R),
]


@pytest.mark.parametrize("sugar, kernel", SUGAR, ids=range(len(SUGAR)))
def test_sugar_has_the_ir_of_its_kernel(sugar, kernel):
    assert ir_bytes(compile_src(sugar)) == ir_bytes(compile_src(kernel))


SERQ = str(Path(sys.executable).parent / "serq")


@pytest.mark.parametrize("src", [ROUND_TRIPS[0], ROUND_TRIPS[1]], ids=["pools", "two_sides"])
def test_serq_ir_of_an_ir_file_is_that_file(tmp_path, src):
    """`serq ir p.sq > p.ir.json`, then `serq ir p.ir.json`: the same bytes (the IR is the program's definition)."""
    (tmp_path / "p.sq").write_text(src)
    first = subprocess.run([SERQ, "ir", "p.sq"], capture_output=True, cwd=tmp_path, timeout=60,
                           stdin=subprocess.DEVNULL)
    assert first.returncode == 0, first.stderr
    (tmp_path / "p.ir.json").write_bytes(first.stdout)
    second = subprocess.run([SERQ, "ir", "p.ir.json"], capture_output=True, cwd=tmp_path, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout


def _without_places(node):
    """An AST's JSON without the places of its nodes (``pos``, ``name_pos``, …, and a run block field's
    ``"line:col"``), which formatting moves."""
    if isinstance(node, dict):
        return {k: _without_places(v) for k, v in node.items() if k != "pos" and not k.endswith("_pos")}
    if isinstance(node, list):
        return [_without_places(v) for v in node if not (isinstance(v, str) and re.fullmatch(r"\d+:\d+", v))]
    return node


@pytest.mark.parametrize("desugar", [False, True], ids=["ast", "desugared"])
@pytest.mark.parametrize("src", ROUND_TRIPS, ids=range(len(ROUND_TRIPS)))
def test_serq_ast_of_the_formatted_text_is_the_programs(tmp_path, serq_in_process, monkeypatch, src, desugar):
    """`serq ast` (and `serq ast --desugar`) of `serq fmt`'s text: the program's AST, its places aside. The
    first program's trees come from a `serq` child process, as a shell runs it; the others' from serq.cli.main
    in the test's process (serq_in_process), in the same folder, which prints the same text."""
    (tmp_path / "p.sq").write_text(src)
    (tmp_path / "f.sq").write_text(format_source(src))
    flags = ["--desugar"] if desugar else []
    trees = []
    monkeypatch.chdir(tmp_path)
    for name in ("p.sq", "f.sq"):
        if src is ROUND_TRIPS[0]:
            r = subprocess.run([SERQ, "ast", *flags, name], capture_output=True, cwd=tmp_path, timeout=60,
                               stdin=subprocess.DEVNULL)
        else:
            r = serq_in_process("ast", *flags, name)
        assert r.returncode == 0, r.stderr
        trees.append(_without_places(json.loads(r.stdout)))
    assert trees[0] == trees[1]
    assert trees[0]  # a program of items, not an empty list
