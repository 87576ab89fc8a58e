"""Conformance of the text syntax to language.txt §2 (and the pool and program references, in this
dialect): every production compiles in a minimal program, every refusal the text states is refused at
its place (file:line:col, the line and a caret), every form the text calls sugar has exactly the IR of
the kernel program it stands for, and `serq fmt` of every program here is a fixed point with its IR.

Productions compiled (PROGRAMS):

  item      let, use, def = expr, def block, pool [N], stage [N] : kind, workload, session, server,
            queue [N] : ROLE, run { horizon; warmup; seed; arrivals; }, share maxmin | bottleneck,
            QUEUE pull QUEUE latency e share …, gauge
  poolopt   cap, block, evict lru | by, preempt none | lifo | by (…) requeue head | tail,
            queue fifo | by (… waited …), admit via, spill … via … when, reserve held
  kind      fifo, fifo (c), ps (e), delay, step { budget; cost; chunk; serve admission | by |
            decode first | exclusive prefill; memory }
  wlitem    arrive poisson | renewal | closed | batch | none, trace "…" [ordered], init, turn,
            session, hidden a, b
  stmt      turn, request, request QUEUE, set, observe, hold … reserve … reuse … at admission …
            cache … lease, grow, drop, release, load, run S [prefill|decode] (e) [growing P],
            run S, S (e), branch … else, branch with, loop, choose, end, QUEUE[e].VERB (…) from
            QUEUE[e] to POOL (e), mark, the serving forms
  qitem     pool, serve kind [latency], nic kind, VERB (…) [from NAME] block
  expr      arithmetic, comparisons, && || !, c ? a : b, the draws, the functions, the
            observables, max | min | sum j in n (e), the context variables in their places

Refusals (REFUSALS): a transfer without `from P to Q (n)` (parse error); a form with no stage or with
several; a context variable read where it does not exist (`set x = tokens;`, `evict by (tokens)`); a
name given twice (an attribute named as a context variable, a let and an attribute); a constant that
is NaN; a constant guard strictly between 0 and 1; an aggregate's index that is a name of the program,
its count not a constant; an `at admission` binding that draws, or is live and read by the body, or
has a builtin's name; a hidden attribute in a hold's header, a scheduler-set attribute hidden; the two
sides with a top-level session, a server never requested, `request;` with no server, `turn;`,
`end;`, `request;` in a server; a gauge reading an attribute; transfer and tool on a step engine, a
step run without its mode, a mode on a fifo; the live-set lint; `request Q` of a non-gateway or of no
queue, a gateway family; a queue's pools / serve / entries out of order, an unknown role, a verb of
no role of the queue; `from` on a queue that leases nothing, or on some way only; an entry of a
reader called from a queue it does not pull; a transfer without `on` in a queue that pulls from none;
a second source; a relation with a `share` of its own; a pull of an undeclared queue, a draw as its
latency; latency on a link with an entry; an entry reading a session attribute or holding another
queue's pool, or growing (`growing`) or filling or emptying (a link's `L.transfer … from S to P (m)`) a
pool not its own, a gateway's route another queue's; an entry argument that draws; `arrivals` with a closed workload; a renewal gap of 0; a
run over several stages without a share; definitions: recursion, arity, a statement definition in an
expression and the converse; `use` of no library.

IR equivalence (SUGAR): the serving forms (prefill, decode, tool, transfer, with `on`, `[j]`, several
stages, `growing`), the which-stage rule (a stage named after the role before the engine, `transfer`
as the link's name), `preempt lifo` = `preempt by (-admission) requeue head` (requeue head the
default), `serve decode first` = `serve by (decoding ? 0 : 1)`, `serve admission` = the default,
`branch with (p)` = `branch (~bernoulli(p))`, `max`/`min j in n (e)` written out (nested, the count a
let or a parenthesised constant), `def` of expressions and blocks and `use`, `at admission`
substituted (the body's read a `set` at its top), the two sides spliced, a gateway's route spliced,
`mark` a set of `now`. `serq fmt` writes a serving form's negative work with its sign.

Not tested here as the text: where docs/language.md departs from it by design (the which-stage rule
looks at every stage, not only those above the form; `sum j in n (e)` is the IR's one `Call` `sum`, the
left fold, which no kernel text writes); and the defaults the text names (`queue fifo`, `evict lru`,
`preempt none`), which it does not call sugar: written, they are in the IR, omitted, absent.
"""

