"""A fourth conformance audit of language.txt §2/§3 (and the in-scope additions of program-reference.txt)
against the frontend and the simulator, on the parts test_conformance_audit.py (the step engine),
test_conformance_audit2.py (pools, spills, finite runs), test_conformance_audit3.py (the workload, stages,
expressions, observes and gauges) and test_conformance_pd.py (one P/D path over queues) leave out:

(a) the two sides: `server { … }`, `request;` and `request NAME;`, gateways and their routes, what a server
    block (and a queue's entry, "the server's statements") may not contain, how a session's turns map to
    requests;
(b) KV transfers: the kernel's `transfer … from P to Q (n)` (`run link; load; release`), `release` and
    `load` inside a hold, link queues and their latency, the pull relation's errors, and flow networks
    under `share maxmin` and `share bottleneck` (rates computed by hand);
(c) families with routing: `choose` over members reading queue, used, holders and cachedin, `member(…)`,
    and computed member indices out of range as run-time errors naming the statement;
(d) `record` tables (docs/language.md: the spec has none): when a row is written, the warm-up keeping or
    leaving out whole rows by their send time, columns evaluated at once, one file per table.

Each program is small and deterministic and its outcome is worked out by hand in the comment above the
assertion; `run` runs it on the tier serQ picks and on the general engine (SERQ_SIM_TIER=general) and
requires the two reports to be byte-identical; each run-time error is checked on both tiers. The spec
sentence a test checks is quoted in its docstring; where the spec is silent the rule is docs/language.md's
and the docstring says so.

The defects this audit found are fixed, each where its rule lives: `request gw;` in a program without
queues got the linker's "`request` outside a workload's session"; a queue's entry or route accepted `turn;`,
`end;` and `request;`; a workload's session that requests nothing linked; max-min filling took a ps(inf)
stage for full (and went round for ever when every stage was inf), and a flow of infinite work ended with
another; a lease of a member the hold does not hold was linked and ignored; `member(X)` of an index past
the family gave the index; and `from Q` took one of several leased pools (by hash order in an error)."""

from __future__ import annotations

import msgspec
import pytest
import serq_frontend
import serq_ir
from conform import close, pool, refused, run, run_error, stage


def pool_at(report, name, index=None):
    return next(p for p in report.result.pools if p.name == name and p.index == index)


def ir_of(src: str) -> bytes:
    """The program's IR without source spans or the source's name: what the simulator runs."""
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    return serq_ir.encode(msgspec.structs.replace(prog, source=None), spans=False)


def rows(report, table=None) -> dict:
    """A record table's kept rows as ``{column: [values]}``."""
    return {k: v.tolist() for k, v in report.records(table, kind="numpy").items()}


# --- (a) the two sides -------------------------------------------------------------------------------------

SIDES = """
pool m { cap 5; }
stage s : fifo;
stage think : delay;
workload {
  arrive batch(2);
  init { set K = 0; }
  turn { set n = 1 + serial; }
  session {
    turn;
    loop {
      request;
      set K = prompt;
      branch (turn_no < 2) { run think (1); turn; } else { end; }
    }
  }
}
server {
  set prompt = K + n;
  hold m (prompt) { run s (prompt); }
  observe p = prompt;
}
run { horizon 10; }
"""

SIDES_ONE_BLOCK = """
pool m { cap 5; }
stage s : fifo;
stage think : delay;
workload {
  arrive batch(2);
  init { set K = 0; }
  turn { set n = 1 + serial; }
}
session {
  turn;
  loop {
    set prompt = K + n;
    hold m (prompt) { run s (prompt); }
    observe p = prompt;
    set K = prompt;
    branch (turn_no < 2) { run think (1); turn; } else { end; }
  }
}
run { horizon 10; }
"""


def test_request_runs_the_server_in_its_place_and_the_program_is_the_one_block_session(monkeypatch):
    """§2 The two sides: "request; runs the server once. The parser splices the server's statements in its
    place — at any depth, as often as it is written — so the AST, the IR and everything downstream see the
    one session they saw before." The session's side keeps the turns and the exit, the server the request's
    admission (pool m, cap 5) and its service (fifo s).

    n = 1 + serial at every turn; K starts at 0; prompt = K + n. s0 requests 1 at 0 (m 1, s [0, 1]); s1
    requests 2 at 0 (m 3, s waits for s0: [1, 3]). s0: p = 1 at 1, K = 1, thinks [1, 2], turn 2, prompt
    1 + 1 = 2: m 4 at 2, s [3, 5]. s1: p = 2 at 3, K = 2, thinks [3, 4], prompt 2 + 2 = 4: 2 + 4 > 5, waits
    until s0 releases at 5 (p = 2 there; s0 ends at turn 2); s [5, 9], p = 4 at 9."""
    assert ir_of(SIDES) == ir_of(SIDES_ONE_BLOCK)
    r, o = run(SIDES, monkeypatch)
    assert o["p"] == [(0, 1.0, 1.0), (1, 3.0, 2.0), (0, 5.0, 2.0), (1, 9.0, 4.0)]
    # m used: 3 on [0,1], 2 on [1,2], 4 on [2,3], 2 on [3,5], 4 on [5,9]: 29 / 10; s1 waited [4, 5]: queue
    # 0.1, mean wait of the 4 admissions 0.25
    m = pool(r, "m")
    assert (m.used, m.queue, m.wait, m.admissions) == (2.9, 0.1, 0.25, 4)
    # fifo s busy on [0, 9]; waits 0, 1 (s1 behind s0), 1 (s0's second at 2, served at 3), 0: mean 0.5;
    # services 1, 2, 2, 4
    s = stage(r, "s")
    assert (s.utilisation, s.completions, s.wait, s.service) == (0.9, 4, 0.5, 2.25)
    assert (r.result.arrivals, r.result.ended, r.result.turns) == (2, 2, 4)


def test_request_at_any_depth_as_often_as_written_and_through_a_definition(monkeypatch):
    """§2: the parser splices the server "at any depth, as often as it is written"; program-reference.txt
    def: a statement definition's body "is parsed where it stands", so a `request;` in a definition used in
    the workload's session is one more request. s0 requests twice in a row (at 0 and 1); s1 requests in a
    loop through `go();`, turns once and requests again (0 and 1), then ends."""
    two_sided = """
stage d : delay;
def go() { request; }
workload { arrive batch(2); session {
  branch (serial == 0) { request; request; } else { loop { go(); branch (turn_no >= 1) { end; } turn; } }
} }
server { observe at = now; run d (1); }
run { horizon 10; }
"""
    one_block = """
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { observe at = now; run d (1); observe at = now; run d (1); }
  else { loop { observe at = now; run d (1); branch (turn_no >= 1) { end; } turn; } }
}
run { horizon 10; }
"""
    assert ir_of(two_sided) == ir_of(one_block)
    _, o = run(two_sided, monkeypatch)
    assert o["at"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (0, 1.0, 1.0), (1, 1.0, 1.0)]


