"""Conformance of the queue sugar and the gateway (language.txt §2, Queues; docs/language.md, Queues), on
the rules the earlier rounds leave out: which stages an entry may name, a parameter's name, an index
written where the text says none, `o` and the parameters of decode, a gateway that plays another role, an
entry's header and its `from` pool, and the kernel program a family of one, `self`, a source index and a
gateway's `serve` and `mark` stand for, IR for IR.

Each refusal is checked at its place (the ``⟨`` in the source); each test names the mutation of the
implementation it was seen to catch."""

from __future__ import annotations

import msgspec
import pytest
import serq_ir
from sqhelpers import compile_src, ir_bytes, refused

pytestmark = pytest.mark.timeout(60)

# the stations: a prefill family of fifo stages, a decode family of step engines, a top-level engine E, a
# top-level delay stage and a link family of delays
BASE = """let NL = 2;
stage tool : delay;
stage link[NL] : delay;
stage E : step { cost 1; };
queue P[2] : prefill {
  pool kv { cap 100; }
  serve fifo;
  prefill (p) { ENTRY }
}
queue D[2] : decode {
  pool kv { cap 100; }
  serve step { cost 1; memory kv; };
  decode (p) { hold kv (p) { prefill (p) growing kv; mark first; set known = p; } }
}
queue gw : gateway { route { ROUTE } }
workload { arrive batch(1); hidden o; init { set prompt = 32; set o = 4; } session { request gw; } }
run { horizon 100; }
"""


def prog(entry: str = "hold kv (p) { run (p); }", route: str = "P[0].prefill (prompt);") -> str:
    return BASE.replace("ENTRY", entry).replace("ROUTE", route)


def test_the_base_program_links():
    assert [p.name for p in compile_src(prog()).pools] == ["P.kv", "D.kv"]


# -- the stages an entry names ------------------------------------------------------------------------------

STEP = "is a step engine, not queue `{q}`'s own; an entry names only stages that are not step engines"


@pytest.mark.parametrize("src, msg", [
    # another queue's engine, named in a run and in a serving form
    (prog("hold kv (p) { run ⟨D[0] prefill (p); }"), "`run D` in `P.prefill`: `D` " + STEP.format(q="P")),
    (prog("hold kv (p) { prefill on ⟨D[1] (p); }"), "`prefill on D` in `P.prefill`: `D` " + STEP.format(q="P")),
    # a top-level engine
    (prog("hold kv (p) { run ⟨E prefill (p); }"), "`run E` in `P.prefill`: `E` " + STEP.format(q="P")),
    (prog("hold kv (p) { decode on ⟨E (p); }"), "`decode on E` in `P.prefill`: `E` " + STEP.format(q="P")),
    # a gateway's route is an entry too: it calls D's entries rather than run on D's engine
    (prog(route="P[0].prefill (prompt); run ⟨D[0] decode (1);"), "`run D` in `gw.route`: `D` " + STEP.format(q="gw")),
    (prog(route="P[0].prefill (prompt); run ⟨E decode (1);"), "`run E` in `gw.route`: `E` " + STEP.format(q="gw")),
])
def test_an_entry_names_no_step_engine_but_its_own(src, msg):
    """§2 Queues: "run (X) with no stage names the queue's own, and a serving form with no on finds it; the
    stages that are not a step engine (a link's, a delay) the body may name as a server does". A step
    engine other than the queue's own is another station. Mutation: without `check_stages` in
    QueueRewriter.check_entry every one of these linked (the entry of P ran prefill on D's engine)."""
    refused(src, msg)


@pytest.mark.parametrize("entry, route, what", [
    ("hold kv (1) { run ⟨p decode (1); }", "P[0].prefill (E);", "run p"),
    ("hold kv (1) { run ⟨p (1); }", "P[0].prefill (tool);", "run p"),
    ("hold kv (1) { decode on ⟨p (1); }", "P[0].prefill (E);", "decode on p"),
    ("hold kv (1) { transfer on ⟨p (1) from kv to kv (1); }", "P[0].prefill (tool);", "transfer on p"),
])
def test_a_parameter_names_no_stage(entry, route, what):
    """A parameter is the role's value (`prefill (prompt)`), substituted at the call: a stage passed through
    it would be seen only at the call, so `P[0].prefill (E)` ran P's entry on the engine E past the rule
    above, as a pool passed through one is already refused (`hold p`: not a pool of `P`). Mutation: without
    the parameter test in `check_stages` the four linked."""
    refused(prog(entry, route=route), f"`{what}` in `P.prefill`: `p` is a parameter, a value the caller passes, "
                                      "not a stage")


