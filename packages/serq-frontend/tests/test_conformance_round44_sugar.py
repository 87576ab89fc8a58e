"""language.txt §2 (Expressions, The serving vocabulary, Queues) and program-reference.txt's `def`, round 44: sugar
in the positions the earlier rounds left out, each compiling to the IR of the kernel program the spec says it
means (byte for byte, spans left out).

* Expressions: "aggregates over an index, max j in n (e), min j in n (e) … the linker writes the terms out with
  j = 0 … n-1, so max k in 2 (used(kv[k])) is max(used(kv[0]), used(kv[1]))", in every place an expression
  stands: a queue key, a step stage's budget, cost and serve key, a `choose` key, a hold's units, an observe,
  nested, and over a definition's use.
* Queues: "latency x on a link's serve is the wait before such a transfer: a delay stage L.latency of the
  link's own, which every transfer on naming the link runs first, one wait per link named, in the order
  named", with members of link families chosen by a computed index.
* Queues: "The workload names its entry point with request gw; … then expands its route at the request site",
  from a statement definition used at two depths, two gateways side by side.
* The serving vocabulary: "prefill[j] W; … run prefill[j] prefill (T); when the array is step engines", "prefill
  on P[j] (W); … run P[j] prefill (T); when P is a step engine".
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes

pytestmark = pytest.mark.timeout(120)

EQUIVALENT = [
    ("aggregates_in_every_place_an_expression_stands", """
let N = 2;
pool kv[2] { cap 10; }
pool reqs { admit via E; queue by (max k in N (used(kv[k])), min k in (N) (queued(kv[k]))); }
stage E : step { budget max k in (N + 1) (k + 1); cost 1 + min k in N (used(kv[k])) * 0;
                 serve by (max k in 2 (k * decoding)); }
stage s[2] : delay;
workload { arrive batch(1); }
session {
  choose j in N by (max k in N (queue(s[k])) + j, max k in N (holders(kv[k])));
  hold reqs (1), kv[j] (1 + max k in N (used(kv[k]))) { prefill (1); }
  observe x = max k in N (min i in 2 (i + k));
}
""", """
let N = 2;
pool kv[2] { cap 10; }
pool reqs { admit via E; queue by (max(used(kv[0]), used(kv[1])), min(queued(kv[0]), queued(kv[1]))); }
stage E : step { budget max(0 + 1, 1 + 1, 2 + 1); cost 1 + min(used(kv[0]), used(kv[1])) * 0;
                 serve by (max(0 * decoding, 1 * decoding)); }
stage s[2] : delay;
workload { arrive batch(1); }
session {
  choose j in N by (max(queue(s[0]), queue(s[1])) + j, max(holders(kv[0]), holders(kv[1])));
  hold reqs (1), kv[j] (1 + max(used(kv[0]), used(kv[1]))) { run E prefill (1); }
  observe x = max(min(0 + 0, 1 + 0), min(0 + 1, 1 + 1));
}
"""),
    ("transfer_on_link_family_members_waits_each_links_latency_in_the_order_named", """
queue L[2] : link { serve ps(2) latency 1; }
queue M[2] : link { serve ps(3) latency 2; }
share bottleneck;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(2); }
session {
  choose i in 2 by (queue(L[i]));
  hold p (4) { hold q (4) { transfer on M[1 - i], L[i] (4) from p to q (2); } }
}
""", """
queue L[2] : link { serve ps(2) latency 1; }
queue M[2] : link { serve ps(3) latency 2; }
share bottleneck;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(2); }
session {
  choose i in 2 by (queue(L[i]));
  hold p (4) {
    hold q (4) { run M.latency[1 - i] (2); run L.latency[i] (1); run M[1 - i], L[i] (4); load q (2); release p; }
  }
}
"""),
    ("two_gateways_requested_from_a_definition_at_two_depths", """
stage prefill : delay;
stage decode : delay;
pool slots { cap 4; }
queue gw : gateway { route { hold slots (1) { prefill 1; decode 2; } } }
queue gx : gateway { route { decode 3; } }
def twice() { request gw; request gx; }
workload { arrive batch(1); session { twice(); loop { branch (turn_no > 2) { end; } turn; twice(); } } }
""", """
stage prefill : delay;
stage decode : delay;
pool slots { cap 4; }
workload { arrive batch(1); }
session {
  hold slots (1) { run prefill (1); run decode (2); }
  run decode (3);
  loop {
    branch (turn_no > 2) { end; }
    turn;
    hold slots (1) { run prefill (1); run decode (2); }
    run decode (3);
  }
}
"""),
    ("aggregates_over_a_definition_in_serving_forms_on_a_family_of_engines", """
let N = 3;
def f(x) = x * 2 + 1;
stage E[3] : step { budget 8; cost 1; }
workload { arrive batch(1); }
session {
  choose j in N by (max k in N (f(k) * queue(E[k])) - f(j), j);
  prefill[j] (max k in 2 (f(k)));
  decode on E[2 - j] (min k in N (f(k)));
}
""", """
let N = 3;
stage E[3] : step { budget 8; cost 1; }
workload { arrive batch(1); }
session {
  choose j in N by (max((0 * 2 + 1) * queue(E[0]), (1 * 2 + 1) * queue(E[1]), (2 * 2 + 1) * queue(E[2])) - (j * 2 + 1), j);
  run E[j] prefill (max(0 * 2 + 1, 1 * 2 + 1));
  run E[2 - j] decode (min(0 * 2 + 1, 1 * 2 + 1, 2 * 2 + 1));
}
"""),
]


@pytest.mark.parametrize("sugar, kernel", [c[1:] for c in EQUIVALENT], ids=[c[0] for c in EQUIVALENT])
def test_sugar_compiles_to_the_kernel_it_means(sugar, kernel):
    assert ir_bytes(compile_src(sugar, sets={}, defs={})) == ir_bytes(compile_src(kernel, sets={}, defs={}))


def test_the_written_out_aggregate_is_not_the_same_as_another_order():
    """The equivalences above can fail: the written-out terms in another order are another IR."""
    a = "pool kv[2] { cap 10; }\nworkload { arrive batch(1); }\nsession { observe x = max k in 2 (used(kv[k])); }\n"
    b = a.replace("max k in 2 (used(kv[k]))", "max(used(kv[1]), used(kv[0]))")
    c = a.replace("max k in 2 (used(kv[k]))", "max(used(kv[0]), used(kv[1]))")
    assert ir_bytes(compile_src(a, sets={}, defs={})) != ir_bytes(compile_src(b, sets={}, defs={}))
    assert ir_bytes(compile_src(a, sets={}, defs={})) == ir_bytes(compile_src(c, sets={}, defs={}))
