"""language.txt §2 and §3, round 46: the equivalences the spec states that the earlier rounds' sugar modules
(test_conformance_round43_sugar, round44, round45, test_spec_fragments) did not hold, each pair compiling to the
same IR byte for byte (spans left out).

* "blocksize(p) (the pool's block, folded at link time)": in a `let`, a `set`, a hold's units and a work, a
  pool with a block and one without (1).
* "max j in n (e), min j in n (e), sum j in n (e) (n a number, a constant's name or a parenthesised constant
  expression; the linker writes the terms out with j = 0 … n-1)": `max` and `min` over a `let`'s name and a
  parenthesised constant are the calls written out. (`sum` is one flat node, the IR's `Call` `sum`, whose left
  fold is the chain's, a departure docs/language.md states: its forms over `2`, `N` and `(N + 1 - 1)` are one
  IR, the last test.)
* The serving table's `[ '[' expr ']' | on STAGE ]` of every form: `prefill[j] W`, `transfer[i] (X) from P to
  Q (n)` (run link[i] (X); load Q (n); release P;), `decode[j] W`, `tool[j] Z` on role arrays of plain stages,
  and `transfer on S (X) …`, `tool on S Z` naming a plain stage; `branch (e) { … }` is the branch with an
  empty `else` (`[ else block ]`).
* Queues: "a family of one is still a family … A reference to a member's pool or stage (holders(D[j].kv)) is
  the kernel's array reference, which at size one also takes D.kv", a family whose size is a `let` (`queue
  D[ND]`); "run (X) with no stage names the queue's own, and a serving form with no on finds it", `self` in
  an entry of a family.
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes

EQUIVALENT = [
    ("blocksize_is_folded_at_link_time", """
let b2 = blocksize(kv) * 2;
pool kv { cap 64; block 16; }
pool m { cap 8; }
stage svc : fifo;
workload { arrive poisson(1); }
session { set x = blocksize(kv) + blocksize(m); hold kv (blocksize(kv)) { run svc (b2 / 32); } observe y = x; end; }
run { horizon 10; }
""", """
let b2 = 16 * 2;
pool kv { cap 64; block 16; }
pool m { cap 8; }
stage svc : fifo;
workload { arrive poisson(1); }
session { set x = 16 + 1; hold kv (16) { run svc (b2 / 32); } observe y = x; end; }
run { horizon 10; }
"""),
    ("aggregates_over_a_constants_name_or_a_parenthesised_constant", """
let N = 2;
pool kv[N] { cap 8; }
stage svc : fifo;
workload { arrive poisson(1); }
session { choose j in N by (used(kv[j])); observe a = max k in N (used(kv[k])); observe b = max k in (N + 1 - 1) (free(kv[k])); observe c = min k in (2) (holders(kv[k])); hold kv[j] (1) { run svc (1); } end; }
run { horizon 10; }
""", """
let N = 2;
pool kv[N] { cap 8; }
stage svc : fifo;
workload { arrive poisson(1); }
session { choose j in N by (used(kv[j])); observe a = max(used(kv[0]), used(kv[1])); observe b = max(free(kv[0]), free(kv[1])); observe c = min(holders(kv[0]), holders(kv[1])); hold kv[j] (1) { run svc (1); } end; }
run { horizon 10; }
"""),
    ("serving_forms_on_role_arrays_transfer_tool_and_decode_indexed", """
stage prefill[2] : fifo;
stage decode[2] : fifo;
stage tool[2] : delay;
stage link[2] : ps(10);
pool p { cap 8; }
pool q { cap 8; }
workload { arrive poisson(1); }
session {
  choose j in 2 by (queue(prefill[j]));
  hold p (1) { prefill[j] 2; } cache (1) lease p (inf);
  hold q (1) { transfer[1 - j] (3) from p to q (1); decode[j] 4; }
  tool[j] 5;
  end;
}
run { horizon 10; }
""", """
stage prefill[2] : fifo;
stage decode[2] : fifo;
stage tool[2] : delay;
stage link[2] : ps(10);
pool p { cap 8; }
pool q { cap 8; }
workload { arrive poisson(1); }
session {
  choose j in 2 by (queue(prefill[j]));
  hold p (1) { run prefill[j] (2); } cache (1) lease p (inf);
  hold q (1) { run link[1 - j] (3); load q (1); release p; run decode[j] (4); }
  run tool[j] (5);
  end;
}
run { horizon 10; }
"""),
    ("transfer_and_tool_on_a_named_plain_stage_and_a_branch_without_else", """