from __future__ import annotations

import subprocess

import msgspec
import pytest
import serq_frontend
import serq_ir
from serq_frontend.fmt import format_source
from sqhelpers import SERQ, _pm, compile_src, ir_bytes, refused
from syntax_programs import EXTRA, PD, PRODUCTIONS, PULL, E, S, W

pytestmark = pytest.mark.timeout(60)

#: the productions compiled and formatted here; the two of EXTRA are added below, for the checks after it
PROGRAMS = dict(PRODUCTIONS)


def check_fmt(src: str) -> None:
    once = format_source(src)
    assert format_source(once) == once
    assert ir_bytes(compile_src(once)) == ir_bytes(compile_src(src))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_production_compiles_and_formats_to_a_fixed_point(name):
    check_fmt(PROGRAMS[name])


PROGRAMS.update(EXTRA)


def test_use_of_a_library_beside_the_file(tmp_path):
    (tmp_path / "lib.sq").write_text("def twice(x) = 2 * x;\ndef serve_one(x) { run s (twice(x)); }\n")
    (tmp_path / "p.sq").write_text('use "lib.sq";\n' + S + W + "session { turn; serve_one(n); end; }\n")
    p = serq_frontend.compile(tmp_path / "p.sq", pm=_pm())
    assert ir_bytes(p) == ir_bytes(compile_src(S + W + "session { turn; run s (2 * n); end; }\n"))


# -- the refusals the text states: one located error each ---------------------------------------------

E2 = E + "stage F : step { budget 8; cost 1; }\n"
SIDES = "workload { arrive poisson(1); turn { set n = 1; } session { turn; request; end; } }\n"

ENTRY_GROWS = ("stage X : step { budget 8; cost 1; }\nqueue L : link { serve ps(10); transfer (m) { run (m); } }\n"
               "queue P : prefill { pool kv { cap 9; } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n"
               "queue D : decode { pool kv { cap 100; } serve step { budget 8; cost 1; memory kv; } "
               "decode (prompt) { hold kv (prompt) { BODY } } }\n"
               "pool g { cap 100; }\nqueue gw : gateway { route { hold g (1) { D.decode (prompt); } } }\n"
               "workload { arrive poisson(1); hidden o; turn { set prompt = 10; set o = 3; } "
               "session { turn; request gw; end; } }\n")

