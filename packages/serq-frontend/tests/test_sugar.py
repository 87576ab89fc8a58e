"""Each layer of sugar: a sugared program and its hand-written kernel twin have byte-identical IR."""

from __future__ import annotations

import msgspec
import pytest
import serq
import serq_frontend
import serq_ir
from serq_frontend import ast as A
from serq_frontend.sugar import SugarLayer
from sqhelpers import EXAMPLES, compile_src, ir_bytes, make_pm, refused


def same(sugared: str, kernel: str, **kw) -> None:
    a, b = ir_bytes(compile_src(sugared, **kw)), ir_bytes(compile_src(kernel, **kw))
    assert a == b


ENGINE = """let B = 512;
pool reqs { cap 8; admit via E; }
pool kv { cap 4096; block 16; evict lru; preempt lifo; }
pool kvD { cap 4096; block 16; }
stage E : step { budget B; cost 0.01 + 1e-5 * tokens; memory kv; };
stage tool : delay;
stage link : ps(100);
workload { arrive poisson(1); hidden o; turn { set n = 100; set o = ~exp(20) + 1; set more = ~bernoulli(0.5); } }
"""


# -- the serving vocabulary --------------------------------------------------------------------------


def test_serving_forms_are_runs():
    same(ENGINE + """session { turn;
      hold reqs (1), kv (n) { prefill (n) growing kv; decode (o - 1) growing kv; } cache (n + o);
      hold kvD (n) { transfer (n / 10) from kv to kvD (n); }
      tool (~exp(3)); }""",
         ENGINE + """session { turn;
      hold reqs (1), kv (n) { run E prefill (n) growing kv; run E decode (o - 1) growing kv; } cache (n + o);
      hold kvD (n) { run link (n / 10); load kvD (n); release kv; }
      run tool (~exp(3)); }""")


def test_serving_on_and_index():
    head = "stage prefill[2] : fifo;\nstage P : ps(4);\nstage a : ps(1);\nstage b : ps(2);\nshare maxmin;\n"
    head += "pool x { cap 10; }\npool y { cap 10; }\n"
    same(head + "session { set j = 1; prefill[j] 3; prefill on P (2); hold y (1) { transfer on a, b (5) from x to y (1); } }",
         head + "session { set j = 1; run prefill[j] (3); run P (2); hold y (1) { run a, b (5); load y (1); release x; } }")


# -- the two sides -----------------------------------------------------------------------------------


def test_two_sides_are_one_session():
    two = ENGINE.replace("set more = ~bernoulli(0.5); }", "set more = ~bernoulli(0.5); }\n  session { turn; loop { "
                         "request; branch (more) { tool (1); turn; } else { end; } } }")
    two += "server { set t0 = now; hold reqs (1), kv (n) { prefill (n) growing kv; } cache (n); observe r = now - t0; }"
    one = ENGINE + ("session { turn; loop { set t0 = now; hold reqs (1), kv (n) { prefill (n) growing kv; } cache (n); "
                    "observe r = now - t0; branch (more) { tool (1); turn; } else { end; } } }")
    same(two, one)


VLLM_TWINS = [
    ("multi-turn/vllm.sq", "multi-turn/twins/vllm_twosides.sq"),
    ("multi-turn/vllm_chat.sq", "multi-turn/twins/vllm_chat_session.sq"),
    ("multi-turn/vllm_single_turn.sq", "multi-turn/twins/vllm_single_turn_session.sq"),
]


@pytest.mark.parametrize("a,b", VLLM_TWINS)
def test_the_vllm_programs_as_one_session_and_as_two_sides(a, b, tmp_path, pm):
    pa, pb = EXAMPLES / a, EXAMPLES / b
    assert ir_bytes(serq_frontend.compile(pa, pm=pm)) == ir_bytes(serq_frontend.compile(pb, pm=pm))


# -- queues ------------------------------------------------------------------------------------------

QUEUES = """let x0 = 0.5;
queue gw : gateway { route {
  P[i].prefill (prompt);
  D[j].decode (prompt) from P[i];
  observe ttft = D.first_token - t0;
} }
queue P[2] : prefill {
  pool kv { cap 1000; }
  serve fifo;
  nic ps(100);
  prefill (p) { hold kv (p) { run (p); } cache (p) lease kv (inf); }
}
queue D[2] : decode {
  pool kv { cap 1000; block 16; }
  serve step { cost 1; memory kv; };
  nic ps(200);
  decode (p) { hold kv (p) { prefill (p) growing kv; } }
  decode (p) from src {
    hold kv (p) {
      transfer (p) from src to kv (p - 1);
      set known = p;
      decode (o - 1) growing kv;
      mark first_token;
    }
  }
}
D pull P latency x0 share maxmin;
workload { arrive batch(1); hidden o; init { set prompt = 32; set o = 4; set i = 1; set j = 0; set t0 = 0; }
  session { request gw; end; } }
run { horizon 100; }
"""