def test_a_turn_maps_to_the_requests_written_after_it(monkeypatch):
    """§2: `turn;` gives the "next turn's attributes (workload `turn`, trace)", and `request;` runs "the
    server block, once"; §3 Workload: "turn [runs] at every turn statement". A turn with two requests gives
    both the same attributes and turn number; the next `turn;` the next. turn_no counts the turn statements
    (docs/language.md), so the `turn` block of the first turn reads 1: n = 10 · turn_no + serial. A record
    in the server is a row per request, its `turn` column the session's turn_no (docs/language.md)."""
    r, _ = run("""
stage d : delay;
workload { arrive batch(2);
  turn { set n = 10 * turn_no + serial; }
  session { turn; request; request; run d (1); turn; request; end; } }
server { record req { n = n; } run d (1); }
run { horizon 10; }
""", monkeypatch)
    # each session: requests at 0 and 1 (turn 1), the client's run [2, 3], the request of turn 2 at 3
    assert rows(r) == {"session": [0, 1, 0, 1, 0, 1], "turn": [1, 1, 1, 1, 2, 2],
                       "time": [0.0, 0.0, 1.0, 1.0, 3.0, 3.0], "n": [10, 11, 10, 11, 20, 21]}
    assert r.result.turns == 4


SIDE_HEAD = "stage d : delay;\n"


@pytest.mark.parametrize("src, msg", [
    # §2, the table of the two sides: "the next turn, the exit — refused: a server is done with a request
    # when its block is"; "the request — refused: a server does not request itself"
    ("workload { arrive batch(1); session { request; } } server { turn; }",
     "`turn;` in a server: the next turn is the session's side"),
    ("workload { arrive batch(1); session { request; } } server { branch (1) { end; } }",
     "`end;` in a server: the exit is the session's side"),
    ("workload { arrive batch(1); session { request; } } server { request; }",
     "`request;` inside server: a server does not request itself"),
    # program-reference.txt def: "a statement body follows the rules of the block it is used in (no turn,
    # end or request in a server)"
    ("def nxt() { turn; } workload { arrive batch(1); session { request; } } server { nxt(); }",
     "`turn;` in a server: the next turn is the session's side"),
    # §2 stmt: `request ;` "the server block, once (workload `session` only)"
    ("workload { arrive batch(1); } session { request; }", "`request;` in a top-level session"),
    ("workload { arrive batch(1); init { request; } session { request; } } server { run d (1); }",
     "`request;` in the workload's `init` block"),
    ("workload { arrive batch(1); turn { request; } session { request; } } server { run d (1); }",
     "`request;` in the workload's `turn` block"),
    # §2: "The two forms are exclusive in one program; a workload's session without a server, or a server
    # that is never requested, is an error."
    ("workload { arrive batch(1); session { request; } }", "`request;` with no `server`"),
    ("workload { arrive batch(1); session { run d (1); } } server { run d (1); }",
     "a `server` that is never requested: the workload's session has no `request;`"),
    ("workload { arrive batch(1); } server { run d (1); }",
     "a `server` that is never requested: the workload has no `session` saying `request;`"),
    ("workload { arrive batch(1); } server { run d (1); } session { run d (1); }",
     "a top-level `session` and the two sides (a workload's `session` and a `server`) are exclusive"),
    ("workload { arrive batch(1); session { request; } } server { run d (1); } server { run d (2); }",
     "a second `server`: a program has one"),
    # a workload's session with neither a server nor a gateway: the same sentence (before, it linked as the
    # kernel's top-level session, and so did one next to a gateway it never requests)
    ("workload { arrive batch(1); session { run d (1); } }",
     "a workload's `session` with no `server` and no `request gw;`"),
    ("queue g : gateway { route { run d (1); } } workload { arrive batch(1); session { run d (1); } }",
     "a workload's `session` with no `server` and no `request gw;`"),
])
def test_what_the_two_sides_refuse(src, msg):
    assert refused(SIDE_HEAD + src).startswith(msg)


def test_gateways_coexist_route_where_requested_and_set_what_the_session_reads_back(monkeypatch):
    """§2 Queues: "The workload names its entry point with request gw; … then expands its route at the
    request site. Declarations may follow the workload, and several gateways may coexist; there is no
    default gateway." and "its route reads the request's attributes as a server does and sets the ones the
    session reads back (prompt)". "A gateway with a `serve` runs `run (w);` on its own stage"
    (docs/language.md). g1 (a delay) runs 1 for both at 0; g2 (fifo) doubles the prompt and runs 2: s0 on
    [1, 3], s1 on [3, 5]."""
    r, o = run("""
workload { arrive batch(2); session {
  request g1; observe p1 = prompt;
  request g2; observe p2 = prompt;
} }
queue g1 : gateway { serve delay; route { set prompt = 10 + serial; run (1); } }
queue g2 : gateway { serve fifo; route { set prompt = prompt * 2; run (2); } }
run { horizon 10; }
""", monkeypatch)
    assert o["p1"] == [(0, 1.0, 10.0), (1, 1.0, 11.0)]
    assert o["p2"] == [(0, 3.0, 20.0), (1, 5.0, 22.0)]
    g1, g2 = stage(r, "g1"), stage(r, "g2")
    assert (g1.completions, g1.utilisation) == (2, 0.1)
    assert (g2.completions, g2.utilisation, g2.wait) == (2, 0.4, 1.0)


def test_declaring_a_gateway_does_not_make_it_the_server(monkeypatch):
    """§2 Queues: "Declaring a gateway does not execute it or register it as the server. Bare request;
    retains its existing meaning: it targets a separate server { … } block"; the gateway's stage stays
    idle."""
    r, o = run("""
stage d : delay;
queue g : gateway { serve delay; route { run (5); } }
workload { arrive batch(1); session { request; observe t = now; } }
server { run d (3); }
run { horizon 10; }
""", monkeypatch)
    assert o["t"] == [(0, 3.0, 3.0)]
    assert (stage(r, "g").completions, stage(r, "d").completions) == (0, 1)


GW = "stage d : delay;\nqueue g : gateway { route { run d (1); } }\n"
PQ = ("queue P : prefill { pool kv { cap 10; } serve delay; prefill (p) { hold kv (p) { run (1); } BODY } }\n")


@pytest.mark.parametrize("src, msg", [
    # §2 Queues: "The parser checks that the target exists and plays that role"; "each gateway is a single
    # queue". Before, `request gw;` in a program that declares no queue fell through to the linker's
    # "`request` outside a workload's session", though it stood in the workload's session.
    ("stage d : delay;\nworkload { arrive batch(1); session { request gw; } }",
     "`request gw;`: no queue `gw` is declared"),
    (GW + "workload { arrive batch(1); session { request h; } }", "`request h;`: no queue `h` is declared"),
    (PQ.replace("BODY", "") + "workload { arrive batch(1); session { request P; } }",
     "`request P;`: queue `P` is no gateway (its roles: prefill)"),
    ("stage d : delay;\nqueue g[2] : gateway { route { run d (1); } }\n"
     "workload { arrive batch(1); session { request g; } }", "gateway `g` is a family; each gateway is a single queue"),
    # "Bare request; … targets a separate server { … } block and fails without one."
    (GW + "workload { arrive batch(1); session { request; } }", "`request;` with no `server`"),
    # `request gw;` only in the workload's session (docs/language.md, Queues); in `init` too, where a program
    # without queues was told of a `request;`
    ("stage d : delay;\nworkload { arrive batch(1); init { request gw; } session { run d (1); } }",
     "`request gw;` outside the workload's session"),
    (GW + "workload { arrive batch(1); session { request; } } server { request g; }",
     "`request g;` outside the workload's session"),
])
def test_what_a_gateway_request_refuses(src, msg):
    assert refused(src).startswith(msg)


