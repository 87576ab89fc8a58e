"""Rules language.txt states that the frontend once broke, one case each (hand-computed values)."""

from __future__ import annotations

from sqhelpers import compile_src, ir_bytes, refused

# -- aggregates are constants where their terms are ----------------------------------------------------


def test_an_aggregate_of_constants_is_a_constant_and_sizes_a_family():
    p = compile_src("""let N = sum j in 2 (1);
let M = max i in 2 (i + 1);
let K = 3;
let S = sum j in K (j * K);
let L = min j in (K - 1) (10 - j);
pool p[N] { cap 10; }
stage d[M] : delay;
queue Q[S] { pool kv { cap 1; } }
workload { arrive batch(1); }
session { run d[1] (1); }
""")
    consts = {c.name: c.value for c in p.constants}
    # 1 + 1; max(0 + 1, 1 + 1); 0*3 + 1*3 + 2*3; min(10 - 0, 10 - 1)
    assert (consts["N"], consts["M"], consts["S"], consts["L"]) == (2.0, 2.0, 9.0, 9.0)
    sizes = {x.name: x.size for x in p.pools}
    assert sizes["p"] == 2 and sizes["Q.kv"] == 9
    assert {x.name: x.size for x in p.stages}["d"] == 2


def test_an_aggregate_in_a_family_size_folds():
    p = compile_src("""pool p[sum j in 3 (j)] { cap 10; }
workload { arrive batch(1); }
session { hold p[2] (1) { } }
""")
    assert p.pools[0].size == 3


def test_an_aggregate_count_that_is_no_whole_number_is_refused_where_it_stands():
    refused("let N = sum j in ⟨2.5 (1);\nsession { end; }\n",
            "the count of `sum j in …` must be an integer of at least 1, not 2.5")
    refused("let N = max j in ⟨0 (1);\nsession { end; }\n",
            "the count of `max j in …` must be an integer of at least 1, not 0")
    refused("let N = sum j in ⟨20000 (1);\nsession { end; }\n", "`sum j in 20000`: more than 10000 terms")


def test_an_aggregate_over_state_is_no_constant():
    refused("pool p[2] { cap 1; }\nlet N = sum j in 2 (⟨used(p[j]));\nsession { end; }\n",
            "`let N` is not a constant: it reads `used(…)`")


# -- the stale-header lint: a set from live state that then reaches the header ---------------------------

LINT_HEAD = "pool kv { cap 10; }\nstage svc : fifo;\nworkload { arrive batch(1); }\n"
STALE = "is set from live pool or stage state"


def lint_prog(body: str) -> str:
    return LINT_HEAD + "session {\n" + body + "\n}\n"


def test_a_live_set_overwritten_before_the_header_does_not_reach_it():
    compile_src(lint_prog("  set c = cachedin(kv);\n  set c = 0;\n  hold kv (c) { }"))
    # inside an arm the value is the arm's set (after the branch, which arm ran is the live read's:
    # test_known_defects_round28)
    compile_src(lint_prog("  set c = used(kv);\n  branch (c > 1) { set c = 0; hold kv (c) { } } else { set c = 1; }"))
    compile_src(lint_prog("  set c = used(kv);\n  choose c in 2 by (used(kv));\n  hold kv (c) { }"))
    compile_src(lint_prog("  set c = used(kv);\n  end;\n  hold kv (c) { }"))


def test_a_live_set_that_reaches_the_header_is_refused():
    refused(lint_prog("  set c = cachedin(kv);\n  hold kv (⟨c) { }"), f"`c` {STALE} (at 5:3)")
    # through one arm of a branch
    refused(lint_prog("  set c = used(kv);\n  branch (c > 1) { set c = 0; }\n  hold kv (⟨c) { }"),
            f"`c` {STALE} (at 5:3)")
    # around a loop: the set after the hold reaches it on the next pass
    refused(lint_prog("  set c = 0;\n  loop { hold kv (⟨c + 1) { } set c = used(kv); }"), f"`c` {STALE} (at 6:30)")
    # from the hold's own body: a preemption there executes the hold again
    refused(lint_prog("  set c = 0;\n  hold kv (⟨c + 1) { set c = used(kv); run svc (1); }"),
            f"`c` {STALE} (at 6:21)")
    # transitively, through an attribute set from it while it was live
    refused(lint_prog("  set a = used(kv);\n  set b = a;\n  set a = 0;\n  hold kv (⟨b) { }"),
            f"`b` {STALE} (at 6:3 from `a`, set at 5:3 from `used(kv)`)")
    # from the workload's turn block, run at `turn;`
    refused(LINT_HEAD.replace("arrive batch(1); }", "arrive batch(1); turn { set c = used(kv); } }")
            + "session {\n  set c = 0;\n  turn;\n  hold kv (⟨c) { }\n}\n", f"`c` {STALE}")


