"""language.txt §2 (Syntax), round 28: the forms and refusals test_conformance_syntax, test_conformance_round21 and
test_parser did not yet hold serQ to, and three messages.

* A stage declaration's kind and what may follow it (§2: ``stage NAME [ '[' N ']' ] : kind ;``, ``kind := fifo
  [ ( c ) ] | ps ( expr ) | delay | step { … }``; ``latency`` is a queue's ``serve``'s alone). ``stage t : fifo
  2;`` offered ``latency`` (the parser's state after ``fifo`` was the queue serve's too); the grammar gives the
  serve its own, and the message says what the declaration takes there.
* Clauses in §2's order, written out of it: a pool's ``reserve`` or a further pool after the hold's ``reuse`` or
  ``at admission`` (it offered ``reuse`` for ``reserve``), an entry call's ``from`` after its ``to`` and a pull's
  ``latency`` after its ``share`` (both "missing `;`"), a serving form's index together with ``on`` (told as
  two names side by side of an aggregate), keys or a ``fifo`` with empty parentheses, a statement at the top
  level (``run s (1);`` "unexpected `s` (expected `{`)", ``end;`` "unexpected `end`"); an entry call without
  its parentheses, a role named twice (it was taken), a string with ``\\"`` (strings have no escapes), ``<>``,
  ``and``, ``or``; ``share`` without its policy, a pull's ``latency`` without its wait, a ``choose`` without
  ``in`` or ``by``, a ``(`` or ``[`` left open, a misspelt run mode, two ``hidden`` names without a ``,``.
* Forms §2 writes that compile to the IR of their plain spelling: a definition of no parameter, ``choose … in``
  an expression, the ``;`` after a hold and after a step kind, an empty run block, an exponent's ``+``,
  ``fifo(1)``.
* The first lint of §3 beyond a hold's header (a warning, with the same words): a pool's ``queue by`` and
  ``preempt by`` keys and a step stage's ``serve by`` keys read a session's attribute later than the set; and
  the chain of sets a message names (``u`` from ``t``, ``t`` from ``used(kv)``).
"""

from __future__ import annotations

import subprocess

import pytest
from sqhelpers import SERQ, compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)

S = "stage s : fifo;\n"
W = "workload { arrive poisson(1); turn { set n = 10; } }\n"
H = "pool p { cap 9; }\npool q { cap 9; }\n" + S + W
Q = "queue q : prefill { serve fifo; prefill (p) { run (p); } }\n"
LINK = ("queue L : link { serve ps(10) latency 0.5; }\npool a { cap 9; }\npool b { cap 9; }\n" + W)
PD = ("queue P : prefill { pool kv { cap 100; } serve fifo; nic ps(5); prefill (prompt) "
      "{ hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }\n"
      "queue D : decode { pool kv { cap 100; } serve fifo; nic ps(5); decode (prompt) from src "
      "{ hold kv (prompt) { transfer (prompt) from src to kv (prompt); run (o); } } }\n"
      "queue gw : gateway { route { P.prefill (prompt); D.decode (prompt) from P; } }\n"
      "D pull P latency 0.5 share maxmin;\n"
      "workload { arrive poisson(1); hidden o; turn { set prompt = 10; set o = 3; } "
      "session { turn; request gw; end; } }\n")


def session(body: str, head: str = S + W) -> str:
    return head + "session { turn; " + body + " end; }\n"


# -- a stage declaration's kind, and what follows it ----------------------------------------------------------