@pytest.mark.parametrize("where, stmt, msg", [
    # §2 Queues: an entry's "body is the server's statements", and the gateway's route "reads the request's
    # attributes as a server does": the server's side refuses the session's words (the table of the two
    # sides), in every entry, called or not and whoever calls it. Before, `end;` in a route or in an entry
    # a gateway called linked (and ended the session in the middle of the deployment), `request;` in a
    # route spliced the server into it, and an entry's `turn;` was refused only when a server called it.
    ("route", "turn;", "`turn;` in `g.route`: the next turn is the session's side"),
    ("route", "end;", "`end;` in `g.route`: the exit is the session's side"),
    ("route", "request;", "`request;` in `g.route`: the workload's session requests"),
    ("entry", "turn;", "`turn;` in `P.prefill`: the next turn is the session's side"),
    ("entry", "end;", "`end;` in `P.prefill`: the exit is the session's side"),
    ("entry", "request;", "`request;` in `P.prefill`: the workload's session requests"),
    ("entry", "request g;", "`request g;` in `P.prefill`: the workload's session requests"),
])
@pytest.mark.parametrize("called", [True, False])
def test_an_entry_is_the_servers_side(where, stmt, msg, called):
    route = f"run d (1); {stmt}" if where == "route" else "run d (1);"
    body = stmt if where == "entry" else ""
    call = "P.prefill (1);" if called else ""
    src = (f"stage d : delay;\nqueue g : gateway {{ route {{ {route} {call} }} }}\n" + PQ.replace("BODY", body)
           + "workload { arrive batch(1); session { request g; } }\nrun { horizon 10; }\n")
    assert refused(src).startswith(msg)


# --- (b) KV transfers, links and flow networks --------------------------------------------------------------


def test_a_transfer_runs_the_link_loads_the_destination_and_releases_the_source(monkeypatch):
    """§2 serving: "transfer (X) from P to Q (n); — run link (X); load Q (n); release P; — the KV of n
    tokens moves from the session's lease (or hold) on P to its hold on Q: the link takes the time, the
    tokens count as computed at Q, and P is given back". §3: a lease keeps the allocation "until the
    session's release m … and cache applies then"; "min(ℓ, computed) units stay cached … (computed is the
    allocation, or the position a growing run or a load reached)".

    P (6) on [0, 1], leased; Q (8) from 1; the link ps(2) reads 4 on [1, 3]; the load makes Q's position 5;
    the release at 3 ends P's lease, which caches min(6, 6); Q's scope ends at 4 and caches min(8, 5)."""
    r, o = run("""
pool P { cap 10; }
pool Q { cap 10; }
stage link : ps(2);
stage d : delay;
workload { arrive batch(1); }
session {
  hold P (6) { run d (1); } cache (6) lease P (inf);
  observe uP = used(P);
  hold Q (8) {
    transfer (4) from P to Q (5);
    observe uP2 = used(P); observe cP2 = cachedin(P); observe uQ = used(Q);
    run d (1);
  } cache (8);
  observe cQ = cachedin(Q);
}
run { horizon 10; }
""", monkeypatch)
    assert o["uP"] == [(0, 1.0, 6.0)]
    assert (o["uP2"], o["cP2"], o["uQ"]) == ([(0, 3.0, 0.0)], [(0, 3.0, 6.0)], [(0, 3.0, 8.0)])
    assert o["cQ"] == [(0, 4.0, 5.0)]
    # P: 6 used on [0, 3] (the lease is a holder), 6 cached on [3, 10]; Q: 8 on [1, 4], 5 cached on [4, 10]
    p, q = pool(r, "P"), pool(r, "Q")
    assert (p.used, p.cached, p.holders) == (1.8, 4.2, 0.3)
    assert (q.used, q.cached) == (2.4, 3.0)
    link = stage(r, "link")
    assert (link.completions, link.service, link.utilisation) == (1, 2.0, 0.2)


def test_release_in_a_hold_gives_the_allocation_back_now(monkeypatch):
    """§3: "release m inside the body does the same for m alone, at that point: the innermost enclosing
    hold on m gives its allocation there back, caching per its clause, and holds m no longer"; "A session
    that holds and leases nothing on m releases nothing"; "cached prefixes never block". P has cap 4: s1
    waits behind s0's 4. s0 releases at 1 (caching min(3, 4) = 3), reads the pool before the settle admits
    s1 (§3 Configuration: the ready sessions run first), and runs on; s1 is admitted at 1, evicting the 3.
    s0's scope ends at 2 with nothing left on P, and a `release P;` outside any hold releases nothing."""
    r, o = run("""
pool P { cap 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold P (4) { run d (1); release P; observe u = used(P); observe c = cachedin(P); run d (1); } cache (3);
    observe c2 = cachedin(P);
    release P;
    observe c3 = used(P) + cachedin(P);
  } else {
    hold P (4) { observe a = now; run d (1); }
  }
}
run { horizon 10; }
""", monkeypatch)
    assert (o["u"], o["c"], o["a"]) == ([(0, 1.0, 0.0)], [(0, 1.0, 3.0)], [(1, 1.0, 1.0)])
    assert (o["c2"], o["c3"]) == ([(0, 2.0, 0.0)], [(0, 2.0, 4.0)])
    # used 4 on [0, 2] (s0, then s1): 0.8; s1 waited 1: mean 0.5; one eviction of 3 units
    p = pool(r, "P")
    assert (p.used, p.wait, p.admissions, p.evicted_entries, p.evicted_units) == (0.8, 0.5, 2, 1, 3.0)


def test_a_load_advances_the_position_within_the_allocation(monkeypatch):
    """§3: "load m (n) advances the innermost enclosing hold's position on m by n tokens, which its
    allocation must cover; the KV of a transfer counts as computed from then on". Loads of 3 and 2 after a
    grow to 6: position 5, so cache (10) keeps min(10, 5). Without the grow the second load is the error at
    the statement: 3 + 2 > 4."""
    _, o = run("""
pool Q { cap 10; }
workload { arrive batch(1); }
session { hold Q (4) { load Q (3); grow Q (2); load Q (2); } cache (10); observe c = cachedin(Q); }
run { horizon 10; }
""", monkeypatch)
    assert o["c"] == [(0, 0.0, 5.0)]
    msg = run_error("""
pool Q { cap 10; }
workload { arrive batch(1); }
session { hold Q (4) { load Q (3); load Q (2); } }
run { horizon 10; }
""", monkeypatch)
    assert msg == ("<source>:4:36: error: at t=0, session 0: load Q (2): the hold has 4 allocated and 3 computed; "
                   "a load must fit the allocation (grow first)")


TR = "pool P { cap 10; }\npool Q { cap 10; }\nworkload { arrive batch(1); }\n"


@pytest.mark.parametrize("decl, stmt, msg", [
    # §2 A KV transfer: "The form transfer does not write this: without from P to Q (n) it is a parse error"
    ("stage link : delay;", "transfer (1);", "unexpected `;`: a transfer says where the KV moves, `transfer (X) "
     "from P to Q (n);`"),
    # "Which stage": "the stage whose name is the role's … link (or transfer) … Exactly one must qualify"
    ("stage d : delay;", "transfer (1) from P to Q (1);",
     "unknown stage in a serving form: `transfer` finds no stage to run on"),
    ("stage link : delay; stage transfer : delay;", "transfer (1) from P to Q (1);",
     "`transfer`: several stages qualify (link, transfer)"),
    # "transfer and tool on a step engine are rejected by the linker as run E (X) would be"
    ("stage E : step { budget 4; cost 1; }", "transfer on E (1) from P to Q (1);",
     "`run E (…)`: `E` is a step stage, and a run there says what it is"),
])
def test_what_the_transfer_form_refuses(decl, stmt, msg):
    assert refused(f"{decl}\n{TR}session {{ hold Q (4) {{ {stmt} }} }}\n").startswith(msg)


