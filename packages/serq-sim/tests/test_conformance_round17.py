"""Conformance of the queue sugar and the gateway at run time (language.txt §2, Queues): what an entry sets
is the queue's and what it observes the program's; a mark is one attribute of the request whichever member
set it; the `from` name as an index is the source member's; a queue that is a gateway and a decoder keeps
the session's names in its route and its own in its decode entry.

Each program is small and deterministic, its outcome worked out by hand in the docstring; `run` runs it on
the tier serQ picks and on the general engine (SERQ_SIM_TIER=general) and requires byte-identical reports.
Each test names the mutation of the implementation it was seen to catch."""

from __future__ import annotations

import pytest
from conform import pool, run, stage, vals

pytestmark = pytest.mark.timeout(60)

SETS_AND_MARKS = """
queue D[2] : decode {
  pool kv { cap 100; }
  serve fifo;
  decode (p) {
    hold kv (p) {
      set known = p + 10 * self;
      observe u = now;
      run (p);
      mark first_token;
    } cache (p);
  }
}
queue gw : gateway { route {
  set known = 1;
  set prompt = 2 + serial;
  D[serial].decode (prompt);
  observe u = known + 100 * D.known;
  set a = D.first_token;
  D[1 - serial].decode (1);
  observe f = a + 100 * D.first_token + 10000 * D.known;
} }
workload { arrive batch(2); session { request gw; observe back = known; } }
run { horizon 50; }
"""


def test_what_an_entry_sets_is_the_queues_what_it_observes_the_programs_and_a_mark_is_one_attribute(monkeypatch):
    """§2 Queues: "What the body sets is the queue's (D.known); what it observes is the program's; a moment
    the caller needs is mark first_token;, read afterwards as D.first_token — the request's attribute, so
    without a member index"; "The gateway is the exception on the session's side: its route … sets the ones
    the session reads back".

    s0 (prompt 2) on D[0], s1 (prompt 3) on D[1], both admitted at 0: the entry's `observe u = now` is 0 for
    both. D fifo: s0 [0, 2], s1 [0, 3]; D.known = 2 + 0 and 3 + 10; the route's own `known` stays 1, so the
    route's u (the same observe) is 1 + 100 · 2 = 201 at 2 and 1 + 1300 = 1301 at 3. Then each calls the
    other member with 1, whose hold is admitted at once (the entry's u: 2 and 3): s0 on D[1] waits for s1's
    [0, 3] and runs [3, 4]; s1 on D[0] runs [3, 4]: the mark is then 4 for both, a = 2 and 3, and D.known
    1 + 10 and 1 + 0: f = 2 + 400 + 110000 = 110402 and 3 + 400 + 10000 = 10403. The session reads back the
    route's `known`, 1.
    Mutation: an entry's sets left in the session's names (`Instance.local` returning the name) do not
    link (`D.known` is set nowhere); a route's sets renamed as an entry's (`gateway=False` for the route's
    expansion) leave the session's `observe back = known;` reading a name nothing sets.
    """
    r, o = run(SETS_AND_MARKS, monkeypatch)
    assert o["u"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 2.0, 201.0), (0, 2.0, 2.0), (1, 3.0, 1301.0),
                      (1, 3.0, 3.0)]
    assert o["f"] == [(0, 4.0, 110402.0), (1, 4.0, 10403.0)]
    assert vals(o["back"]) == [1.0, 1.0]
    assert (stage(r, "D", 0).completions, stage(r, "D", 1).completions) == (2, 2)


SOURCE_INDEX = """
stage link[2] : fifo;
queue P[2] : prefill {
  pool kv { cap 100; }
  serve delay;
  prefill (p) { hold kv (p) { run (1); } cache (p) lease kv (inf); }
}
queue D[2] : decode {
  pool kv { cap 100; }
  serve delay;
  decode (p) from src {
    hold kv (p) {
      transfer on link[src] (p) from src to kv (p);
      observe k = 10 * self + used(src);
      run (1);
    } cache (p);
  }
}
queue gw : gateway { route {
  set prompt = 2;
  P[serial % 2].prefill (prompt);
  D[1 - serial % 2].decode (prompt) from P[serial % 2];
  observe done = now;
} }
workload { arrive batch(3); session { request gw; } }
run { horizon 50; }
"""


