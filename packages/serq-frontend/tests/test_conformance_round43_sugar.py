"""language.txt §2 (The serving vocabulary, The two sides, Queues), §3 (Branching, at admission, hidden,
Gauges) and program-reference.txt, round 43: the sugar of the least-exercised keywords (`tool`, `transfer`,
`server`, `share`, `branch with`, `at admission`, aggregates in a `gauge`, definitions) in odd but legal
forms, nested in loops, branches and holds, each compiling to the IR of the kernel program the spec says it
means (byte for byte, spans left out); and the neighbouring illegal forms of `nic`, `pull`, `latency`,
`drop`, `load`, `choose`, `hidden`, `gauge`, `record`, `trace`/`ordered`, `init`, `closed` and `exclusive`,
each refused with one message at the column marked ``⟨`` (file:line:col, the line quoted and a caret under
the column).

* "They are sugar: the parser rewrites each to the kernel statement it stands for" (prefill W; → run
  prefill (W);, tool Z; → run tool (Z);, transfer (X) from P to Q (n); → run link (X); load Q (n); release
  P;, on a step engine run E prefill (T), prefill[j] → the role's array, prefill on P (W) → run P (W)).
* "request; runs the server once. The parser splices the server's statements in its place — at any depth,
  as often as it is written".
* "branch with (p) … is sugar the parser rewrites to branch (~bernoulli(p))".
* "The bindings are substituted into the header's expressions by the parser … A later binding sees the
  earlier ones."
* "max k in 2 (used(kv[k])) is max(used(kv[0]), used(kv[1]))"; a gauge "has a number for its index".
* program-reference.txt, def: "a program with a def has the IR of the one written out"; "a serving form in
  it finds its stage at the use".
"""

from __future__ import annotations

import pytest
from sqhelpers import compile_src, ir_bytes, located, refused

pytestmark = pytest.mark.timeout(120)

STAGES = """stage prefill : delay;
stage decode : delay;
stage tool : delay;
stage link : delay;
stage think : delay;
pool p { cap 10; }
pool q { cap 10; }
"""