# -- hidden, and the "constant 0" note ------------------------------------------------------------------


def test_an_attribute_hidden_twice_is_refused():
    refused("workload { arrive batch(1); hidden o, ⟨o; init { set o = 1; } }\nsession { end; }\n",
            "`o` is hidden twice (first at 1:36)")
    refused("workload { arrive batch(1); hidden o; hidden p, ⟨o; init { set o = 1; set p = 1; } }\n"
            "session { end; }\n", "`o` is hidden twice (first at 1:36)")


def _observe_program(second: str) -> str:
    # 50 sessions, each observes `hit` once: the even ones at the comparison (always 0: serial < 0),
    # the odd ones at `second`
    return ("workload { arrive batch(50); }\nsession {\n"
            "  branch (serial % 2 == 0) { observe hit = serial < 0; } else { observe hit = " + second + "; }\n}\n")


def test_the_constant_0_note_is_for_test_valued_observes_only():
    import serq_sim

    mixed = compile_src(_observe_program("0"))
    assert [o.test for o in mixed.observes] == [False]
    r = serq_sim.run(mixed)
    assert r.result.observes["hit"].count == 50
    assert not any("constant 0" in n for n in r.result.notes)
    # every site a test: the note, as before
    tests = compile_src(_observe_program("serial > 100"))
    assert [o.test for o in tests.observes] == [True]
    r = serq_sim.run(tests)
    assert "note: observe hit is constant 0 over 50 samples" in r.result.notes


# -- queue entries see their own ------------------------------------------------------------------------

QBASE = """pool top { cap 10; }
stage tool : delay;
queue gw : gateway { route { ROUTE } }
queue P : prefill {
  pool kv { cap 1000; }
  serve fifo;
  prefill (p) { ENTRY }
}
queue D : decode {
  pool kv { cap 1000; }
  serve step { cost 1; memory kv; };
  decode (p) { hold kv (p) { prefill (p) growing kv; mark first; } }
}
workload { arrive batch(1); hidden o; init { set prompt = 32; set o = 4; }
  session { SESSION } }
run { horizon 100; }
"""


def qprog(entry: str = "hold kv (p) { run (p); }", route: str = "P.prefill (prompt);",
          session: str = "request gw; end;") -> str:
    return QBASE.replace("ROUTE", route).replace("ENTRY", entry).replace("SESSION", session)


def test_the_queue_program_links():
    p = compile_src(qprog())
    assert [x.name for x in p.pools] == ["top", "P.kv", "D.kv"]


def test_an_entrys_header_may_not_read_the_clock_or_the_session():
    header = "the header of a hold in `P.prefill` reads"
    refused(qprog("hold kv (p + ⟨now) { run (p); }"), f"{header} the clock, `now`")
    refused(qprog("hold kv (p) reserve (⟨now) { run (p); }"), f"{header} the clock, `now`")
    refused(qprog("hold kv (h) at admission (h = ⟨now) { run (p); }"), f"{header} the clock, `now`")
    # what the entry set before the hold, and `cached`, are the body's to read
    refused(qprog("set n = p;\n hold kv (⟨n) { run (p); }"), f"{header} `n`")
    refused(qprog("hold kv (p) reuse (⟨cached) { run (p); } cache (p)"), f"{header} `cached`")
    # the parameters, the queue's pools and stage, the constants and `computed` link
    compile_src(qprog("hold kv (min(p, h + 1)) reserve (p + computed) reuse (h) at admission "
                      "(h = cachedin(kv)) { run (p); } cache (p)"))


def test_an_entry_reads_its_own_queues_state_only():
    refused(qprog("hold kv (p) { run (p); observe u = used(⟨top); }"),
            "`P.prefill` reads `used(top)`, a top-level pool's or stage's state")
    refused(qprog("hold kv (p) { run (p); observe u = queue(⟨tool); }"),
            "`P.prefill` reads `queue(tool)`, a top-level pool's or stage's state")
    refused(qprog("hold kv (p) { run (p); observe u = queue(⟨D); }"), "`P.prefill` reads `queue(D)`, queue `D`'s")
    refused(qprog("hold kv (p) { run (p); observe u = used(⟨D.kv); }"),
            "`P.prefill` reads `used(D.kv)`, queue `D`'s")
    # its own pool and stage, and naming a top-level delay stage in a run, link
    compile_src(qprog("hold kv (p) { run (p); observe u = used(kv) + queue(P); run tool (1); }"))


def test_an_entry_may_not_read_the_sessions_built_in_attributes():
    refused(qprog("hold kv (p) { run (p); observe u = ⟨serial; }"),
            "`P.prefill` reads `serial`, the session's attribute")
    refused(qprog("hold kv (p) { run (p); observe u = ⟨turn_no; }"),
            "`P.prefill` reads `turn_no`, the session's attribute")
    compile_src(qprog("hold kv (p) { run (p); observe u = cached + computed + o; } cache (p)"))


