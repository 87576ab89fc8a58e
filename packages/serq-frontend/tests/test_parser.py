"""The grammar: LALR, built once, every construct parses to the AST with its position."""

from __future__ import annotations

import serq_frontend
from serq_frontend import ast as A
from serq_frontend.parser import get_parser
from sqhelpers import _pm, compile_src, ir_bytes, refused


def parse(src: str):
    return serq_frontend.parse(source=src, pm=_pm()).items


def test_the_parser_is_lalr_and_built_once():
    layers = serq_frontend.layers(_pm())
    p = get_parser(layers)
    assert p.lark.options.parser == "lalr"
    assert get_parser(layers) is p


def test_every_item():
    items = parse("""
let a = 1;
def f(x) = x + 1;
def g(p) { run p (1); }
use "lib.sq";
pool kv[2] { cap 10; block 2; evict by (age); preempt by (-admission) requeue tail; queue by (waited);
             reserve held; admit via E; spill t via s (size) when (size > 1); }
stage E[2] : step { budget 8; cost 1; chunk 4; serve decode first; memory kv; };
stage s : ps(min(present, 2));
stage d : delay;
stage f : fifo(2);
workload { arrive renewal(~h2(1, 4)); trace "t.csv" ordered; init { set k = 0; } turn { set n = 1; }
           hidden o, n; session { request; } }
server { run d (1); }
queue Q[2] : prefill, decode { pool kv { cap 1; } serve fifo latency 1; nic ps(1); prefill (p) { run (p); } }
Q pull Q latency 1 share maxmin;
share bottleneck;
run { horizon 10; warmup 1; seed 2; arrivals 3; }
gauge u = used(kv[0]);
session { }
""")
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["Let", "DefItem", "DefItem", "UseItem", "PoolItem", "StageItem", "StageItem", "StageItem",
                     "StageItem", "WorkloadItem", "ServerItem", "QueueItem", "PullItem", "ShareItem", "RunItem",
                     "GaugeItem", "SessionItem"]
    pool = items[4]
    assert [o.kind for o in pool.opts] == ["cap", "block", "evict_by", "preempt_by", "queue_by", "reserve_held",
                                           "admit_via", "spill"]
    assert pool.opts[3].extra == "tail"
    assert items[5].kind.fields["serve"][0] == ("decode_first", None)
    q = items[11]
    assert [r for r, _ in q.roles] == ["prefill", "decode"] and q.latency.value == 1.0 and q.nic.kind == "ps"


def test_every_statement():
    (session,) = parse("""session {
  turn; end; set x = 1; observe y = x > 0;
  hold a (1) reserve (2), b[j] (3) reuse (1) at admission (h = 1) { grow a (1); drop a; release a; load a (1); }
    cache (4) lease a (inf);
  run E prefill (1) growing kv; run a, b[1] (2); run (3);
  branch (x) { } else { } branch with (0.5) { } loop { }
  choose j in 4 by (used(kv[j]), j);
  request gw; mark t;
  prefill 1; decode[j] (2) growing kv; tool on T (3); transfer on a, b (1) from p to q (2);
  P[i].prefill (x) from S[k] to kv (1); f(1, kv);
}""")
    names = [type(s).__name__ for s in session.body]
    assert names == ["STurn", "SEnd", "SSet", "SObserve", "SHold", "SRun", "SRun", "SRun", "SBranch", "SBranchWith",
                     "SLoop", "SChoose", "SRequest", "SMark", "SServing", "SServing", "SServing", "STransfer",
                     "SQCall", "SDefCall"]
    hold = session.body[4]
    assert [b.name for b in hold.bindings] == ["h"] and hold.lease.simple == "a"
    assert hold.pools[1].ref.parts[0][0] == "b"
    assert session.body[5].mode == "prefill" and session.body[7].stages == []
    call = session.body[18]
    assert (call.queue, call.verb, call.src.dotted, call.to.simple) == ("P", "prefill", "S", "kv")


