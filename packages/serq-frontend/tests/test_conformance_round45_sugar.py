"""language.txt §2, round 45: whole programs a peer would write with the sugar the spec lists, each compiling to
the IR of the kernel program the spec says it stands for (byte for byte, spans left out).

* The two sides: "request; runs the server once. The parser splices the server's statements in its place";
  the server's `hold … at admission (hit = …)` ("The bindings are substituted into the header's expressions
  by the parser … a program that uses the clause has the IR of the one that inlines by hand"), a `def` of an
  expression (program-reference.txt: "The AST and the IR hold the expansion"), `prefill`/`decode` on a step
  engine ("run E prefill (T)"), `branch with (p)` ("sugar the parser rewrites to branch (~bernoulli(p))"),
  `tool Z` ("run tool (Z)"), `preempt lifo` (pool-reference.txt: "Shorthand for by (-admission) requeue
  head") and `serve decode first` ("decode first is by (decoding ? 0 : 1); the IR knows only by"), all in
  one program modelled on the spec's two-sided vLLM example.
* A statement definition whose body holds serving forms ("a serving form in it finds its stage at the use"):
  `prefill[j] W` on an array of fifo stages ("run prefill[j] (W)"), and `transfer (X) from P to Q (n)` ("run
  link (X); load Q (n); release P;") taking a lease.
* `at admission` bindings that read each other and one the body reads (its `set` at the body's top), and
  `request;` at two depths.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes

EQUIVALENT = [
    ("the_two_sided_vllm_program_and_its_one_block_kernel", """
let bs = 4;
def reusable(x, b) = floor((x - 1) / b) * b;
pool reqs { cap 4; admit via engine; }
pool kv { cap 64; block bs; preempt lifo; }
stage engine : step { budget 8; cost 1; serve decode first; memory kv; }
stage tool : delay;
workload {
  arrive poisson(0.5);
  hidden o;
  init { set K = 0; }
  turn { set n = 4; set o = 3; }
  session {
    turn;
    loop {
      request;
      set K = prompt + o;
      branch with (0.5) { tool (~exp(1)); turn; } else { end; }
    }
  }
}
server {
  set prompt = K + n;
  set hitmax = reusable(prompt, bs);
  hold reqs (1), kv (min(prompt, hit + budget_left(engine)))
        at admission (hit = min(cachedin(kv), hitmax)) {
    set c = cached;
    prefill (prompt - c) growing kv;
    decode (o - 1) growing kv;
  } cache (prompt + o);
}
run { horizon 50; }
""", """
let bs = 4;
pool reqs { cap 4; admit via engine; }
pool kv { cap 64; block bs; preempt by (-admission) requeue head; }
stage engine : step { budget 8; cost 1; serve by (decoding ? 0 : 1); memory kv; }
stage tool : delay;
workload {
  arrive poisson(0.5);
  hidden o;
  init { set K = 0; }
  turn { set n = 4; set o = 3; }
}
session {
  turn;
  loop {
    set prompt = K + n;
    set hitmax = floor((prompt - 1) / bs) * bs;
    hold reqs (1), kv (min(prompt, min(cachedin(kv), hitmax) + budget_left(engine))) {
      set c = cached;
      run engine prefill (prompt - c) growing kv;
      run engine decode (o - 1) growing kv;
    } cache (prompt + o);
    set K = prompt + o;
    branch (~bernoulli(0.5)) { run tool (~exp(1)); turn; } else { end; }
  }
}
run { horizon 50; }
"""),
    ("a_statement_definition_of_serving_forms_and_a_transfer_taking_a_lease", """
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
  set w = 3;
  hold p (4) { turnaround(j, w); } cache (4) lease p (inf);
  hold q (4) {
    transfer (2) from p to q (3);
    decode 1;
  } cache (4);
}
run { horizon 50; }
""", """
pool p { cap 10; }
pool q { cap 10; }
stage prefill[2] : fifo;
stage link : ps(1);
stage decode : delay;
stage tool : delay;
workload { arrive batch(3); }
session {
  choose j in 2 by (queue(prefill[j]));
  set w = 3;
  hold p (4) { run prefill[j] (w); run tool (w / 2); } cache (4) lease p (inf);
  hold q (4) {
    run link (2);
    load q (3);
    release p;
    run decode (1);
  } cache (4);
}
run { horizon 50; }
"""),
    # §3, at admission: "The bindings are substituted into the header's expressions by the parser … A later
    # binding sees the earlier ones", and "One the body reads is set at its top, set known = e;" (e with the
    # earlier bindings substituted: the body's set reads only attributes and constants).
    ("at_admission_bindings_that_read_each_other_and_one_the_body_reads", """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session { set prompt = 3; hold kv (a + b) at admission (a = prompt, b = a * 2) { observe y = b; run d (b); } }
run { horizon 10; }
""", """
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session { set prompt = 3; hold kv (prompt + prompt * 2) { set b = prompt * 2; observe y = b; run d (b); } }
run { horizon 10; }
"""),
    # The two sides: "The parser splices the server's statements in its place — at any depth, as often as it
    # is written".
    ("request_spliced_at_every_depth_as_often_as_written", """
stage d : delay;
workload { arrive batch(2); session { request; branch (serial == 0) { loop { request; end; } } } }
server { set t0 = now; run d (1); observe r = now - t0; }
run { horizon 10; }
""", """
stage d : delay;
workload { arrive batch(2); }
session {
  set t0 = now; run d (1); observe r = now - t0;
  branch (serial == 0) { loop { set t0 = now; run d (1); observe r = now - t0; end; } }
}
run { horizon 10; }
"""),
]


@pytest.mark.parametrize("sugar, kernel", [c[1:] for c in EQUIVALENT], ids=[c[0] for c in EQUIVALENT])
def test_sugar_compiles_to_the_kernel_it_means(sugar, kernel):
    assert ir_bytes(compile_src(sugar, sets={}, defs={})) == ir_bytes(compile_src(kernel, sets={}, defs={}))


def test_the_kernels_preemption_order_is_what_lifo_means():
    """The comparison can fail: `preempt lifo` is not `preempt by (admission)` (the first admitted), nor
    `requeue tail`."""
    sugar = EQUIVALENT[0][1]
    for other in ("preempt by (admission) requeue head;", "preempt by (-admission) requeue tail;"):
        kernel = EQUIVALENT[0][2].replace("preempt by (-admission) requeue head;", other)
        assert ir_bytes(compile_src(sugar, sets={}, defs={})) != ir_bytes(compile_src(kernel, sets={}, defs={}))