@pytest.mark.parametrize("share", ["maxmin", "bottleneck"])
def test_two_flows_on_one_link_get_half_each(monkeypatch, share):
    """§3 Stages: "share maxmin is max-min fair: every flow's rate rises together until a stage fills";
    "share bottleneck gives each flow its equal share at the tightest of its stages, min over s of φ_s /
    n_s". Two reads of 10 over L ps(10) and a wide a ps(100): L is the tightest, 5 each under both policies,
    both done at 2. Utilisation Σ rate / φ: L 1 on [0, 2], a 0.1."""
    r, o = run(f"""
stage L : ps(10);
stage a : ps(100);
share {share};
workload {{ arrive batch(2); }}
session {{ run L, a (10); observe t = now; }}
run {{ horizon 10; }}
""", monkeypatch)
    assert o["t"] == [(0, 2.0, 2.0), (1, 2.0, 2.0)]
    assert close(stage(r, "L").utilisation, 0.2) and close(stage(r, "a").utilisation, 0.02)
    assert (stage(r, "L").present, stage(r, "L").completions, stage(r, "a").completions) == (0.4, 2, 2)


@pytest.mark.parametrize("share, t1", [
    # maxmin: f0 (over L and M) stops at M's 2, f1 (L alone) takes L's other 8: f0 done at 4 / 2 = 2, f1 has
    # 16 of its 24 read; alone at 10: 2.8
    ("maxmin", 2.8),
    # bottleneck: f0 min(10 / 2, 2 / 1) = 2, f1 10 / 2 = 5 (L's other 3 unused): f0 done at 2, f1 has 10 of
    # 24 read, then alone at 10: 3.4
    ("bottleneck", 3.4),
])
def test_a_flow_limited_elsewhere_leaves_the_rest_to_the_other(monkeypatch, share, t1):
    """§3 Stages: maxmin: "the flows through it stop there, and the others go on"; bottleneck "leaves what
    that does not use at the other stages unused". A single-stage run on a stage that some run holds with
    another "is a flow of the policy" (f1)."""
    r, o = run(f"""
stage L : ps(10);
stage M : ps(2);
share {share};
workload {{ arrive batch(2); }}
session {{ branch (serial == 0) {{ run L, M (4); }} else {{ run L (24); }} observe t = now; }}
run {{ horizon 10; }}
""", monkeypatch)
    assert o["t"] == [(0, 2.0, 2.0), (1, t1, t1)]
    # L carries 28 units of work at capacity 10 either way (2.8 s of its 10), M 4 at 2 (on [0, 2])
    assert close(stage(r, "L").utilisation, 0.28) and close(stage(r, "M").utilisation, 0.2)


@pytest.mark.parametrize("share, done", [
    # maxmin: s1 fills first at 0.5 each (f0, f1); f2 rises on to s2's other 1.5. At 2 f0 has its 1, f1 1
    # of 2, f2 3 of 4; then f1 alone on s1 at 1 (done at 3), f2 alone on s2 at 2 (done at 2.5)
    ("maxmin", [(0, 2.0), (2, 2.5), (1, 3.0)]),
    # bottleneck: f0 min(1/2, 2/2) = 0.5, f1 1/2, f2 2/2 = 1 (s2's other 0.5 unused); at 2 f1 has 1 of 2,
    # f2 2 of 4; then alone: f1 at 1, f2 at 2, both done at 3
    ("bottleneck", [(0, 2.0), (1, 3.0), (2, 3.0)]),
])
def test_max_min_fairness_over_two_stages_by_hand(monkeypatch, share, done):
    """§3 Stages, the two policies on the three flows of the textbook example: f0 over s1 ps(1) and s2
    ps(2), f1 over s1, f2 over s2 (works 1, 2, 4); the rates are recomputed whenever a flow ends."""
    _, o = run(f"""
stage s1 : ps(1);
stage s2 : ps(2);
share {share};
workload {{ arrive batch(3); }}
session {{
  branch (serial == 0) {{ run s1, s2 (1); }}
  branch (serial == 1) {{ run s1 (2); }}
  branch (serial == 2) {{ run s2 (4); }}
  observe t = now;
}}
run {{ horizon 10; }}
""", monkeypatch)
    assert [(s, t) for s, t, _ in o["t"]] == done


@pytest.mark.parametrize("share", ["maxmin", "bottleneck"])
def test_flows_over_a_stage_of_infinite_capacity(monkeypatch, share):
    """§3 Stages: "Every stage of such a run is ps(φ) with a constant φ above 0": inf is one. f0 reads 2 over
    a ps(inf) and b ps(2), f1 3 over a alone, f2 an infinite amount over a and b ("inf is allowed: the job
    never ends", docs/language.md). a never fills, so f1's rate rises without bound and it is done at once;
    f0 and f2 share b at 1 each under both policies: f0 done at 2, then f2 reads at 2 for ever.

    Before, max-min filling took a stage of capacity inf for full after its first round (inf - x is not
    above the tolerance inf · 1e-12), so f1 ran at 1 and was done at 2.5; with every stage of a flow inf it
    went round for ever (inf - inf); and a flow of infinite work ended at the first completion of another
    flow (its work, inf, was within the tolerance 1e-9 · inf of done)."""
    r, o = run(f"""
stage a : ps(inf);
stage b : ps(2);
share {share};
workload {{ arrive batch(3); }}
session {{
  branch (serial == 0) {{ run a, b (2); }}
  branch (serial == 1) {{ run a (3); }}
  branch (serial == 2) {{ run a, b (inf); }}
  observe t = now;
}}
run {{ horizon 10; }}
""", monkeypatch)
    assert o["t"] == [(1, 0.0, 0.0), (0, 2.0, 2.0)]
    assert (r.result.arrivals, r.result.ended) == (3, 2)
    a, b = stage(r, "a"), stage(r, "b")
    # b carries 2 (of 2) on [0, 10]; a, of infinite capacity, none of it; present: f0 2 s, f2 10 s
    assert (b.utilisation, a.utilisation) == (1.0, 0.0)
    assert (a.present, b.present, a.completions, a.service, b.completions) == (1.2, 1.2, 2, 1.0, 1)


def test_a_flow_whose_every_stage_is_infinite_ends_at_once(monkeypatch):
    """As above: a run over two ps(inf) stages has no stage that fills; its rate is infinite and it is done
    at the instant it starts (it went round the filling loop for ever)."""
    r, o = run("""
stage a : ps(inf);
stage b : ps(inf);
share maxmin;
workload { arrive batch(1); }
session { run a, b (2); observe t = now; run a, b (3); observe t = now; }
run { horizon 10; }
""", monkeypatch)
    assert o["t"] == [(0, 0.0, 0.0), (0, 0.0, 0.0)]
    assert (stage(r, "a").completions, stage(r, "a").utilisation) == (2, 0.0)


def test_a_flow_of_infinite_work_does_not_end_when_another_does(monkeypatch):
    """docs/language.md "Amounts are not negative": a run's work may be inf, "the job never ends". Over a
    ps(4) and b ps(2), f0 (2) and f1 (inf) share b at 1: f0 done at 2; f1 then alone at 2, for ever (it
    ended at 2 with f0)."""
    r, o = run("""
stage a : ps(4);
stage b : ps(2);
share maxmin;
workload { arrive batch(2); }
session { branch (serial == 0) { run a, b (2); } else { run a, b (inf); } observe t = now; }
run { horizon 10; }
""", monkeypatch)
    assert o["t"] == [(0, 2.0, 2.0)]
    assert (r.result.ended, stage(r, "a").utilisation, stage(r, "b").utilisation) == (1, 0.5, 1.0)