def test_a_serving_form_of_a_queue_without_a_serve_may_not_find_an_engine():
    """A queue with no `serve` has no stage of its own, so its `prefill (p);` finds its stage by the
    which-stage rule (§2): here the program's one step engine, which is not the queue's. Mutation: checking
    only the stages a statement names (not the one a form finds) let it link as `run E prefill (p)`."""
    src = """stage E : step { cost 1; };
queue X : prefill { pool kv { cap 10; } prefill (p) { hold kv (p) { ⟨prefill (p); } } }
queue gw : gateway { route { X.prefill (1); } }
workload { arrive batch(1); session { request gw; } }
"""
    refused(src, "`prefill` in `X.prefill`: `E` " + STEP.format(q="X"))
    # the engine is another queue's: the message says to call it
    src = src.replace("stage E : step { cost 1; };", "queue D : decode { serve step { cost 1; }; decode (p) { decode (p); } }")
    refused(src, "`D` " + STEP.format(q="X") + " (a link's, a delay) besides its own: call one of `D`'s entries")
    # a stage named after the role that is no engine is a server's to name
    compile_src(src.replace("queue D : decode { serve step { cost 1; }; decode (p) { decode (p); } }",
                            "stage prefill : fifo;").replace("⟨", ""))


def test_an_entry_names_its_own_engine_and_the_stages_that_are_not_engines():
    # its own engine by a serving form, a top-level delay, a link family's member and the tool stage
    p = compile_src(prog(route="D[1].decode (prompt);",
                         entry="hold kv (p) { run (p); run tool (1); run link[1] (1); tool (2); }"))
    assert [s.name for s in p.stages] == ["tool", "link", "E", "P", "D"]


# -- a parameter's name -------------------------------------------------------------------------------------


def entry_params(params: str, body: str) -> str:
    return prog().replace("prefill (p) { hold kv (p) { run (p); } }", f"prefill ({params}) {{ {body} }}")


@pytest.mark.parametrize("param, why", [
    ("self", "the member's index"),
    ("o", "a hidden attribute, which the body reads as the request's (the scheduler does not know it, so it is "
          "no parameter)"),
    ("now", "a context variable"),
    ("cached", "a built-in attribute"),
    ("computed", "a built-in attribute"),
    ("serial", "a built-in attribute"),
    ("inf", "the language's infinity"),
    ("NL", "a `let`"),
    ("kv", "a pool of queue `P`"),
    ("tool", "a stage"),
    ("D", "a queue"),
])
def test_a_parameter_is_a_name_of_its_own(param, why):
    """§2 Queues: "Arguments are substituted like an at admission binding", and a binding's name "is its
    own: not a builtin attribute, a pool or stage, a context variable, a let …". A parameter named `self`
    was never read (the body's `self` is the member's index), one named `now` or `o` replaced the clock or
    the request's hidden length in the body by the caller's argument, and one named `kv` made `hold kv`
    hold the argument (`unknown pool `prompt``, at the call). Mutation: without `check_params` in
    QueueRewriter.declare all but `kv` linked."""
    refused(entry_params(f"⟨{param}", f"hold kv (1) {{ run ({param} + 1); }}"),
            f"`{param}` cannot be a parameter of `P.prefill`: it is {why}; a parameter is substituted, so give it "
            "a name of its own")