STAGE_KIND = [
    # `fifo` and a count without its parentheses: the count's form, where the `2` stands
    ("stage t : fifo ⟨2;\n", "unexpected `2`: `fifo` takes its number of servers in parentheses, "
     "`stage t : fifo(2);` (`fifo` alone is one server)"),
    ("stage t[3] : fifo ⟨c;\n", "unexpected `c`: `fifo` takes its number of servers in parentheses, "
     "`stage t[3] : fifo(c);`"),
    # a complete kind and more after it on its line: the declaration as written, ended there
    ("stage t : delay ⟨2;\n", "unexpected `2`: a stage declaration ends after its kind: `stage t : delay;`"),
    ("stage t : ps(min(present,  4)) ⟨2;\n", "a stage declaration ends after its kind: "
     "`stage t : ps(min(present, 4));`"),
    ("stage t : fifo(2) ⟨3;\n", "unexpected `3`: a stage declaration ends after its kind: `stage t : fifo(2);`"),
    ("stage t : fifo(2) ⟨(3);\n", "unexpected `(`: a stage declaration ends after its kind"),
    # `latency` is a queue's serve's (a link's wait), which no stage declaration takes
    ("stage t : fifo(2) ⟨latency 1;\n", "unexpected `latency`: a stage declaration ends after its kind: "
     "`stage t : fifo(2);`; the wait before a link's transfers is a queue's, `serve … latency x;`"),
    ("stage t : delay ⟨latency 1;\n", "unexpected `latency`: a stage declaration ends after its kind"),
    # a queue's serve may take `latency` after its kind, and its nic not
    ("queue L : link { serve fifo ⟨2; }\n", "unexpected `2`: `fifo` takes its number of servers in parentheses, "
     "`serve fifo(2);`"),
    ("queue L : link { serve ps(4) ⟨2; }\n", "unexpected `2`: a queue's serve ends after its kind, or a link's "
     "wait, `latency x`: `serve ps(4);`"),
    ("queue L : link { nic ps(4) ⟨2; }\n", "unexpected `2`: a queue's nic ends after its kind: `nic ps(4);`"),
    # the word that begins the next line or item: the `;` is what is missing, as before
    ("stage t : fifo⟨\nsession { end; }\n", "missing `;` (found `session` next)"),
    ("queue Q : prefill { serve fifo⟨ prefill (p) { run (p); } }\n", "missing `;` (found `prefill` next)"),
]


@pytest.mark.parametrize("src, message", STAGE_KIND)
def test_what_a_stage_declaration_takes_after_its_kind(src, message):
    e = refused(src + ("" if "session" in src else W + "session { turn; end; }\n"), message)
    assert "(expected" not in str(e).splitlines()[0]


def test_serq_check_says_it_at_the_count_with_a_caret(tmp_path):
    p = tmp_path / "p.sq"
    p.write_text("stage t : fifo 2;\n" + W + "session { turn; run t (1); end; }\n")
    r = subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[:3] == [
        "p.sq:1:16: error: unexpected `2`: `fifo` takes its number of servers in parentheses, `stage t : fifo(2);` "
        "(`fifo` alone is one server)",
        "  stage t : fifo 2;",
        "                 ^"]


def test_the_forms_of_a_kind_still_compile():
    # a serve's kind, with and without its link's latency, and every plain kind in a declaration
    compile_src(LINK + "session { turn; hold a (1) { hold b (1) { transfer on L (1) from a to b (1); } } end; }\n")
    p = compile_src("stage a : fifo;\nstage b : fifo(2);\nstage c : ps(3);\nstage d : delay;\n" + W
                    + "session { turn; run a (1); run b (1); run c (1); run d (1); end; }\n")
    assert [type(s.kind).__name__ for s in p.stages] == ["Fifo", "Fifo", "Ps", "Delay"]
    assert [getattr(s.kind, "servers", None) for s in p.stages][:2] == [1, 2]


# -- clauses out of §2's order, forms where they do not stand -----------------------------------------------