def test_the_from_name_in_an_index_is_the_source_members_index(monkeypatch):
    """§2 Queues: "Inside the entry the from name is that pool, and in an index it is the source member's
    index"; a transfer is `run link (X); load Q (n); release P;` (§2 serving).

    s0 and s2 prefill on P[0], s1 on P[1] (delay, [0, 1]), each leasing 2. The reads go over link[src], the
    source's link: s0 and s2 on link[0] (fifo, work 2): s0 [1, 3], s2 [3, 5]; s1 on link[1] [1, 3]. After
    its read a session's lease is released: s0 at 3 reads used(P.kv[0]) = 2 (s2's lease), s1 at 3 reads
    used(P.kv[1]) = 0, s2 at 5 reads 0; 10 · self is 10 for D[1] (s0, s2) and 0 for D[0] (s1). Then D
    (delay) runs 1: done at 4, 4, 6. link[0]'s mean wait (0 + 2) / 2 = 1.
    Mutation: the from name in an index read as the decoder's own index (`self.index` for the source's in
    `Instance.var`) puts s0 and s2 on link[1] and s1 on link[0]: the completions are (1, 2)."""
    r, o = run(SOURCE_INDEX, monkeypatch)
    assert o["k"] == [(0, 3.0, 12.0), (1, 3.0, 0.0), (2, 5.0, 10.0)]
    assert o["done"] == [(0, 4.0, 4.0), (1, 4.0, 4.0), (2, 6.0, 6.0)]
    l0, l1 = stage(r, "link", 0), stage(r, "link", 1)
    assert (l0.completions, l1.completions, l0.wait, l1.wait) == (2, 1, 1.0, 0.0)


GATEWAY_DECODE = """
queue G : gateway, decode {
  pool kv { cap 10; }
  serve fifo;
  route { set x = 1; set prompt = 3; G.decode (prompt); observe y = x + 10 * G.x; }
  decode (p) { hold kv (p) { set x = p; run (p); } }
}
workload { arrive batch(2); session { request G; observe back = x; } }
run { horizon 50; }
"""


def test_a_gateway_that_decodes_keeps_the_sessions_names_in_its_route_and_its_own_in_the_entry(monkeypatch):
    """§2 Queues: a gateway's route "sets the ones the session reads back"; an entry's sets are the
    queue's (`G.x`), the route being the exception, not the queue's other entries. Both hold G.kv (3 of
    10) at 0; G fifo: s0 [0, 3], s1 [3, 6]; y = 1 + 10 · 3 = 31, and the session reads back the route's
    x = 1. Mutation: the decode entry expanded as the route is (`gateway=True` for every call of a
    gateway's entry) sets the session's x, so `G.x` is set nowhere and the program does not link."""
    r, o = run(GATEWAY_DECODE, monkeypatch)
    assert o["y"] == [(0, 3.0, 31.0), (1, 6.0, 31.0)]
    assert vals(o["back"]) == [1.0, 1.0]
    assert (stage(r, "G").completions, stage(r, "G").wait) == (2, 1.5)


NESTED_LEASE = """
queue N[2] : link { serve ps(10); transfer (n) { run (n); } }
queue P : prefill {
  pool reqs { cap 1; }
  pool kv { cap 100; }
  serve fifo;
  prefill (p) { hold reqs (1) { hold kv (p) { run (1); } cache (p) lease kv (inf); run (1); } }
}
queue D[2] : decode {
  pool kv { cap 100; }
  serve delay;
  decode (p) from src {
    hold kv (p) {
      N[self].transfer (p) from src to kv (p);
      observe r = now;
      run (1);
    } cache (p);
  }
}
queue gw : gateway { route {
  set prompt = 10;
  P.prefill (prompt);
  observe leased = used(P.kv);
  D[serial].decode (prompt) from P;
  observe done = now;
} }
workload { arrive batch(2); session { request gw; } }
run { horizon 50; }
"""


