"""Conformance of language.txt §2's forms, by hand, in the cases a port of the reference's tests brings:

* the serving vocabulary: "The parser rewrites each to the kernel statement it stands for … Which stage. A
  form finds its stage among the stages declared above it …: the stage whose name is the role's, prefill,
  link (or transfer), decode, tool; failing that, for prefill and decode, the step engine";
* the two sides: "request; runs the server once. The parser splices the server's statements in its place —
  at any depth, as often as it is written";
* `def NAME ( NAME , ... ) = expr ;` and `def NAME ( NAME , ... ) block`, `let`, the aggregates' count "a
  number, a constant's name or a parenthesised constant expression", `blocksize(p)` "(the pool's block,
  folded at link time)", `inf`;
* `at admission (x = e)`: "Everything in a hold's header — the units, reserve, reuse — is evaluated when
  the session is admitted, and a set above the hold is not";
* the workload: "init runs at arrival, turn at every turn statement", `serial`, `turn_no`, `arrive
  closed(n)` (a session that ends is replaced at once), `arrive renewal(x)` (the first arrival after one
  gap);
* the refusals the text states: a constant that is NaN, two names of one kind, a context variable read
  out of its place, a hidden attribute in a header or a queue key, the two lints (§3, Lints), the two
  sides' and the queues' rules, the Which-stage rule's none and several, the modes of a run, a binding that
  draws or that the body reads live, `cached` and `reuse` without `cache`, what a gauge may not read, an
  aggregate's index that shadows a name, a flow without a share.

Each program runs on the tier serQ picks and on the general engine (conform.run: the same JSON reports and
samples); every observe's samples are asserted as (session, time, value), and the figures named as the JSON
report reads them. Every number is derived in the case's comment.
"""

from __future__ import annotations

import pytest
from conform import refused, report_json, run