ORDER = [
    # hold POOL ( expr ) [reserve ( expr )] [, POOL ( expr ) [reserve ( expr )]]* [reuse ( expr )]
    # [at admission ( … )] block …
    (session("hold p (1) reuse (1) ⟨reserve (2) { run s (1); } cache (1);", H),
     "unexpected `reserve`: a pool's `reserve` follows its units, before `reuse`: `hold P (units) reserve (r), "
     "Q (units) reuse (ρ) at admission (x = …) { … }`"),
    (session("hold p (u) at admission (u = 1) ⟨reserve (2) { run s (1); }", H),
     "unexpected `reserve`: a pool's `reserve` follows its units, before `at admission`"),
    (session("hold p (1) reuse (1)⟨, q (1) { run s (1); } cache (1);", H),
     "unexpected `,`: the pools come first, before `reuse`"),
    (session("hold p (u) at admission (u = 1)⟨, q (1) { run s (1); }", H),
     "unexpected `,`: the pools come first, before `at admission`"),
    # QUEUE . VERB ( … ) [ from QUEUE ] [ to POOL ( expr ) ]
    (PD.replace("D.decode (prompt) from P;", "D.decode (prompt) to kv (1) ⟨from P;"),
     "unexpected `from`: an entry call's `from` comes before its `to`, `Q.VERB (…) from S to P (n);`"),
    # QUEUE pull QUEUE [ latency expr ] share ( maxmin | bottleneck )
    (PD.replace("D pull P latency 0.5 share maxmin;", "D pull P share maxmin ⟨latency 0.5;"),
     "unexpected `latency`: a pull's `latency` comes before its `share`, `D pull P latency x share maxmin;`"),
    # run STAGE [prefill | decode] ( expr ): a misspelt mode is told as the mode (it was "`run` takes its work
    # in parentheses"); hidden NAME [, NAME]*: a list (it was "missing `;`")
    ("pool kv { cap 9; }\nstage E : step { budget 8; cost 1; memory kv; }\n" + W
     + "session { turn; hold kv (1) { run E ⟨decoding (1); } end; }\n",
     "unexpected `decoding`: a run's mode on a step stage is `prefill` or `decode` (did you mean `decode`?)"),
    (S + "workload { arrive poisson(1); hidden o ⟨p; turn { set o = 1; set p = 1; } }\nsession { turn; end; }\n",
     "unexpected `p`: the names of a `hidden` are separated by `,`, `hidden o, p;`"),
    # choose NAME in expr by ( expr , ... ): `in` after the name, the keys after `by`
    (session("choose k ⟨2 by (k); run s (k);"), "unexpected `2`: `choose` takes `in` after its name, "
     "`choose k in n by (key, …);`"),
    (session("choose k in 2 ⟨(k); run s (k);"), "unexpected `(`: `choose`'s keys follow `by`, "
     "`choose k in n by (key, …);`"),
    # QUEUE pull QUEUE [ latency expr ]: the wait written
    (PD.replace("latency 0.5 share", "latency ⟨share"), "unexpected `share`: a pull's `latency` takes its wait, "
     "`D pull P latency x share maxmin;`"),
    # a `(` or `[` left open before a token no expression continues with: the opener's place
    (session("hold p (1 ⟨{ run s (1); }", H), "unexpected `{`: a `)` is missing, the `(` at 5:24 is not closed"),
    (session("hold p[0 ⟨(1) { run s (1); }", "pool p[2] { cap 9; }\n" + S + W),
     "unexpected `(`: a `]` is missing, the `[` at 4:23 is not closed"),
    ("pool p[2 ⟨{ cap 1; }\n" + session("run s (1);"), "unexpected `{`: a `]` is missing, the `[` at 1:7 is not "
     "closed"),
    (session("set x = max(1, 2⟨;"), "unexpected `;`: a `)` is missing, the `(` at 3:28 is not closed"),
    # share maxmin ; | share bottleneck ; and a pull's share ( maxmin | bottleneck ): the policy named
    ("share⟨;\n" + session("run s (1);"), "unexpected `;`: `share` names its policy, `share maxmin` or "
     "`share bottleneck`"),
    ("share ⟨3;\n" + session("run s (1);"), "unexpected `3`: `share` names its policy"),
    (PD.replace("share maxmin;", "share⟨;"), "unexpected `;`: `share` names its policy"),
    # serving: [ '[' expr ']' | on STAGE ], one of the two
    (session("prefill [0] ⟨on prefill[1] 3;", "stage prefill[2] : fifo;\n" + W),
     "unexpected `on`: a serving form names its stage by an index or by `on`, not both: `prefill[j] …;` serves "
     "the role's array, `prefill on S …;` the stage S"),
    # keys: by ( expr , ... ), one at least; fifo [ ( c ) ]
    (session("choose k in 2 by (⟨); run s (k);"), "unexpected `)`: `by` takes its keys, one at least, `by (key, …)`"),
    ("pool p { queue by (⟨); }\n" + session("hold p (1) { run s (1); }"), "`by` takes its keys, one at least"),
    ("pool kv { cap 9; }\nstage E : step { budget 8; cost 1; serve by (⟨); memory kv; }\n" + W
     + "session { turn; end; }\n", "`by` takes its keys, one at least"),
    ("stage t : fifo(⟨);\n" + W + "session { turn; end; }\n",
     "unexpected `)`: `fifo` takes its number of servers, `fifo(2)`, or nothing for one, `fifo`"),
    # a statement at the top level: items only
    (S + W + "run ⟨s (1);\nsession { turn; end; }\n",
     "unexpected `s`: `run` at the top level begins the run block, `run { horizon …; }`; a statement `run S (…);` "
     "belongs in a block"),
    (S + W + "session { turn; }\n⟨end;\n", "`end` does not begin an item: it begins a statement, which belongs in "
     "a block (a session, a server, a definition's); an item begins with def, gauge, let, pool"),
    (S + W + "⟨turn;\nsession { turn; end; }\n", "`turn` does not begin an item"),
    # QUEUE [ '[' expr ']' ] . VERB ( expr, ... ): the arguments in parentheses (it offered an entry's `{`)
    (session("q.prefill⟨;", Q + W), "unexpected `;`: an entry call takes its arguments in parentheses, "
     "`q.prefill (…);`"),
    (session("q[1].prefill ⟨3;", Q.replace("queue q :", "queue q[2] :") + W),
     "unexpected `3`: an entry call takes its arguments in parentheses, `q[1].prefill (…);`"),
    # queue NAME [ : ROLE [, ROLE]* ]: each role once
    ("queue q : prefill, ⟨prefill { serve fifo; prefill (p) { run (p); } }\n" + W + "session { turn; end; }\n",
     "queue `q` names the role `prefill` twice"),
    # strings ("file.sq", "file.csv") hold no escapes; operators of other languages
    ('use ⟨"a\\"b.sq";\n' + S + W + "session { turn; end; }\n",
     'a string has no escapes: the `"` after `\\` ends it, so `"a\\"` is the string here'),
    (session("set x = 1 ⟨<> 2;"), "unexpected `<>`: a test of inequality is `!=`"),
    (session("set x = 1 ⟨and 2;"), "unexpected `and`: the logical and is `&&`"),
    (session("set x = (1) ⟨or 2;"), "unexpected `or`: the logical or is `||`"),
]