EQUIVALENT = [
    # every serving form in a server spliced into a loop and a branch with, with a tool on the client's side
    ("serving_forms_in_a_server_inside_a_loop",
     STAGES + """workload {
  arrive batch(1);
  session { loop { request; branch with (0.5) { tool 1; } else { end; } } }
}
server { hold p (1) { prefill 2; hold q (1) { transfer 3 from p to q (1); decode 4; } } }
""",
     STAGES + """workload { arrive batch(1); }
session {
  loop {
    hold p (1) { run prefill (2); hold q (1) { run link (3); load q (1); release p; run decode (4); } }
    branch (~bernoulli(0.5)) { run tool (1); } else { end; }
  }
}
"""),
    # request written twice, the second inside a branch's else: the server's block spliced at both
    ("request_twice_at_two_depths",
     STAGES + """workload { arrive batch(1); session { request; branch (serial == 0) { } else { request; } } }
server { set t0 = now; tool (serial + 1); observe r = now - t0; }
""",
     STAGES + """workload { arrive batch(1); }
session {
  set t0 = now; run tool (serial + 1); observe r = now - t0;
  branch (serial == 0) { } else { set t0 = now; run tool (serial + 1); observe r = now - t0; }
}
"""),
    # a form's argument without parentheses, a compound one, and `on` a stage of another name
    ("forms_without_parentheses_and_on_a_stage",
     STAGES + """workload { arrive batch(1); }
session { tool 1 + 2 * serial; tool on think (3); prefill on decode 4; decode -(-5); }
""",
     STAGES + """workload { arrive batch(1); }
session { run tool (1 + 2 * serial); run think (3); run decode (4); run decode (-(-5)); }
"""),
    # a transfer over two NICs under bottleneck, inside nested holds of a loop
    ("transfer_on_two_stages_in_a_loop",
     """stage e : ps(2);
stage i : ps(1);
share bottleneck;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(1); }
session { loop { hold p (2) { hold q (2) { transfer on e, i (4 / 2) from p to q (serial + 1); } } end; } }
""",
     """stage e : ps(2);
stage i : ps(1);
share bottleneck;
pool p { cap 10; }
pool q { cap 10; }
workload { arrive batch(1); }
session { loop { hold p (2) { hold q (2) { run e, i (4 / 2); load q (serial + 1); release p; } } end; } }
"""),
    # on a family of step engines the index is the engine's, the mode the role's; growing passes through
    ("forms_on_a_family_of_step_engines",
     """pool kv[2] { cap 9; }
stage E[2] : step { budget 4; cost 1; }
workload { arrive batch(1); }
session {
  choose j in 2 by (used(kv[j]), -j);
  hold kv[j] (1) { prefill [j] (5) growing kv[j]; decode [j] 2 growing kv[j]; prefill on E[1] 1; }
}
""",
     """pool kv[2] { cap 9; }
stage E[2] : step { budget 4; cost 1; }
workload { arrive batch(1); }
session {
  choose j in 2 by (used(kv[j]), -j);
  hold kv[j] (1) { run E[j] prefill (5) growing kv[j]; run E[j] decode (2) growing kv[j]; run E[1] prefill (1); }
}
"""),
    # branch with nested in branch with, each with and without else, the probability a let and an attribute
    ("branch_with_nested",
     STAGES + """let P = 0.25;
workload { arrive batch(1); }
session {
  set x = 0.5;
  branch with (P) { branch with (x * P) { tool 1; } } else { branch with (1 - x) { } else { tool 2; } }
}
""",
     STAGES + """let P = 0.25;
workload { arrive batch(1); }
session {
  set x = 0.5;
  branch (~bernoulli(P)) { branch (~bernoulli(x * P)) { run tool (1); } }
  else { branch (~bernoulli(1 - x)) { } else { run tool (2); } }
}
"""),
    # every header clause reading the bindings, a later binding reading an earlier one, a lease after the
    # cache, inside a server
    ("at_admission_in_every_header_clause",
     STAGES + """workload { arrive batch(1); session { request; } }
server {
  hold p (g) reserve (h + 2), q (h) reuse (g) at admission (h = min(cachedin(p), 3), g = h + 1) {
    tool 1;
  } cache (5) lease p (inf);
}
""",
     STAGES + """workload { arrive batch(1); }
session {
  hold p (min(cachedin(p), 3) + 1) reserve (min(cachedin(p), 3) + 2), q (min(cachedin(p), 3))
       reuse (min(cachedin(p), 3) + 1) {
    run tool (1);
  } cache (5) lease p (inf);
}
"""),
    # max and min over a family in a gauge, written out; a min of one term is the term
    ("aggregates_in_gauges",
     """pool kv[3] { cap 9; }
gauge top = max k in 3 (used(kv[k]));
gauge low = min k in 3 (free(kv[k])) + min k in 1 (holders(kv[k]));
workload { arrive batch(1); }
session { }
""",
     """pool kv[3] { cap 9; }
gauge top = max(used(kv[0]), used(kv[1]), used(kv[2]));
gauge low = min(free(kv[0]), free(kv[1]), free(kv[2])) + holders(kv[0]);
workload { arrive batch(1); }
session { }
"""),
    # a statement definition of serving forms used in a loop and in a branch: the forms find their stages
    # at the use; an expression definition's argument put in inside parentheses
    ("definitions_of_serving_forms",
     STAGES + """def half(x) = x / 2;
def serve1(w) { prefill half(w); decode w; }
workload { arrive batch(1); }
session { loop { serve1(3 + 1); branch (serial == 0) { serve1(2); } end; } }
""",
     STAGES + """workload { arrive batch(1); }
session {
  loop {
    run prefill ((3 + 1) / 2); run decode (3 + 1);
    branch (serial == 0) { run prefill (2 / 2); run decode (2); }
    end;
  }
}
"""),
    # drop and load are kernel statements: written in a server they are spliced as they are
    ("drop_and_load_in_a_server",
     STAGES + """workload { arrive batch(1); session { request; drop p; } }
server { hold p (2) { hold q (3) { load q (1); load q (1); } cache (2); } cache (2); }
""",
     STAGES + """workload { arrive batch(1); }
session { hold p (2) { hold q (3) { load q (1); load q (1); } cache (2); } cache (2); drop p; }
"""),
    # the declarations' optional parts written out at their defaults: fifo's count 1, serve admission
    ("defaults_written_out",
     """stage s : fifo(1);
stage e : step { budget 4; cost 1; serve admission; }
workload { arrive batch(1); }
session { run s (1); prefill (1); }
""",
     """stage s : fifo;
stage e : step { budget 4; cost 1; }
workload { arrive batch(1); }
session { run s (1); run e prefill (1); }
"""),
    # a form's argument that begins with parentheses and goes on: the whole expression is the work
    ("an_argument_that_goes_on_after_its_parentheses",
     STAGES + "workload { arrive batch(1); }\nsession { prefill (2) * 3; decode (1) + (serial); }\n",
     STAGES + "workload { arrive batch(1); }\nsession { run prefill ((2) * 3); run decode ((1) + (serial)); }\n"),
    # a transfer between members of two families
    ("a_transfer_between_family_members",
     """stage link : delay;
pool kv[2] { }
pool kw[2] { }
workload { arrive batch(1); }
session { choose j in 2 by (j); hold kv[1] (1) { hold kw[j] (2) { transfer (1) from kv[1] to kw[j] (2); } } }
""",
     """stage link : delay;
pool kv[2] { }
pool kw[2] { }
workload { arrive batch(1); }
session { choose j in 2 by (j); hold kv[1] (1) { hold kw[j] (2) { run link (1); load kw[j] (2); release kv[1]; } } }
"""),
    # request written inside a definition the workload's session uses, in a loop
    ("request_inside_a_definition",
     STAGES + """def ask() { request; }
workload { arrive batch(1); session { loop { ask(); branch (serial == 0) { end; } } } }
server { tool 2; }
""",
     STAGES + """workload { arrive batch(1); }
session { loop { run tool (2); branch (serial == 0) { end; } } }
"""),
    # which stage, by the stages declared above the form (docs/language.md): a stage named after the role
    # wins over the step engine; one declared below the form is not seen; a server's form looks above its
    # own text; a definition's form above its use
    ("the_roles_stage_before_the_step_engine",
     "stage e : step { budget 1; cost 1; }\nstage decode : delay;\nworkload { arrive batch(1); }\nsession { decode 1; }\n",
     "stage e : step { budget 1; cost 1; }\nstage decode : delay;\nworkload { arrive batch(1); }\nsession { run decode (1); }\n"),
    ("a_roles_stage_below_the_form_is_not_seen",
     "stage e : step { budget 1; cost 1; }\nworkload { arrive batch(1); }\nsession { prefill 1; }\nstage prefill : delay;\n",
     "stage e : step { budget 1; cost 1; }\nworkload { arrive batch(1); }\nsession { run e prefill (1); }\nstage prefill : delay;\n"),
    ("a_servers_form_looks_above_its_own_text",
     "stage e : step { budget 1; cost 1; }\nworkload { arrive batch(1); session { request; } }\nstage prefill : delay;\n"
     "server { prefill 1; }\n",
     "stage e : step { budget 1; cost 1; }\nworkload { arrive batch(1); }\nstage prefill : delay;\nsession { run prefill (1); }\n"),
    ("a_definitions_form_looks_above_its_use",
     "stage e : step { budget 1; cost 1; }\ndef f() { prefill 1; }\nstage prefill : delay;\nworkload { arrive batch(1); }\n"
     "session { f(); }\n",
     "stage e : step { budget 1; cost 1; }\nstage prefill : delay;\nworkload { arrive batch(1); }\nsession { run prefill (1); }\n"),
    # a member's pool of a family of one, in a gauge: D[0].kv and D.kv are one reference (§2, Queues: "at
    # size one also takes D.kv")
    ("a_family_of_ones_pool_in_a_gauge",
     "queue D[1] : decode { pool kv { } serve fifo; decode (prompt) { hold kv (prompt) { run (1); mark done; } } }\n"
     "gauge g = holders(D.kv);\nworkload { arrive batch(1); }\n"
     "session { set prompt = 2; D[0].decode (prompt); observe x = D.done; }\n",
     "queue D[1] : decode { pool kv { } serve fifo; decode (prompt) { hold kv (prompt) { run (1); mark done; } } }\n"
     "gauge g = holders(D[0].kv);\nworkload { arrive batch(1); }\n"
     "session { set prompt = 2; D[0].decode (prompt); observe x = D.done; }\n"),
    # forms on a queue's step engine from the session: the queue's stage is the program's under its name,
    # a step engine, so the run gets the role's mode; with no other stage `prefill [1]` finds it too
    ("forms_on_a_queues_step_engine",
     "queue P[2] : prefill { pool kv { } serve step { budget 4; cost 1; } "
     "prefill (prompt) { hold kv (prompt) { prefill (prompt) growing kv; } } }\n"
     "workload { arrive batch(1); }\nsession { set prompt = 2; P[0].prefill (prompt); prefill on P[1] (5); "
     "decode on P[0] 3; prefill [1] 4; }\n",
     "queue P[2] : prefill { pool kv { } serve step { budget 4; cost 1; } "
     "prefill (prompt) { hold kv (prompt) { prefill (prompt) growing kv; } } }\n"
     "workload { arrive batch(1); }\nsession { set prompt = 2; P[0].prefill (prompt); run P[1] prefill (5); "
     "run P[0] decode (3); run P[1] prefill (4); }\n"),
    # a form two definitions deep finds its stage above the outermost use, not above the inner one
    ("a_form_two_definitions_deep",
     "stage e : step { budget 1; cost 1; }\ndef inner() { prefill 1; }\ndef outer() { inner(); }\n"
     "stage prefill : delay;\nworkload { arrive batch(1); }\nsession { outer(); }\n",
     "stage e : step { budget 1; cost 1; }\nstage prefill : delay;\nworkload { arrive batch(1); }\n"
     "session { run prefill (1); }\n"),
    # request inside the session side's own hold at admission: the server spliced in the body, where the
    # binding it reads is set at the body's top
    ("request_inside_a_hold_at_admission",
     "stage d : delay;\npool p { cap 3; }\n"
     "workload { arrive batch(1); session { hold p (h) at admission (h = 1) { request; } } }\nserver { run d (h); }\n",
     "stage d : delay;\npool p { cap 3; }\n"
     "workload { arrive batch(1); }\nsession { hold p (h) at admission (h = 1) { run d (h); } }\n"),
]