FLAT = """let x0 = 0.5;
pool kvP[2] { cap 1000; }
stage P[2] : fifo;
stage nicP[2] : ps(100);
pool kvD[2] { cap 1000; block 16; }
stage D[2] : step { cost 1; memory kvD; };
stage nicD[2] : ps(200);
share maxmin;
stage wait[2] : delay;
workload { arrive batch(1); hidden o; init { set prompt = 32; set o = 4; set i = 1; set j = 0; set t0 = 0; } }
session {
  hold kvP[i] (prompt) { run P[i] (prompt); } cache (prompt) lease kvP[i] (inf);
  hold kvD[j] (prompt) {
    run wait[j] (x0);
    run nicP[i], nicD[j] (prompt); load kvD[j] (prompt - 1); release kvP[i];
    set D_known = prompt;
    run D[j] decode (o - 1) growing kvD[j];
    set D_first_token = now;
  }
  observe ttft = D_first_token - t0;
  end;
}
run { horizon 100; }
"""

RENAME = {"P.kv": "kvP", "D.kv": "kvD", "P.nic": "nicP", "D.nic": "nicD", "D.nic.latency": "wait",
          "D.known": "D_known", "D.first_token": "D_first_token"}


def renamed(program) -> bytes:
    raw = msgspec.to_builtins(msgspec.structs.replace(program, source=None))
    for key in ("pools", "stages", "attributes"):
        for x in raw.get(key, []):
            x["name"] = RENAME.get(x["name"], x["name"])
    return serq_ir.encode(msgspec.convert(raw, serq_ir.Program), spans=False)


def test_queues_are_their_flat_program():
    a, b = compile_src(QUEUES), compile_src(FLAT)
    assert [p.name for p in a.pools] == ["P.kv", "D.kv"]
    assert [s.name for s in a.stages] == ["P", "P.nic", "D", "D.nic", "D.nic.latency"]
    assert [x.name for x in a.attributes][-2:] == ["D.known", "D.first_token"]
    assert renamed(a) == renamed(b)


def test_a_link_queue_latency_runs_before_the_transfer():
    src = """queue L[2] : link { serve ps(10) latency 0.25; }
pool a { cap 9; }
pool b { cap 9; }
share maxmin;
stage M : ps(5);
session { hold b (1) { transfer on L[1], M (3) from a to b (1); } }"""
    p = compile_src(src)
    body = p.session[0].body
    assert [type(s).__name__ for s in body] == ["Run", "Run", "Load", "Release"]
    assert p.stages[body[0].stages[0].stage].name == "L.latency" and body[0].work.value == 0.25


# -- at admission ------------------------------------------------------------------------------------


def test_at_admission_is_substituted():
    same(ENGINE + """session { turn; set hm = 64;
      hold reqs (1), kv (min(n, h + budget_left(E))) reserve (n) reuse (h)
           at admission (k = n, h = min(cachedin(kv), hm)) {
        prefill (k - cached) growing kv; } cache (n); }""",
         ENGINE + """session { turn; set hm = 64;
      hold reqs (1), kv (min(n, min(cachedin(kv), hm) + budget_left(E))) reserve (n) reuse (min(cachedin(kv), hm)) {
        set k = n;
        run E prefill (k - cached) growing kv; } cache (n); }""")


# -- branch with -------------------------------------------------------------------------------------


def test_branch_with_is_a_bernoulli_guard():
    same(ENGINE + "session { branch with (0.25) { tool (1); } else { tool (2); } }",
         ENGINE + "session { branch (~bernoulli(0.25)) { run tool (1); } else { run tool (2); } }")


# -- definitions -------------------------------------------------------------------------------------