REFUSALS = {
    # §2 serving vocabulary
    "transfer_without_from_to": ("stage link : ps(4);\npool a { cap 10; }\n" + W
                                 + "session { turn; hold a (1) { transfer (3)⟨; } end; }", "unexpected `;`"),
    "form_with_no_stage": (S + W + "session { turn; ⟨prefill 3; end; }", "finds no stage"),
    "form_with_two_engines": (E2 + W + "session { turn; ⟨prefill 3; end; }", "several step engines qualify"),
    "form_with_two_links": ("stage transfer : ps(4);\nstage link : ps(4);\npool a { cap 10; }\npool b { cap 10; }\n"
                            + W + "session { turn; hold b (1) { ⟨transfer (3) from a to b (1); } end; }",
                            "several stages qualify"),
    "tool_on_no_tool_stage": ("stage E : step { budget 4; cost 1; }\n" + W + "session { turn; ⟨tool 3; end; }",
                              "finds no stage"),
    "tool_on_a_step_engine": (E + W + "session { turn; ⟨tool on E 3; end; }", "a run there says what it is"),
    "transfer_on_a_step_engine": (E + "pool q { cap 50; }\n" + W
                                  + "session { turn; hold kv (1) { ⟨transfer on E (3) from kv to q (1); } end; }",
                                  "a run there says what it is"),
    "a_family_form_without_index": ("stage prefill[2] : fifo;\n" + W + "session { turn; ⟨prefill (n); end; }",
                                    "index it"),
    "an_unknown_name_in_a_form": ("stage prefill : fifo;\n" + W + "session { turn; prefill (⟨zz); end; }",
                                  "unknown name `zz`"),
    # kernel: modes
    "a_step_run_without_mode": (E + W + "session { turn; ⟨run E (3); end; }", "a run there says what it is"),
    "a_mode_on_a_fifo": (S + W + "session { turn; ⟨run s prefill (3); end; }", "a mode is for a step stage only"),
    # context variables, names
    "tokens_in_a_session": (S + W + "session { turn; set x = ⟨tokens; end; }", "`tokens` is not readable"),
    "tokens_in_an_eviction_key": (S + "pool p { evict by (⟨tokens); }\n" + W
                                  + "session { turn; hold p (1) { run s (1); } end; }", "`tokens` is not readable"),
    "an_attribute_named_present": ("stage s : ps(min(present, 16));\n" + W
                                   + "session { turn; ⟨set present = 3; run s (1); end; }", "is a context variable"),
    "a_let_and_an_attribute": ("let n = 2;\n" + S + "workload { arrive poisson(1); turn { ⟨set n = 10; } }\n"
                               "session { turn; run s (1); end; }", "give them two names"),
    "a_let_that_is_nan": ("let a = ⟨0/0;\n" + S + W + "session { turn; run s (1); end; }", "NaN"),
    "a_cap_that_is_nan": ("pool p { cap ⟨inf - inf; }\n" + S + "workload { arrive poisson(1); }\n"
                          "session { hold p (1) { run s (1); } end; }", "NaN"),
    # branch
    "a_constant_guard_strictly_between": (S + W + "session { turn; branch (⟨0.5) { run s (1); } end; }",
                                          "write `branch with (0.5)`"),
    # aggregates
    "an_aggregate_index_the_program_has": ("pool kv[2] { cap 4; }\n" + S + W
                                           + "session { turn; set m = max ⟨n in 2 (used(kv[n])); end; }",
                                           "a name the program has already"),
    "an_aggregate_count_an_attribute": ("pool kv[2] { cap 4; }\n" + S + W
                                        + "session { turn; set m = max j in ⟨n (used(kv[j])); end; }",
                                        "must be a constant"),
    "an_aggregate_count_unparenthesised": ("let N = 1;\npool kv[2] { cap 4; }\n" + S + W
                                           + "session { turn; set m = max j in N ⟨+ 1 (used(kv[j])); end; }",
                                           "unexpected `+`"),
    # at admission
    "a_binding_that_draws": (S + "pool p { cap 4; }\n" + W
                             + "session { turn; hold p (h) at admission (h = ⟨~exp(1)) { run s (1); } end; }",
                             "draws"),
    "a_live_binding_the_body_reads": (S + "pool p { cap 4; }\n" + W + "session { turn; hold p (h) at admission "
                                      "(⟨h = cachedin(p)) { run s (h); } end; }", "reads live state"),
    "a_binding_with_a_builtin_name": (S + "pool p { cap 4; }\n" + W + "session { turn; hold p (cached) at admission "
                                      "(⟨cached = 1) { run s (1); } end; }", "built-in attribute"),
    "the_live_set_lint": (S + "pool p { cap 4; }\n" + W
                          + "session { turn; set h = free(p); hold p (⟨h) { run s (1); } end; }", "at admission"),
    # hidden
    "a_hidden_attribute_in_the_units": (S + "pool p { cap 40; }\nworkload { arrive poisson(1); hidden n; "
                                        "turn { set n = 10; } }\nsession { turn; hold p (⟨n) { run s (1); } end; }",
                                        "`n` is hidden"),
    "cached_hidden": (S + "workload { arrive poisson(1); hidden o, ⟨cached; turn { set o = 1; } }\n"
                      "session { turn; run s (o); end; }", "cannot be hidden"),
    # the two sides
    "a_session_and_the_two_sides": (S + SIDES + "⟨server { run s (1); }\nsession { turn; end; }",
                                    "are exclusive"),
    "a_server_never_requested": (S + "workload { arrive poisson(1); turn { set n = 1; } session { turn; end; } }\n"
                                 "⟨server { run s (1); }\n", "never requested"),
    "request_with_no_server": (S + "workload { arrive poisson(1); turn { set n = 1; } session { turn; ⟨request; "
                               "end; } }\n", "with no `server`"),
    "turn_in_a_server": (S + SIDES + "server { ⟨turn; run s (1); }\n", "`turn;` in a server"),
    "end_in_a_server": (S + SIDES + "server { run s (1); ⟨end; }\n", "`end;` in a server"),
    "request_in_a_server": (S + SIDES + "server { ⟨request; run s (1); }\n", "does not request itself"),
    # gauges, shares, run
    "a_gauge_reading_an_attribute": (S + W + "gauge g = ⟨n;\nsession { turn; run s (1); end; }",
                                     "may not read an attribute"),
    "several_stages_without_share": ("stage a : ps(1);\nstage b : ps(1);\n" + W
                                     + "session { turn; ⟨run a, b (1); end; }", "there is no default"),
    "a_renewal_gap_of_zero": (S + "workload { arrive renewal(⟨0); }\nsession { run s (1); end; }",
                              "positive and finite"),
    "arrivals_of_a_closed_workload": (S + "workload { arrive closed(3); }\nsession { run s (1); end; }\n"
                                      "run { horizon 100; ⟨arrivals 5; }", "needs an open workload"),
    # definitions and use
    "a_recursive_definition": (S + "def f(x) = ⟨f(x);\n" + W + "session { turn; run s (f(1)); end; }",
                               "uses itself"),
    "a_definition_given_two_arguments": (S + "def f(x) = x;\n" + W + "session { turn; run s (⟨f(1, 2)); end; }",
                                         "takes one argument"),
    "a_statement_definition_in_an_expression": (S + "def g(x) { run s (x); }\n" + W
                                                + "session { turn; run s (⟨g(1)); end; }", "statement definition"),
    "an_expression_definition_as_a_statement": (S + "def f(x) = x;\n" + W + "session { turn; ⟨f(1); end; }",
                                                "expression definition"),
    "use_of_no_library": ('⟨use "nope.sq";\n' + S + W + "session { turn; end; }", "no such library"),
    # queues
    "request_of_a_queue_that_is_no_gateway": (S + "queue Q : prefill { serve fifo; prefill (p) { run (p); } }\n"
                                              "workload { arrive poisson(1); session { ⟨request Q; end; } }\n",
                                              "is no gateway"),
    "request_of_no_queue": (PD.replace("request gw", "⟨request gx"), "no queue `gx` is declared"),
    "a_gateway_family": (S + "⟨queue gw[2] : gateway { route { run s (1); } }\n"
                         "workload { arrive poisson(1); session { request gw; end; } }\n", "single queue"),
    "an_entry_before_the_serve": ("queue D : decode { decode (prompt) { run (prompt); } ⟨serve fifo; }\n",
                                  "its `serve` comes before its entries"),
    "a_pool_after_the_serve": ("queue D : decode { serve fifo; ⟨pool kv { cap 3; } decode (prompt) { run (prompt); } }\n",
                               "pools first"),
    "an_unknown_role": ("queue D : ⟨decoder { serve fifo; decode (prompt) { run (prompt); } }\n", "is not a role"),
    "a_verb_of_no_role": ("queue D : decode { serve fifo; ⟨prefill (prompt) { run (prompt); } }\n",
                          "is no entry of the roles"),
    "from_a_queue_leasing_nothing": (PD.replace("cache (prompt) lease kv (inf);", "cache (prompt);")
                                     .replace("from P[i];", "from ⟨P[i];"), "leases a pool"),
    "from_a_queue_leasing_on_some_way_only": (
        PD.replace("prefill (prompt) { hold kv (prompt) { run (prompt); } cache (prompt) lease kv (inf); } }\nqueue Q",
                   "prefill (prompt) { branch (prompt > 3) { hold kv (prompt) { run (prompt); } cache (prompt) "
                   "lease kv (inf); } else { hold kv (prompt) { run (prompt); } } } }\nqueue Q", 1)
        .replace("from P[i];", "from ⟨P[i];"), "on some way through it"),
    # at the call's `from` (it was at the read inside the entry), a note at the read
    "a_reader_called_from_another_queue": (PD.replace("D[j].decode (prompt) from P[i];",
                                                      "Q.prefill (prompt); D[j].decode (prompt) from ⟨Q;"),
                                           "`D.decode` is called `from Q`, and `D` pulls from `P`"),
    "a_transfer_without_on_and_no_pull": (PD.replace(PULL, "share maxmin;\n")
                                          .replace("{ transfer (prompt) from src", "{ ⟨transfer (prompt) from src"),
                                          "pulls from no queue"),
    "a_second_source": (PD + "⟨D pull P share maxmin;\n", "a reader has one source"),
    "a_relation_and_a_share": (PD + "⟨share maxmin;\n", "`share` is given twice"),
    "a_pull_of_no_queue": (PD.replace(PULL, "⟨D pull Z share maxmin;\n"), "no queue `Z` is declared above"),
    "a_pull_latency_that_draws": (PD.replace("latency 0.5", "latency ⟨~exp(1)"), "constant"),
    "latency_on_a_link_with_an_entry": ("queue L : link { serve ps(3) ⟨latency 1; transfer (n) { run (n); } }\n" + PD,
                                        "only a link without an entry takes one"),
    "an_entry_reading_a_session_attribute": (PD.replace("run (o);", "run (o + ⟨gx);")
                                             .replace("session { turn;", "session { turn; set gx = 1;"),
                                             "a session attribute set outside the queue"),
    "an_entry_holding_another_queues_pool": (PD.replace("run (o);", "hold ⟨P[0].kv (1) { run (o); }"),
                                             "is not a pool of `D`"),
    # a `growing` grows its pool: an entry's grows only its queue's own and its `from` pool (language.txt,
    # Queues: "Its statements hold, grow, load and release only the queue's own pools and the pool its
    # from names"), in the serving form, the kernel's run, and a gateway's route beside the entry
    "an_entry_serving_form_growing_a_top_level_pool": (
        ENTRY_GROWS.replace("BODY", "decode (o) growing ⟨g;"), "`growing g` in `D.decode`: `g` is not a pool of `D`"),
    "an_entry_run_growing_a_top_level_pool": (
        ENTRY_GROWS.replace("BODY", "run D decode (o) growing ⟨g;"), "`growing g` in `D.decode`: `g` is not a pool"),
    "an_entry_growing_its_from_pool_elsewhere": (
        ENTRY_GROWS.replace("BODY", "grow kv (1); decode (o) growing ⟨P.kv;"), "`growing P.kv` in `D.decode`"),
    "a_route_growing_another_queues_pool": (
        ENTRY_GROWS.replace("BODY", "decode (o) growing kv;").replace("D.decode (prompt);",
                                                                       "D.decode (prompt); run X decode (1) growing ⟨D.kv;"),
        "`growing D.kv` in `gw.route`: `D.kv` is a pool of queue `D`"),
    # a link's `L.transfer (n) from S to P (m)` releases S and loads P: the same boundary
    "an_entry_transfer_call_filling_a_top_level_pool": (
        ENTRY_GROWS.replace("BODY", "L.transfer (3) from kv to ⟨g (1);"), "`transfer g` in `D.decode`: `g` is not a pool"),
    "an_entry_transfer_call_taking_from_a_top_level_pool": (
        ENTRY_GROWS.replace("BODY", "L.transfer (3) from ⟨g to kv (1);"), "`transfer g` in `D.decode`: `g` is not a pool"),
    "a_route_transfer_call_filling_another_queues_pool": (
        ENTRY_GROWS.replace("BODY", "decode (1);").replace("D.decode (prompt);",
                                                       "D.decode (prompt); L.transfer (3) from g to ⟨D.kv (1);"),
        "`transfer D.kv` in `gw.route`: `D.kv` is a pool of queue `D`"),
    "an_entry_argument_that_draws": (PD.replace("P[i].prefill (prompt);", "P[i].prefill (⟨~exp(prompt));"),
                                     "draws"),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_every_refusal_is_located(name):
    src, message = REFUSALS[name]
    e = refused(src, message)
    line = src.replace("⟨", "").splitlines()[e.line - 1]
    shown, caret = str(e).splitlines()[1:3]
    assert shown.endswith(line)  # the source line, then a caret under the column
    assert caret == " " * (len(shown) - len(line) + e.col - 1) + "^"


# -- IR equivalence: each sugar and the kernel program the text says it stands for --------------------

LINK = "stage link : ps(4);\npool a { cap 10; }\npool b { cap 10; }\n"
KV_ENGINE = E + W


def grows(serve: str) -> str:
    return E.replace("memory kv;", serve + "memory kv;") + W + \
        "session { turn; hold kv (1) { run E decode (n) growing kv; } end; }"


SUGAR = {
    "prefill_decode_tool_by_their_stages": (
        "stage prefill : fifo;\nstage decode : ps(4);\nstage tool : delay;\n" + W
        + "session { turn; prefill n; decode (n); tool 3; end; }",
        "stage prefill : fifo;\nstage decode : ps(4);\nstage tool : delay;\n" + W
        + "session { turn; run prefill (n); run decode (n); run tool (3); end; }"),
    "prefill_decode_on_the_engine_growing_passes": (
        KV_ENGINE + "session { turn; hold kv (1) { prefill (n) growing kv; decode (n) growing kv; } end; }",
        KV_ENGINE + "session { turn; hold kv (1) { run E prefill (n) growing kv; run E decode (n) growing kv; } end; }"),
    "a_stage_named_after_the_role_before_the_engine": (
        "stage prefill : fifo;\nstage E : step { budget 4; cost 1; }\n" + W + "session { turn; prefill (n); decode (2); end; }",
        "stage prefill : fifo;\nstage E : step { budget 4; cost 1; }\n" + W
        + "session { turn; run prefill (n); run E decode (2); end; }"),
    "a_step_engine_named_prefill_gets_the_mode": (
        "stage prefill : step { budget 4; cost 1; }\n" + W + "session { turn; prefill (n); end; }",
        "stage prefill : step { budget 4; cost 1; }\n" + W + "session { turn; run prefill prefill (n); end; }"),
    "transfer_is_link_load_release": (
        LINK + W + "session { turn; hold a (2) { run link (1); } lease a (inf); "
        "hold b (2) { transfer (3) from a to b (2); } end; }",
        LINK + W + "session { turn; hold a (2) { run link (1); } lease a (inf); "
        "hold b (2) { run link (3); load b (2); release a; } end; }"),
    "transfer_finds_a_stage_named_transfer": (
        LINK.replace("stage link", "stage transfer") + W + "session { turn; hold b (2) { transfer (3) from a to b (2); } end; }",
        LINK.replace("stage link", "stage transfer") + W + "session { turn; hold b (2) { run transfer (3); load b (2); "
        "release a; } end; }"),
    "transfer_on_two_stages_is_one_run_over_both": (
        "share maxmin;\nstage eg[2] : ps(4);\nstage ing[2] : ps(4);\npool a { cap 10; }\npool b { cap 10; }\n" + W
        + "session { turn; hold b (2) { transfer on eg[1], ing[0] (3) from a to b (2); } end; }",
        "share maxmin;\nstage eg[2] : ps(4);\nstage ing[2] : ps(4);\npool a { cap 10; }\npool b { cap 10; }\n" + W
        + "session { turn; hold b (2) { run eg[1], ing[0] (3); load b (2); release a; } end; }"),
    "an_index_applies_to_the_roles_array": (
        "pool kv[2] { cap 100; }\nstage prefill[2] : step { budget 8; cost 1; }\nstage tool[2] : delay;\n"
        "stage link[2] : ps(4);\npool a { cap 10; }\npool b { cap 10; }\n" + W
        + "session { turn; choose j in 2 by (used(kv[j])); prefill[j] (n); tool[1] (n); "
        "hold b (1) { transfer[j] (3) from a to b (1); } end; }",
        "pool kv[2] { cap 100; }\nstage prefill[2] : step { budget 8; cost 1; }\nstage tool[2] : delay;\n"
        "stage link[2] : ps(4);\npool a { cap 10; }\npool b { cap 10; }\n" + W
        + "session { turn; choose j in 2 by (used(kv[j])); run prefill[j] prefill (n); run tool[1] (n); "
        "hold b (1) { run link[j] (3); load b (1); release a; } end; }"),
    "on_a_member": (
        "stage P[2] : fifo;\nstage E[2] : step { budget 4; cost 1; }\n" + W
        + "session { turn; choose j in 2 by (queue(P[j])); prefill on P[j] (n); tool on P[0] 1; decode on E[j] 2; end; }",
        "stage P[2] : fifo;\nstage E[2] : step { budget 4; cost 1; }\n" + W
        + "session { turn; choose j in 2 by (queue(P[j])); run P[j] (n); run P[0] (1); run E[j] decode (2); end; }"),
    "preempt_lifo_is_by_minus_admission_requeue_head": (
        grows(""), grows("").replace("preempt lifo", "preempt by (-admission) requeue head")),
    "requeue_head_is_the_default": (
        grows("").replace("preempt lifo", "preempt by (-admission)"),
        grows("").replace("preempt lifo", "preempt by (-admission) requeue head")),
    "serve_decode_first_is_by_decoding": (grows("serve decode first; "), grows("serve by (decoding ? 0 : 1); ")),
    "serve_admission_is_the_default": (grows("serve admission; "), grows("")),
    "branch_with_is_a_bernoulli_guard": (
        S + W + "session { turn; branch with (0.3) { run s (1); } else { run s (2); } end; }",
        S + W + "session { turn; branch (~bernoulli(0.3)) { run s (1); } else { run s (2); } end; }"),
    "max_and_min_written_out": (
        "pool kv[2] { cap 4; }\n" + S + W
        + "session { turn; set m = max j in 2 (used(kv[j])); set u = min j in 2 (free(kv[j])); end; }",
        "pool kv[2] { cap 4; }\n" + S + W
        + "session { turn; set m = max(used(kv[0]), used(kv[1])); set u = min(free(kv[0]), free(kv[1])); end; }"),
    "nested_aggregates_written_out": (
        "pool kv[2] { cap 4; }\n" + S + W
        + "session { turn; set m = max j in 2 (min i in 2 (used(kv[i]) + j)); end; }",
        "pool kv[2] { cap 4; }\n" + S + W
        + "session { turn; set m = max(min(used(kv[0]) + 0, used(kv[1]) + 0), min(used(kv[0]) + 1, used(kv[1]) + 1)); "
        "end; }"),
    "an_aggregate_count_a_let_or_a_parenthesised_constant": (
        "let N = 1;\npool kv[2] { cap 4; }\n" + S + W
        + "session { turn; set m = max j in (N + 1) (used(kv[j])); set k = min j in N (j); end; }",
        "let N = 1;\npool kv[2] { cap 4; }\n" + S + W
        + "session { turn; set m = max(used(kv[0]), used(kv[1])); set k = min(0); end; }"),
    "definitions_of_expressions_and_blocks": (
        "let K = 2;\ndef f(x) = x * K + 1;\ndef g(y, p) { hold p (1) { run s (f(y)); } }\npool q { cap 3; }\n" + S + W
        + "session { turn; g(n + 1, q); end; }",
        "let K = 2;\npool q { cap 3; }\n" + S + W + "session { turn; hold q (1) { run s ((n + 1) * K + 1); } end; }"),
    "a_definition_is_its_body_with_its_arguments_whole": (
        "pool kv[2] { cap 4; }\nstage s[2] : fifo;\ndef f(x) = x - 1;\ndef c(x) = x > 1 ? 1 : 2;\n"
        "def h(p, st, k) { hold p[k] (1) { run st[k] (f(k) + 1); } }\ndef hh(k) { h(kv, s, k); h(kv, s, 1 - k); }\n" + W
        + "session { turn; choose j in 2 by (used(kv[j])); hh(j); set y = 10 - f(n) * 2; set z = -c(n) + 1; end; }",
        "pool kv[2] { cap 4; }\nstage s[2] : fifo;\n" + W
        + "session { turn; choose j in 2 by (used(kv[j])); hold kv[j] (1) { run s[j] ((j - 1) + 1); } "
        "hold kv[1 - j] (1) { run s[1 - j] (((1 - j) - 1) + 1); } set y = 10 - (n - 1) * 2; "
        "set z = -(n > 1 ? 1 : 2) + 1; end; }"),
    "at_admission_is_substituted": (
        S + "pool p { cap 8; block 2; }\n" + W + "session { turn; hold p (min(n, h + 1)) reserve (h + 2) reuse (h) "
        "at admission (g = cachedin(p), h = g * 2) { set c = cached; run s (c); } cache (n); end; }",
        S + "pool p { cap 8; block 2; }\n" + W + "session { turn; hold p (min(n, cachedin(p) * 2 + 1)) "
        "reserve (cachedin(p) * 2 + 2) reuse (cachedin(p) * 2) { set c = cached; run s (c); } cache (n); end; }"),
    "a_binding_the_body_reads_is_a_set_at_its_top": (
        S + "pool p { cap 8; }\n" + W + "session { turn; hold p (k) at admission (k = n + 1) { run s (k); } end; }",
        S + "pool p { cap 8; }\n" + W + "session { turn; hold p (n + 1) { set k = n + 1; run s (k); } end; }"),
    "the_server_is_spliced_at_every_request": (
        S + "workload { arrive poisson(1); turn { set n = 1; } session { turn; request; loop { request; "
        "branch (n > 3) { end; } turn; } } }\nserver { set m = n; run s (m); }\n",
        S + "workload { arrive poisson(1); turn { set n = 1; } }\nsession { turn; set m = n; run s (m); "
        "loop { set m = n; run s (m); branch (n > 3) { end; } turn; } }\n"),
    "a_gateways_route_is_spliced_at_its_request": (
        S + "queue gw : gateway { route { run s (n); set m = 2; } }\n"
        "workload { arrive poisson(1); turn { set n = 1; } session { turn; request gw; set k = m; end; } }\n",
        S + "workload { arrive poisson(1); turn { set n = 1; } }\nsession { turn; run s (n); set m = 2; set k = m; end; }\n"),
}


@pytest.mark.parametrize("name", sorted(SUGAR))
def test_every_sugar_has_the_ir_of_its_kernel_program(name):
    sugared, kernel = SUGAR[name]
    assert ir_bytes(compile_src(sugared)) == ir_bytes(compile_src(kernel))
    check_fmt(sugared)


def test_mark_is_a_set_of_now_read_by_the_caller():
    sugared = compile_src("queue D : decode { serve fifo; decode (x) { run (x); mark ft; run (1); } }\n"
                          "queue gw : gateway { route { D.decode (n); set t = D.ft; } }\n"
                          "workload { arrive poisson(1); turn { set n = 1; } session { turn; request gw; end; } }\n")
    kernel = compile_src("stage D : fifo;\nworkload { arrive poisson(1); turn { set n = 1; } }\n"
                         "session { turn; run D (n); set D_ft = now; run D (1); set t = D_ft; end; }\n")
    raw = msgspec.to_builtins(msgspec.structs.replace(kernel, source=None))
    for a in raw["attributes"]:
        a["name"] = {"D_ft": "D.ft"}.get(a["name"], a["name"])
    assert ir_bytes(sugared) == serq_ir.encode(msgspec.convert(raw, serq_ir.Program), spans=False)


def test_serq_fmt_of_every_program_is_a_fixed_point_with_its_ir(tmp_path):
    sources = {**PROGRAMS, **{f"sugar_{k}": v[0] for k, v in SUGAR.items()}}
    files = []
    for name, src in sorted(sources.items()):
        (tmp_path / f"{name}.sq").write_text(src)
        files.append(f"{name}.sq")
    before = {f: ir_bytes(serq_frontend.compile(tmp_path / f, pm=_pm())) for f in files}
    r = subprocess.run([SERQ, "fmt", *files], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([SERQ, "fmt", "--check", *files], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0 and r.stdout == "", r.stdout
    for f in files:
        assert ir_bytes(serq_frontend.compile(tmp_path / f, pm=_pm())) == before[f], f


def test_fmt_keeps_a_serving_forms_negative_work_a_sign():
    # `tool -n + 20;` is the form with the work -n + 20 (§2, serving); written `tool - n + 20` it reads as
    # a subtraction from a stage named tool
    src = ("stage prefill : fifo;\nstage decode : fifo;\nstage tool : delay;\nlet K = 1;\n" + W
           + "session { turn; tool -n + 20; decode -n+30; branch (n > 0) { prefill -1 + n; } set x = K - n; "
           "run tool (K -n); end; }\n")
    assert format_source(src).splitlines()[-1] == (
        "session { turn; tool -n + 20; decode -n + 30; branch (n > 0) { prefill -1 + n; } set x = K - n; "
        "run tool (K - n); end; }")
    check_fmt(src)
