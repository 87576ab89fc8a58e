"""Every program fragment of the language's three specification pages (language.txt, pool-reference.txt,
program-reference.txt), copied here with the page and line each comes from, for test_spec_fragments.py.

A fragment is code the pages show: a whole program, an item, a statement or an expression, in a code block,
a table cell or inline in the prose. Each is one of:

* ``covered``: an earlier test runs it as written (``…`` stands for any text) and holds it to its outcome;
  the entry names the file and the test (or the module-level program the test runs);
* ``new``: ``program`` is the smallest program that contains it unchanged (``…`` filled in), which compiles
  and runs to its horizon on both tiers with byte-identical reports; ``plain`` is the program written
  without the form the prose says it stands for (byte-identical IR), ``refused`` the words of the error the
  prose says it is, and test_spec_fragments.py holds the outcome the prose states, by hand, where it states
  one (``outcome``: the test's name);
* ``form``: a production or a serving form written with metavariables (``NAME``, ``expr``, ``POOL``, ``W``,
  …); ``instance`` is a concrete instance in the named program of test_conformance_syntax (syntax_programs'
  PRODUCTIONS, which compile; SUGAR, each with its kernel's byte-identical IR; REFUSALS, each refused);
* ``later``: a construct of the other dialect the pool reference is written in in places (``fn main()``,
  ``pool NAME on ENGINE``, ``cost(…)``); ``program`` holds it and ``refused`` the words a user gets
  (docs/language.md, Diagnostics);
* ``notation``: a table cell written in the pages' typography (``−``, ``·``, ``ℓ``, a missing ``;``, a long
  name where the entry names its pool short), which is refused with the one message that says what to
  write; ``program`` holds the cell as written and ``plain`` the program with the cell in this language,
  which compiles (docs/language.md says the choice).

A metavariable a fragment reads as a name (``W``, ``N``, ``mean``) is a ``let`` or an attribute of its
program. The pages leave ``c`` unset in the vLLM fragments (lib/vllm.sq sets it): their programs set it.
Where the pages' ``…`` opens a block the fragment does not close (the decoder's hold around a pull's read),
``unclosed`` is the text whose last line, the ``}``, the comparison leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fragment:
    key: str
    page: str  # language.txt, pool-reference.txt or program-reference.txt
    line: int
    text: str
    status: str  # covered, new, form, later, notation
    covered: tuple[str, str] | None = None  # (path under packages/, the test or program's name)
    instance: str = ""
    program: str = ""
    unclosed: str = ""  # what the program closes that the fragment's `…` opens without closing
    plain: str = ""
    refused: str = ""
    outcome: str = ""
    defs: tuple[tuple[str, str], ...] = ()  # --def NAME=expr the fragment is compiled with
    horizon: float | None = None  # given to the run where the fragment is a run block without one


def L(line, key, text, status, **kw):  # noqa: N802 - the page's initial
    return Fragment(key, "language.txt", line, text, status, **kw)


def P(line, key, text, status, **kw):  # noqa: N802
    return Fragment(key, "pool-reference.txt", line, text, status, **kw)


def R(line, key, text, status, **kw):  # noqa: N802
    return Fragment(key, "program-reference.txt", line, text, status, **kw)


SYNTAX = ("serq-frontend/tests/syntax_programs.py", "PRODUCTIONS")
AUDIT8 = "serq-sim/tests/test_conformance_audit8.py"
AUDIT3 = "serq-sim/tests/test_conformance_audit3.py"
AUDIT6 = "serq-sim/tests/test_conformance_audit6.py"
ROUND17 = "serq-frontend/tests/test_conformance_round17.py"
ROUND19 = "serq-frontend/tests/test_conformance_round19.py"
SUGAR = "serq-frontend/tests/test_sugar.py"
CSYNTAX = "serq-frontend/tests/test_conformance_syntax.py"

# -- scaffolds the completions share -------------------------------------------------------------------

RUN = "run { horizon 20; }\n"
ONE = "workload { arrive batch(1); }\n"
# plain stages for the serving forms: W seconds on a fifo, ps or delay stage, T tokens on a step engine
ROLES = "let W = 2;\nlet X = 1;\nlet Z = 3;\nstage prefill : fifo;\nstage decode : delay;\nstage tool : delay;\n"
ROLES += "stage link : ps(1);\n"
ENGINE = "let T = 4;\npool kv { cap 64; block 4; }\nstage E : step { budget 8; cost 1; memory kv; }\n"
PQ = "pool P { cap 10; }\npool Q { cap 10; }\n"


def session(body: str) -> str:
    return "session {\n" + body + "\n  end;\n}\n"


# -- the vLLM engine's hold (§2, the serving vocabulary; §3, at admission) -------------------------------

VLLM_HEAD = """let bs = 4;
pool reqs { cap 2; admit via engine; }
pool kv { cap 64; block bs; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
workload { arrive batch(2); hidden o; turn { set prompt = 10; set o = 3; } }
"""
VLLM_HOLD = """hold reqs (1), kv (min(prompt, hit + budget_left(engine)))
                    at admission (hit = min(cachedin(kv), hitmax)) {
  prefill (prompt - c) growing kv;
  decode (o - 1) growing kv;
} cache (prompt + o);"""
VLLM_HOLD_PLAIN = """hold reqs (1), kv (min(prompt, min(cachedin(kv), hitmax) + budget_left(engine))) {
  run engine prefill (prompt - c) growing kv;
  run engine decode (o - 1) growing kv;
} cache (prompt + o);"""
VLLM_PRE = "  turn;\n  set t0 = now;\n  set c = 0;\n  set hitmax = floor((prompt - 1) / bs) * bs;\n"
VLLM_POST = "\n  observe r = now - t0;"

# -- the two sides (§2) ----------------------------------------------------------------------------------

SIDES_HEAD = """let Lambda = 0.5;
let Z = 2;
let bs = 4;
pool reqs { cap 2; admit via engine; }
pool kv { cap 64; block bs; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage tool : delay;
"""
SIDES_TURN = "set n = 10; set o = 3; set c = 0; set more = ~bernoulli(0.5);"
SIDES = SIDES_HEAD + """workload {
  arrive poisson(Lambda);
  hidden o;
  init { set K = 0; }
  turn { """ + SIDES_TURN + """ }
  session {
    turn;
    loop {
      request;
      set K = prompt + o;
      branch (more) { tool (~exp(Z)); turn; } else { end; }
    }
  }
}

server {
  set prompt = K + n;
  set hitmax = floor((prompt - 1) / bs) * bs;
  hold reqs (1), kv (min(prompt, hit + budget_left(engine)))
        at admission (hit = min(cachedin(kv), hitmax)) {
    prefill (prompt - c) growing kv;
    decode (o - 1) growing kv;
  } cache (prompt + o);
}
""" + "run { horizon 30; }\n"
SIDES_PLAIN = SIDES_HEAD + """workload {
  arrive poisson(Lambda);
  hidden o;
  init { set K = 0; }
  turn { """ + SIDES_TURN + """ }
}
session {
  turn;
  loop {
    set prompt = K + n;
    set hitmax = floor((prompt - 1) / bs) * bs;
    hold reqs (1), kv (min(prompt, min(cachedin(kv), hitmax) + budget_left(engine))) {
      run engine prefill (prompt - c) growing kv;
      run engine decode (o - 1) growing kv;
    } cache (prompt + o);
    set K = prompt + o;
    branch (more) { run tool (~exp(Z)); turn; } else { end; }
  }
}
""" + "run { horizon 30; }\n"

# -- a queue declares one station whole (§2, Queues) ------------------------------------------------------

QUEUE_P = """queue P[NP] : prefill {
  pool reqs { cap max_seqsP; admit via P; }
  pool kv { cap blocksP * bs; block bs; evict lru; preempt lifo; }
  serve step { budget B; cost 1; memory kv; }
  prefill (prompt) {
    hold reqs (1), kv (min(prompt, hit + budget_left(P))) reserve (prompt)
         at admission (hit = min(cachedin(kv), reusable(prompt, bs))) {
      set c = cached;
      prefill (prompt - c) growing kv;
    } cache (prompt) lease kv (inf);
  }
}
"""
QUEUE_P_PROGRAM = """let NP = 2;
let max_seqsP = 1;
let blocksP = 16;
let bs = 4;
let B = 8;
def reusable(x, bs) = floor((x - 1) / bs) * bs;
""" + QUEUE_P + """workload { arrive batch(3); turn { set prompt = 12; } }
session {
  turn;
  set t0 = now;
  P[serial % 2].prefill (prompt);
  observe done = now - t0;
  end;
}
""" + RUN

# -- a pull relation (§2, Queues) ---------------------------------------------------------------------------

PULL = """queue P[NP] : prefill { pool kv { cap 100; } serve fifo; nic ps(BwP); prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }
queue D[ND] : decode {
  pool kv { cap 100; } serve fifo; nic ps(BwD);
  decode (prompt) from src {
    hold kv (prompt) {
    set c = 1;
    transfer (prompt - c) from src to kv (prompt - 1 - c);   // over P's NIC and this pod's
    }
  }
}
D pull P latency x0 share maxmin;
"""
PULL_HEAD = "let NP = 1;\nlet ND = 1;\nlet BwP = 4;\nlet BwD = 2;\nlet x0 = 0.5;\n"
PULL_WORK = """workload { arrive batch(1); turn { set prompt = 9; } }
session {
  turn;
  set t0 = now;
  P[0].prefill (prompt);
  set t1 = now;
  D[0].decode (prompt) from P[0];
  observe prefilled = t1 - t0;
  observe response = now - t0;
  end;
}
""" + RUN
PULL_PROGRAM = PULL_HEAD + PULL + PULL_WORK
# the read written in the kernel: `src` in an index is the source member's, `self` this member
PULL_KERNEL = "run D.nic.latency[self] (x0); run P.nic[src], D.nic[self] (prompt - c); load kv (prompt - 1 - c); release src;"
PULL_PLAIN = PULL_PROGRAM.replace("transfer (prompt - c) from src to kv (prompt - 1 - c);   // over P's NIC and this pod's",
                                  PULL_KERNEL)

# -- pool-reference.txt's complete program, in the other dialect as written --------------------------------

FN_MAIN = """fn main() {
  pool reqs { cap 2; }
  stage svc : delay;
  workload {
    arrive batch(3);
  }
  server {
    set t0 = now;
    hold reqs (cost(reqs, 1)) { run svc (cost(svc, 2)); }
    observe response = now - t0;
  }
}
"""

# -- program-reference.txt's use of the vLLM library ------------------------------------------------------

USE_PROGRAM = """use "../../lib/vllm.sq";
let K = 0;
let n = 8;
pool reqs { cap 4; admit via engine; }
pool kv { cap 256; block 16; preempt lifo; }
stage engine : step { budget 16; cost 1; memory kv; }
workload { arrive batch(2); hidden o; turn { set o = 3; } session { turn; request; end; } }
server {
  set t0 = now;
  set prompt = K + n;
  vllm_request(reqs, kv, engine, prompt, o, t0);
  observe response = now - t0;
}
""" + RUN

# -- the lease of a prefiller until the decoder's read (§2, A KV transfer) ---------------------------------------

LEASE = """let bs = 4;
pool reqsP { cap 2; admit via P; }
pool kvP { cap 64; block bs; evict lru; preempt lifo; }
pool kvD { cap 64; block bs; evict lru; preempt lifo; }
pool reqsD { cap 2; admit via D; }
stage P : step { budget 16; cost 1; memory kvP; }
stage D : step { budget 16; cost 1; memory kvD; }
stage setup : delay;
stage egress : ps(10);
stage ingress : ps(10);
share maxmin;
workload { arrive batch(1); init { set prompt = 8; set o = 3; set x0 = 0.5; set c = 0; } }
session {
  hold reqsP (1), kvP (prompt) {
    prefill on P (prompt - c) growing kvP;
  } cache (prompt) lease kvP (inf);       // finished on P: the slot goes, the blocks wait for the decoder's read
  observe leased = used(kvP);
  hold kvD (prompt) reserve (prompt), reqsD (0) reserve (1) {
    run setup (x0);
    transfer on egress, ingress (prompt - c) from kvP to kvD (prompt - 1 - c);   // takes the lease, over both NICs
    hold reqsD (1) { prefill on D (1) growing kvD; decode on D (o - 1) growing kvD; }
  } cache (prompt + o);
  observe done = now;
  observe kept = cachedin(kvP);
  end;
}
""" + "run { horizon 100; }\n"

# -- a preempted hold resumes from what it computed (§3, grow; §7) ------------------------------------------

KNOWN = """pool kv { cap 9; preempt lifo; }
stage decode : delay;
workload { arrive batch(2); hidden o; turn { set prompt = 4; set o = 6; } }
session {
  turn;
  set t0 = now;
  hold kv (prompt) {
    set known = computed < prompt ? prompt : computed + 1;
    observe k = known;
    load kv (prompt);
    decode (1 + serial);
    grow kv (2);
    decode (o - 1 - (known - prompt));
  }
  observe r = now - t0;
  end;
}
""" + RUN


FRAGMENTS: list[Fragment] = [
    # ---------------------------------------------------------------- language.txt §2, the grammar
    # language.txt:21-88: the productions, each compiled in a minimal program by test_conformance_syntax
    L(21, "grammar", "program  := item*", "form", covered=SYNTAX, instance='"let_def_use_of_expression"'),
    L(26, "grammar-pool", "pool NAME [ '[' N ']' ] { poolopt* }", "form", covered=SYNTAX,
      instance="pool kv[2] { cap 4; }"),
    L(27, "grammar-stage", "stage NAME [ '[' N ']' ] : kind ;", "form", covered=SYNTAX, instance="stage d[2] : delay;"),
    L(31, "grammar-queue", "queue NAME [ '[' expr ']' ] [ : ROLE [, ROLE]* ] { qitem* }", "form", covered=SYNTAX,
      instance="queue P[2] : prefill {"),
    L(32, "grammar-run", "run { horizon expr ; warmup expr ; seed expr ; arrivals expr ; }", "form", covered=SYNTAX,
      instance='"run_block"'),
    L(34, "grammar-pull", "QUEUE pull QUEUE [ latency expr ] share ( maxmin | bottleneck ) ;", "form", covered=SYNTAX,
      instance="D pull P latency 0.5 share maxmin;"),
    L(35, "grammar-gauge", "gauge NAME = expr ;", "form", covered=SYNTAX, instance="gauge "),
    L(50, "grammar-step", "step { budget expr ; cost expr ; [chunk expr ;]", "form", covered=SYNTAX,
      instance="stage E : step { budget 8; cost 0.1 + tokens + attention + decoders + kv_decode + kv_prefill; chunk 4; "),
    L(54, "grammar-arrive", "arrive poisson ( rate ) ; | arrive renewal ( expr ) ; | arrive closed ( n ) ;", "form",
      covered=SYNTAX, instance="arrive closed(3);"),
    L(64, "grammar-hold", "hold POOL ( expr ) [reserve ( expr )] [, POOL ( expr ) [reserve ( expr )]]*", "form",
      covered=SYNTAX, instance="hold reqs (1), kv (1) reserve (n) reuse (0) {"),
    L(80, "grammar-entry-call", "QUEUE [ '[' expr ']' ] . VERB ( expr, ... ) [ from QUEUE [ '[' expr ']' ] ]", "form",
      covered=SYNTAX, instance="D[j].decode (prompt) from P[i];"),
    L(84, "grammar-serving", "prefill  [ '[' expr ']' | on STAGE ] expr [ growing POOL ] ;", "form",
      covered=(CSYNTAX, "SUGAR"),
      instance="prefill on P[j] (n);"),
    # the other productions of language.txt:21-88, one a line
    L(22, "grammar-let", "let NAME = expr ;", "form", covered=SYNTAX,
      instance="let K = 2;"),
    L(23, "grammar-use", 'use "file.sq" ;', "form", covered=(CSYNTAX, "PROGRAMS"),
      instance='use "lib.sq";'),
    L(24, "grammar-def-expr", "def NAME ( NAME , ... ) = expr ;", "form", covered=SYNTAX,
      instance="def f(x) = x * K + 1;"),
    L(25, "grammar-def-block", "def NAME ( NAME , ... ) block", "form", covered=SYNTAX,
      instance="def g(y) { run s (f(y)); }"),
    L(28, "grammar-workload", "workload { wlitem* }", "form", covered=SYNTAX,
      instance="workload { arrive batch(4); }"),
    L(29, "grammar-session", "session block", "form", covered=SYNTAX,
      instance="session { run s (1); }"),
    L(30, "grammar-server", "server block", "form", covered=SYNTAX,
      instance="server { set m = n; run s (m); }"),
    L(33, "grammar-share", "share maxmin ; | share bottleneck ;", "form", covered=SYNTAX,
      instance="share bottleneck;"),
    L(36, "grammar-qpool", "pool NAME { poolopt* }", "form", covered=SYNTAX,
      instance="pool kv { cap 100; } serve fifo;"),
    L(37, "grammar-serve", "serve kind [ latency expr ] ;", "form", covered=SYNTAX,
      instance="serve ps(10) latency 0.25;"),
    L(38, "grammar-nic", "nic kind ;", "form", covered=SYNTAX,
      instance="nic ps(5);"),
    L(39, "grammar-entry", "VERB [ ( NAME, ... ) ] [ from NAME ] block", "form", covered=SYNTAX,
      instance="decode (prompt) from src"),
    L(40, "grammar-cap", "cap expr ;", "form", covered=SYNTAX,
      instance="cap 100;"),
    L(41, "grammar-block", "block expr ;", "form", covered=SYNTAX,
      instance="block 4;"),
    L(42, "grammar-evict", "evict lru ; | evict by ( expr , ... ) ;", "form", covered=SYNTAX,
      instance="evict by (age, -size);"),
    L(43, "grammar-preempt", "preempt none ; | preempt lifo ;", "form", covered=SYNTAX,
      instance="preempt none;"),
    L(44, "grammar-queue-by", "queue fifo ; | queue by ( expr (, expr)* ) ;", "form", covered=SYNTAX,
      instance="queue by (-waited, serial);"),
    L(45, "grammar-admit-via", "admit via STAGE ;", "form", covered=SYNTAX,
      instance="admit via E;"),
    L(46, "grammar-spill", "spill POOL via STAGE ( expr ) when ( expr ) ;", "form", covered=SYNTAX,
      instance="spill host via up (size / 10) when (size > 4 && waiting >= 0);"),
    L(47, "grammar-fifo", "fifo [ ( c ) ]", "form", covered=SYNTAX,
      instance="stage b : fifo(3);"),
    L(48, "grammar-ps", "ps ( expr )", "form", covered=SYNTAX,
      instance="stage c : ps(min(present, 4));"),
    L(49, "grammar-delay", "delay", "form", covered=SYNTAX,
      instance="stage d : delay;"),
    L(51, "grammar-serve-by", "serve admission ; | serve by ( expr , ... ) ; | serve decode first ;", "form",
      covered=SYNTAX,
      instance="serve by (remaining, decoding, admission);"),
    L(52, "grammar-exclusive", "serve exclusive prefill ;", "form", covered=SYNTAX,
      instance="serve exclusive prefill;"),
    L(53, "grammar-memory", "[memory POOL ;] }", "form", covered=SYNTAX,
      instance="memory kv; }"),
    L(55, "grammar-trace", 'trace "file.csv" [ordered] ;', "form", covered=SYNTAX,
      instance='trace "t.csv" ordered;'),
    L(56, "grammar-init-turn", "init block | turn block", "form", covered=SYNTAX,
      instance="init { set K = 0; }"),
    L(57, "grammar-wl-session", "session block", "form", covered=SYNTAX,
      instance="session { turn; loop { request;"),
    L(58, "grammar-hidden", "hidden NAME [, NAME]* ;", "form", covered=SYNTAX,
      instance="hidden K;"),
    L(59, "grammar-turn", "turn ;", "form", covered=SYNTAX,
      instance="session { turn;"),
    L(60, "grammar-request", "request ;", "form", covered=SYNTAX,
      instance="loop { request;"),
    L(61, "grammar-request-gw", "request QUEUE ;", "form", covered=SYNTAX,
      instance="request gw;"),
    L(62, "grammar-set", "set NAME = expr ;", "form", covered=SYNTAX,
      instance="set K = K + 1;"),
    L(63, "grammar-observe", "observe NAME = expr ;", "form", covered=SYNTAX,
      instance="observe x = e + turn_no + serial + cached + computed;"),
    L(65, "grammar-reuse-at-admission", "[reuse ( expr )] [at admission ( NAME = expr , ... )]", "form",
      covered=(CSYNTAX, "SUGAR"),
      instance="at admission (g = cachedin(p), h = g * 2)"),
    L(66, "grammar-cache-lease", "block [ cache ( expr ) ] [ lease POOL ( expr ) ] ;", "form", covered=SYNTAX,
      instance="cache (3) lease kv (5);"),
    L(69, "grammar-grow", "grow POOL ( expr ) ;", "form", covered=SYNTAX,
      instance="grow kv (2);"),
    L(70, "grammar-drop", "drop POOL ;", "form", covered=SYNTAX,
      instance="drop kv;"),
    L(71, "grammar-release", "release POOL ;", "form", covered=SYNTAX,
      instance="release kv;"),
    L(72, "grammar-load", "load POOL ( expr ) ;", "form", covered=SYNTAX,
      instance="load b (1);"),
    L(73, "grammar-run-statement", "run STAGE [prefill | decode] ( expr ) [ growing POOL ] ;", "form", covered=SYNTAX,
      instance="run E prefill (n) growing kv;"),
    L(74, "grammar-run-flow", "run STAGE , STAGE [, STAGE]* ( expr ) ;", "form", covered=SYNTAX,
      instance="run x, y (1);"),
    L(75, "grammar-branch", "branch ( expr ) block [ else block ]", "form", covered=SYNTAX,
      instance="branch (K > 2) { end; }"),
    L(76, "grammar-branch-with", "branch with ( expr ) block [ else block ]", "form", covered=SYNTAX,
      instance="branch with (0.5) { end; } else { turn; }"),
    L(77, "grammar-loop", "loop block", "form", covered=SYNTAX,
      instance="loop { choose j in 3"),
    L(78, "grammar-choose", "choose NAME in expr by ( expr , ... ) ;", "form", covered=SYNTAX,
      instance="choose j in 3 by (queue(s[j]), j);"),
    L(79, "grammar-end", "end ;", "form", covered=SYNTAX,
      instance="run s (1); end;"),
    L(80, "grammar-entry-to", "[ to POOL ( expr ) ]", "form", covered=SYNTAX,
      instance="L.transfer (3) from a to b (1);"),
    L(82, "grammar-mark", "mark NAME ;", "form", covered=SYNTAX,
      instance="mark ft;"),
    L(85, "grammar-transfer", "transfer [ '[' expr ']' | on STAGE [, STAGE]* ] expr from POOL to POOL ( expr ) ;", "form",
      covered=SYNTAX,
      instance="transfer on L[1], M (3) from a to b (1);"),
    L(87, "grammar-decode", "decode   [ '[' expr ']' | on STAGE ] expr [ growing POOL ] ;", "form",
      covered=(CSYNTAX, "SUGAR"),
      instance="decode on E[j] 2;"),
    L(88, "grammar-tool", "tool     [ '[' expr ']' | on STAGE ] expr [ growing POOL ] ;", "form",
      covered=(CSYNTAX, "SUGAR"),
      instance="tool on P[0] 1;"),
    # ---------------------------------------------------------------- language.txt §2, arrivals and the run block
    # language.txt:90
    L(90, "renewal-h2", "arrive renewal(~h2(mean, cv2));", "new",
      program="let mean = 2;\nlet cv2 = 4;\nstage s : delay;\nworkload { arrive renewal(~h2(mean, cv2)); }\n"
      + session("  observe at = now;\n  run s (1);") + "run { horizon 200; }\n", outcome="test_renewal_h2_gaps"),
    L(90, "renewal-2", "renewal(2)", "new",
      program="stage s : delay;\nworkload { arrive renewal(2); }\n" + session("  observe at = now;\n  run s (1);")
      + "run { horizon 9; }\n", outcome="test_renewal_2_a_constant_gap_first_after_one"),
    L(90, "poisson-renewal-exp", "renewal(~exp(1 / rate))", "covered",
      covered=("serq-sim/tests/test_conformance_hand.py", "test_poisson_starts_at_zero_then_renewal_schedule"),
      instance="renewal(~exp(0.5))"),
    # language.txt:92
    L(92, "run-arrivals-N", "run { arrivals N; }", "new",
      program="let N = 3;\nstage s : delay;\nworkload { arrive renewal(1); }\n" + session("  run s (2);")
      + "run { arrivals N; }\n", horizon=50, outcome="test_arrivals_n_ends_when_n_sessions_drained"),
    L(92, "cli-arrivals", "--arrivals N", "new",
      program="stage s : delay;\nworkload { arrive renewal(1); }\n" + session("  set t0 = now;\n  run s (2);\n"
                                                                          "  observe w = now - t0;")
      + "run { horizon 50; }\n", outcome="test_arrivals_on_the_command_line"),
    # ---------------------------------------------------------------- language.txt §2, expressions
    # language.txt:96
    L(96, "aggregate-max", "max k in 2 (used(kv[k]))", "covered",
      covered=(AUDIT3, "test_aggregates_are_written_out_over_their_index"),
      instance="max j in 2 (used(m[j]))"),
    # language.txt:96, the expressions: the draws, the test, the observables
    L(96, "draw-exp", "~exp(mean)", "form", covered=SYNTAX, instance="~exp(1)"),
    L(96, "draw-det", "~det(x)", "form", covered=SYNTAX, instance="~det(2)"),
    L(96, "draw-uniform", "~uniform(lo,hi)", "form", covered=SYNTAX, instance="~uniform(0, 1)"),
    L(96, "draw-erlang", "~erlang(k,mean)", "form", covered=SYNTAX, instance="~erlang(2, 1)"),
    L(96, "draw-h2", "~h2(mean,cv2)", "form", covered=SYNTAX, instance="~h2(1, 4)"),
    L(96, "draw-bernoulli", "~bernoulli(p)", "form", covered=SYNTAX, instance="~bernoulli(0.5)"),
    L(96, "conditional", "c ? a : b", "form", covered=SYNTAX, instance="? 1 : 0"),
    L(96, "obs-queue", "queue(s)", "form", covered=SYNTAX, instance="queue(s)"),
    L(96, "obs-busy", "busy(s)", "form", covered=SYNTAX, instance="busy(s)"),
    L(96, "obs-work", "work(s)", "form", covered=SYNTAX, instance="work(s)"),
    L(96, "obs-used", "used(p)", "form", covered=SYNTAX, instance="used(p)"),
    L(96, "obs-free", "free(p)", "form", covered=SYNTAX, instance="free(p)"),
    L(96, "obs-cachedin", "cachedin(p)", "form", covered=SYNTAX, instance="cachedin(p)"),
    L(96, "obs-holders", "holders(p)", "form", covered=SYNTAX, instance="holders(p)"),
    L(96, "obs-queued", "queued(p)", "form", covered=SYNTAX, instance="queued(p)"),
    L(96, "obs-budget-left", "budget_left(step)", "form", covered=SYNTAX, instance="budget_left(E)"),
    L(96, "obs-blocksize", "blocksize(p)", "form", covered=SYNTAX, instance="blocksize(p)"),
    L(96, "obs-price", "price(s, s_hit, ds)", "form", covered=SYNTAX, instance="price(h, 1, 2)"),
    L(96, "obs-est-lambda", "est_lambda(s)", "form", covered=SYNTAX, instance="est_lambda(s)"),
    L(96, "obs-est-rho", "est_rho(s)", "form", covered=SYNTAX, instance="est_rho(s)"),
    L(96, "obs-est-wait", "est_wait(s)", "form", covered=SYNTAX, instance="est_wait(s)"),
    L(96, "tokens-in-session", "set x = tokens;", "covered", covered=(CSYNTAX, "REFUSALS"),
      instance="set x = ⟨tokens;"),
    L(96, "tokens-in-evict", "evict by (tokens)", "covered", covered=(CSYNTAX, "REFUSALS"),
      instance="evict by (⟨tokens);"),
    L(96, "present-attribute", "ps(min(present, 16))", "covered", covered=(CSYNTAX, "REFUSALS")),
    L(96, "nan-constant", "0/0", "covered", covered=(CSYNTAX, "REFUSALS")),
    L(96, "nan-constant-inf", "inf - inf", "covered", covered=(CSYNTAX, "REFUSALS")),
    L(96, "aggregate-max-form", "max j in n (e)", "covered",
      covered=(AUDIT3, "test_aggregates_are_written_out_over_their_index"),
      instance="max j in N (j * 2)"),
    L(96, "aggregate-min-form", "min j in n (e)", "covered",
      covered=(AUDIT3, "test_aggregates_are_written_out_over_their_index"),
      instance="min j in 2 (max k in 3 (j * 10 + k))"),
    L(96, "aggregate-sum-form", "sum j in n (e)", "covered",
      covered=(AUDIT3, "test_aggregates_are_written_out_over_their_index"),
      instance="sum j in (N + 1) (j)"),
    # ---------------------------------------------------------------- language.txt §2, the serving vocabulary
    # language.txt:103-110, the table of forms and kernels
    L(103, "form-prefill", "prefill W;", "form", covered=(CSYNTAX, "SUGAR"), instance="prefill n;"),
    L(103, "form-prefill-engine", "run E prefill (T);", "form", covered=(CSYNTAX, "SUGAR"),
      instance="run prefill prefill (n);"),
    L(104, "form-transfer", "transfer (X) from P to Q (n);", "covered",
      covered=("serq-sim/tests/test_conformance_audit4.py", "test_a_transfer_runs_the_link_loads_the_destination_and_releases_the_source"),
      instance="transfer (4) from P to Q (5);"),
    L(105, "form-decode", "decode W;", "form", covered=(CSYNTAX, "SUGAR"), instance="decode (n);"),
    L(105, "form-decode-engine", "run E decode (T);", "form", covered=(CSYNTAX, "SUGAR"), instance="run E decode (2);"),
    L(106, "form-tool", "tool Z;", "form", covered=(CSYNTAX, "SUGAR"), instance="tool 3;"),
    L(107, "form-growing", "prefill (T) growing kv;", "form", covered=(CSYNTAX, "SUGAR"),
      instance="prefill (n) growing kv;"),
    L(108, "form-index", "prefill[j] W;", "form", covered=(CSYNTAX, "SUGAR"), instance="tool[1] (n);"),
    L(108, "form-index-engine", "run prefill[j] prefill (T);", "form", covered=(CSYNTAX, "SUGAR"),
      instance="run prefill[j] prefill (n);"),
    L(109, "form-on-member", "prefill on P[j] (W);", "form", covered=(CSYNTAX, "SUGAR"),
      instance="prefill on P[j] (n);"),
    L(109, "form-on-member-engine", "run P[j] prefill (T);", "form", covered=(CSYNTAX, "SUGAR"),
      instance="run E[j] decode (2);"),
    L(110, "form-transfer-two-links", "transfer on egress[i], ingress[j] (X) from P to Q (n);", "form",
      covered=(CSYNTAX, "SUGAR"), instance="transfer on eg[1], ing[0] (3) from a to b (2);"),
    # language.txt:114, which stage
    L(114, "form-no-stage", "stage svc : fifo;", "new",
      program="let W = 2;\nstage svc : fifo;\n" + ONE + session("  prefill W;") + RUN,
      refused="`prefill` finds no stage to run on"),
    L(114, "form-choose-index", "choose j …; prefill[j] W;", "form", covered=(CSYNTAX, "SUGAR"),
      instance="choose j in 2 by (used(kv[j])); prefill[j] (n);"),
    L(114, "form-on-other", "prefill on P2 (W);", "new",
      program="let W = 2;\nstage P2 : delay;\n" + ONE + session("  prefill on P2 (W);") + RUN,
      plain="let W = 2;\nstage P2 : delay;\n" + ONE + session("  run P2 (W);") + RUN),
    L(114, "form-tool-on-engine", "run E (X)", "form", covered=(CSYNTAX, "REFUSALS"), instance="tool on E 3;"),
    # language.txt:118-122, vLLM's engine in the serving vocabulary
    L(118, "vllm-hold", VLLM_HOLD, "new",
      program=VLLM_HEAD + session(VLLM_PRE + VLLM_HOLD + VLLM_POST) + RUN,
      plain=VLLM_HEAD + session(VLLM_PRE + VLLM_HOLD_PLAIN + VLLM_POST) + RUN,
      outcome="test_the_vllm_hold_by_hand"),
    # language.txt:128-129, a store-and-forward transfer
    L(128, "two-holds", "hold memP (T) { prefill (n + K); run link (T / 100); } cache (T);\nhold memD (T) { decode (o); }",
      "covered", covered=(AUDIT8, "test_two_holds_in_a_row_are_a_store_and_forward_link")),
    # language.txt:133-140, the lease
    L(133, "lease-nixl", "hold reqsP (1), kvP (…) … {\n  prefill on P (prompt - c) growing kvP;\n"
      "} cache (prompt) lease kvP (inf);       // finished on P: the slot goes, the blocks wait for the decoder's read",
      "new", program=LEASE, outcome="test_the_lease_of_the_prefiller_by_hand"),
    L(136, "lease-reader", "hold kvD (prompt) reserve (prompt), reqsD (0) reserve (1) … {\n  run setup (x0);\n"
      "  transfer on egress, ingress (prompt - c) from kvP to kvD (prompt - 1 - c);   // takes the lease, over both NICs\n"
      "  hold reqsD (1) { prefill on D (1) growing kvD; decode on D (o - 1) growing kvD; }\n} cache (prompt + o);",
      "new", program=LEASE),
    # language.txt:142
    L(142, "lease-form", "lease P (t)", "new",
      program="let t = 3;\n" + PQ + "stage s : delay;\n" + ONE
      + session("  hold P (2) { run s (1); } cache (2) lease P (t);\n  observe held = used(P);\n  run s (5);\n"
                "  observe later = used(P);\n  observe kept = cachedin(P);") + RUN,
      outcome="test_a_lease_ends_after_t_seconds"),
    L(142, "release-form", "release P", "form", covered=SYNTAX, instance="release kv;"),
    L(142, "load-form", "load Q (n)", "form", covered=SYNTAX, instance="load b (1);"),
    # language.txt:147-153, the lifecycle table
    L(147, "life-admission", "hold reqs (1), kv (hit + …) at admission (hit = …) { … }", "new",
      program=VLLM_HEAD + session(VLLM_PRE + "hold reqs (1), kv (hit + min(prompt - hit, budget_left(engine))) "
                                  "at admission (hit = min(cachedin(kv), hitmax)) { prefill (prompt - c) growing kv; }")
      + RUN,
      plain=VLLM_HEAD + session(VLLM_PRE + "hold reqs (1), kv (min(cachedin(kv), hitmax) + min(prompt - "
                                "min(cachedin(kv), hitmax), budget_left(engine))) { prefill (prompt - c) growing kv; }")
      + RUN),
    L(148, "life-prefill", "prefill (n) growing kv", "covered", covered=(CSYNTAX, "SUGAR")),
    L(149, "life-decode", "decode (o) growing kv", "new",
      program=ENGINE + ONE + session("  set o = 3;\n  hold kv (1) { decode (o) growing kv; }") + RUN,
      plain=ENGINE + ONE + session("  set o = 3;\n  hold kv (1) { run E decode (o) growing kv; }") + RUN),
    L(152, "life-tool-turn", "tool Z; turn;", "new",
      program=ROLES + "workload { arrive batch(1); turn { set k = 1; } }\n" + session("  turn;\n  tool Z; turn;") + RUN,
      plain=ROLES + "workload { arrive batch(1); turn { set k = 1; } }\n" + session("  turn;\n  run tool (Z); turn;")
      + RUN),
    # ---------------------------------------------------------------- language.txt §2, the two sides
    # language.txt:159-182
    L(159, "two-sides", """workload {
  arrive poisson(Lambda);
  hidden o;
  init { set K = 0; }
  turn { … }
  session {
    turn;
    loop {
      request;
      set K = prompt + o;
      branch (more) { tool (~exp(Z)); turn; } else { end; }
    }
  }
}

server {
  set prompt = K + n;
  set hitmax = floor((prompt - 1) / bs) * bs;
  hold reqs (1), kv (min(prompt, hit + budget_left(engine)))
        at admission (hit = min(cachedin(kv), hitmax)) {
    prefill (prompt - c) growing kv;
    decode (o - 1) growing kv;
  } cache (prompt + o);
}""", "new", program=SIDES, plain=SIDES_PLAIN),
    # language.txt:189-191, each side owns its words
    L(189, "server-turn", "turn;", "covered", covered=(CSYNTAX, "REFUSALS")),
    L(189, "server-end", "end;", "covered", covered=(CSYNTAX, "REFUSALS")),
    L(190, "server-request", "request;", "covered", covered=(CSYNTAX, "REFUSALS")),
    L(191, "admission-both-sides", "hold P (u), … at admission (x = e) { … } cache (ℓ)", "notation",
      program=PQ + ONE + session("  set u = 1;\n  set e = 2;\n"
                                 "  hold P (u), Q (x) at admission (x = e) { } cache (ℓ);") + RUN,
      refused="unexpected character `ℓ`",
      plain=PQ + ONE + session("  set u = 1;\n  set e = 2;\n  hold P (u), Q (x) at admission (x = e) { } cache (1);")
      + RUN),
    # ---------------------------------------------------------------- language.txt §2, queues
    # language.txt:201-212
    L(201, "queue-P", QUEUE_P.replace("cost 1;", "cost …;").strip(), "new", program=QUEUE_P_PROGRAM,
      outcome="test_the_prefill_queue_by_hand"),
    # language.txt:214
    L(214, "queue-admit-via", "admit via P", "covered", covered=("serq-sim/tests/test_conformance_pd.py", "PD_STEP")),
    L(214, "queue-budget-left", "budget_left(P)", "covered",
      covered=("serq-sim/tests/test_conformance_pd.py", "PD_STEP")),
    L(214, "queue-work", "work(P[i])", "new",
      program="let NP = 2;\nqueue P[NP] : prefill {\n  pool reqs { cap 1; admit via P; }\n"
      "  serve step { budget 8; cost 1; }\n  prefill (prompt) { hold reqs (1) { set b = budget_left(P); "
      "prefill (prompt); } }\n}\nworkload { arrive batch(1); turn { set prompt = 4; } }\n"
      + session("  turn;\n  set i = 1;\n  P[i].prefill (prompt);\n  observe w = work(P[i]) + used(P.reqs[i]);") + RUN,
      outcome="test_a_queues_stage_by_its_name"),
    L(214, "queue-family-of-one", "holders(D[j].kv)", "covered",
      covered=(AUDIT6, "test_a_family_of_ones_pool_is_one_pool_by_either_name_and_a_mark_is_read_without_an_index")),
    L(214, "queue-family-of-one-short", "D.kv", "covered",
      covered=(AUDIT6, "test_a_family_of_ones_pool_is_one_pool_by_either_name_and_a_mark_is_read_without_an_index")),
    # language.txt:219-222, the roles
    L(214, "queue-run-own", "run (X)", "form", covered=SYNTAX, instance="{ run (prompt); }"),
    L(214, "queue-family-let", "queue D[ND]", "covered", covered=(AUDIT6, "test_a_family_of_one_is_called_and_leased_from_by_index")),
    L(219, "role-route", "route { … }", "form", covered=SYNTAX, instance="route { choose i in 2 by (queue(P[i]));"),
    L(221, "role-decode-from", "decode (prompt) from Q", "form", covered=SYNTAX, instance="decode (prompt) from src"),
    L(224, "request-gw", "request gw;", "form", covered=SYNTAX, instance="request gw;"),
    L(219, "role-gateway", "request Q;", "covered", covered=(ROUND17, "test_a_gateways_route_is_requested_not_called"),
      instance="request g2;"),
    L(228, "entry-calls", "P[i].prefill (prompt);", "covered", covered=(AUDIT6, "FAMILY_OF_ONE")),
    L(228, "entry-call-from", "D[j].decode (prompt) from P[i];", "covered", covered=(AUDIT6, "FAMILY_OF_ONE")),
    L(228, "from-leases-nothing", "from P", "covered",
      covered=(ROUND19, "test_from_a_queue_that_leases_nothing_does_not_link")),
    # language.txt:230-240, the NICs and a pull relation
    L(230, "nic", "nic ps(BwD);", "new", program=PULL_PROGRAM, plain=PULL_PLAIN, outcome="test_the_pull_read_by_hand"),
    L(232, "pull-program", PULL.replace("pool kv { cap 100; } serve fifo; nic ps(BwP); prefill (prompt) { hold kv (prompt) "
                                        "{ run (prompt); } cache (prompt) lease kv (inf); }",
                                        "… nic ps(BwP); prefill (prompt) { … }")
      .replace("  pool kv { cap 100; } serve fifo; nic ps(BwD);", "  … nic ps(BwD);")
      .replace("    hold kv (prompt) {\n    set c = 1;\n", "    …\n")
      .replace("this pod's\n    }\n", "this pod's\n").strip(), "new", program=PULL_PROGRAM, plain=PULL_PLAIN,
      unclosed="this pod's\n    }"),
    # language.txt:242, the kernel the read stands for
    L(242, "pull-kernel", "run D.nic.latency[j] (x0); run P.nic[i], D.nic[j] (…); load D.kv[j] (…); release P.kv[i];",
      "notation", refused="within its entries it is `kv`", plain=PULL_PLAIN, program=PULL_PLAIN.replace("run D.nic.latency[self] (x0); run P.nic[src], D.nic[self] "
                                                            "(prompt - c); load kv (prompt - 1 - c); release src;",
                                                            "set j = self; set i = src; run D.nic.latency[j] (x0); "
                                                            "run P.nic[i], D.nic[j] (prompt - c); load D.kv[j] "
                                                            "(prompt - 1 - c); release P.kv[i];")),
    # language.txt:244
    L(244, "transfer-on-links", "transfer on L[k], M[l] (n) from S to P (m)", "new",
      program="stage L[2] : ps(1);\nstage M[2] : ps(4);\nshare maxmin;\npool S { cap 10; }\npool P { cap 10; }\n"
      + ONE + session("  set k = 1;\n  set l = 0;\n  set n = 3;\n  set m = 2;\n  hold S (2) { } lease S (inf);\n"
                      "  hold P (m) { transfer on L[k], M[l] (n) from S to P (m); }\n  observe t = now;") + RUN,
      plain="stage L[2] : ps(1);\nstage M[2] : ps(4);\nshare maxmin;\npool S { cap 10; }\npool P { cap 10; }\n"
      + ONE + session("  set k = 1;\n  set l = 0;\n  set n = 3;\n  set m = 2;\n  hold S (2) { } lease S (inf);\n"
                      "  hold P (m) { run L[k], M[l] (n); load P (m); release S; }\n  observe t = now;") + RUN,
      outcome="test_transfer_on_two_named_stages"),
    L(244, "link-entry", "nic[self].transfer (n) from src to kv (m);", "covered",
      covered=("serq-sim/tests/test_conformance_round17.py", "test_a_lease_inside_an_enclosing_hold_is_the_one_a_from_takes_over_a_links_entry"),
      instance="N[self].transfer (p) from src to kv (p);"),
    # language.txt:246
    L(246, "entry-index", "run nic[k]", "new",
      program="stage nic[2] : ps(2);\nqueue D[2] : decode {\n  pool kv { cap 9; }\n  serve fifo;\n"
      "  decode (p) { set k = 1 - self; run nic[k] (p); }\n}\nworkload { arrive batch(1); }\n"
      + session("  D[0].decode (4);\n  observe t = now;") + RUN, outcome="test_an_entrys_index_reads_as_its_body"),
    L(246, "mark", "mark first_token;", "covered",
      covered=(AUDIT6, "test_a_family_of_ones_pool_is_one_pool_by_either_name_and_a_mark_is_read_without_an_index")),
    # ---------------------------------------------------------------- language.txt §3, pools
    # language.txt:256
    L(256, "hold-subscripts", "hold m₁(u₁) reserve(r₁), m₂(u₂) … reuse(ρ) { body } cache(ℓ)", "notation",
      program="pool m1 { cap 10; }\npool m2 { cap 10; }\n" + ONE
      + session("  hold m₁(u₁) reserve(r₁), m₂(u₂) reuse(ρ) { body } cache(ℓ);") + RUN,
      refused="unexpected character `₁`",
      plain="pool m1 { cap 10; }\npool m2 { cap 10; }\n" + ONE
      + session("  set u1 = 1;\n  set r1 = 2;\n  set u2 = 3;\n  hold m1(u1) reserve(r1), m2(u2) reuse(0) { } cache(1);")
      + RUN),
    L(256, "min-l-computed", "min(ℓ, computed)", "notation",
      program="pool kv { cap 4; }\n" + ONE + session("  hold kv (2) { } cache (min(ℓ, computed));") + RUN,
      refused="unexpected character `ℓ`",
      plain="pool kv { cap 4; }\n" + ONE + session("  set l = 1;\n  hold kv (2) { } cache (min(l, computed));") + RUN),
    L(256, "cache-0", "cache (0)", "covered",
      covered=("serq-sim/tests/test_conformance_hand.py", "test_cache_reuse_and_dead_entries")),
    L(256, "reuse-0", "reuse (0)", "covered",
      covered=(AUDIT6, "test_a_forced_miss_consumes_nothing_and_leaves_the_old_prefix_dead"),
      instance="reuse (forced ? 0 : inf)"),
    L(256, "drop-before-end", "drop kv;", "covered",
      covered=("serq-sim/tests/test_conformance_more.py", "test_drop_discards_the_own_prefix_without_an_eviction")),
    # language.txt:258, families joined member for member
    L(258, "admit-via-family", "pool q[N] { admit via S; }", "covered",
      covered=("serq-sim/tests/test_conformance_round15.py", "test_a_step_family_serves_its_pool_family_member_for_member"),
      instance="pool q[2] { cap 1; admit via S; }"),
    L(258, "memory-family", "stage E[N] : step { memory kv; }", "covered",
      covered=(AUDIT6, "test_a_family_of_engines_each_admits_its_own_queue_with_its_own_budget"),
      instance="stage E[2] : step { budget 4; cost 1; memory kv; }"),
    # language.txt:260
    L(260, "grow", "grow m (d)", "covered",
      covered=("serq-sim/tests/test_conformance_audit7.py", "test_a_grow_adds_its_amount_rounded_to_blocks_to_the_allocation"),
      instance="grow m (3);"),
    L(260, "known", "known = computed < prompt ? prompt : computed + 1", "new", program=KNOWN,
      outcome="test_a_preempted_hold_knows_what_it_computed"),
    L(260, "prefill-known", "prefill (known - c)", "covered",
      covered=("serq-sim/tests/test_conformance_round16_c.py", "program")),
    L(260, "decode-known", "decode (o - 1 - (known - prompt))", "new", program=KNOWN),
    # language.txt:262
    L(262, "queue-by-form", "queue by (k1, …)", "form", covered=SYNTAX, instance="queue by (-waited, serial);"),
    # ---------------------------------------------------------------- language.txt §3, stages
    # language.txt:266
    L(266, "run-two-stages", "run a, b (w)", "covered",
      covered=("serq-sim/tests/test_conformance_audit7.py", "test_a_victims_flow_leaves_its_stages_and_the_others_rates_go_up"),
      instance="run a, b (3);"),
    L(266, "step-form", "step { budget B; cost C; }", "new",
      program="let B = 4;\nlet C = 1;\nstage E : step { budget B; cost C; }\n" + ONE
      + session("  run E prefill (6);\n  observe t = now;") + RUN, outcome="test_step_budget_b_cost_c"),
    L(266, "serve-remaining", "serve by (remaining)", "covered",
      covered=("serq-sim/tests/test_conformance_hand.py", "test_step_serve_orders_and_chunk")),
    L(266, "serve-minus-remaining", "serve by (-remaining)", "covered",
      covered=("serq-sim/tests/test_conformance_hand.py", "test_step_serve_orders_and_chunk")),
    L(266, "decode-first-is-by", "by (decoding ? 0 : 1)", "covered", covered=(CSYNTAX, "SUGAR")),
    L(266, "admission-is-by", "serve admission", "covered", covered=(CSYNTAX, "SUGAR")),
    L(266, "reserve-known", "reserve (known)", "covered",
      covered=("serq-sim/tests/test_conformance_sem.py", "test_a_reservation_of_what_the_hold_has_computed_is_rejected_after_a_preemption"),
      instance="reserve (computed + 4)"),
    # ---------------------------------------------------------------- language.txt §3, at admission and hidden
    # language.txt:270-273
    L(270, "at-admission", "hold reqs (1), kv (min(prompt, hit + budget_left(engine)))\n"
      "      at admission (hit = min(cachedin(kv), hitmax)) { … }", "new",
      program=VLLM_HEAD + session(VLLM_PRE + VLLM_HOLD + VLLM_POST) + RUN,
      plain=VLLM_HEAD + session(VLLM_PRE + VLLM_HOLD_PLAIN + VLLM_POST) + RUN),
    # language.txt:275
    L(275, "binding-set", "set known = e;", "new",
      program="pool kv { cap 10; }\nstage s : delay;\n" + ONE
      + session("  set e = 3;\n  hold kv (known) at admission (known = e) { run s (known); }") + RUN,
      plain="pool kv { cap 10; }\nstage s : delay;\n" + ONE
      + session("  set e = 3;\n  hold kv (e) { set known = e; run s (known); }") + RUN),
    # language.txt:277
    L(277, "hidden-reserve", "reserve (prompt + o)", "new",
      program="pool kv { cap 100; }\nstage s : delay;\nworkload { arrive batch(1); hidden o; "
      "turn { set prompt = 4; set o = 2; } }\n" + session("  turn;\n  hold kv (prompt) reserve (prompt + o) { run s (o); }")
      + RUN, refused="`o` is hidden"),
    L(277, "hidden-decode", "decode (o - 1)", "covered",
      covered=(ROUND19, "test_hidden_attribute_in_a_run_is_allowed"),
      instance="run E decode (o);"),
    # language.txt:281
    L(281, "branch-with", "branch with (p)", "covered",
      covered=("serq-sim/tests/test_conformance_more.py", "test_branch_with_is_a_bernoulli_draw"),
      instance="branch with (0.3)"),
    L(281, "branch-bernoulli", "branch (~bernoulli(p))", "covered",
      covered=("serq-sim/tests/test_conformance_more.py", "test_branch_with_is_a_bernoulli_draw"),
      instance="branch (~bernoulli(0.3))"),
    # language.txt:287
    L(287, "observe-form", "observe x = e", "covered",
      covered=(AUDIT3, "test_samples_before_the_warm_up_are_left_out_and_one_at_it_counts"),
      instance="observe x = serial;"),
    L(287, "constant-test-note", "observe hit is constant 0 over 5357 samples", "covered",
      covered=(AUDIT6, "test_the_note_on_a_test_constant_0_over_40_samples_after_the_warm_up"),
      instance="is constant 0 over {n} samples"),
    # language.txt:289
    L(289, "gauge-dump", "gauge/NAME.csv", "new",
      program="pool kv[2] { cap 4; }\nstage s : delay;\ngauge g = used(kv[0]);\nworkload { arrive batch(2); }\n"
      + session("  hold kv[serial] (3) { run s (2); }") + "run { horizon 4; }\n", outcome="test_a_gauges_change_points"),
    L(289, "gauge-used", "gauge u = used(kv);", "new",
      program="pool kv { cap 4; }\nstage s : delay;\ngauge u = used(kv);\nworkload { arrive batch(2); }\n"
      + session("  hold kv (1 + 2 * serial) { run s (2 - serial); }") + "run { horizon 4; }\n",
      outcome="test_a_gauge_of_used_is_the_pools_time_average_used"),
    L(289, "gauge-full", "gauge full = max j in N (free(reqs[j]) == 0);", "covered",
      covered=(AUDIT8, "test_the_gauges_of_a_full_decoder_and_of_the_spread")),
    L(289, "gauge-spread", "max j in N (used(kv[j])) - min j in N (used(kv[j]))", "covered",
      covered=(AUDIT8, "test_the_gauges_of_a_full_decoder_and_of_the_spread"),
      instance="max j in N (used(reqs[j])) - min j in N (used(reqs[j]))"),
    # ---------------------------------------------------------------- language.txt §4 and §7, the tables
    # language.txt:296
    L(296, "lecture-hold", "hold m (c) { … } cache (ℓ)", "notation",
      program="pool m { cap 10; }\n" + ONE + session("  set c = 2;\n  hold m (c) { } cache (ℓ);") + RUN,
      refused="unexpected character `ℓ`",
      plain="pool m { cap 10; }\n" + ONE + session("  set c = 2;\n  hold m (c) { } cache (1);") + RUN),
    L(298, "lecture-kinds", "ps(φ)", "notation",
      program="let c = 2;\nstage a : fifo(c);\nstage b : ps(φ);\n" + ONE + session("") + RUN,
      refused="unexpected character `φ`",
      plain="let c = 2;\nstage a : fifo(c);\nstage b : ps(2);\n" + ONE + session("") + RUN),
    L(300, "lecture-evict", "evict lru / evict by (keys)", "form", covered=SYNTAX, instance="evict lru;"),
    L(302, "lecture-branch", "branch (expr) tests, branch with (expr) draws", "form", covered=SYNTAX,
      instance="branch with ("),
    # language.txt:329-346, vLLM v1 as a serQ program
    L(329, "vllm-admit-via", "pool reqs { admit via engine; }", "new",
      program=VLLM_HEAD.replace("pool reqs { cap 2; admit via engine; }", "pool reqs { admit via engine; }")
      + session(VLLM_PRE + VLLM_HOLD + VLLM_POST) + RUN, outcome="test_the_vllm_hold_by_hand"),
    L(330, "vllm-max-seqs", "pool reqs { cap max_seqs }", "notation",
      program="let max_seqs = 2;\npool reqs { cap max_seqs }\n" + ONE + session("") + RUN,
      refused="missing `;`",
      plain="let max_seqs = 2;\npool reqs { cap max_seqs; }\n" + ONE + session("") + RUN),
    L(329, "vllm-budget", "step { budget B }", "notation",
      program="let B = 8;\nstage engine : step { budget B }\n" + ONE + session("") + RUN,
      refused="missing `;`", plain="let B = 8;\nstage engine : step { budget B; cost 1; }\n" + ONE + session("") + RUN),
    L(332, "vllm-reserve", "kv (hit + min(prompt − hit, budget_left(engine))) reserve (prompt)", "notation",
      program=VLLM_HEAD + session(VLLM_PRE + "hold reqs (1), kv (hit + min(prompt − hit, budget_left(engine))) "
                                  "reserve (prompt) at admission (hit = min(cachedin(kv), hitmax)) { }") + RUN,
      refused="U+2212 MINUS SIGN; write `-`",
      plain=VLLM_HEAD + session(VLLM_PRE + "hold reqs (1), kv (hit + min(prompt - hit, budget_left(engine))) "
                                "reserve (prompt) at admission (hit = min(cachedin(kv), hitmax)) { }") + RUN),
    L(334, "vllm-chunked", "run engine prefill (n) growing kv", "new",
      program=VLLM_HEAD + session("  turn;\n  set n = 5;\n  hold kv (1) { prefill (n) growing kv; }") + RUN,
      plain=VLLM_HEAD + session("  turn;\n  set n = 5;\n  hold kv (1) { run engine prefill (n) growing kv; }") + RUN),
    L(337, "vllm-known", "known = computed < prompt ? prompt : computed + 1", "new", program=KNOWN),
    L(338, "vllm-hidden", "hidden o;", "covered",
      covered=(ROUND17, "test_o_is_no_parameter_of_decode_and_the_body_alone_reads_it")),
    L(339, "vllm-cache-out", "cache (prompt + out − 1)", "notation",
      program=VLLM_HEAD + session("  turn;\n  set out = o;\n  hold kv (prompt) { } cache (prompt + out − 1);") + RUN,
      refused="U+2212 MINUS SIGN; write `-`",
      plain=VLLM_HEAD + session("  turn;\n  set out = o;\n  hold kv (prompt) { } cache (prompt + out - 1);") + RUN),
    L(339, "vllm-reuse", "reuse (floor(min(prev prompt, prompt − 1)/bs)·bs)", "notation",
      program=VLLM_HEAD + session("  turn;\n  set prev = 0;\n  hold kv (prompt) reuse (floor(min(prev prompt, "
                                  "prompt − 1)/bs)·bs) { } cache (prompt);") + RUN,
      refused="two names side by side, `prev prompt`",
      plain=VLLM_HEAD + session("  turn;\n  set prev_prompt = 0;\n  hold kv (prompt) reuse (floor(min(prev_prompt, "
                                "prompt - 1)/bs)*bs) { } cache (prompt);") + RUN),
    L(342, "vllm-forced-miss", "reuse (0)", "covered",
      covered=(AUDIT6, "test_a_forced_miss_consumes_nothing_and_leaves_the_old_prefix_dead"),
      instance="reuse (forced ? 0 : inf)"),
    L(346, "vllm-hit", "floor((known − 1) / bs) · bs", "notation",
      program="let bs = 4;\n" + ONE + session("  set known = 9;\n  observe hit = floor((known − 1) / bs) · bs;") + RUN,
      refused="U+2212 MINUS SIGN; write `-`",
      plain="let bs = 4;\n" + ONE + session("  set known = 9;\n  observe hit = floor((known - 1) / bs) * bs;") + RUN),
    L(346, "vllm-units", "min(known, hit + budget_left(engine))", "new",
      program=VLLM_HEAD + session(VLLM_PRE + "  set known = prompt;\n  hold reqs (1), kv (min(known, hit + budget_left(engine)))"
                                  " at admission (hit = min(cachedin(kv), hitmax)) {\n"
                                  "    prefill (known - c) growing kv;\n    decode (o - 1) growing kv;\n  } cache (known + o);"
                                  + VLLM_POST) + RUN, outcome="test_the_vllm_hold_by_hand"),
    # ---------------------------------------------------------------- pool-reference.txt
    # pool-reference.txt:3-11, the synopsis
    P(3, "pool-synopsis", "pool NAME [ '[' N ']' ] {", "form", covered=SYNTAX, instance="pool kv[2] { cap 4; }"),
    P(4, "pool-cap", "cap expr;", "form", covered=SYNTAX, instance="cap 100;"),
    P(5, "pool-block", "block expr;", "form", covered=SYNTAX, instance="block 4;"),
    P(6, "pool-evict", "evict lru;  |  evict by (expr, …);", "form", covered=SYNTAX, instance="evict by (age, -size);"),
    P(7, "pool-preempt", "preempt none;  |  preempt lifo;  |  preempt by (expr, …) [requeue head | tail];", "form",
      covered=SYNTAX, instance="preempt by (-admission, serial) requeue tail;"),
    P(8, "pool-queue", "queue fifo;  |  queue by (key, …);", "form", covered=SYNTAX, instance="queue fifo;"),
    P(9, "pool-reserve-held", "reserve held;", "covered",
      covered=("serq-sim/tests/test_conformance_audit.py", "test_a_preemption_ends_the_victims_reservation")),
    P(10, "pool-spill", "spill POOL via STAGE (expr) when (expr);", "form", covered=SYNTAX,
      instance="spill host via up (size / 10) when (size > 4 && waiting >= 0);"),
    # pool-reference.txt:28-53, each option
    P(40, "evict-lru", "evict lru;", "covered", covered=("serq-sim/tests/test_conformance_audit2.py", "EVICT_ORDERS")),
    P(41, "evict-by", "evict by (k1, k2, …);", "form", covered=SYNTAX, instance="evict by (age, -size);"),
    P(51, "preempt-none", "preempt none;", "covered",
      covered=("serq-sim/tests/test_conformance_hand.py", "test_step_grower_waits_under_preempt_none")),
    P(52, "preempt-by", "preempt by (key, …) [requeue head | requeue tail];", "form", covered=SYNTAX,
      instance="preempt by (-admission, serial) requeue tail;"),
    P(53, "preempt-lifo", "preempt lifo;", "covered",
      covered=("serq-sim/tests/test_conformance_audit.py", "test_a_decode_preemption_sets_computed_and_caches_the_position")),
    P(60, "lifo-shorthand", "by (-admission) requeue head", "covered", covered=(CSYNTAX, "SUGAR")),
    # pool-reference.txt:70-71, the priority queue
    P(70, "priority", "queue by (priority, t0);\npreempt by (-priority, -t0) requeue tail;", "covered",
      covered=("serq-sim/tests/test_conformance_round20.py", "test_the_priority_queue_example_of_the_pool_reference"),
      instance="queue by (priority, t0); preempt by (-priority, -t0) requeue"),
    P(77, "queue-fifo", "queue fifo;", "covered", covered=("serq-sim/tests/test_conformance_round22.py", "DEFAULTS")),
    # pool-reference.txt:86-87, the priority lanes
    P(86, "lanes", "queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,\n          serial);",
      "covered",
      covered=("serq-sim/tests/test_conformance_audit7.py", "test_the_priority_lanes_of_queue_by_with_waited")),
    P(93, "reserve-held", "reserve held;", "covered",
      covered=("serq-sim/tests/test_conformance_audit.py", "test_a_preemption_ends_the_victims_reservation")),
    # pool-reference.txt:105, `admit via` and the engine's pools
    P(105, "admit-via-ours", "admit via ENGINE;", "new",
      program="pool reqs { cap 1; admit via ENGINE; }\nstage ENGINE : step { budget 4; cost 1; }\n"
      "workload { arrive batch(2); }\n" + session("  hold reqs (1) { run ENGINE prefill (4); }\n  observe t = now;") + RUN,
      outcome="test_admit_via_is_this_languages_pool_option"),
    P(105, "pool-on-engine", "pool NAME on ENGINE", "later",
      program="stage ENGINE : step { budget 4; cost 1; }\npool NAME on ENGINE { cap 2; }\n" + ONE + session("") + RUN,
      refused="`pool … on …` is not part of this language"),
    P(105, "pool-on-device", "pool NAME on ENGINE.DEVICE", "later",
      program="stage ENGINE : step { budget 4; cost 1; }\npool NAME on ENGINE.DEVICE { cap 2; }\n" + ONE + session("")
      + RUN, refused="`pool … on …` is not part of this language"),
    P(105, "engine-pools", "NAME[N] cap c;", "later",
      program="engine ENGINE { NAME[N] cap c; }\n" + ONE + session("") + RUN,
      refused="`engine` is not part of this language"),
    P(111, "spill", "spill TIER via LINK (work) when (pred);", "form", covered=SYNTAX,
      instance="spill host via up (size / 10) when (size > 4 && waiting >= 0);"),
    # pool-reference.txt:123-134, the complete program, written in the other dialect
    P(123, "fn-main", FN_MAIN.strip(), "later", program=FN_MAIN, refused="`fn` is not part of this language"),
    P(131, "cost-wrapper", "hold reqs (cost(reqs, 1)) { run svc (cost(svc, 2)); }", "later",
      program="pool reqs { cap 2; }\nstage svc : delay;\nworkload { arrive batch(3); }\n"
      + session("  hold reqs (cost(reqs, 1)) { run svc (cost(svc, 2)); }") + RUN,
      refused="`cost(…)` is not part of this language"),
    P(138, "run-horizon-10", "serq run model.sq --horizon 10", "new",
      program="pool reqs { cap 2; }\nstage svc : delay;\nworkload {\n  arrive batch(3);\n  session { request; }\n}\n"
      "server {\n  set t0 = now;\n  hold reqs (1) { run svc (2); }\n  observe response = now - t0;\n}\n",
      horizon=10, outcome="test_the_pool_references_command"),
    # ---------------------------------------------------------------- program-reference.txt
    R(10, "let-form", "let NAME = expr;", "form", covered=SYNTAX, instance="let K = 2;"),
    R(10, "let-name", "let NAME = expr;", "new",
      program="let expr = 2;\nlet NAME = expr;\nstage s : delay;\n" + ONE + session("  run s (NAME);\n  observe t = now;")
      + RUN, outcome="test_set_overrides_a_let"),
    R(12, "set-cli", "--set NAME=value", "new",
      program="let NAME = 1;\nstage s : delay;\n" + ONE + session("  set t0 = now;\n  run s (NAME);\n  observe w = now - t0;")
      + RUN,
      outcome="test_the_command_lines_set_and_def"),
    R(20, "def-expr-form", "def NAME ( PARAM, … ) = expr;", "form", covered=SYNTAX, instance="def f(x) = x * K + 1;"),
    R(21, "def-block-form", "def NAME ( PARAM, … ) { statement* }", "form", covered=SYNTAX,
      instance="def g(y) { run s (f(y)); }"),
    R(25, "def-service", "def service() = ~exp(1);", "new",
      program="def service() = ~exp(1);\nstage s : fifo;\nworkload { arrive poisson(0.5); }\n"
      + session("  run s (service());") + RUN,
      plain="stage s : fifo;\nworkload { arrive poisson(0.5); }\n" + session("  run s (~erlang(4, 1));") + RUN,
      defs=(("service", "~erlang(4, 1)"),), outcome="test_def_given_from_outside"),
    R(25, "def-cli", "--def service='~erlang(4, 1)'", "new",
      program="def service() = ~exp(1);\nstage s : fifo;\nworkload { arrive poisson(0.5); }\n"
      + session("  run s (service());") + RUN,
      plain="stage s : fifo;\nworkload { arrive poisson(0.5); }\n" + session("  run s (~erlang(4, 1));") + RUN,
      defs=(("service", "~erlang(4, 1)"),), outcome="test_the_command_lines_set_and_def"),
    R(27, "def-reusable", "def reusable(x, bs) = floor((x - 1) / bs) * bs;", "covered",
      covered=("serq-frontend/tests/test_sugar.py", "test_definitions_are_expanded")),
    R(28, "set-hitD", "set hitD = min(cachedin(D[j].kv), reusable(prompt, bs));", "new",
      program="let bs = 4;\ndef reusable(x, bs) = floor((x - 1) / bs) * bs;\n"
      "queue D[2] : decode { pool kv { cap 64; block bs; } serve fifo; decode (prompt) { hold kv (prompt) "
      "{ run (1); } cache (prompt); } }\nworkload { arrive batch(1); turn { set prompt = 10; } }\n"
      + session("  turn;\n  set j = 1;\n  set hitD = min(cachedin(D[j].kv), reusable(prompt, bs));\n  observe h = hitD;\n"
                "  D[j].decode (prompt);\n  set prompt = 6;\n  set hitD = min(cachedin(D[j].kv), reusable(prompt, bs));\n"
                "  observe h = hitD;\n  set prompt = 30;\n"
                "  set hitD = min(cachedin(D[j].kv), reusable(prompt, bs));\n  observe h = hitD;") + RUN,
      plain="let bs = 4;\n"
      "queue D[2] : decode { pool kv { cap 64; block bs; } serve fifo; decode (prompt) { hold kv (prompt) "
      "{ run (1); } cache (prompt); } }\nworkload { arrive batch(1); turn { set prompt = 10; } }\n"
      + session("  turn;\n  set j = 1;\n  set hitD = min(cachedin(D[j].kv), floor((prompt - 1) / bs) * bs);\n"
                "  observe h = hitD;\n  D[j].decode (prompt);\n  set prompt = 6;\n"
                "  set hitD = min(cachedin(D[j].kv), floor((prompt - 1) / bs) * bs);\n  observe h = hitD;\n"
                "  set prompt = 30;\n  set hitD = min(cachedin(D[j].kv), floor((prompt - 1) / bs) * bs);\n"
                "  observe h = hitD;") + RUN,
      outcome="test_the_hit_on_a_decoder_by_hand"),
    R(34, "param-chosen", "choose p", "covered",
      covered=(ROUND17, "test_a_parameter_the_body_assigns_is_refused_and_one_the_program_sets_is_not")),
    R(34, "param-assigned", "set p =", "covered",
      covered=(ROUND17, "test_a_parameter_the_body_assigns_is_refused_and_one_the_program_sets_is_not")),
    R(35, "arg-reference", "kvD[j]", "new",
      program="pool kvD[2] { cap 4; }\ndef g(p) { hold p (1) { observe u = used(p); } }\n" + ONE
      + session("  set j = 1;\n  g(kvD[j]);") + RUN,
      plain="pool kvD[2] { cap 4; }\n" + ONE + session("  set j = 1;\n  hold kvD[j] (1) { observe u = used(kvD[j]); }")
      + RUN),
    R(37, "arg-live-state", "used(kv)", "new",
      program="pool kv { cap 4; }\nstage s : delay;\ndef f(x) { run s (1); observe y = x; }\n" + ONE
      + session("  hold kv (1) { f(used(kv)); }") + RUN,
      refused="an argument of the statements `f` reads live state, `used(…)`"),
    R(37, "arg-clock", "now", "new",
      program="stage s : delay;\ndef f(x) { run s (1); observe y = x; }\n" + ONE + session("  f(now);") + RUN,
      refused="an argument of the statements `f` reads"),
    R(41, "use-form", 'use "path";', "form", covered=(CSYNTAX, "PROGRAMS"),
      instance='use "'),
    R(45, "use-vllm", 'use "../../lib/vllm.sq";\n…\nserver {\n  set t0 = now;\n  set prompt = K + n;\n'
      '  vllm_request(reqs, kv, engine, prompt, o, t0);\n  observe response = now - t0;\n}', "new",
      program=USE_PROGRAM, outcome="test_the_vllm_library_used_by_its_path"),
    R(100, "share-maxmin", "share maxmin;", "covered",
      covered=(ROUND19, "test_a_pull_names_the_share_and_the_program_does_not_repeat_it")),
    R(101, "share-bottleneck", "share bottleneck;", "covered",
      covered=("serq-sim/tests/test_conformance_audit10.py", "FINISH_TOGETHER")),
    R(111, "gauge-form", "gauge NAME = expr;", "form", covered=SYNTAX, instance="gauge "),
    R(117, "gauge-index", "kv[0]", "new",
      program="pool kv[2] { cap 4; }\nstage s : delay;\ngauge g = used(kv[0]);\nworkload { arrive batch(2); }\n"
      + session("  hold kv[serial] (3) { run s (2); }") + "run { horizon 4; }\n",
      outcome="test_a_gauge_of_a_member"),
    R(117, "gauge-aggregate", "max k in N (…)", "form", covered=(CSYNTAX, "SUGAR"),
      instance="max j in (N + 1) (used(kv[j]))"),
    R(121, "run-form", "run { horizon expr; warmup expr; seed expr; arrivals expr; }", "form", covered=SYNTAX,
      instance='"run_block"'),
    R(129, "run-flags", "--horizon, --warmup, --seed and --arrivals", "covered",
      covered=("serq-sim/tests/test_conformance_more.py", "test_the_flags_override_the_run_block_field_by_field"),
      instance='"--horizon", "20", "--warmup", "2"'),
    R(135, "finite-run", "workload { arrive renewal(~h2(2, 4)); … }\nrun { horizon 1e5; warmup 0; arrivals 1000; }",
      "covered", covered=(AUDIT8, "test_the_finite_run_example")),
    R(140, "run-statement", "run STAGE …", "form", covered=SYNTAX, instance="run s (1);"),
]