def test_definitions_are_expanded(tmp_path):
    lib = tmp_path / "lib.sq"
    lib.write_text("def reusable(x, bs) = floor((x - 1) / bs) * bs;\n"
                   "def serve_one(p, mem, w) { hold p (1), mem (w) { prefill (w) growing mem; } cache (w); }\n")
    prog = tmp_path / "prog.sq"
    prog.write_text('use "lib.sq";\n' + ENGINE + "session { turn; set h = reusable(n, 16); serve_one(reqs, kv, n + h); }")
    twin = ENGINE + ("session { turn; set h = floor((n - 1) / 16) * 16; hold reqs (1), kv (n + h) "
                     "{ run E prefill (n + h) growing kv; } cache (n + h); }")
    from sqhelpers import _pm
    assert ir_bytes(serq_frontend.compile(prog, pm=_pm())) == ir_bytes(compile_src(twin))


# -- aggregates --------------------------------------------------------------------------------------


def test_aggregates_are_written_out():
    head = "let N = 3;\npool kv[3] { cap 10; }\nstage s : fifo;\n"
    same(head + "session { observe m = max j in N (used(kv[j])) + min k in (N - 1) (k * free(kv[k])); run s (1); }",
         head + "session { observe m = max(used(kv[0]), used(kv[1]), used(kv[2])) + min(0 * free(kv[0]), "
         "1 * free(kv[1])); run s (1); }")
    # a sum is one flat node (the IR's Call "sum", the left fold of its terms), not a chain of additions
    from sqhelpers import compile_src

    e = compile_src(head + "session { observe m = sum k in (N - 1) (k * free(kv[k])); run s (1); }").session[0].value
    chain = compile_src(head + "session { observe m = 0 * free(kv[0]) + 1 * free(kv[1]); run s (1); }").session[0].value
    from serq_ir.codec import _strip

    def bare(x):
        return _strip(msgspec.json.decode(msgspec.json.encode(x)))

    assert e.fn == "sum" and [bare(a) for a in e.args] == [bare(chain.lhs), bare(chain.rhs)]


# -- a third-party layer -----------------------------------------------------------------------------


class STwice(A.Node):
    """``twice { … }``: the block, two times."""

    def __init__(self, body, pos):
        self.body, self.pos = body, pos

    BLOCKS = ("body",)


def _twice(stmts):
    def f(s):
        if isinstance(s, STwice):
            return list(s.body) + list(s.body)
        return None

    return A.rewrite_block(stmts, f)


TWICE = SugarLayer(
    name="twice",
    grammar='%extend stmt: "twice" block -> s_twice\n',
    builders={"s_twice": lambda ctx, pos, c: STwice(c[0], pos)},
    rewrite=lambda module, ctx: A.Module([A.map_item(i, lambda e: e, _twice) for i in module.items], module.file),
)


class TwicePlugin:
    @serq.hookimpl
    def serq_frontend_register_sugar(self, register):
        register(TWICE)


def test_a_third_party_sugar_plugin_adds_a_statement():
    pm = make_pm(TwicePlugin())
    src = "stage s : fifo;\nsession { twice { run s (1); observe t = now; } end; }"
    twin = "stage s : fifo;\nsession { run s (1); observe t = now; run s (1); observe t = now; end; }"
    assert ir_bytes(serq_frontend.compile(source=src, pm=pm)) == ir_bytes(compile_src(twin))
    # without the plugin, `twice` is not the language
    with pytest.raises(serq_frontend.CompileError, match="`twice` does not begin a statement"):
        compile_src(src)


def test_a_layer_name_two_plugins_register_is_an_error():
    class Again:
        @serq.hookimpl
        def serq_frontend_register_sugar(self, register):
            register(SugarLayer(name="twice"))

    pm = make_pm(TwicePlugin(), Again())
    with pytest.raises(serq.PluginError, match="sugar layer 'twice' is registered twice"):
        serq_frontend.compile(source="session { }", pm=pm)


def test_a_lease_of_a_pool_the_entry_does_not_hold_is_named_a_lease():
    # the lease clause of a hold names the pool it keeps; refused as `hold kvv` (the hold's word) before
    bad = QUEUES.replace("cache (p) lease kv (inf);", "cache (p) lease ⟨kvv (inf);")
    refused(bad, "`lease kvv` in `P.prefill`: `kvv` is not a pool of `P`; an entry holds only its queue's own "
                 "pools and the one its `from` names")
    bad = QUEUES.replace("hold kv (p) { run (p); }", "hold ⟨kvv (p) { run (p); }")
    refused(bad, "`hold kvv` in `P.prefill`: `kvv` is not a pool of `P`")