@pytest.mark.parametrize("decls, stmt, msg", [
    # §3 Stages: "a program with one declares its share, which has no default"; program-reference.txt share:
    # "Required when some run holds several stages, an error otherwise"
    ("stage a : ps(1); stage b : ps(1);", "run a, b (1);", "a run over several stages needs the program's `share"),
    ("stage a : ps(1); share maxmin;", "run a (1);", "`share` with no run over several stages"),
    # "Every stage of such a run is ps(φ) with a constant φ above 0 (a flow is not described by the present a
    # capacity could read)"
    ("stage a : fifo; stage b : ps(1); share maxmin;", "run a, b (1);",
     "`a` in a run over several stages: every stage of such a run is ps(φ) with a constant φ above 0"),
    ("stage a : ps(present); stage b : ps(1); share maxmin;", "run a, b (1);",
     "`a` in a run over several stages: every stage of such a run is ps(φ) with a constant φ above 0"),
    ("stage a : ps(0); stage b : ps(1); share maxmin;", "run a, b (1);",
     "`a` in a run over several stages: every stage of such a run is ps(φ) with a constant φ above 0"),
    ("stage a : delay; stage b : ps(1); share maxmin;", "run b, a (1);",
     "`a` in a run over several stages: every stage of such a run is ps(φ) with a constant φ above 0"),
    # "a run names each stage array once (an index is known only when the run starts)"
    ("stage a[2] : ps(1); share maxmin;", "run a[0], a[1] (1);", "`a` is named twice in one run"),
    ("stage a : ps(1); stage b : ps(1); share maxmin; share bottleneck;", "run a, b (1);",
     "`share` is given twice"),
])
def test_what_a_flow_network_refuses(decls, stmt, msg):
    assert refused(f"{decls}\nworkload {{ arrive batch(1); }}\nsession {{ {stmt} }}\n").startswith(msg)


def test_a_link_queues_latency_runs_before_its_transfer_once_per_link_in_order(monkeypatch):
    """§2 Queues: "latency x on a link's serve is the wait before such a transfer: a delay stage L.latency of
    the link's own, which every transfer on naming the link runs first, one wait per link named, in the
    order named." Each session: L.latency[serial] 1 s [0, 1], M.latency 0.5 [1, 1.5], then the two reads of
    10 share M ps(5) (L[0] and L[1] are 10 each): 2.5 each, done at 5.5."""
    r, o = run("""
queue L[2] : link { serve ps(10) latency 1; }
queue M : link { serve ps(5) latency 0.5; }
pool P { cap 100; }
pool Q { cap 100; }
share maxmin;
workload { arrive batch(2); }
session {
  hold P (10) { observe a = now; } lease P (inf);
  hold Q (10) { transfer on L[serial], M (10) from P to Q (10); observe t = now; } cache (10);
  observe c = cachedin(Q) + used(P);
}
run { horizon 20; }
""", monkeypatch)
    assert o["t"] == [(0, 5.5, 5.5), (1, 5.5, 5.5)]
    # cachedin(Q) is the session's own 10, loaded and cached; used(P) the leases left: s0, done first at 5.5,
    # reads s1's lease still there, s1 none
    assert o["c"] == [(0, 5.5, 20.0), (1, 5.5, 10.0)]
    for i in (0, 1):
        lat, link = stage(r, "L.latency", i), stage(r, "L", i)
        assert (lat.completions, lat.service, link.completions, link.service) == (1, 1.0, 1, 4.0)
        assert close(link.utilisation, 2.5 * 4 / 10 / 20)
    ml, m = stage(r, "M.latency"), stage(r, "M")
    assert (ml.completions, ml.service, m.completions, m.utilisation) == (2, 0.5, 2, 0.2)


def test_a_link_with_a_transfer_entry_runs_its_body_on_its_own_stage(monkeypatch):
    """§2 Queues, the link role: "transfer (n), or none — the NIC: the body is the time to read n tokens";
    "A link with a transfer (n) entry is called instead, … and runs its body on its own stage." The entry
    reads 8 tokens as `run (n / 2)` on L ps(10): 0.4 s; then the load of 6 and the release of P's lease (no
    cache clause: nothing stays in P); Q caches min(10, 6)."""
    r, o = run("""
queue L : link { serve ps(10); transfer (n) { run (n / 2); } }
pool P { cap 100; }
pool Q { cap 100; }
workload { arrive batch(1); }
session {
  hold P (10) { observe a = now; } lease P (inf);
  hold Q (10) { L.transfer (8) from P to Q (6); observe t = now; observe p = used(P) + cachedin(P); } cache (10);
  observe cq = cachedin(Q);
}
run { horizon 20; }
""", monkeypatch)
    assert (o["t"], o["p"], o["cq"]) == ([(0, 0.4, 0.4)], [(0, 0.4, 0.0)], [(0, 0.4, 6.0)])
    assert (stage(r, "L").completions, stage(r, "L").service) == (1, 0.4)
    assert close(pool(r, "Q").cached, 6 * 19.6 / 20)


PULL_P = ("queue P[2] : prefill { pool kv { cap 100; } serve delay; NIC prefill (prompt) { hold kv (prompt) "
          "{ prefill (1); } CACHE } }\n")
PULL_D = ("queue D : decode { pool kv { cap 100; } serve fifo; nic ps(10); decode (prompt) from src { hold kv "
          "(prompt) { transfer (prompt) from src to kv (prompt); decode (1); } } }\n")
PULL_GW = ("workload { arrive batch(1); session { request gw; } }\nqueue gw : gateway { route { set prompt = 5; "
           "CALLS } }\n")


def pull_prog(rel="D pull P latency 1 share maxmin;", nic="nic ps(10);", cache="cache (prompt) lease kv (inf);",
              calls="P[0].prefill (prompt); D.decode (prompt) from P[0];", extra="") -> str:
    return (PULL_P.replace("NIC", nic).replace("CACHE", cache) + PULL_D + extra + rel + "\n"
            + PULL_GW.replace("CALLS", calls))


@pytest.mark.parametrize("kw, msg", [
    # §2 Queues: "A program with a relation does not also write share on its own."
    ({"rel": "D pull P latency 1 share maxmin;\nshare maxmin;"}, "`share` is given twice: the pull relation"),
    # "Both queues are declared above the relation and have a nic"
    ({"rel": "D pull P share maxmin;", "extra": "", "nic": ""}, "`D pull P`: queue `P` has no `nic`"),
    # "a reader has one source"
    ({"rel": "D pull P share maxmin;\nD pull Q share maxmin;",
      "extra": "queue Q : prefill { pool kv { cap 10; } serve delay; nic ps(1); prefill (p) { hold kv (p) "
               "{ prefill (1); } lease kv (inf); } }\n"}, "`D` pulls from `P` already; a reader has one source"),
    # "a transfer without on in a queue that pulls from none" is an error
    ({"rel": "share maxmin;"}, "`D`'s `transfer` names no NIC and `D` pulls from no queue"),
    # "D waits x0 before each one (a number or a constant over lets)"
    ({"rel": "D pull P latency ~exp(1) share maxmin;"},
     "the latency of `D pull P` must be a constant (numbers and `let`s): it reads"),
    # "a from on a queue that leases nothing does not link"
    ({"cache": "cache (prompt);"}, "`from P`: no entry of `P` leases a pool"),
    # "an entry of D called from another queue is an error"
    ({"extra": "queue Q : prefill { pool kv { cap 10; } serve delay; nic ps(1); prefill (p) { hold kv (p) "
               "{ prefill (1); } lease kv (inf); } }\n",
      "calls": "Q.prefill (prompt); D.decode (prompt) from Q;"}, "`D.decode` is called `from Q`, and `D` pulls "
     "from `P` (`D pull P`): an entry of `D` that reads is called `from P[…]`"),
])
def test_what_a_pull_relation_refuses(kw, msg):
    assert refused(pull_prog(**kw)).startswith(msg)