def test_a_parameter_the_body_assigns_is_refused_and_one_the_program_sets_is_not():
    """As a definition's (program-reference.txt, def): the body's `set p = 2;` and then `run (p);` read the
    argument, 32, not 2. Mutation: without the check the program linked and ran 32. The entry reads no
    attribute of the session's, so a parameter named `prompt`, as language.txt's own `prefill (prompt)`, is
    free."""
    refused(entry_params("⟨p", "set p = 2; hold kv (1) { run (p); }"),
            "`p` is a parameter of `P.prefill` and its body assigns it; a parameter is substituted, so give the "
            "attribute another name")
    refused(entry_params("⟨p", "choose p in 2 by (p); hold kv (1) { run (p); }"), "its body assigns it")
    compile_src(entry_params("prompt", "hold kv (prompt) { run (prompt); }"))
    refused(prog().replace("prefill (p)", "decode (p)").replace("queue P[2] : prefill", "queue P[2] : decode")
            .replace("P[0].prefill", "P[0].decode").replace("decode (p) { hold kv (p) { run (p); } }",
                                                            "decode (⟨p) from p { hold kv (1) { run (1); } }"),
            "`p` cannot be a parameter of `P.decode`: it is the name of the entry's `from` pool")


# -- an index where the text says none ------------------------------------------------------------------------


@pytest.mark.parametrize("src, msg", [
    # `self` is a number: before, `unknown name `self` (did you mean `serial`?)`
    (prog("hold kv (p) { run (⟨self[0]); }"), "`self` is the member's index; it takes no index"),
    # a parameter is substituted whole: before, `unknown name `p``
    (prog("hold kv (p) { run (⟨p[0]); }"), "`p` is a parameter of `P.prefill`; it takes no index"),
    # what the entry sets is the request's attribute `P.k` (the kernel's sentence for it): before, `unknown
    # name `k``, the name the entry never declared
    (prog("set k = 1; hold kv (p) { run (⟨k[0]); }"), "`P.k` is an attribute of the request; it takes no index"),
    # "mark first_token;, read afterwards as D.first_token — the request's attribute, so without a member
    # index"; and what the body sets, D.known, likewise
    (prog(route="D[0].decode (prompt); observe f = ⟨D[0].first;"),
     "`D.first` is an attribute of the request; it takes no index; write `D.first`"),
    (prog(route="D[0].decode (prompt); observe f = ⟨D[1].known;"),
     "`D.known` is an attribute of the request; it takes no index; write `D.known`"),
    # the queue's own pool and stage are the member's, in the entry and in the declarations
    (prog("hold ⟨kv[1] (p) { run (p); }"), "`kv[…]` inside queue `P`: the queue's own is the member's; write `kv`"),
    (prog().replace("memory kv;", "memory ⟨kv[0];"),
     "`kv[…]` inside queue `D`: the queue's own is the member's; write `kv`"),
    (prog("hold kv (p) { run ⟨P[1] (p); }"), "`P[…]` inside queue `P`: the queue's own is the member's; write `P`"),
    # its own pool by the long name: a member's (before: "reads `used(P.kv)`, not its queue's own state",
    # the index dropped and the pool its own)
    (prog("hold kv (p) { run (p); observe u = used(⟨P[1].kv); }"),
     "`P.prefill` reads `used(P[…].kv)`: an entry reads its own member's pool, by its short name; write `used(kv)`"),
    (prog("hold kv (p) { run (p); observe u = used(⟨P.kv); }"),
     "`P.prefill` reads `used(P.kv)`: an entry reads its own member's pool, by its short name; write `used(kv)`"),
])
def test_an_index_written_where_none_is_is_named(src, msg):
    """Mutation: without the branch for `NAME[…]` in queues.Instance.var (a name of one part with an index)
    the first three said `unknown name`; the last two said `not its queue's own state` before the branch for
    the queue's own pools in `check_reads`; the others were right before and are kept so."""
    refused(src, msg)


def test_the_from_name_takes_no_index_in_a_statement_but_is_the_members_index_in_one():
    """§2 Queues: "Inside the entry the from name is that pool, and in an index it is the source member's
    index." `src[0]` names no pool; `link[src]` is the link of the member the KV came from."""
    src = """stage link[2] : delay;
queue P[2] : prefill { pool kv { cap 100; } serve delay; prefill (p) { hold kv (p) { run (1); } cache (p) lease kv (inf); } }
queue D : decode { pool kv { cap 100; } serve fifo;
  decode (p) from src { hold kv (p) { transfer on link[src] (1) from SRC to kv (p); run (1); } } }
queue gw : gateway { route { set prompt = 5; P[1].prefill (prompt); D.decode (prompt) from P[1]; } }
workload { arrive batch(1); session { request gw; } }
"""
    refused(src.replace("SRC", "⟨src[0]"), "`src` is the source pool; it takes no index")
    p = compile_src(src.replace("SRC", "src"))
    run = p.session[2].body[0]  # the decode's hold (after the set and the prefill's), its link run
    assert p.stages[run.stages[0].stage].name == "link" and run.stages[0].index.value == 1.0