@pytest.mark.parametrize("sugar, kernel", [c[1:] for c in EQUIVALENT], ids=[c[0] for c in EQUIVALENT])
def test_sugar_compiles_to_the_kernel_it_means(sugar, kernel):
    assert ir_bytes(compile_src(sugar)) == ir_bytes(compile_src(kernel))


Q_P = """queue P : prefill {
  pool kv { }
  serve fifo;
  nic ps(1);
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
"""
Q_D = """queue D : decode {
  pool kv { }
  serve fifo;
  nic ps(1);
  decode (prompt) from s { hold kv (prompt) { transfer (1) from s to kv (1); } cache (prompt); }
}
"""
Q_CALL = "workload { arrive batch(1); }\nsession { set prompt = 2; P.prefill (prompt); D.decode (prompt) from P; }\n"
W1 = "workload { arrive batch(1); }\n"

ILLEGAL = [
    # nic twice in one queue
    ("a_second_nic", "queue D : decode { pool kv { } serve fifo; nic ps(1); ⟨nic ps(2); }\n" + W1 + "session { }\n",
     "queue `D` has two `nic`s"),
    # a pull's share that is no policy
    ("a_pulls_unknown_share", Q_P + Q_D + "⟨D pull P latency 1 share fair;\n" + Q_CALL,
     "`share fair`: the policies are maxmin and bottleneck"),
    # a pull's latency that reads an attribute
    ("a_pulls_latency_of_an_attribute", Q_P + Q_D + "D pull P latency ⟨serial share maxmin;\n" + Q_CALL,
     "must be a constant"),
    # the pull written before its reader is declared
    ("a_pull_above_its_queues", "⟨D pull P share maxmin;\n" + Q_P + Q_D + Q_CALL,
     "no queue `D` is declared above"),
    # a reader with a second source
    ("a_reader_with_two_sources",
     Q_P + Q_P.replace("queue P", "queue R") + Q_D + "D pull P share maxmin;\n⟨D pull R share maxmin;\n" + Q_CALL,
     "a reader has one source"),
    # `share` beside a pull relation
    ("share_beside_a_pull", Q_P + Q_D + "D pull P share maxmin;\n⟨share bottleneck;\n" + Q_CALL,
     "`share` is given twice"),
    # latency on a plain stage declaration
    ("latency_on_a_stage", "stage l : ps(1) ⟨latency 1;\n" + W1 + "session { }\n", "unexpected `latency`"),
    # a link with an entry takes no latency
    ("latency_on_a_link_with_an_entry",
     "queue L : link { serve ps(1) ⟨latency 1; transfer (n) { run (n); } }\n" + W1 + "session { }\n",
     "only a link without an entry takes one"),
    # drop with an amount, inside a loop's branch
    ("drop_with_an_amount", STAGES + W1 + "session { loop { branch (1) { drop p ⟨(3); } end; } }\n",
     "unexpected `(`"),
    # drop of a stage
    ("drop_of_a_stage", STAGES + W1 + "session { drop ⟨tool; }\n", "`tool` is a stage, and a pool is wanted here"),
    # load with no amount, inside a server
    ("load_without_amount", STAGES + "workload { arrive batch(1); session { request; } }\n"
     "server { hold q (1) { load q⟨; } }\n", "`load` takes its units in parentheses"),
    # load outside every hold of its pool, in a branch with
    ("load_in_no_hold", STAGES + W1 + "session { hold p (1) { branch with (0.5) { load ⟨q (1); } } }\n",
     "`load q` stands in no hold of `q`"),
    # transfer with no from/to, in a definition used in a loop: reported in the body
    ("transfer_without_from_in_a_definition",
     STAGES + "def move(x) { hold q (1) { transfer (x)⟨; } }\n" + W1 + "session { loop { move(1); end; } }\n",
     "a transfer says where the KV moves"),
    # transfer into the pool it reads from
    ("transfer_into_its_own_pool", STAGES + W1 + "session { hold p (1) { transfer (1) from p to ⟨p (1); } }\n",
     "moves the KV from one pool to another"),
    # transfer with growing
    ("transfer_growing", STAGES + W1 + "session { hold p (1) { hold q (1) { transfer (1) from p to q (1)⟨ growing q; } } }\n",
     "missing `;` (found `growing` next)"),
    # tool growing on a delay stage, inside branch with
    ("tool_growing_on_a_delay_stage",
     STAGES + W1 + "session { hold q (1) { branch with (0.5) { tool (1) growing ⟨q; } } }\n",
     "`tool` is a delay stage, whose work is time"),
    # tool on a step engine
    ("tool_on_a_step_engine", "stage tool : step { budget 1; cost 1; }\n" + W1 + "session { ⟨tool (1); }\n",
     "`tool` is a step stage"),
    # choose with no key, inside a server
    ("choose_with_no_key", "stage s[2] : delay;\nworkload { arrive batch(1); session { request; } }\n"
     "server { choose j in 2 by (⟨); }\n", "`by` takes its keys, one at least"),
    # choose of a built-in attribute
    ("choose_a_builtin", "stage s[2] : delay;\n" + W1 + "session { ⟨choose turn_no in 2 by (1); }\n",
     "is a built-in attribute"),
    # choose of no candidates
    ("choose_of_none", "let N = 0;\nstage s[2] : delay;\n" + W1 + "session { choose j in ⟨N by (j); }\n",
     "the count of candidates is 0"),
    # hidden read in a hold's header through an at admission binding
    ("hidden_in_a_binding", STAGES + "workload { arrive batch(1); hidden o; }\n"
     "session { set o = 2; hold p (h) at admission (h = ⟨o) { } }\n", "`o` is hidden"),
    # hidden read by a step engine's serve key
    ("hidden_in_a_serve_key", "stage e : step { budget 1; cost 1; serve by (⟨o); }\n"
     "workload { arrive batch(1); hidden o; }\nsession { set o = 2; prefill (1); }\n", "`o` is hidden"),
    # hidden of an attribute the scheduler sets
    ("hidden_computed", STAGES + "workload { arrive batch(1); hidden ⟨computed; }\nsession { }\n",
     "`computed` cannot be hidden"),
    # hidden of a let constant's name
    ("hidden_a_let", "let o = 1;\nworkload { arrive batch(1); hidden ⟨o; }\nsession { }\n",
     "the program sets no attribute `o`"),
    # hidden as an item
    ("hidden_outside_the_workload", "⟨hidden o;\n" + W1 + "session { set o = 1; }\n",
     "`hidden` does not begin an item"),
    # a gauge's index read from an attribute, inside an aggregate
    ("gauge_index_of_an_attribute",
     "pool kv[2] { }\ngauge g = max j in 2 (used(kv[⟨serial]));\n" + W1 + "session { }\n",
     "a gauge may not read an attribute"),
    # a gauge of a context variable
    ("gauge_of_a_context_variable", "pool p { }\ngauge g = ⟨size;\n" + W1 + "session { }\n",
     "`size` is not readable in a gauge"),
    # a gauge inside a block
    ("gauge_inside_a_session", "pool p { }\n" + W1 + "session { loop { ⟨gauge g = used(p); } }\n",
     "`gauge` begins an item"),
    # a record column of a name the simulator adds
    ("record_column_turn", STAGES + W1 + "session { record r { a = 1; ⟨turn = 2; } }\n",
     "`turn` is a column every record has"),
    # a record in init
    ("record_in_init", STAGES + "workload { arrive batch(1); init { ⟨record r { a = 1; } } }\nsession { }\n",
     "`init` holds only `set` and `observe`"),
    # ordered twice
    ("ordered_twice", STAGES + 'workload { arrive batch(1); trace "t.csv" ordered ⟨ordered; }\nsession { }\n',
     "`ordered` is written twice"),
    # ordered without a trace
    ("ordered_alone", STAGES + "workload { arrive batch(1); ⟨ordered; }\nsession { }\n", "unexpected `ordered`"),
    # a closed population of a let of 0, and of a fraction
    ("closed_population_zero", "let N = 0;\n" + STAGES + "workload { arrive closed(⟨N); }\nsession { }\n",
     "must be an integer of at least 1, not 0"),
    ("closed_population_fraction", STAGES + "workload { arrive closed(⟨2.5); }\nsession { }\n",
     "must be an integer of at least 1, not 2.5"),
    # poisson's rate of an attribute
    ("poisson_rate_of_an_attribute", STAGES + "workload { arrive poisson(⟨turn_no); }\nsession { }\n",
     "the arrival rate must be a constant"),
    # exclusive with another serve, exclusive of decode
    ("exclusive_and_decode_first",
     "stage e : step { budget 1; cost 1; serve exclusive prefill; ⟨serve decode first; }\n" + W1 + "session { }\n",
     "`serve exclusive prefill` is a rule, not an order"),
    ("exclusive_decode", "stage e : step { budget 1; cost 1; serve exclusive ⟨decode; }\n" + W1 + "session { }\n",
     "unexpected `decode`"),
    # a server's turn inside branch with inside a loop
    ("turn_in_a_server_deep", STAGES + "workload { arrive batch(1); session { request; } }\n"
     "server { loop { branch with (0.5) { ⟨turn; } end; } }\n", "`turn;` in a server"),
    # request in init
    ("request_in_init", STAGES + "workload { arrive batch(1); init { ⟨request; } session { request; } }\n"
     "server { }\n", "`init` holds only `set` and `observe`"),
    # init twice
    ("init_twice", STAGES + "workload { arrive batch(1); init { } ⟨init { } }\nsession { }\n",
     "the workload has two `init`s"),
    # a serving form other than transfer on two stages
    ("prefill_on_two_stages", STAGES + W1 + "session { prefill on tool, ⟨think (1); }\n",
     "`prefill on` names one stage"),
    ("decode_on_two_stages_growing", STAGES + W1 + "session { hold p (1) { decode on tool, ⟨think (1) growing p; } }\n",
     "`decode on` names one stage"),
    # transfer naming one stage twice
    ("transfer_on_a_stage_twice",
     "stage a : ps(1);\nshare maxmin;\npool p { }\npool q { }\n" + W1
     + "session { hold p (1) { hold q (1) { transfer on a, ⟨a (1) from p to q (1); } } }\n",
     "`a` is named twice in one run"),
    # a family of step engines named without its index, and an index past its members
    ("prefill_on_a_family_unindexed", "stage E[2] : step { budget 1; cost 1; }\n" + W1
     + "session { prefill on ⟨E (1); }\n", "`E` is a family of 2; index it"),
    ("prefill_index_past_the_family", "stage E[2] : step { budget 1; cost 1; }\n" + W1
     + "session { prefill [⟨2] (1); }\n", "`E` has members 0 … 1"),
    # two step engines and no `on`
    ("prefill_with_two_engines", "stage e : step { budget 1; cost 1; }\nstage f : step { budget 1; cost 1; }\n" + W1
     + "session { ⟨prefill 1; }\n", "several step engines qualify (e, f)"),
    # a server's request written in a definition: reported in the body, with a note at the use
    ("request_in_a_definition_a_server_uses",
     STAGES + "def ask() { ⟨request; }\nworkload { arrive batch(1); session { request; } }\nserver { ask(); }\n",
     "a server does not request itself"),
    # branch with of a constant outside [0, 1]
    ("branch_with_above_one", STAGES + W1 + "session { loop { branch with (⟨2) { end; } } }\n",
     "a probability is between 0 and 1, got 2"),
    # a binding that reads one bound after it
    ("a_binding_reads_a_later_one", STAGES + W1 + "session { hold p (h) at admission (h = ⟨g, g = 1) { } }\n",
     "a binding reads only the ones before it"),
    # an aggregate's count of an attribute, in a gauge-free observe
    ("an_aggregate_count_of_an_attribute", STAGES + W1 + "session { observe x = sum j in ⟨serial (j); }\n",
     "must be a constant"),
    # an entry of the reader called from a queue it does not pull from
    ("an_entry_called_from_another_source",
     Q_P + Q_P.replace("queue P", "queue R") + Q_D + "D pull P share maxmin;\n" + W1
     + "session { set prompt = 2; R.prefill (prompt); D.decode (prompt) from ⟨R; }\n",
     "`D.decode` is called `from R`, and `D` pulls from `P`"),
    # a transfer without on in a queue that pulls from none: at the transfer, with a note at the call
    ("a_transfer_without_on_and_no_pull",
     Q_P + Q_D.replace("{ transfer", "{ ⟨transfer") + W1
     + "session { set prompt = 2; P.prefill (prompt); D.decode (prompt) from P; }\n",
     "`D`'s `transfer` names no NIC and `D` pulls from no queue"),
    # a link entry's argument that draws
    ("a_link_entrys_argument_draws",
     "queue L : link { serve ps(1); transfer (n) { run (n); } }\npool p { }\npool q { }\n" + W1
     + "session { hold p (1) { hold q (1) { L.transfer (⟨~exp(1)) from p to q (1); } } }\n",
     "the argument for `n` draws"),
    # from a queue whose entry leases on one way through it only
    ("from_a_queue_that_leases_on_one_way_only",
     Q_P.replace("prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }",
                 "prefill (prompt) { branch (prompt > 1) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }"
                 " else { hold kv (prompt) { run (1); } } }")
     + Q_D + "D pull P share maxmin;\n" + W1
     + "session { set prompt = 2; P.prefill (prompt); D.decode (prompt) from ⟨P; }\n",
     "leases nothing on some way through it"),
    # an entry sees its own (§2, Queues): the body reads no attribute the session set, nor serial, nor
    # another queue's; its header reads no attribute at all; it holds only its queue's pools
    ("an_entry_body_reads_a_session_attribute",
     "queue D : decode { pool kv { } serve fifo; decode (prompt) { hold kv (prompt) { run (⟨x); } } }\n"
     "workload { arrive batch(1); }\nsession { set x = 3; set prompt = 1; D.decode (prompt); }\n",
     "`D.decode` reads `x`, a session attribute set outside the queue"),
    ("an_entry_body_reads_serial",
     "queue D : decode { pool kv { } serve fifo; decode (prompt) { hold kv (prompt) { run (⟨serial); } } }\n"
     "workload { arrive batch(1); }\nsession { set prompt = 1; D.decode (prompt); }\n",
     "`D.decode` reads `serial`, the session's attribute"),
    ("an_entry_header_reads_a_hidden_attribute",
     "queue D : decode { pool kv { } serve fifo; decode (prompt) { hold kv (⟨o) { run (o); } } }\n"
     "workload { arrive batch(1); hidden o; }\nsession { set o = 2; set prompt = 1; D.decode (prompt); }\n",
     "the header of a hold in `D.decode` reads `o`"),
    ("an_entry_reads_another_queues_attribute",
     "queue A : decode { pool kv { } serve fifo; decode (prompt) { set k = 1; hold kv (prompt) { run (1); } } }\n"
     "queue D : decode { pool kv { } serve fifo; decode (prompt) { hold kv (prompt) { run (⟨A.k); } } }\n"
     "workload { arrive batch(1); }\nsession { set prompt = 1; A.decode (prompt); D.decode (prompt); }\n",
     "`D.decode` reads `A.k`, another queue's"),
    ("an_entry_holds_a_pool_not_its_own",
     "pool g { }\nqueue D : decode { pool kv { } serve fifo; decode (prompt) { hold kv (prompt) { hold ⟨g (1) { run (1); } } } }\n"
     "workload { arrive batch(1); }\nsession { set prompt = 1; D.decode (prompt); }\n",
     "`g` is not a pool of `D`"),
    # a tool whose stage is declared only below it
    ("a_tool_whose_stage_is_below", W1 + "session { ⟨tool 1; }\nstage tool : delay;\n",
     "`tool` finds no stage to run on"),
    # a family of one called without its index
    ("a_family_of_one_called_without_an_index",
     "queue D[1] : decode { pool kv { } serve fifo; decode (prompt) { hold kv (prompt) { run (1); } } }\n" + W1
     + "session { set prompt = 2; ⟨D.decode (prompt); }\n", "`D` is a family of 1; index it"),
    # request in the workload's turn block
    ("request_in_a_turn_block", STAGES + "workload { arrive batch(1); turn { ⟨request; } session { turn; request; } }\n"
     "server { }\n", "`turn` holds only `set` and `observe`"),
    # at admission written after the hold's block, in a server
    ("at_admission_after_the_block", STAGES + "workload { arrive batch(1); session { request; } }\n"
     "server { hold p (1) { tool 1; } ⟨at admission (h = 1) }\n", "`at admission` goes before the hold's block"),
    # a second session in the workload
    ("a_second_workload_session", STAGES + "workload { arrive batch(1); session { request; } ⟨session { request; } }\n"
     "server { }\n", "a second `session` in the workload"),
]