@pytest.mark.parametrize("prefill, msg", [
    # §2 Queues: "from P[i] is the pool P's entry leases, and every entry of P must lease it on every way
    # through it": one pool. An entry that leases two gave the transfer the first, and the other stayed
    # leased to the session's end; entries leasing different pools were told of one of the two picked by
    # the process's hash seed (a set's first string)
    ("hold kv (prompt) { prefill (1); } lease kv (inf); hold kv2 (prompt) { prefill (1); } lease kv2 (inf);",
     "`from P`: the entries of `P` lease `kv`, `kv2`; a `from` takes the one pool every entry of `P` leases"),
    ("branch (prompt > 3) { hold kv (prompt) { prefill (1); } lease kv (inf); } "
     "else { hold kv2 (prompt) { prefill (1); } lease kv2 (inf); }",
     "`from P`: the entries of `P` lease `kv`, `kv2`; a `from` takes the one pool every entry of `P` leases"),
    ("branch (prompt > 3) { hold kv (prompt) { prefill (1); } lease kv (inf); } "
     "else { hold kv (prompt) { prefill (1); } }",
     "`from P`: `P.prefill` leases nothing on some way through it"),
])
def test_a_from_takes_the_one_pool_every_entry_leases(prefill, msg):
    src = ("queue P : prefill { pool kv { cap 100; } pool kv2 { cap 100; } serve delay; nic ps(10); "
           f"prefill (prompt) {{ {prefill} }} }}\n" + PULL_D + "D pull P share maxmin;\n"
           + PULL_GW.replace("CALLS", "P.prefill (prompt); D.decode (prompt) from P;"))
    assert refused(src).startswith(msg)


LEASE = """
stage d : delay;
pool m[2] { cap 5; }
pool n { cap 5; }
workload { arrive batch(2); }
session { hold m[0] (2) { run d (1); } cache (2) lease LEASE (3); observe u = used(m[0]) + used(m[1]); }
run { horizon 10; }
"""


@pytest.mark.parametrize("lease, msg", [
    ("n", "`lease n`: the hold does not hold `n`; a lease names one of its pools"),
    # another member of a family the hold holds: linked as if it were the hold's, then never leased
    ("m[1]", "`lease m[1]`: the hold does not hold `m[1]`; a lease names one of its pools"),
])
def test_a_lease_names_one_of_the_holds_pool_members(lease, msg):
    """§2: "lease P (t) names one of the hold's pools whose allocation stays the session's after the
    scope's end". A member of a family is the pool a hold holds (`hold m[0]`), so `lease m[1]` names none
    of its pools; an IR file saying so is refused as well, at the lease."""
    assert refused(LEASE.replace("LEASE", lease)) == msg
    ok = serq_frontend.compile(source=LEASE.replace("LEASE", "m[0]"), sets={}, defs={})
    text = serq_ir.encode(ok).decode().replace('"lease":{"pool":{"kind":"PoolRef","pool":0,"index":'
                                               '{"kind":"Num","value":0.0', '"lease":{"pool":{"kind":'
                                               '"PoolRef","pool":0,"index":{"kind":"Num","value":1.0')
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(text, name="x.json")
    assert "`lease m[1]`: the hold does not hold `m[1]`; a lease names one of its pools - at " \
           "'$.session[0].lease.pool'" in str(e.value)


def test_a_lease_of_a_computed_member_the_hold_does_not_hold_is_an_error_at_the_lease(monkeypatch):
    """As above, for a member chosen by a computed index: compared when the lease is taken, at the scope's
    end, a run-time error at the lease's pool (where the linker tells a constant one; it was told at the hold)
    naming the time and the session (it was ignored: the allocation was given back and cached as if there
    were no lease). s0 leases m[0], its own, 3 s: u = 2 at 1."""
    src = LEASE.replace("LEASE", "m[serial]")
    assert run_error(src, monkeypatch) == ("<source>:6:56: error: at t=1, session 1: `lease m[1]`: the hold "
                                           "does not hold `m[1]`; a lease names one of its pools")
    _, o = run(src.replace("batch(2)", "batch(1)"), monkeypatch)
    assert o["u"] == [(0, 1.0, 2.0)]


# --- (c) families and routing --------------------------------------------------------------------------------


def test_choose_routes_by_load_or_by_the_sessions_own_prefix(monkeypatch):
    """§2: "choose NAME in expr by ( expr , ... ) ; -- NAME := argmin over 0..n, keys in order"; §3 Ties:
    "choose: the keys, in order, then the smallest index"; cachedin(p) is the session's own prefix there
    (docs/language.md). Two members kv[0], kv[1]; s0 starts at 0, s1 at 1, s2 at 2; the first hold goes to
    the member of fewer holders (s0 -> 0; s1 -> 1 against 1, 0; s2 -> 0 on the tie 1, 1) and lasts 10, 2
    and 18. Then k is the member of fewer holders, h the one holding the session's prefix first:
      s1 at 3: holders 2, 0 -> k = 1; its prefix is in kv[1] -> h = 1;
      s0 at 10: holders 1 (s2), 0 -> k = 1, but its prefix is in kv[0] -> h = 0 (affinity over load);
      s2 at 20: holders 0, 0 -> k = 0; its prefix in kv[0] -> h = 0.
    The second hold finds its whole prefix: cached = 10."""
    r, o = run("""
pool kv[2] { cap 100; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial);
  choose j in 2 by (holders(kv[j]));
  hold kv[j] (10) { run d (serial == 0 ? 10 : serial == 1 ? 2 : 18); } cache (10);
  observe a = j;
  choose k in 2 by (holders(kv[k]));
  choose h in 2 by (-cachedin(kv[h]), holders(kv[h]));
  observe b = 10 * k + h;
  hold kv[h] (10) { observe c = cached; run d (1); } cache (10);
}
run { horizon 30; }
""", monkeypatch)
    assert o["a"] == [(1, 3.0, 1.0), (0, 10.0, 0.0), (2, 20.0, 0.0)]
    assert o["b"] == [(1, 3.0, 11.0), (0, 10.0, 10.0), (2, 20.0, 0.0)]
    assert o["c"] == [(1, 3.0, 10.0), (0, 10.0, 10.0), (2, 20.0, 10.0)]
    k0, k1 = pool_at(r, "kv", 0), pool_at(r, "kv", 1)
    assert (k0.admissions, k1.admissions) == (4, 2)
    # kv[0]: 10 used on [0, 10], [2, 20], [10, 11], [20, 21]: 300 / 30; cached: s0's 10 on [11, 30], s2's on
    # [21, 30]: 280 / 30. kv[1]: s1 on [1, 3] and [3, 4]: 30 / 30; cached on [4, 30]: 260 / 30
    assert close(k0.used, 10.0) and close(k0.cached, 280 / 30)
    assert close(k1.used, 1.0) and close(k1.cached, 260 / 30)