stage wire : ps(10);
stage svc : fifo;
pool p { cap 8; }
pool q { cap 8; }
workload { arrive poisson(1); }
session {
  hold p (2) { run svc (1); } cache (2) lease p (inf);
  hold q (2) { transfer on wire (3) from p to q (2); tool on svc 1; }
  branch (serial % 2) { run svc (1); }
  end;
}
run { horizon 10; }
""", """
stage wire : ps(10);
stage svc : fifo;
pool p { cap 8; }
pool q { cap 8; }
workload { arrive poisson(1); }
session {
  hold p (2) { run svc (1); } cache (2) lease p (inf);
  hold q (2) { run wire (3); load q (2); release p; run svc (1); }
  branch (serial % 2) { run svc (1); } else { }
  end;
}
run { horizon 10; }
"""),
    ("a_family_of_one_named_without_its_index", """
let ND = 1;
queue D[ND] : decode {
  pool kv { cap 100; admit via D; }
  serve step { budget 8; cost 1; memory kv; }
  decode (prompt) { hold kv (prompt) { decode (1) growing kv; } }
}
stage svc : fifo;
workload { arrive poisson(1); }
session { set prompt = 4; observe h = holders(D.kv) + budget_left(D); D[0].decode (prompt); end; }
gauge g = used(D.kv);
run { horizon 10; }
""", """
let ND = 1;
queue D[1] : decode {
  pool kv { cap 100; admit via D; }
  serve step { budget 8; cost 1; memory kv; }
  decode (prompt) { hold kv (prompt) { decode (1) growing kv; } }
}
stage svc : fifo;
workload { arrive poisson(1); }
session { set prompt = 4; observe h = holders(D[0].kv) + budget_left(D[0]); D[0].decode (prompt); end; }
gauge g = used(D[0].kv);
run { horizon 10; }
"""),
    ("a_queues_own_stage_by_run_and_serving_forms_without_on", """
queue S[2] : prefill {
  pool slots { cap 2; }
  serve fifo (2);
  prefill (prompt) { hold slots (1) { run (prompt / 2); prefill prompt; decode (self + 1); } }
}
workload { arrive poisson(1); }
session { set prompt = 4; choose j in 2 by (queue(S[j])); S[j].prefill (prompt); end; }
run { horizon 10; }
""", """
queue S[2] : prefill {
  pool slots { cap 2; }
  serve fifo (2);
  prefill (prompt) { hold slots (1) { run S (prompt / 2); prefill on S (prompt); decode on S (self + 1); } }
}
workload { arrive poisson(1); }
session { set prompt = 4; choose j in 2 by (queue(S[j])); S[j].prefill (prompt); end; }
run { horizon 10; }
"""),
]


@pytest.mark.parametrize("sugar, kernel", [c[1:] for c in EQUIVALENT], ids=[c[0] for c in EQUIVALENT])
def test_the_sugar_compiles_to_the_kernel_it_means(sugar, kernel):
    assert ir_bytes(compile_src(sugar, sets={}, defs={})) == ir_bytes(compile_src(kernel, sets={}, defs={}))


def test_a_changed_kernel_is_another_ir():
    # (the comparison can fail: the same pairs with one number of the kernel changed differ)
    for _name, sugar, kernel in EQUIVALENT:
        other = kernel.replace("horizon 10", "horizon 11")
        assert ir_bytes(compile_src(sugar, sets={}, defs={})) != ir_bytes(compile_src(other, sets={}, defs={}))


SUM = """let N = 2;
pool kv[N] { cap 8; }
stage svc : fifo;
workload { arrive poisson(1); }
session { observe s = sum k in COUNT (free(kv[k]) * (k + 1)); hold kv[0] (1) { run svc (1); } end; }
run { horizon 10; }
"""


def test_a_sum_over_a_number_a_name_or_a_parenthesised_constant_is_one_ir():
    irs = {ir_bytes(compile_src(SUM.replace("COUNT", n), sets={}, defs={})) for n in ("2", "N", "(N + 1 - 1)")}
    assert len(irs) == 1