@pytest.mark.parametrize("src, message", ORDER)
def test_a_clause_out_of_order_is_told_in_order(src, message):
    refused(src, message)


def test_the_clauses_in_order_compile():
    compile_src(session("hold p (u) reserve (2), q (1) reserve (1) reuse (1) at admission (u = 1) { run s (1); } "
                        "cache (1) lease q (1);", H))
    compile_src(PD)
    compile_src(session("prefill[1] 3; prefill on prefill[0] 3;", "stage prefill[2] : fifo;\n" + W))


# -- forms §2 writes, and the IR of their plain spelling ----------------------------------------------------

SAME_IR = [
    # def NAME ( NAME , ... ): a definition of no parameter is its body, written where it is called
    (S + "def f() = 2;\n" + W + "session { turn; run s (f()); end; }", session("run s (2);")),
    (S + "def g() { run s (1); }\n" + W + "session { turn; g(); end; }", session("run s (1);")),
    # choose NAME in expr: the count is an expression (a constant one)
    (session("choose k in 1 + 1 by (k); run s (k + 1);"), session("choose k in 2 by (k); run s (k + 1);")),
    (session("choose k in N by (k); run s (k + 1);", "let N = 2;\n" + S + W),
     session("choose k in 2 by (k); run s (k + 1);", "let N = 2;\n" + S + W)),
    # hold … block [cache] [lease] ; — the `;` optional; a step kind's too
    (session("hold p (1) { run s (1); };", H), session("hold p (1) { run s (1); }", H)),
    (session("hold p (1) { run s (1); } cache (1) lease p (2);", H),
     session("hold p (1) { run s (1); } cache (1) lease p (2)", H)),
    ("pool kv { cap 9; }\nstage E : step { budget 8; cost 1; memory kv; };\n" + W
     + "session { turn; hold kv (1) { run E prefill (1); } end; }\n",
     "pool kv { cap 9; }\nstage E : step { budget 8; cost 1; memory kv; }\n" + W
     + "session { turn; hold kv (1) { run E prefill (1); } end; }\n"),
    # run { … }: every field optional, so an empty block is none
    (session("run s (1);") + "run { }\n", session("run s (1);")),
    # numbers: an exponent's sign may be `+`
    ("let a = 1e+3;\n" + session("run s (a);"), "let a = 1000;\n" + session("run s (a);")),
    ("let a = 25E-1;\n" + session("run s (a);"), "let a = 2.5;\n" + session("run s (a);")),
    # fifo [ ( c ) ]: one server without the count
    ("stage s : fifo(1);\n" + W + "session { turn; run s (1); end; }\n", session("run s (1);")),
    # branch with ( expr ) block [ else block ]
    (session("branch with (0.25) { run s (1); } else { run s (2); }"),
     session("branch (~bernoulli(0.25)) { run s (1); } else { run s (2); }")),
]