@pytest.mark.parametrize("src, message", [c[1:] for c in ILLEGAL], ids=[c[0] for c in ILLEGAL])
def test_illegal_forms_refused_at_their_place(src, message):
    e = refused(src, message)
    text, line, col = located(src)
    lines = str(e).splitlines()
    # the source line quoted, and a caret under the column
    assert lines[1].strip() == text.splitlines()[line - 1].strip(), lines
    indent = len(lines[1]) - len(text.splitlines()[line - 1])
    assert lines[2] == " " * (indent + col - 1) + "^", lines


DEF_BASE = """stage tool : delay;
def think() = ~exp(1);
def half(x) = x / 2;
workload { arrive batch(1); }
session { loop { tool think(); tool half(3); branch with (0.5) { end; } } }
"""


@pytest.mark.parametrize("defs", [{"think": "~erlang(4, 1)"}, {"think": "~erlang(4, 1)", "half": "x / 4"}])
def test_a_definition_given_from_outside_is_the_program_written_with_that_body(defs):
    """program-reference.txt, def: "An expression definition's body can be given from outside … The program
    is then the one written with that body": the serving forms that use it compile to the IR of the
    program whose definitions say so."""
    written = DEF_BASE
    for name, body in defs.items():
        old = next(line for line in DEF_BASE.splitlines() if line.startswith(f"def {name}("))
        written = written.replace(old, old.split("=")[0] + "= " + body + ";")
    assert written != DEF_BASE
    assert ir_bytes(compile_src(DEF_BASE, defs=defs)) == ir_bytes(compile_src(written))


def test_a_body_from_outside_that_reads_no_parameter_is_refused_in_it_with_the_use():
    """A body given from outside is read as the definition's body: `y` is no parameter of half(x), the
    error at the body's own text (defs['half']:1:1) and a note at the use in the loop."""
    import serq_frontend

    with pytest.raises(serq_frontend.CompileError) as e:
        compile_src(DEF_BASE, defs={"half": "y / 4"})
    lines = str(e.value).splitlines()
    assert lines[:3] == ["defs['half']:1:1: error: unknown name `y`", "  y / 4", "  ^"], lines
    assert lines[3].startswith("<source>:5:37: note: in the expansion of `half`, used here"), lines