# -- `o` and the parameters of decode ----------------------------------------------------------------------------


def test_o_is_no_parameter_of_decode_and_the_body_alone_reads_it():
    """§2 Queues: "vLLM's scheduler knows max_tokens, not the length, so o is not a parameter of decode and
    the body alone reads it." A parameter named `o` is refused (above); the argument `o` for a parameter the
    header reads is the hidden attribute in a hold's header, refused by the linker at the argument; the body
    reads `o` itself. Mutation: dropping `hidden o;` makes the second program link."""
    refused(prog(route="D[0].decode (⟨o);"),
            "`o` is hidden: a hold's header (units, reserve, reuse: read at admission) is the scheduler's")
    refused(prog(route="⟨D[0].decode (prompt, o);"), "`D.decode` takes one argument, `D.decode(p)`, and got 2")
    refused(prog("hold kv (⟨o) { run (p); }"), "the header of a hold in `P.prefill` reads `o`")
    # the body's `o` is the request's hidden length; an argument only the body reads may be `o`, and is the
    # program whose body reads `o` itself
    a = compile_src(prog("hold kv (1) { run (p); }", route="P[0].prefill (o);"))
    b = compile_src(prog("hold kv (1) { run (o); }"))
    assert ir_bytes(a) == ir_bytes(b)
    assert ir_bytes(a) != ir_bytes(compile_src(prog("hold kv (1) { run (p); }")))


# -- a gateway that plays another role ---------------------------------------------------------------------------

GATEWAY_DECODE = """queue G : gateway, decode { pool kv { cap 10; } serve fifo;
  route { set prompt = 3; G.decode (prompt); }
  decode (p) { hold kv (p) { run (p + BODY); } } }
workload { arrive batch(1); session { request G; } }
"""


def test_a_gateways_other_entries_keep_the_boundary():
    """§2 Queues: "The gateway is the exception on the session's side: its route reads the request's
    attributes as a server does" — its route, not the entries of another role the queue plays. Mutation:
    testing `q.gateway` alone (as before) let `G.decode` read `serial` and `prompt`."""
    refused(GATEWAY_DECODE.replace("BODY", "⟨serial"), "`G.decode` reads `serial`, the session's attribute")
    refused(GATEWAY_DECODE.replace("BODY", "⟨prompt"), "`G.decode` reads `prompt`, a session attribute set outside")
    compile_src(GATEWAY_DECODE.replace("BODY", "0"))


# -- an entry's header and its `from` pool --------------------------------------------------------------------------

FROM = """stage link : delay;
queue P : prefill { pool kv { cap 100; } serve delay; prefill (p) { hold kv (p) { run (1); } cache (p) lease kv (inf); } }
queue D : decode { pool kv { cap 100; } serve fifo;
  decode (p) from src { hold kv (HEAD) { transfer on link (1) from src to kv (p); run (BODY); } } }
queue gw : gateway { route { set prompt = 5; P.prefill (prompt); D.decode (prompt) from P; } }
workload { arrive batch(1); session { request gw; } }
"""


def test_an_entrys_header_does_not_read_its_from_pool_and_its_body_does():
    """§2 Queues: an entry's "header — the units, reserve, reuse, the at admission bindings — reads the
    parameters, the queue's pools and stage and the constants"; its statements "hold, grow, load and release
    only the queue's own pools and the pool its from names". The `from` pool is the prefiller's, leased for
    this request: the decoder's admission does not see it. Mutation: passing the `from` pool among the
    header's pools (as before) linked the first two."""
    msg = "the header of a hold in `D.decode` reads `src`, the pool its `from` names"
    refused(FROM.replace("HEAD", "p + used(⟨src)").replace("BODY", "1"), msg)
    refused(FROM.replace("HEAD", "p").replace("BODY", "1").replace("hold kv (p) { transfer", "hold kv (p) at "
                                                                   "admission (h = cachedin(⟨src)) { transfer"), msg)
    # the body reads it, and holds it
    compile_src(FROM.replace("HEAD", "p").replace("BODY", "used(src)"))
    compile_src(FROM.replace("HEAD", "p").replace("BODY", "1").replace("run (1); } } }",
                                                                      "run (1); hold src (1) { run (1); } } } }"))