CASES = [
    # Which stage, by role name: prefill 2 runs on `prefill` (a fifo), decode 3 on `decode` (a fifo), tool 1
    # on `tool` (a delay). Two sessions at 0: s0 prefill [0, 2], decode [2, 5], tool [5, 6]; s1 waits for the
    # prefill [0, 2], runs [2, 4], reaches decode at 4 behind s0 (till 5): [5, 8], tool [8, 9]. prefill: two
    # completions, waits 0 and 2 (mean 1); decode: waits 0 and 1 (mean 0.5); tool: none.
    ("role_stages", """
stage prefill : fifo;
stage decode : fifo;
stage tool : delay;
workload { arrive batch(2); }
session { prefill 2; decode 3; tool 1; observe t = now; }
run { horizon 20; }
""", {"t": [(0, 6.0, 6.0), (1, 9.0, 9.0)]},
     {"prefill": {"completions": 2, "wait": 1.0, "service": 2.0}, "decode": {"completions": 2, "wait": 0.5},
      "tool": {"completions": 2, "wait": 0.0, "service": 1.0}}),
    # No stage named prefill or decode: both find the one step engine, in tokens of its budget. Budget 4,
    # cost 1: prefill 6 is 4 then 2 (ends at 2), decode 3 is one token an iteration: [2, 3], [3, 4], [4, 5].
    # The tool runs on `tool`, 0.5: ends at 5.5. Five iterations, 4, 2, 1, 1, 1 tokens: 9/5 a step.
    ("step_engine_for_prefill_and_decode", """
stage E : step { budget 4; cost 1; }
stage tool : delay;
workload { arrive batch(1); }
session { prefill 6; observe p = now; decode 3; observe d = now; tool 0.5; observe t = now; }
run { horizon 20; }
""", {"p": [(0, 2.0, 2.0)], "d": [(0, 5.0, 5.0)], "t": [(0, 5.5, 5.5)]},
     {"E": {"iterations": 5, "tokens": 1.8, "prefill_only": 2, "decode_only": 3}}),
    # `on STAGE` names the stage: two fifos a and b, prefill on a (1), decode on b (2). s0 a [0, 1], b [1, 3];
    # s1 a [1, 2], b [3, 5] (waits 1 at b).
    ("on_stage", """
stage a : fifo;
stage b : fifo;
workload { arrive batch(2); }
session { prefill on a (1); decode on b (2); observe t = now; }
run { horizon 20; }
""", {"t": [(0, 3.0, 3.0), (1, 5.0, 5.0)]},
     {"a": {"completions": 2, "wait": 0.5}, "b": {"completions": 2, "wait": 0.5}}),
    # request; splices the server's block where it is written, as often as written: two requests each, one
    # fifo of 1 s. s0 [0, 1] (k = 1 at 1), s1 [1, 2] (waits 1); s0's second request joins at 1 behind s1:
    # [2, 3] (waits 1); s1's at 2: [3, 4] (waits 1): mean wait 3/4. The server reads and sets the session's
    # attributes: k counts the requests.
    ("request_splices_the_server", """
stage s : fifo;
workload {
  arrive batch(2);
  init { set k = 0; }
  session { request; request; observe done = k; }
}
server { run s (1); set k = k + 1; observe t = now; }
run { horizon 20; }
""", {"t": [(0, 1.0, 1.0), (1, 2.0, 2.0), (0, 3.0, 3.0), (1, 4.0, 4.0)],
      "done": [(0, 3.0, 2.0), (1, 4.0, 2.0)]},
     {"s": {"completions": 4, "wait": 0.75}}),
    # A def of an expression and one of statements, the latter with a stage parameter: sq(3) = 9, then
    # twice(d, 1.5) runs d twice: [0, 1.5], [1.5, 3].
    ("definitions", """
def sq(x) = x * x;
def twice(st, w) { run st (w); run st (w); }
stage d : delay;
workload { arrive batch(1); }
session { observe q = sq(serial + 3); twice(d, 1.5); observe t = now; }
run { horizon 20; }
""", {"q": [(0, 0.0, 9.0)], "t": [(0, 3.0, 3.0)]}, {"d": {"completions": 2, "service": 1.5}}),
    # Aggregates over a let's count and a parenthesised constant: sum j in N (j * j) = 0 + 1 + 4 = 5;
    # max j in (N + 1) (j % 3) over 0 … 3 = 2; min j in 2 (10 - j) = 9. Over a pool family, written out
    # member by member: s0 holds m[1] (2) and m[2] (5) at 0; at 0.5 sum j in N (used(m[j])) = 7 and
    # max j in N (free(m[j])) = 10 (m[0] empty).
    ("aggregates", """
let N = 3;
pool m[N] { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session {
  observe s = sum j in N (j * j);
  observe x = max j in (N + 1) (j % 3);
  observe n = min j in 2 (10 - j);
  hold m[1] (2), m[2] (5) { run d (0.5); observe u = sum j in N (used(m[j])); observe f = max j in N (free(m[j])); }
}
run { horizon 20; }
""", {"s": [(0, 0.0, 5.0)], "x": [(0, 0.0, 2.0)], "n": [(0, 0.0, 9.0)], "u": [(0, 0.5, 7.0)],
      "f": [(0, 0.5, 10.0)]}, {}),
    # blocksize(p) folds to the pool's block, or 1 without one, and a let may read it: B = 4; a hold of 5
    # on kv takes two blocks (used 8), on plain 5; B2 = 1.
    ("blocksize_folds", """
let B = blocksize(kv);
let B2 = blocksize(plain);
pool kv { cap 100; block 4; }
pool plain { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session {
  observe b = B + 10 * B2;
  hold kv (B + 1), plain (B + 1) { observe u = used(kv) * 100 + used(plain); run d (1); }
}
run { horizon 20; }
""", {"b": [(0, 0.0, 14.0)], "u": [(0, 0.0, 805.0)]}, {}),
    # at admission: the header is read when the session is admitted. cap 10; s0 holds 3 over [0, 2]; s1
    # holds 8 from 0 (3 + 8 > 10: waits); s2 at 1 asks for free(m) at admission: it queues behind s1 (FIFO),
    # and at 2 s1 takes 8 (free 2), then s2 is admitted with free(m) = 2: used 10 in its body.
    ("header_at_admission", """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (3) { run d (2); } }
  branch (serial == 1) { hold m (8) { run d (3); } }
  branch (serial == 2) {
    run d (1);
    hold m (u) at admission (u = free(m)) { observe used_in = used(m); observe t = now; run d (1); }
  }
}
run { horizon 20; }
""", {"used_in": [(2, 2.0, 10.0)], "t": [(2, 2.0, 2.0)]}, {}),
    # init at arrival (turn_no 0), turn at every turn; (turn_no 1, 2, … read in the block): K = 10 at init,
    # the turn block adds turn_no: 11, then 13. The sample after the second turn carries turn 2.
    ("init_and_turns", """
stage d : delay;
workload {
  arrive batch(1);
  init { set K = 10; observe i = turn_no; }
  turn { set K = K + turn_no; }
}
session { turn; observe a = K; run d (1); turn; observe b = K * 10 + turn_no; }
run { horizon 20; }
""", {"i": [(0, 0.0, 0.0)], "a": [(0, 0.0, 11.0)], "b": [(0, 1.0, 132.0)]}, {}),
    # arrive closed(2): a session that ends is replaced at once. One fifo of 1 s: s0 [0, 1], s1 [1, 2]; s0
    # ends at 1 and s2 arrives at 1, queued behind s1: [2, 3]; s1 ends at 2, s3 [3, 4]; s2 ends at 3, s4
    # [4, 5] is cut by the horizon 4.5; s3 ends at 4 and s5 arrives then, behind s4. Completions at 1, 2, 3,
    # 4.
    ("closed_population", """
stage s : fifo;
workload { arrive closed(2); }
session { observe a = now; run s (1); observe t = serial * 100 + now; }
run { horizon 4.5; }
""", {"a": [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 1.0, 1.0), (3, 2.0, 2.0), (4, 3.0, 3.0),
            (5, 4.0, 4.0)],
      "t": [(0, 1.0, 1.0), (1, 2.0, 102.0), (2, 3.0, 203.0), (3, 4.0, 304.0)]},
     {"s": {"completions": 4}}),
    # arrive renewal(1.5): the first arrival after one gap, at 1.5, then 3, 4.5, 6 (horizon 6.2: 4 arrivals).
    ("renewal_first_after_a_gap", """
stage d : delay;
workload { arrive renewal(1.5); }
session { observe a = now + serial / 10; run d (0.1); }
run { horizon 6.2; }
""", {"a": [(0, 1.5, 1.5), (1, 3.0, 3.1), (2, 4.5, 4.7), (3, 6.0, 6.3)]}, {}),
    # A cap of inf holds any number: 1e300 units of m, used 1e300, free inf.
    ("cap_inf", """
pool m { cap inf; }
stage d : delay;
workload { arrive batch(1); }
session { hold m (1e300) { observe u = used(m); observe f = free(m) == inf; run d (1); } }
run { horizon 20; }
""", {"u": [(0, 0.0, 1e300)], "f": [(0, 0.0, 1.0)]}, {}),
]