@pytest.mark.parametrize("form, plain", SAME_IR)
def test_a_form_has_the_ir_of_its_plain_spelling(form, plain):
    assert ir_bytes(compile_src(form)) == ir_bytes(compile_src(plain))


def test_inf_is_a_number_wherever_a_constant_stands():
    p = compile_src("let a = inf;\nlet b = -inf;\npool p { cap inf; }\nstage f : fifo(inf);\n" + W
                    + "session { turn; hold p (1) { run f (1); } end; }\n")
    assert [(c.name, c.value) for c in p.constants] == [("a", "inf"), ("b", "-inf")]
    assert p.pools[0].cap == "inf"


# -- the first lint, beyond a hold's header -----------------------------------------------------------------

LINT = "stage svc : fifo;\nworkload { arrive batch(1); }\n"


def warnings(src: str, capsys) -> list[str]:
    capsys.readouterr()
    compile_src(src)
    return [line for line in capsys.readouterr().err.splitlines() if ": warning: " in line]


STALE = "is set from live pool or stage state"


def test_a_queue_key_reading_a_live_set_is_warned_of(capsys):
    src = ("pool kv { cap 10; queue by (t); }\n" + LINT
           + "session {\n  set t = used(kv);\n  hold kv (1) { run svc (1); }\n  end;\n}\n")
    assert warnings(src, capsys) == [
        f"<source>:1:29: warning: `t` {STALE} (at 5:3) and read in pool `kv`'s queue key: the key is read at "
        "every selection while the session waits, the set when the session queued; read the state in the key "
        "itself instead"]


def test_the_chain_of_sets_is_named(capsys):
    # through an attribute: u from t, t from used(kv), each at its set
    src = ("pool kv { cap 10; queue by (-u); }\n" + LINT
           + "session {\n  set t = used(kv);\n  set u = t + 1;\n  hold kv (1) { run svc (1); }\n  end;\n}\n")
    (w,) = warnings(src, capsys)
    assert w.startswith(f"<source>:1:30: warning: `u` {STALE} (at 6:3 from `t`, set at 5:3 from `used(kv)`) and "
                        "read in pool `kv`'s queue key")


def test_a_hold_header_names_the_chain_too():
    base = "pool kv { cap 10; }\n" + LINT + "session {\n  set t = used(kv);\n  set u = t + 1;\n"
    refused(base + "  hold kv (⟨u) { run svc (1); }\n}\n",
            f"`u` {STALE} (at 6:3 from `t`, set at 5:3 from `used(kv)`) and read in a hold's header: the header is "
            "read at admission, the set when the session queued; read the state in `at admission (…)` instead")
    # three steps, and the observable the first set read, however deep it stands in the expression
    refused("pool kv { cap 10; }\n" + LINT + "session {\n  set t = 2 * max(free(kv), 1);\n  set u = t;\n"
            "  set v = u - 1;\n  hold kv (⟨v) { run svc (1); }\n}\n",
            f"`v` {STALE} (at 7:3 from `u`, set at 6:3 from `t`, set at 5:3 from `free(kv)`)")
    # a set straight from the observable says where, as before
    refused(base + "  hold kv (⟨t) { run svc (1); }\n}\n",
            f"`t` {STALE} (at 5:3) and read in a hold's header")