# -- the kernel programs the sugar stands for ------------------------------------------------------------------------


def renamed(program, names: dict[str, str]) -> bytes:
    """The IR without spans, with the pools, stages and attributes renamed by ``names`` (a queue's kernel
    names have dots, which a hand-written program cannot declare: docs/language.md)."""
    raw = msgspec.to_builtins(msgspec.structs.replace(program, source=None))
    for key in ("pools", "stages", "attributes"):
        for x in raw.get(key, []):
            x["name"] = names.get(x["name"], x["name"])
    return serq_ir.encode(msgspec.convert(raw, serq_ir.Program), spans=False)


FAMILY_OF_ONE = """let NP = 1;
let ND = 1;
stage link[2] : delay;
queue P[NP] : prefill {
  pool kv { cap 100; }
  serve fifo;
  prefill (prompt) { hold kv (prompt) { run (prompt / 10); } cache (prompt) lease kv (inf); }
}
queue D[ND] : decode {
  pool kv { cap 100; }
  serve fifo;
  decode (prompt) from src {
    hold kv (prompt + self) {
      transfer on link[src + 1] (1) from src to kv (prompt);
      set known = prompt + self;
      mark first_token;
      run (o);
    } cache (prompt);
  }
}
workload { arrive batch(2); hidden o; init { set o = 2; } session { request gw; } }
queue gw : gateway { route {
  set prompt = 10 + 10 * serial;
  choose i in NP by (serial);
  choose j in ND by (holders(D[j].kv));
  P[i].prefill (prompt);
  D[j].decode (prompt) from P[i];
  observe ft = D.first_token + D.known;
} }
run { horizon 50; }
"""

FAMILY_OF_ONE_KERNEL = """let NP = 1;
let ND = 1;
stage link[2] : delay;
pool kvP[1] { cap 100; }
stage P[1] : fifo;
pool kvD[1] { cap 100; }
stage D[1] : fifo;
workload { arrive batch(2); hidden o; init { set o = 2; } }
session {
  set prompt = 10 + 10 * serial;
  choose i in NP by (serial);
  choose j in ND by (holders(kvD[j]));
  hold kvP[i] (prompt) { run P[i] (prompt / 10); } cache (prompt) lease kvP[i] (inf);
  hold kvD[j] (prompt + j) {
    run link[i + 1] (1); load kvD[j] (prompt); release kvP[i];
    set D_known = prompt + j;
    set D_first_token = now;
    run D[j] (o);
  } cache (prompt);
  observe ft = D_first_token + D_known;
}
run { horizon 50; }
"""


def test_a_family_of_one_self_and_the_source_index_are_their_kernel_program():
    """§2 Queues: "a family of one is still a family: its entries are called D[j].decode (…) and its lease
    taken from D[j]"; "self is the member's index"; "in an index it [the from name] is the source member's
    index"; a transfer on a link is `run link (X); load Q (n); release P;` (§2 serving); what the body sets is
    `D.known`, a mark `set D.first_token = now;`. The IR is the hand-written kernel program's, names aside.
    Mutation: the kernel's `run link[j + 1]` (the decoder's index for the source's) differs, and so does the
    sugar without `self` in the header's units (asserted below)."""
    names = {"P.kv": "kvP", "D.kv": "kvD", "D.known": "D_known", "D.first_token": "D_first_token"}
    a, b = compile_src(FAMILY_OF_ONE), compile_src(FAMILY_OF_ONE_KERNEL)
    assert [(p.name, p.array) for p in a.pools] == [("P.kv", 1), ("D.kv", 1)]
    assert renamed(a, names) == renamed(b, names)
    assert renamed(a, names) != renamed(compile_src(FAMILY_OF_ONE_KERNEL.replace("link[i + 1]", "link[j + 1]")), names)
    assert renamed(compile_src(FAMILY_OF_ONE.replace("hold kv (prompt + self)", "hold kv (prompt)")), names) != \
        renamed(a, names)