def test_member_is_the_index_its_reference_names(monkeypatch):
    """docs/language.md: "`member(X)` is the index of the pool or stage member `X` names (`j` for
    `engine[j]`, 0 for one declared without a size)". A family member by a computed index, a pool family's,
    a stage and a pool declared without a size (a computed 0 names the one member): k = member(s[serial]) +
    10 · member(m[serial % 2]) + 100 · member(t) + 1000 · member(q[serial - serial]). q is a family of one: a
    pool declared without a size takes no index (test_fleet_round47_not_a_family)."""
    _, o = run("""
stage s[3] : fifo;
stage t : fifo;
pool m[2] { cap 5; }
pool q[1] { cap 5; }
workload { arrive batch(3); }
session {
  observe k = member(s[serial]) + 10 * member(m[serial % 2]) + 100 * member(t) + 1000 * member(q[serial - serial]);
  run s[serial] (1);
}
run { horizon 10; }
""", monkeypatch)
    assert o["k"] == [(0, 0.0, 0.0), (1, 0.0, 11.0), (2, 0.0, 2.0)]


@pytest.mark.parametrize("expr, first", [
    # an index past the family, below it, or not whole names no member: the error of every reference
    # (docs/language.md, "A computed member index is a whole number"); before, member() gave the index
    # itself (2, -1, 0.5) and the record kept it
    ("member(s[serial])", "<source>:5:33: error: at t=0, session 2: stage s: index 2 out of range (the family has 2)"),
    ("member(m[serial - 1])", "<source>:5:33: error: at t=0, session 0: pool m: index -1 out of range (the family has 2)"),
    ("member(m[serial / 2])",
     "<source>:5:33: error: at t=0, session 1: pool m: index 0.5 is not a whole number (the family has 2)"),
])
def test_member_of_a_computed_index_that_names_no_member_is_an_error(monkeypatch, expr, first):
    src = f"""
stage s[2] : fifo;
pool m[2] {{ cap 5; }}
workload {{ arrive batch(3); }}
session {{ record r {{ k = {expr}; }} }}
run {{ horizon 10; }}
"""
    assert run_error(src, monkeypatch) == first
    # and in an observe, which the fast tier runs
    observe = src.replace(f"record r {{ k = {expr}; }}", f"observe k = {expr};")
    assert run_error(observe, monkeypatch) == first.replace(":33:", ":30:")


def test_member_of_a_constant_index_past_the_family_does_not_link():
    """The linker refuses a constant index that names no member (docs/language.md: "as the linker refuses a
    constant one"), in member(…) as in any reference."""
    assert refused("stage s[2] : fifo;\nworkload { arrive batch(1); }\nsession { observe k = member(s[2]); }\n") \
        .startswith("`s[2]`: `s` has members 0 … 1")


@pytest.mark.parametrize("decls, stmt, first", [
    # docs/language.md: "`kv[j]`, `engine[i]` with an index computed at run time name the member of that
    # number: one that is NaN, negative, at least the family's size or not whole … is a run-time error at the
    # reference, naming the time and the session", wherever the reference stands
    ("stage s[2] : fifo;", "run s[serial + 1] (1);",
     "<source>:4:26: error: at t=1, session 1: stage s: index 2 out of range (the family has 2)"),
    ("pool m[2] { cap 5; }", "hold m[serial * 2] (1) { run d (1); }",
     "<source>:4:27: error: at t=1, session 1: pool m: index 2 out of range (the family has 2)"),
    ("pool m[2] { cap 5; }", "choose j in 2 by (holders(m[j + serial]));",
     "<source>:4:48: error: at t=1, session 1: pool m: index 2 out of range (the family has 2)"),
    ("pool m[2] { cap 5; }", "hold m[0] (1) { release m[serial + 1]; }",
     "<source>:4:46: error: at t=1, session 1: pool m: index 2 out of range (the family has 2)"),
    ("pool m[2] { cap 5; }", "hold m[0] (1) { grow m[serial * 3] (1); }",
     "<source>:4:43: error: at t=1, session 1: pool m: index 3 out of range (the family has 2)"),
    ("pool m[2] { cap 5; }", "hold m[0] (1) { load m[serial * 3] (1); }",
     "<source>:4:43: error: at t=1, session 1: pool m: index 3 out of range (the family has 2)"),
    ("pool m[2] { cap 5; }", "drop m[serial * 3];",
     "<source>:4:27: error: at t=1, session 1: pool m: index 3 out of range (the family has 2)"),
    ("pool m[2] { cap 5; }", "hold m[serial] (1) { run d (1); } cache (1) lease m[2 * serial] (1);",
     "<source>:4:72: error: at t=2, session 1: pool m: index 2 out of range (the family has 2)"),
    ("stage s[2] : fifo;", "set x = queue(s[0 / 0 * serial]);",
     "<source>:4:36: error: at t=1, session 0: stage s: the index is NaN, which names no member (the family has 2)"),
    ("stage e[2] : step { budget 4; cost 1; }", "run e[serial + 1] prefill (1);",
     "<source>:4:26: error: at t=1, session 1: stage e: index 2 out of range (the family has 2)"),
    ("stage e[2] : step { budget 4; cost 1; }", "set x = budget_left(e[serial + 1]);",
     "<source>:4:42: error: at t=1, session 1: stage e: index 2 out of range (the family has 2)"),
    ("stage a[2] : ps(1); stage b : ps(1); share maxmin;", "run a[serial + 1], b (1);",
     "<source>:4:26: error: at t=1, session 1: stage a: index 2 out of range (the family has 2)"),
])
def test_a_computed_index_out_of_range_is_an_error_at_the_statement(monkeypatch, decls, stmt, first):
    src = f"{decls}\nstage d : delay;\nworkload {{ arrive batch(2); }}\nsession {{ run d (1); {stmt} }}\nrun {{ horizon 10; }}\n"
    assert run_error(src, monkeypatch) == first


# --- (d) record tables ---------------------------------------------------------------------------------------

TABLES = """
stage d : delay;
workload { arrive batch(3); }
session {
  set t0 = now;
  run d (2 * serial + 1);
  record a { sent = t0 + serial; done = now; }
  record b { x = serial; }
  set t0 = now;
  run d (1);
  record a { sent = t0; done = now; }
}
run { horizon 20; warmup 2; }
"""


def test_the_warm_up_keeps_or_leaves_out_whole_rows_by_their_send_time(monkeypatch):
    """docs/language.md: "The report keeps the rows whose column `sent` (without one: whose `time`) is at or
    after the warm-up's end, so the warm-up applies to a request as a whole, by its send time." Warm-up 2.
    Table a: s0 (sent 0, done 1; sent 1, done 2) out; s1's first (sent 0 + 1 = 1, done at 3) out, its second
    (sent 3, done 4) in; s2's first (sent 0 + 2 = 2: at the warm-up's end, done at 5) in, its second (sent 5,
    done 6) in. Table b has no `sent`: by `time`, s0's row at 1 out, s1's at 3 and s2's at 5 in. The counts
    are the rows kept."""
    r, _ = run(TABLES, monkeypatch)
    assert rows(r, "a") == {"session": [1, 2, 2], "turn": [0, 0, 0], "time": [4.0, 5.0, 6.0],
                            "sent": [3.0, 2.0, 5.0], "done": [4.0, 5.0, 6.0]}
    assert rows(r, "b") == {"session": [1, 2], "turn": [0, 0], "time": [3.0, 5.0], "x": [1, 2]}
    assert r.result.records == {"a": 3, "b": 2}