def test_a_lease_inside_an_enclosing_hold_is_the_one_a_from_takes_over_a_links_entry(monkeypatch):
    """§2 Queues: "from P[i] is the pool P's entry leases, and every entry of P must lease it on every way
    through it": a hold's body runs whole, so a lease in it is on every way through the entry (it was
    refused, "`P.prefill` leases nothing on some way through it"). "A link with a transfer (n) entry is
    called instead, nic[self].transfer (n) from src to kv (m);, and runs its body on its own stage."

    P.reqs holds one: s0 [0, 2] (P fifo: the inner hold's run [0, 1], its lease of 10, the outer run
    [1, 2]), s1 [2, 4]. At 2 s0 reads used(P.kv) = 10, its lease past both scopes; its decode on D[0] reads
    over N[0] (ps(10), 10 tokens: [2, 3]), loads D.kv and releases the lease: r = 3, done 4 (D delay 1). s1
    at 4 reads 10 (its own lease; s0's ended at 3), N[1] [4, 5], done 6. P.kv caches 10 from 3 and 20 from
    5 (s1's prefix beside s0's): (10 · 2 + 20 · 45) / 50 = 18.4; used 10 on [0, 3] and on [2, 5]: 1.2.
    Mutation: `leases_on_every_path` not looking into a hold's body refuses the program; an entry call's
    member taken as 0 (`Instance(…, 0, …)` in `QueueRewriter.call`) puts both reads on N[0]."""
    r, o = run(NESTED_LEASE, monkeypatch)
    assert o["leased"] == [(0, 2.0, 10.0), (1, 4.0, 10.0)]
    assert o["r"] == [(0, 3.0, 3.0), (1, 5.0, 5.0)]
    assert o["done"] == [(0, 4.0, 4.0), (1, 6.0, 6.0)]
    assert (stage(r, "N", 0).completions, stage(r, "N", 1).completions) == (1, 1)
    assert (stage(r, "N", 0).service, stage(r, "N", 1).service) == (1.0, 1.0)
    assert (pool(r, "P.kv").cached, pool(r, "P.kv").used) == (18.4, 1.2)


LEASE_MEMBER = """
stage link : delay;
queue P[2] : prefill {
  pool kv { cap 100; }
  serve delay;
  prefill (p) { hold kv (p) { run (1); } cache (p) lease kv (inf); }
}
queue D : decode {
  pool kv { cap 100; }
  serve delay;
  decode (p) from src { hold kv (p) { transfer on link (1) from src to kv (p); run (1); } cache (p); }
}
queue gw : gateway { route {
  set prompt = 5;
  P[0].prefill (prompt);
  D.decode (prompt) from P[FROM];
  observe u = used(P[0].kv) + 100 * used(P[1].kv);
} }
workload { arrive batch(1); session { request gw; } }
run { horizon 10; }
"""


@pytest.mark.parametrize("member, u, used, cached", [
    # the lease's member: the read releases it at 2, and its 5 are cached from then
    (0, 0.0, 5 * 2 / 10, 5 * 8 / 10),
    # another member, where the session leases nothing: the release there releases nothing (§3), and the
    # lease on P.kv[0] lasts to the session's end at 3, then is cached
    (1, 5.0, 5 * 3 / 10, 5 * 7 / 10),
])
def test_a_from_takes_the_lease_of_the_member_it_names(monkeypatch, member, u, used, cached):
    """§2 Queues: "from P[i] is the pool P's entry leases"; "its lease taken from D[j], as at any size"; §3:
    "A hold's lease m (t) keeps its allocation on m … until the session's release m, t seconds, or the
    session's end, and cache applies then"; "A session that holds and leases nothing on m releases
    nothing". The prefill leases 5 on P.kv[0] over [0, 1]; the read on `link` is [1, 2], D's run [2, 3],
    and the session ends at 3. Horizon 10. Mutation: `from P[i]` bound to member 0 whatever it names
    (the index dropped in `QueueRewriter.source`) gives the first row's figures to both."""
    r, o = run(LEASE_MEMBER.replace("FROM", str(member)), monkeypatch)
    assert o["u"] == [(0, 3.0, u)]
    pk0, pk1 = (next(p for p in r.result.pools if p.name == "P.kv" and p.index == i) for i in (0, 1))
    assert (pk0.used, pk0.cached) == (used, cached)
    assert (pk1.used, pk1.cached) == (0.0, 0.0)