GATEWAY = """stage d : delay;
queue gw : gateway {
  pool slots { cap 2; }
  serve fifo(2);
  route { hold slots (1) { set t0 = now; run (1); mark routed; run d (2); } observe r = now - gw.routed; }
}
workload { arrive batch(3); session { request gw; observe back = gw.routed + t0; } }
run { horizon 50; }
"""

GATEWAY_KERNEL = """stage d : delay;
pool gw_slots { cap 2; }
stage gw : fifo(2);
workload { arrive batch(3); }
session { hold gw_slots (1) { set t0 = now; run gw (1); set gw_routed = now; run d (2); } observe r = now - gw_routed;
  observe back = gw_routed + t0; }
run { horizon 50; }
"""


def test_a_gateways_pool_serve_and_mark_are_its_kernel_program():
    """§2 Queues: a queue's pools are `Q.p`, its serve the stage `Q`, `run (X)` with no stage its own; a
    gateway keeps the session's names (`t0`), and a mark is the moment read as `gw.routed` by the route and
    by the session after it. Mutation: the kernel twin's `set gw_routed = now;` after `run d (2);` differs."""
    names = {"gw.slots": "gw_slots", "gw.routed": "gw_routed"}
    a, b = compile_src(GATEWAY), compile_src(GATEWAY_KERNEL)
    assert renamed(a, names) == renamed(b, names)
    moved = GATEWAY_KERNEL.replace("set gw_routed = now; run d (2);", "run d (2); set gw_routed = now;")
    assert renamed(a, names) != renamed(compile_src(moved), names)


# -- a queue's pool outside its entries -----------------------------------------------------------------------------

OUTSIDE = """queue D : decode { pool kv { cap 100; } serve delay; decode (p) { hold kv (p) { run (1); } } }
stage d : delay;
"""
SERVED = "workload { arrive batch(1); session { request; } }\nserver { BODY }\n"
MSG = "`D.kv` is a pool of queue `D`, which only `D`'s entries hold, grow, load and release"


@pytest.mark.parametrize("src, msg", [
    (OUTSIDE + SERVED.replace("BODY", "hold ⟨D.kv (1) { run d (1); }"), f"`hold D.kv` in the server: {MSG}"),
    (OUTSIDE + SERVED.replace("BODY", "D.decode (1); grow ⟨D.kv (1);"), f"`grow D.kv` in the server: {MSG}"),
    (OUTSIDE + SERVED.replace("BODY", "D.decode (1); release ⟨D.kv;"), f"`release D.kv` in the server: {MSG}"),
    (OUTSIDE + "workload { arrive batch(1); }\nsession { hold ⟨D.kv (1) { run d (1); } }\n",
     f"`hold D.kv` in the session: {MSG}"),
    (OUTSIDE + "pool top { cap 9; }\nworkload { arrive batch(1); }\nsession { hold top (1) { run d (1); } "
     "lease top (inf); hold ⟨D.kv (1) { transfer on d (1) from top to D.kv (1); } }\n", f"`hold D.kv` in the session: {MSG}"),
    (OUTSIDE + "pool top { cap 9; }\nworkload { arrive batch(1); }\nsession { hold top (1) { run d (1); "
     "transfer on d (1) from ⟨D.kv to top (1); } }\n", f"`transfer D.kv` in the session: {MSG}"),
])
def test_a_queues_pool_is_held_only_by_its_entries(src, msg):
    """language.txt §2, qitem: "pool NAME { poolopt* } -- the queue's own; only its entries hold it". A
    gateway's route was refused another queue's pool (test_spec_rules.py), but a server, a top-level session
    or the workload's session held, grew and released `D.kv` directly. Mutation: without
    `QueueRewriter.check_outside` all six linked."""
    refused(src, msg)
    # reading it is a server's, as a route reads `cachedin(D[j].kv)` to choose
    compile_src(OUTSIDE + SERVED.replace("BODY", "observe u = used(D.kv); D.decode (1);"))