@pytest.mark.parametrize("src, obs, figures", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_form_by_hand(monkeypatch, src, obs, figures):
    r, got = run(src, monkeypatch)
    for name, want in obs.items():
        assert got[name] == want, name
    js = report_json(r)
    for name, want in figures.items():
        entry = next(s for s in js["stages"] + js["pools"] if s["name"] == name)
        assert {k: entry[k] for k in want} == pytest.approx(want, rel=1e-12), name


REFUSED = [
    # "one that evaluates to NaN (0/0, inf - inf) does not link"
    ("nan_let", "let x = 0 / 0;\nstage d : delay;\nworkload { arrive batch(1); }\nsession { run d (x); }\n"
                "run { horizon 1; }\n", "`let x` evaluates to NaN"),
    ("nan_cap", "pool m { cap inf - inf; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
                "session { hold m (1) { run d (1); } }\nrun { horizon 1; }\n",
     "the cap of pool `m` evaluates to NaN"),
    # "set present = … would make ps(min(present, 16)) read the attribute": the linker refuses the name
    ("attribute_named_as_a_context_variable",
     "stage p : ps(min(present, 16));\nworkload { arrive batch(1); }\nsession { set present = 1; run p (1); }\n"
     "run { horizon 1; }\n", "`present` is a context variable"),
    ("let_named_as_an_attribute",
     "let k = 1;\nstage d : delay;\nworkload { arrive batch(1); }\nsession { set k = 2; run d (k); }\n"
     "run { horizon 1; }\n", "give them two names"),
    # "set x = tokens; in a session, or evict by (tokens), does not link"
    ("tokens_in_a_session", "stage d : delay;\nworkload { arrive batch(1); }\nsession { set x = tokens; run d (x); }\n"
                            "run { horizon 1; }\n",
     "`tokens` is not readable in a session statement"),
    ("tokens_in_an_eviction_key", "pool m { cap 4; evict by (tokens); }\nstage d : delay;\n"
                                  "workload { arrive batch(1); }\nsession { hold m (1) { run d (1); } cache (1); }\n"
                                  "run { horizon 1; }\n",
     "`tokens` is not readable in an eviction key"),
    # hidden: "a link error in a hold's units, reserve or reuse (read at admission)"
    ("hidden_in_reserve", "pool m { cap 40; }\nstage d : delay;\nworkload { arrive batch(1); hidden o; }\n"
                          "session { set o = 3; hold m (1) reserve (o) { run d (o); } }\nrun { horizon 1; }\n",
     "`o` is hidden"),
    # Lints: a set reading live pool state used in a header; a constant guard strictly between 0 and 1
    ("set_of_live_state_in_a_header",
     "pool m { cap 10; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
     "session { set u = free(m); hold m (u) { run d (1); } }\nrun { horizon 1; }\n", "at admission"),
    ("constant_fraction_guard", "stage d : delay;\nworkload { arrive batch(1); }\n"
                                "session { branch (0.5) { run d (1); } }\nrun { horizon 1; }\n", "branch with"),
    # the two sides: "a workload's session without a server, or a server that is never requested, is an error"
    ('server_never_requested', """
stage s : fifo;
workload { arrive batch(1); session { run s (1); } }
server { run s (1); }
run { horizon 1; }
""",
     "a `server` that is never requested: the workload's session"),
    ('session_without_server', """
stage s : fifo;
workload { arrive batch(1); session { request; } }
run { horizon 1; }
""",
     '`request;` with no `server`: declare a `server { … }`'),
    # "The two forms are exclusive in one program"
    ('two_sides_and_top_session', """
stage s : fifo;
workload { arrive batch(1); session { request; } }
server { run s (1); }
session { run s (1); }
run { horizon 1; }
""",
     "a top-level `session` and the two sides (a workload's"),
    # the server's side refuses "the next turn, the exit" and "the request"
    ('turn_in_server', """
stage s : fifo;
workload { arrive batch(1); session { request; } }
server { run s (1); turn; }
run { horizon 1; }
""",
     "`turn;` in a server: the next turn is the session's side"),
    ('request_in_server', """
stage s : fifo;
workload { arrive batch(1); session { request; } }
server { run s (1); request; }
run { horizon 1; }
""",
     '`request;` inside server: a server does not request itself;'),
    # Queues: "a from on a queue that leases nothing does not link"
    ('from_a_queue_leasing_nothing', """
queue P[1] : prefill {
  pool kv { cap 8; }
  serve fifo;
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt); }
}
queue D[1] : decode {
  pool kv { cap 8; }
  serve fifo;
  decode (prompt) from src { hold kv (prompt) { run (1); } }
}
workload { arrive batch(1); }
session { set prompt = 2; P[0].prefill (prompt); D[0].decode (prompt) from P[0]; }
run { horizon 1; }
""",
     '`from P`: no entry of `P` leases a pool, so it has nothing'),
    # "and so is … a transfer without on in a queue that pulls from none"
    ('transfer_without_on_no_pull', """
stage link : ps(1);
queue P[1] : prefill {
  pool kv { cap 8; }
  serve fifo;
  prefill (prompt) { hold kv (prompt) { run (1); } cache (prompt) lease kv (inf); }
}
queue D[1] : decode {
  pool kv { cap 8; }
  serve fifo;
  decode (prompt) from src { hold kv (prompt) { transfer (1) from src to kv (prompt); } }
}
workload { arrive batch(1); }
session { set prompt = 2; P[0].prefill (prompt); D[0].decode (prompt) from P[0]; }
run { horizon 1; }
""",
     "`D`'s `transfer` names no NIC and `D` pulls from no queue:"),
    # "The parser checks that the target exists and plays that role"
    ('request_of_a_non_gateway', """
queue P : prefill {
  pool kv { cap 8; }
  serve fifo;
  prefill (prompt) { hold kv (prompt) { run (1); } }
}
workload { arrive batch(1); session { request P; } }
run { horizon 1; }
""",
     '`request P;`: queue `P` is no gateway (its roles: prefill)'),
    # "without from P to Q (n) it is a parse error"
    ('transfer_form_without_from', """
stage s : fifo;
stage link : fifo;
workload { arrive batch(1); }
session { transfer 1; }
run { horizon 1; }
""",
     'unexpected `;`: a transfer says where the KV moves,'),
    # Which stage: "Exactly one must qualify: with none … or several (two step engines) the parser stops"
    ('prefill_with_no_stage', """
stage s : fifo;
workload { arrive batch(1); }
session { prefill 1; }
run { horizon 1; }
""",
     'unknown stage in a serving form: `prefill` finds no stage'),
    ('prefill_two_engines', """
stage A : step { budget 4; cost 1; }
stage B : step { budget 4; cost 1; }
workload { arrive batch(1); }
session { prefill 1; }
run { horizon 1; }
""",
     '`prefill`: several step engines qualify (A, B); say which'),
    # "transfer and tool on a step engine are rejected by the linker as run E (X) would be"
    ('tool_on_step', """
stage E : step { budget 4; cost 1; }
workload { arrive batch(1); }
session { tool on E (1); }
run { horizon 1; }
""",
     '`run E (…)`: `E` is a step stage, and a run there says what'),
    # at admission: "A binding may not draw (~)"; "the body reading [a live binding] is a parse error"
    ('binding_draws', """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { hold m (x) at admission (x = ~exp(1)) { run d (1); } }
run { horizon 1; }
""",
     'the binding `x` draws: a binding is substituted, so a name'),
    ('body_reads_live_binding', """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { hold m (x) at admission (x = free(m)) { run d (x); } }
run { horizon 1; }
""",
     'the body reads `x`, a binding that reads live state'),
    # Pools: "cached is 0 in its body (the linker rejects a body that reads it there, and a reuse there"
    ('cached_in_hold_without_cache', """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { hold m (1) { run d (cached + 1); } }
run { horizon 1; }
""",
     '`cached` in the body of a hold without `cache`: that hold'),
    ('reuse_without_cache', """
pool m { cap 10; }
stage d : delay;
workload { arrive batch(1); }
session { hold m (1) reuse (1) { run d (1); } }
run { horizon 1; }
""",
     '`reuse` on a hold without `cache`: a memory-only hold'),
    # Gauges: "an attribute, a draw, cachedin …, now or work(…) … is a link error"
    ('gauge_reads_attribute', """
stage d : delay;
gauge g = serial;
workload { arrive batch(1); }
session { run d (1); }
run { horizon 1; }
""",
     'a gauge may not read an attribute: `serial` is a session'),
    ('gauge_reads_now', """
stage d : delay;
gauge g = now;
workload { arrive batch(1); }
session { run d (1); }
run { horizon 1; }
""",
     'a gauge may not read `now`: it moves between events'),
    # Expressions: "j may not be a name the program already has"
    ('aggregate_index_shadows', """
let j = 1;
stage d : delay;
workload { arrive batch(1); }
session { run d (sum j in 2 (j)); }
run { horizon 1; }
""",
     '`sum j in …`: `j` is a name the program has already; give'),
    # hidden: "a link error in … a queue or eviction key"; "An attribute the scheduler itself sets (cached,
    # computed) cannot be hidden"
    ('hidden_queue_key', """
pool m { cap 1; queue by (o); }
stage d : delay;
workload { arrive batch(1); hidden o; }
session { set o = 1; hold m (1) { run d (1); } }
run { horizon 1; }
""",
     "`o` is hidden: a pool's queue key is the scheduler's, and"),
    ('hidden_cached', """
stage d : delay;
workload { arrive batch(1); hidden cached; }
session { run d (1); }
run { horizon 1; }
""",
     '`cached` cannot be hidden: the scheduler itself sets it'),
    # "the mode is required on a step stage and forbidden elsewhere"
    ('step_mode_missing', """
stage E : step { budget 4; cost 1; }
workload { arrive batch(1); }
session { run E (1); }
run { horizon 1; }
""",
     '`run E (…)`: `E` is a step stage, and a run there says what'),
    ('mode_on_fifo', """
stage s : fifo;
workload { arrive batch(1); }
session { run s prefill (1); }
run { horizon 1; }
""",
     '`run s prefill (…)`: `s` is no step stage; a mode is for a'),
    # Stages: "a program with one declares its share, which has no default"
    ('share_missing_for_a_flow', """
stage a : ps(1);
stage b : ps(1);
workload { arrive batch(1); }
session { run a, b (1); }
run { horizon 1; }
""",
     "a run over several stages needs the program's `share"),
]


@pytest.mark.parametrize("src, words", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_as_the_text_says(src, words):
    assert words in refused(src)


TRACE = "session,turn,new,out,think,forced,extra\n7,2,30,3,0.5,1,x\n7,1,20,2,1.5,0,y\n9,1,5,1,0,0,z\n"

TRACED = """
stage th : delay;
workload {
  arrive batch(3);
  trace "t.csv" ordered;
  init { observe i = new + out + think + more + forced; }
  turn { observe k = turn_no * 1000 + new * 10 + forced; }
}
session {
  turn;
  observe a = more;
  run th (think);
  turn;
  observe b = new * 100 + out * 10 + more;
  turn;
  observe c = new * 100 + turn_no * 10 + more;
}
run { horizon 10; }
"""


def test_a_trace_replayed_by_hand(tmp_path, monkeypatch):
    """§2's `trace "file.csv" [ordered]` and §3's Workload: "with a trace, turn loads the next turn's new,
    out, think, forced and sets more (ordered: session i replays trace session i)", with docs/language.md's
    choices: trace sessions numbered in the order they first appear (7 is 0, 9 is 1), a session's rows
    sorted by `turn`, other columns ignored, every column 0 before the first `turn;` (in `init`), the `turn`
    block reading the turn it describes (`turn_no` 1 at the first), and a `turn;` past the last row keeping
    the last row's values with `more` 0 while `turn_no` counts. s0 and s2 replay session 7: (20, 2, think
    1.5, forced 0, more 1), then at 1.5 (30, 3, 0.5, 1, more 0), then past the end; s1 replays session 9:
    (5, 1, 0, 0, more 0) at 0, then past the end twice."""
    (tmp_path / "t.csv").write_text(TRACE)
    path = tmp_path / "p.sq"
    path.write_text(TRACED)
    r, obs = run("", monkeypatch, path=path)
    assert [v for _s, _t, v in obs["i"]] == [0.0, 0.0, 0.0]
    # k = turn_no · 1000 + new · 10 + forced, at each turn
    assert obs["k"] == [(0, 0.0, 1200.0), (1, 0.0, 1050.0), (1, 0.0, 2050.0), (1, 0.0, 3050.0), (2, 0.0, 1200.0),
                        (0, 1.5, 2301.0), (0, 1.5, 3301.0), (2, 1.5, 2301.0), (2, 1.5, 3301.0)]
    assert obs["a"] == [(0, 0.0, 1.0), (1, 0.0, 0.0), (2, 0.0, 1.0)]
    # b = new · 100 + out · 10 + more; c = new · 100 + turn_no · 10 + more
    assert obs["b"] == [(1, 0.0, 510.0), (0, 1.5, 3030.0), (2, 1.5, 3030.0)]
    assert obs["c"] == [(1, 0.0, 530.0), (0, 1.5, 3030.0), (2, 1.5, 3030.0)]
    js = report_json(r)
    assert (js["arrivals"], js["ended"], js["turns"]) == (3, 3, 9)


EXPRESSIONS = [
    # the aggregates are primaries: their body is the parenthesis after `in n`, and an operator after it
    # applies to the aggregate; they nest, each index its own
    ("sum i in 2 (max j in 2 (i + j))", 3.0),    # max(0, 1) + max(1, 2)
    ("sum j in 3 (j) + 1", 4.0),                 # (0 + 1 + 2) + 1, not Σ (j + 1) = 6
    ("2 * sum j in 3 (j)", 6.0),
    ("-sum j in 3 (j + 1)", -6.0),               # -(1 + 2 + 3)
    ("max j in 2 (j) == 1", 1.0),                # max(0, 1) == 1
    ("sum j in 2 (j) ? 7 : 8", 7.0),             # 1 is true
    ("sum j in (1 + 1) (j * 10)", 10.0),         # a parenthesised constant count
    ("max j in 3 (-j)", -0.0),                   # max(-0, -1, -2) is the -0 of j = 0
    # unary operators repeat; binary ones of one level go left to right
    ("--2", 2.0),
    ("1 - - 1", 2.0),
    ("!!3", 1.0),                                # !3 is 0, !0 is 1
    ("10 / 4 * 2", 5.0),                         # (10 / 4) * 2
    ("2 * 3 % 4", 2.0),                          # (2 * 3) % 4
    ("(1 < 2) + (2 <= 2) + (3 >= 4) + (1 != 1)", 2.0),
    ("1 ? 2 : 3 ? 4 : 5", 2.0),
    ("abs(-0.5) + floor(-0.5) + ceil(0.5)", 0.5),  # 0.5 - 1 + 1
    ("ln(exp(2))", 2.0),
    ("min(3)", 3.0),                             # one argument
    ("max(1, 2, 3, 4, 5)", 5.0),
]


def test_expressions_by_hand(monkeypatch):
    """§2, Expressions, in the forms a port brings beside round 31's edge values: precedence, nesting and the
    aggregates' extent. Each expression is observed at 0 over a computed zero (`z`, so the simulator
    evaluates it) and as written (folded by the linker): both the value in the row's comment, its zero's
    sign included."""
    import math

    lines = [f"  observe c{k} = {e} + z;\n  observe f{k} = {e};" for k, (e, _v) in enumerate(EXPRESSIONS)]
    src = ("stage d : delay;\nworkload { arrive batch(1); }\nsession {\n  set z = -(serial - serial);\n"
           + "\n".join(lines) + "\n  run d (1);\n}\nrun { horizon 2; }\n")
    _r, obs = run(src, monkeypatch)
    for k, (e, want) in enumerate(EXPRESSIONS):
        for way in ("c", "f"):
            (_s, t, got), = obs[f"{way}{k}"]
            assert t == 0.0 and got == want and math.copysign(1, got) == math.copysign(1, want), (way, e, got)


@pytest.mark.parametrize("expr, words", [
    ("sum j in 2 (sum j in 2 (j))", "is the index of the aggregate around it"),
    ("sum j in 0 (j)", "must be an integer of at least 1, not 0"),
    ("max j in 2.5 (j)", "must be an integer of at least 1, not 2.5"),
    # not an aggregate's, but the expressions' own: a power is written pow(x, y), as `**` is told
    ("2 ^ 3", "unexpected character `^`: a power is `pow(x, y)`"),
])
def test_an_aggregates_refusals(expr, words):
    """§2: "n a number, a constant's name or a parenthesised constant expression; … j may not be a name the
    program already has" (docs/language.md: a count is a whole number of at least 1)."""
    src = f"stage d : delay;\nworkload {{ arrive batch(1); }}\nsession {{ run d ({expr}); }}\nrun {{ horizon 1; }}\n"
    assert words in refused(src)


CHOOSE = """
let N = 3;
stage s[N] : fifo;
workload { arrive batch(5); }
session {
  choose j in N by (queue(s[j]), KEY2);
  observe c = j;
  run s[j] (1);
  observe t = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("key2, chosen", [
    # Five sessions at 0 join the shortest queue of three fifos, one after another (each `run` starts its job
    # at once, so the next reads it): the first key ties among the empty ones, the second key decides, then
    # "the smallest index". With a constant second key: 0, 1, 2, then all at 1: 0, then 1.
    ("0", [0, 1, 2, 0, 1]),
    # -j: the largest index among the ties: 2, 1, 0, then 2, 1.
    ("-j", [2, 1, 0, 2, 1]),
    # a key that reads the session (serial even: j, odd: -j): s0 0; s1 among 1, 2: 2; s2 only 1 is empty: 1;
    # s3 all at 1: 2; s4 among 0 and 1 (s[2] has 2): 0.
    ("serial % 2 == 0 ? j : -j", [0, 2, 1, 2, 0]),
])
def test_choose_by_keys_in_order_then_the_smallest_index(monkeypatch, key2, chosen):
    """§2: "choose NAME in expr by ( expr , ... ); -- NAME := argmin over 0..n, keys in order", §3 Ties:
    "choose: the keys, in order, then the smallest index", over a stage family's `queue(s[j])`. Each job of
    1 ends at 1, the second on a member at 2."""
    _r, obs = run(CHOOSE.replace("KEY2", key2), monkeypatch)
    assert [v for _s, _t, v in obs["c"]] == chosen
    assert sorted(t for _s, t, _v in obs["t"]) == [1.0, 1.0, 1.0, 2.0, 2.0]