def test_a_route_may_not_hold_grow_or_release_another_queues_pool():
    msg = "is a pool of queue `D`, which only `D`'s entries hold, grow, load and release"
    refused(qprog(route="P.prefill (prompt);\n grow ⟨D.kv (1);"), f"`grow D.kv` in `gw.route`: `D.kv` {msg}")
    refused(qprog(route="P.prefill (prompt);\n release ⟨D.kv;"), f"`release D.kv` in `gw.route`: `D.kv` {msg}")
    refused(qprog(route="hold ⟨D.kv (1) { P.prefill (prompt); }"), f"`hold D.kv` in `gw.route`: `D.kv` {msg}")
    # a top-level pool is the route's to hold, as a server's
    compile_src(qprog(route="hold top (1) { P.prefill (prompt); }"))


def test_request_gw_only_in_the_workloads_session():
    where = "the workload's session requests"
    src = qprog()
    top = src.replace("\n  session { request gw; end; } }", " }\nsession { ⟨request gw; end; }")
    refused(top, f"`request gw;` outside the workload's session: {where}")
    server = src.replace("session { request gw; end; } }", "session { request; end; } }\nserver { ⟨request gw; }")
    refused(server, f"`request gw;` outside the workload's session: {where}")
    refused(qprog(route="P.prefill (prompt);\n ⟨request gw;"), f"`request gw;` in `gw.route`: {where}")
    refused(src.replace("init { set prompt = 32;", "init { ⟨request gw; set prompt = 32;"),
            f"`request gw;` outside the workload's session: {where}")


def test_a_def_argument_may_not_read_what_its_entry_call_sets():
    src = """queue D : decode {
  pool kv { cap 1000; }
  serve step { cost 1; memory kv; };
  decode (p) { hold kv (p) { prefill (p) growing kv; mark first; set known = p; } }
}
def go(x) { D.decode (1); observe y = x; }
def thru(Q, x) { Q.decode (1); observe y = x; }
queue gw : gateway { route { ROUTE } }
workload { arrive batch(1); init { set prompt = 32; }
  session { request gw; end; } }
run { horizon 100; }
"""
    msg = "which its body assigns: the body would read the new value; pass a copy"
    refused(src.replace("ROUTE", "go(⟨D.first);"), f"an argument of `go` reads `D.first`, {msg}")
    refused(src.replace("ROUTE", "go(⟨D.known + 1);"), f"an argument of `go` reads `D.known`, {msg}")
    refused(src.replace("ROUTE", "go(⟨cached);"), f"an argument of `go` reads `cached`, {msg}")
    # the queue a parameter names
    refused(src.replace("ROUTE", "thru(D, ⟨D.first);"), f"an argument of `thru` reads `D.first`, {msg}")
    compile_src(src.replace("ROUTE", "set f = 1; go(f);"))


# -- a family of one: its member may be written with its index, and an index is checked ----------------


FAMILY_OF_ONE = """pool q { cap 1; admit via S[0]; }
pool kv[1] { cap 4; }
stage S[1] : step { budget 1; cost 1; memory kv[0]; }
workload { arrive batch(1); }
session { hold q (1), kv[0] (1) { run S[0] decode (1); } }
"""


def test_a_declaration_names_a_family_of_ones_member_with_its_index():
    # language.txt §2 Queues: "a family of one is still a family … at size one also takes D.kv", and
    # docs/language.md: "A member of a family of one may be written with an index (D[0]): the index goes
    # away". `admit via S[0]` and `memory kv[0]` were refused ("name it without an index"); they are the
    # program written without the indexes, IR for IR.
    with_index = compile_src(FAMILY_OF_ONE)
    without = compile_src(FAMILY_OF_ONE.replace("via S[0]", "via S").replace("memory kv[0]", "memory kv"))
    assert ir_bytes(with_index) == ir_bytes(without)
    refused(FAMILY_OF_ONE.replace("via S[0]", "via S[⟨1]"), "`S[1]`: `S` has members 0 … 0")
    refused(FAMILY_OF_ONE.replace("via S[0]", "via S[⟨serial]"), "the index of `S` must be a constant")


def test_a_declaration_naming_one_member_of_a_larger_family_says_what_pairs():
    # one pool admitted by a member of a family of 2: the message said "name it without an index", whose
    # program is refused in turn ("declare `q[2]`"); it now says both at once
    refused("pool q { cap 1; admit via ⟨S[1]; }\nstage S[2] : step { budget 1; cost 1; }\n"
            "workload { arrive batch(1); }\nsession { hold q (1) { run S[1] decode (1); } }\n",
            "`S[…]`: a declaration does not name one member of a family; `q` is one pool and `S` a stage "
            "family of 2")