READ = """queue P[2] : prefill {
  pool kv { cap 100; }
  serve fifo;
  nic ps(100);
  prefill (p) { hold kv (p) { run (p); } cache (p) lease kv (inf); }
}
queue D : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(50);
  decode (p) from s { hold kv (p) { transfer (p) from s to kv (p - 1); run (1); } cache (p); }
}
D pull P share bottleneck;
queue gw : gateway { route {
  set prompt = 8;
  choose i in 2 by (queue(P[i]));
  P[i].prefill (prompt);
  D.decode (prompt) from P[i];
} }
workload { arrive batch(1); session { request gw; } }
"""

READ_KERNEL = """pool kvP[2] { cap 100; }
stage P[2] : fifo;
stage nicP[2] : ps(100);
pool kvD { cap 100; }
stage D : fifo;
stage nicD : ps(50);
share bottleneck;
workload { arrive batch(1); }
session {
  set prompt = 8;
  choose i in 2 by (queue(P[i]));
  hold kvP[i] (prompt) { run P[i] (prompt); } cache (prompt) lease kvP[i] (inf);
  hold kvD (prompt) { run nicP[i], nicD (prompt); load kvD (prompt - 1); release kvP[i]; run D (1); } cache (prompt);
}
"""


def test_a_read_of_one_reader_from_a_family_without_latency_is_its_kernel_program():
    """§2 Queues: "Inside an entry of D called from P[i], a transfer without on is the read: the kernel's run
    D.nic.latency[j] (x0); run P.nic[i], D.nic[j] (…); load D.kv[j] (…); release P.kv[i];" — here D is one
    queue (no index) and the relation has no latency (no wait, no `D.nic.latency` stage), and its share is
    the program's. Mutation: the kernel twin with `share maxmin` or the NICs in the other order
    (`run nicD, nicP[i]`) differs (asserted below)."""
    names = {"P.kv": "kvP", "D.kv": "kvD", "P.nic": "nicP", "D.nic": "nicD"}
    a = compile_src(READ)
    assert [s.name for s in a.stages] == ["P", "P.nic", "D", "D.nic"]
    assert renamed(a, names) == renamed(compile_src(READ_KERNEL), names)
    for wrong in (READ_KERNEL.replace("share bottleneck", "share maxmin"),
                  READ_KERNEL.replace("run nicP[i], nicD (prompt)", "run nicD, nicP[i] (prompt)")):
        assert renamed(a, names) != renamed(compile_src(wrong), names)


# -- a call's member -------------------------------------------------------------------------------------------------

SOURCE_MEMBER = """stage link : delay;
queue P[2] : prefill { pool kv { cap 100; } serve delay; prefill (p) { hold kv (p) { run (1); } cache (p) lease kv (inf); } }
queue D : decode { pool kv { cap 100; } serve delay; decode (p) from src { hold kv (p) { transfer on link (1) from src to kv (p); } } }
queue gw : gateway { route { set prompt = 5; P[0].prefill (prompt); D.decode (prompt) from P[IDX]; } }
workload { arrive batch(1); session { request gw; } }
"""
FIRST = "choose it into an attribute first"


@pytest.mark.parametrize("src, msg", [
    (prog(route="D[⟨~bernoulli(0.5)].decode (prompt);"), "`D[…].decode`: the member's index draws"),
    (prog(route="D[⟨now > 1 ? 1 : 0].decode (prompt);"),
     "`D[…].decode`: the member's index reads `now`, which changes while the entry runs"),
    (prog(route="D[⟨used(D[0].kv) > 5 ? 1 : 0].decode (prompt);"), "the member's index reads `used(…)`"),
    (prog(route="P[0].prefill (prompt); D[⟨cached > 0 ? 1 : 0].decode (prompt);"), "the member's index reads `cached`"),
    (SOURCE_MEMBER.replace("IDX", "⟨~bernoulli(0.5)"), "`D.decode`: the index of `from P[…]` draws"),
    (SOURCE_MEMBER.replace("IDX", "⟨queued(P[0].kv)"), "`D.decode`: the index of `from P[…]` reads `queued(…)`"),
])
def test_a_calls_member_is_one_member(src, msg):
    """§2 Queues: a call is the entry's body in place with its pools and stage indexed by the member, and
    "Arguments are substituted like an at admission binding, so none may draw"; the member's index (and the
    `from` member's) is substituted the same way into every statement. `D[~bernoulli(0.5)].decode (prompt);`
    compiled to three draws (the hold on D.kv, the run on D, its growing pool), so a request could hold
    D.kv[0] and run on D[1]; an index that reads the clock or live state moves once time has passed.
    Mutation: without the index test in `QueueRewriter.call` all six linked."""
    assert FIRST in str(refused(src, msg)).splitlines()[0]