def test_an_attribute_that_reads_itself_around_a_loop_names_its_first_set():
    refused("pool kv { cap 10; }\n" + LINT + "session {\n  set t = used(kv);\n  loop {\n    set t = t + 1;\n"
            "    hold kv (⟨t) { run svc (1); }\n  }\n}\n",
            f"`t` {STALE} (at 7:5 from `t`, set at 5:3 from `used(kv)`)")


def test_preemption_and_serve_keys_are_warned_of(capsys):
    src = ("pool kv { cap 100; preempt by (-p) requeue head; }\n"
           "stage E : step { budget 8; cost 1; serve by (p); memory kv; }\nworkload { arrive batch(2); }\n"
           "session {\n  set p = 0;\n  hold kv (4) {\n    set p = cachedin(kv);\n"
           "    run E prefill (4) growing kv;\n  }\n  end;\n}\n")
    assert warnings(src, capsys) == [
        f"<source>:1:33: warning: `p` {STALE} (at 7:5) and read in pool `kv`'s preemption key: the key is read "
        "when a growth picks its victim among the pool's holders, the set earlier, when the session ran it; read "
        "the state in the key itself instead",
        f"<source>:2:46: warning: `p` {STALE} (at 7:5) and read in step stage `E`'s serve key: the key is read for "
        "every resident at every iteration, the set before the run began; read the state in the key itself "
        "instead"]


@pytest.mark.parametrize("session_body", [
    "set t = used(kv); set t = 0; hold kv (1) { run svc (1); } end;",  # overwritten before the hold
    "set t = used(kv); choose t in 2 by (t); hold kv (1) { run svc (1); } end;",  # a choose is no such set
    "hold kv (1) { run svc (1); } set t = used(kv); end;",  # after the last hold, none waits with it
    "set t = used(kv); hold other (1) { run svc (1); } end;",  # another pool's queue
    "set t = serial; hold kv (1) { run svc (1); } end;",  # no live state
])
def test_keys_no_live_set_reaches_are_not_warned_of(session_body, capsys):
    src = "pool kv { cap 10; queue by (t); }\npool other { cap 10; }\n" + LINT + "session { " + session_body + " }\n"
    assert warnings(src, capsys) == []


def test_a_queue_key_is_warned_of_through_a_queues_own_pool(capsys):
    # a queue's pool is the program's under its long name: the entry's hold waits in `P.kv`'s queue
    src = ("queue P : prefill { pool kv { cap 100; queue by (t); } serve fifo; prefill (p) "
           "{ hold kv (1) { run (p); } } }\n"
           "workload { arrive batch(1); }\nsession { set t = free(P.kv); P.prefill (1); end; }\n")
    assert warnings(src, capsys) == [
        f"<source>:1:50: warning: `t` {STALE} (at 3:11) and read in pool `P.kv`'s queue key: the key is read at "
        "every selection while the session waits, the set when the session queued; read the state in the key "
        "itself instead"]


def test_serq_check_warns_and_succeeds(tmp_path):
    src = ("pool kv { cap 10; queue by (t); }\n" + LINT
           + "session {\n  set t = used(kv);\n  hold kv (1) { run svc (1); }\n  end;\n}\n")
    p = tmp_path / "p.sq"
    p.write_text(src)
    r = subprocess.run([SERQ, "check", "p.sq"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0
    assert r.stderr.splitlines()[:3] == [
        f"p.sq:1:29: warning: `t` {STALE} (at 5:3) and read in pool `kv`'s queue key: the key is read at every "
        "selection while the session waits, the set when the session queued; read the state in the key itself "
        "instead",
        "  pool kv { cap 10; queue by (t); }",
        "                              ^"]