def test_expressions_and_precedence():
    (let,) = parse("let a = 1 + 2 * 3 < 4 && !b || c ? -d : max j in 2 (e[j]) % 2;")
    e = let.value
    assert isinstance(e, A.Cond)
    assert e.test.op == "||" and e.test.lhs.op == "&&" and e.test.lhs.lhs.op == "<"
    assert e.test.lhs.lhs.lhs.rhs.op == "*"
    assert isinstance(e.then, A.Unary) and e.orelse.op == "%" and isinstance(e.orelse.lhs, A.Agg)


def test_positions():
    (session,) = parse("session {\n  set x = 1;\n    run  svc (x);\n}")
    s, r = session.body
    assert (s.pos.line, s.pos.col) == (2, 3)
    assert (r.pos.line, r.pos.col) == (3, 5)
    assert (r.stages[0].pos.line, r.stages[0].pos.col) == (3, 10)
    assert (r.work.pos.line, r.work.pos.col) == (3, 15)


def test_keywords_are_names_where_they_cannot_be_keywords():
    p = compile_src("stage prefill : fifo;\nstage queue2 : fifo;\nsession { run prefill (1); "
                    "observe q = queue(prefill); }")
    assert p.stages[0].name == "prefill" and p.session[1].value.name == "queue"


def test_comments():
    assert parse("// nothing\nlet a = 1; // one\n") [0].name == "a"


_STEP_PROGRAM = """pool kv { cap 100; admit via e; }
stage e : step { budget 4; cost 1; memory kv; }{semi}
stage f[2] : step { budget 4; cost 1; }{semi}
session { hold kv (1) { run e prefill (3); } end; }
"""


def test_the_semicolon_after_a_step_kind_is_optional():
    # language.txt §2 writes `serve step { budget B; cost …; memory kv; }` without the `;`
    bare = compile_src(_STEP_PROGRAM.replace("{semi}", ""))
    with_semi = compile_src(_STEP_PROGRAM.replace("{semi}", ";"))
    assert ir_bytes(bare) == ir_bytes(with_semi)
    assert [(s.name, s.size, s.kind.budget.value) for s in bare.stages] == [("e", 1, 4.0), ("f", 2, 4.0)]


_QUEUE_PROGRAM = """queue Q : prefill {
  pool kv { cap 10; admit via Q; }
  serve step { budget 4; cost 1; memory kv; }{serve}
  nic step { budget 2; cost 1; }{nic}
  prefill (p) { hold kv (1) { run Q prefill (p); } }
}
session { Q.prefill(2); end; }
"""


def test_the_semicolon_after_a_queues_step_kind_is_optional():
    variants = [_QUEUE_PROGRAM.replace("{serve}", s).replace("{nic}", n) for s in ("", ";") for n in ("", ";")]
    irs = {ir_bytes(compile_src(v)) for v in variants}
    assert len(irs) == 1
    # a latency after the kind still needs its `;`, which ends the latency's expression
    (q, _) = parse(_QUEUE_PROGRAM.replace("{serve}", " latency 0.5;").replace("{nic}", ""))
    assert q.latency.value == 0.5 and q.serve.kind == "step" and q.nic.kind == "step"


def test_other_kinds_still_need_their_semicolon():
    refused("stage s : fifo⟨\nsession { run s (1); }\n", "missing `;`")
    refused("queue Q : prefill { serve fifo⟨ prefill (p) { run (p); } }\n", "missing `;`")


def test_the_readmes_program_compiles():
    # README.md's first block writes `stage engine : step { … }` without the `;`
    from sqhelpers import ROOT

    text = (ROOT / "README.md").read_text()
    block = text.split("```\n", 2)[1]
    assert "stage engine : step {" in block and block.rstrip().endswith("}")
    program = compile_src(block + "session { hold reqs (1), kv (16) { run engine prefill (16); } end; }\n")
    assert [s.name for s in program.stages] == ["engine"] and [p.name for p in program.pools] == ["reqs", "kv"]
