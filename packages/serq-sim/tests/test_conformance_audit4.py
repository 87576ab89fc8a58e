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
and the docstring says so."""

from __future__ import annotations

import msgspec
import pytest
import serq_frontend
import serq_ir
import serq_sim
from conform import _run, pool, run


def stage(report, name, index=None):
    return next(s for s in report.result.stages if s.name == name and s.index == index)


def pool_at(report, name, index=None):
    return next(p for p in report.result.pools if p.name == name and p.index == index)


def refused(src: str) -> str:
    """The compile error's first line (no position)."""
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src, sets={}, defs={})
    return str(e.value).splitlines()[0].split(": error: ", 1)[1]


def run_error(src: str, monkeypatch) -> str:
    """The run-time error's first line, the same on both tiers."""
    msgs = []
    for tier in ("", "general"):
        with pytest.raises(serq_sim.SimError) as e:
            _run(src, monkeypatch, tier)
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[0] == msgs[1]
    return msgs[0]


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