def test_one_file_per_table(tmp_path, capsys):
    """docs/language.md: "`serq run --records FILE.csv` … writes the rows, one a request (a program of
    several tables writes `FILE.NAME.csv` beside it for each, NAME the table's name …)"; one table is
    FILE itself."""
    from serq.cli import main

    prog = tmp_path / "p.sq"
    prog.write_text(TABLES)
    with pytest.raises(SystemExit) as info:
        main(["run", str(prog), "--no-progress", "--records", str(tmp_path / "out.csv")])
    assert info.value.code == 0, capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.a.csv", "out.b.csv", "p.sq"]
    assert (tmp_path / "out.a.csv").read_text().splitlines() == [
        "session,turn,time,sent,done", "1,0,4.0,3.0,4.0", "2,0,5.0,2.0,5.0", "2,0,6.0,5.0,6.0"]
    assert (tmp_path / "out.b.csv").read_text().splitlines() == ["session,turn,time,x", "1,0,3.0,1", "2,0,5.0,2"]
    one = tmp_path / "one"
    one.mkdir()
    (one / "p.sq").write_text(TABLES.replace("record b { x = serial; }", ""))
    with pytest.raises(SystemExit) as info:
        main(["run", str(one / "p.sq"), "--no-progress", "--records", str(one / "out.csv")])
    assert info.value.code == 0
    assert sorted(p.name for p in one.iterdir()) == ["out.csv", "p.sq"]


def test_a_records_columns_are_evaluated_at_once_when_it_runs(monkeypatch):
    """docs/language.md: "`record NAME { COL = expr; … }` appends one row to the table `NAME`: every column
    is evaluated when the statement runs, so a row is whole or absent (a request the run ends in has
    none)." A column is no attribute: `b = a` reads the attribute a (5), not the column a beside it (1);
    the pool and the clock are read at the statement (inside the hold at 1: used 3, now 1); s1, whose run
    lasts past the horizon, writes no row."""
    r, _ = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  set a = 5;
  hold m (3) { run d (1 + 20 * serial); record r { a = 1; b = a; u = used(m); t = now; } }
}
run { horizon 10; }
""", monkeypatch)
    assert rows(r) == {"session": [0], "turn": [0], "time": [1.0], "a": [1], "b": [5], "u": [6], "t": [1.0]}
    with pytest.raises(serq_frontend.CompileError, match="unknown name `a`"):
        serq_frontend.compile(source="workload { arrive batch(1); }\nsession { record r { a = 1; b = a; } }\n")


@pytest.mark.parametrize("body, msg", [
    # docs/language.md: "The simulator adds `session` (the serial), `turn` (`turn_no`) and `time` (`now`);
    # every `record` of one table names the same columns in the same order"
    ("record r { a = 1; b = 2; } record r { b = 2; a = 1; }",
     "record `r` has the columns a, b elsewhere; every record of one table names the same columns in the same order"),
    ("record r { a = 1; b = 2; } record r { a = 1; }",
     "record `r` has the columns a, b elsewhere; every record of one table names the same columns in the same order"),
    ("record r { session = 1; }", "`session` is a column every record has"),
    ("record r { turn = 1; }", "`turn` is a column every record has"),
    ("record r { time = 1; }", "`time` is a column every record has"),
    ("record r { a = 1; a = 2; }", "column `a` twice in one record"),
])
def test_what_a_record_refuses(body, msg):
    assert refused(f"workload {{ arrive batch(1); }}\nsession {{ {body} }}\n").startswith(msg)


def test_a_record_writes_a_row_each_time_it_runs_a_re_executed_hold_included(monkeypatch):
    """docs/language.md (Rules chosen where the spec is silent): a row is written each time the `record`
    statement runs, and never taken back, so a record inside a hold that is preempted and executed again
    writes a row at each execution. cap 4: s0 holds 2 at 0 and writes (0, 0); s1 holds 2 at 1 and writes
    (1, 1). At 1 s0's grow by 2 does not fit and the pool (no engine's memory) preempts its most recently
    admitted holder, s1, whose hold re-enters the queue; s0 grows, runs to 2 and releases; s1 is admitted
    again at 2 and writes (1, 2). Its computed is 0: the hold computed nothing."""
    r, _ = run("""
pool m { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial);
  hold m (2) { record r { k = computed; } run d (1); grow m (serial == 0 ? 2 : 1); run d (1); }
}
run { horizon 20; }
""", monkeypatch)
    assert rows(r) == {"session": [0, 1, 1], "turn": [0, 0, 0], "time": [0.0, 1.0, 2.0], "k": [0, 0, 0]}
    m = pool(r, "m")
    assert (m.admissions, m.preemptions, m.wait) == (3, 1, 1 / 3)


def test_the_metric_set_of_a_table_of_requests_counts_the_rows_kept(monkeypatch):
    """docs/language.md: "A table with the columns `sent`, `first_token`, `last_token` and `output` (and
    optionally `prompt`) … also gets vLLM's serving metrics in the report"; its rows are the ones the
    warm-up keeps, "Its throughputs are over the measured window end - warmup". sent 0, 0.5, 1; first
    token 1, 2, 3; last 3, 4, 5; output 1, 3, 5. Warm-up 0.5 keeps s1 and s2: TTFT 1.5, 2 (mean 1.75, p90
    1.5 + 0.9 · 0.5 = 1.95, numpy's linear interpolation); TPOT (4 - 2) / 2 = 1, (5 - 3) / 4 = 0.5; E2E
    3.5, 4; throughputs over 10 - 0.5: 2 requests, 8 output tokens, 8 + 20 tokens."""
    r, _ = run("""
stage d : delay;
workload { arrive batch(3); }
session {
  set t0 = now;
  run d (serial + 1);
  set ft = now;
  run d (2);
  record request { sent = t0 + serial / 2; first_token = ft; last_token = now; output = 1 + 2 * serial; prompt = 10; }
}
run { horizon 10; warmup 0.5; }
""", monkeypatch)
    q = r.result.requests
    assert (q.table, q.completed, q.duration, q.itl) == ("request", 2, 9.5, None)
    assert close(q.request_throughput, 2 / 9.5) and close(q.output_throughput, 8 / 9.5)
    assert close(q.total_token_throughput, 28 / 9.5)
    assert (q.ttft.count, q.ttft.mean, q.ttft.median) == (2, 1.75, 1.75) and close(q.ttft.p90, 1.95)
    assert (q.tpot.mean, q.e2el.mean) == (0.75, 3.75)


def test_records_of_a_finite_run_and_of_each_turn(monkeypatch):
    """program-reference.txt run: "With it, the run ends when the N-th session has arrived and every session
    has ended"; a row per execution of the statement, its `turn` column the turn number (docs/language.md).
    renewal(1): sessions at 1, 2, 3; each has two turns of 1 s, recorded at the end of each: rows at 2, 3
    (s0), 3, 4 (s1), 4, 5 (s2); the run ends at 5. Without `sent`, the warm-up (2.5) keeps the rows from 3.
    At 3, s1's row comes before s0's: §3 Ties, "Events at one instant: the order they were scheduled" —
    the arrival at 2 was scheduled at 1 (the gap is read at the arrival before, docs/language.md), before
    s0's run that ends at 2, so s1's first run is scheduled at 2 before s0's second."""
    r, _ = run("""
stage d : delay;
workload { arrive renewal(1); session { turn; request; turn; request; } }
server { run d (1); record t { k = 10 * serial + turn_no; } }
run { horizon 100; warmup 2.5; arrivals 3; }
""", monkeypatch)
    assert r.result.end == 5.0
    assert rows(r) == {"session": [1, 0, 2, 1, 2], "turn": [1, 2, 1, 2, 2], "time": [3.0, 3.0, 4.0, 4.0, 5.0],
                       "k": [11, 2, 21, 12, 22]}