def test_a_calls_member_read_from_an_attribute_is_one_member():
    compile_src(prog(route="choose j in 2 by (used(D[j].kv)); D[j].decode (prompt);"))
    compile_src(SOURCE_MEMBER.replace("IDX", "serial % 2"))


@pytest.mark.parametrize("route, msg", [
    ("D[0].decode (⟨now);", "`D.decode`: the argument for `p` reads the clock: the entry would read it after its runs"),
    ("D[0].decode (⟨used(D[0].kv) + 1);", "`D.decode`: the argument for `p` reads live state, `used(…)`"),
    ("P[0].prefill (1); D[0].decode (⟨cached + 1);",
     "`D.decode`: the argument for `p` reads `cached`, which the entry's holds set"),
])
def test_an_entrys_argument_is_a_value_of_the_call(route, msg):
    """§2 Queues: "Arguments are substituted like an at admission binding", whose value the body may not
    read when it reads live state (§2, at admission), and docs/language.md's rule for a statement
    definition's argument, `now` or live state refused: `D[0].decode (now);` put `now` into the hold's
    units (read at the admission) and into every statement after, each reading its own time. Mutation:
    without the two tests in `QueueRewriter.call` the first two linked and the third was refused by another
    rule (`cached` in a hold without `cache`), not at what the entry sets."""
    refused(prog(route=route), msg)
    compile_src(prog(route="set t = now; D[0].decode (t + prompt);"))


GW_ONLY = "workload { arrive batch(1); session { request gw; } }\n"


@pytest.mark.parametrize("src, msg", [
    # "request Q; enters this queue's route"
    ("queue gw : gateway { serve delay; }\nworkload { arrive batch(1); session { ⟨request gw; } }\n",
     "`request gw;`: gateway `gw` has no `route`"),
    # "run (X) with no stage names the queue's own": a queue without a serve has none, the route included
    ("queue gw : gateway { route { ⟨run (1); } }\n" + GW_ONLY,
     "queue `gw` has no `serve`, so it has no stage of its own to run"),
    ("queue X : decode { decode (p) { ⟨run (p); } }\nqueue gw : gateway { route { X.decode (1); } }\n" + GW_ONLY,
     "queue `X` has no `serve`, so it has no stage of its own to run"),
    # "an entry — one per verb of the queue's roles": a queue that plays none has none
    ("queue X { serve fifo; ⟨decode (p) { run (p); } }\nqueue gw : gateway { route { X.decode (1); } }\n" + GW_ONLY,
     "queue `X` plays no role, so it has no entry `decode`; declare its roles"),
])
def test_what_a_queues_own_stage_and_roles_refuse(src, msg):
    """Mutation: `own_stage` returning the queue's name whether it serves or not leaves the second and
    third to the linker, `unknown stage `gw``, which does not say why."""
    refused(src, msg)


@pytest.mark.parametrize("src", [
    "queue g2 : gateway { route { set z = 1; run d (1); } }\nqueue gw : gateway { route { ⟨g2.route (); } }\n" + GW_ONLY,
    "queue g2 : gateway { route { set z = 1; run d (1); } }\n"
    "workload { arrive batch(1); session { request g2; ⟨g2.route (); } }\n",
])
def test_a_gateways_route_is_requested_not_called(src):
    """§2 Queues: "request Q; enters this queue's route", and `request gw;` stands only in the workload's
    session (docs/language.md). `g2.route ();` expanded the route as an entry's call anywhere — in another
    route, in the session beside `request g2;` — with its sets renamed `g2.z`, so the session's `z` was set
    by `request g2;` and not by the call. Mutation: without the test in `QueueRewriter.call` both linked."""
    refused("stage d : delay;\n" + src, "`g2.route`: a gateway's route is not called; the workload's session enters "
                                       "it with `request g2;`")
