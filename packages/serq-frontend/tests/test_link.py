"""Every link rule has a program that breaks it: the message and the line:col it points at."""

from __future__ import annotations

import math

import pytest
import serq_frontend
from serq_ir import nodes as ir
from sqhelpers import compile_src, refused

HEAD = """let lam = 0.5;
pool kv { cap 1000; block 16; }
stage svc : fifo;
stage E : step { budget 512; cost 0.01; memory kv; };
workload { arrive poisson(lam); hidden o; init { set o = 3; } }
"""


def prog(session: str, head: str = HEAD) -> str:
    return head + "session {\n" + session + "\n}\n"


# -- name resolution ---------------------------------------------------------------------------------


def test_unknown_name():
    refused(prog("  set x = ⟨nope + 1;"), "unknown name `nope`")


def test_unknown_stage_and_pool():
    refused(prog("  run ⟨svx (1);"), "unknown stage `svx`")
    refused(prog("  hold ⟨kb (1) { run svc (1); }"), "unknown pool `kb`")
    refused(prog("  hold ⟨svc (1) { run svc (1); }"), "`svc` is a stage, and a pool is wanted here")


def test_unknown_function_and_distribution():
    refused(prog("  set x = ⟨frob(1);"), "unknown function `frob`")
    refused(prog("  set x = ⟨~gamma(1, 2);"), "unknown distribution `~gamma`")
    refused(prog("  set x = ⟨pow(1);"), "`pow` takes two arguments, `pow(x, y)`, and got 1")


def test_family_needs_an_index():
    head = HEAD.replace("pool kv {", "pool kv[2] {").replace("memory kv;", "memory kv;")
    head = head.replace("stage E : step", "stage E[2] : step")
    refused(prog("  hold ⟨kv (1) { run svc (1); }", head), "`kv` is a family of 2; index it")
    refused(prog("  hold kv[⟨2] (1) { run svc (1); }", head), "`kv[2]`: `kv` has members 0 … 1")


# -- constants ---------------------------------------------------------------------------------------


def test_a_constant_that_folds_to_nan_does_not_link():
    refused("let a = ⟨0 / 0;\n" + prog("  run svc (1);", HEAD), "`let a` evaluates to NaN")
    refused(prog("  run svc (1);", HEAD.replace("cap 1000;", "cap ⟨inf - inf;")),
            "the cap of pool `kv` evaluates to NaN")


def test_a_nan_subexpression_is_a_value_where_the_program_keeps_one():
    # `observe x = 5 % 0;` did not link, though `observe x = y % 0;` observes NaN at run time
    p = compile_src(prog("  observe x = 5 % 0;\n  set n = (inf - inf) + 1;\n  observe t = (5 % 0) > 1;\n"
                         "  record r { c = 0 * inf; }\n  run svc (1);"))
    x, n, t, r = p.session[:4]
    assert isinstance(x.value, ir.Binary) and x.value.op == "%" and x.value.lhs.value == 5.0
    assert x.value.rhs.value == 0.0  # written out: the IR has no NaN number
    assert isinstance(n.value, ir.Binary) and n.value.op == "+" and isinstance(n.value.lhs, ir.Binary)
    assert t.value == ir.Num(value=0.0, span=t.value.span)  # what is not NaN around it folds
    assert isinstance(r.values[0], ir.Binary)
    src = "stage svc : fifo;\nworkload { arrive poisson(1); }\ngauge g = 0 / 0;\nsession { run svc (1); }\n"
    assert isinstance(compile_src(src).gauges[0].value, ir.Binary)


@pytest.mark.parametrize("stmt", [
    "run svc (⟨0 / 0);", "hold kv (1 + ⟨0 * inf) { run svc (1); }", "set x = 1;\n  branch (x > ⟨inf - inf) { end; }",
    "set x = ⟨~exp(5 % 0);", "run svc (1);\n  choose j in ⟨0 / 0 by (1);", "observe y = used(kv[⟨0 / 0]);",
])
def test_a_nan_subexpression_is_still_an_error_where_the_simulator_acts_on_it(stmt):
    # (kv is declared without a size: one pool, which takes no index, test_fleet_round47_not_a_family; a
    # family's NaN index is still told as `kv[NaN]`: `kv` has members …, test_fleet_round47_not_a_family)
    message = "`kv[…]`: `kv` is one pool, not a family" if "kv[" in stmt else \
        "~exp(NaN): a parameter is NaN" if "~exp" in stmt else "evaluates to NaN"
    refused(prog("  " + stmt), message)


def test_nan_is_true_in_the_folding_as_at_run_time():
    # a non-zero operand is true: `(0 / 0) ? 1 : 2` is 1 (it folded to 2; the simulator gives 1)
    p = compile_src("let a = (0 / 0) ? 1 : 2;\nlet b = !(0 / 0);\nlet c = (0 / 0) && 1;\n"
                    + prog("  run svc (a + b + c);"))
    assert {c.name: c.value for c in p.constants} == {"lam": 0.5, "a": 1.0, "b": 0.0, "c": 1.0}


def test_constants_fold_and_inf_is_a_string():
    p = compile_src(prog("  run svc (2 * lam + 1);\n  hold kv (inf) { run svc (1); }"))
    run = p.session[0]
    assert run.work == ir.Num(value=2.0, span=run.work.span)
    assert p.session[1].pools[0].units.value == "inf"
    assert p.constants == [ir.Constant(name="lam", value=0.5)]


def test_set_overrides_and_unknown_set_is_an_error():
    p = compile_src(prog("  run svc (lam);"), sets={"lam": 2.0})
    assert p.workload.arrive.rate == 2.0 and p.session[0].work.value == 2.0
    with pytest.raises(serq_frontend.CompileError, match=r"sets\['nope'\]: the program has no `let nope`"):
        compile_src(prog("  run svc (1);"), sets={"nope": 1.0})


def test_def_overrides_and_unknown_def_is_an_error():
    src = "def service() = ~exp(1);\n" + prog("  run svc (service());")
    p = compile_src(src, defs={"service": "~erlang(4, 1)"})
    assert p.session[0].work.dist == "erlang"
    with pytest.raises(serq_frontend.CompileError, match=r"defs\['other'\]: the program has no expression definition"):
        compile_src(src, defs={"other": "1"})
    # a program with no definition at all (its defs layer has nothing to expand) refuses it too, even when
    # the name is one of its lets or the body would not parse
    for body in ("1", "1+", "now"):
        with pytest.raises(serq_frontend.CompileError, match=r"defs\['lam'\]: the program has no expression definition"):
            compile_src(prog("  run svc (lam);"), defs={"lam": body})


def test_constant_positions_must_be_constants():
    refused(prog("  run svc (1);", HEAD.replace("cap 1000;", "cap ⟨serial;")),
            "the cap of pool `kv` must be a constant")
    refused(prog("  run svc (1);", HEAD.replace("poisson(lam)", "poisson(⟨now)")),
            "the arrival rate must be a constant")


# -- the moment table --------------------------------------------------------------------------------


def test_a_context_variable_outside_its_moment_does_not_link():
    refused(prog("  set x = ⟨tokens;"), "`tokens` is not readable in a session statement")
    refused(prog("  run svc (1);", HEAD.replace("block 16;", "block 16; evict by (⟨tokens);")),
            "`tokens` is not readable in an eviction key")
    refused(prog("  run svc (1);", HEAD.replace("cost 0.01;", "cost 0.01 * ⟨present;")),
            "`present` is not readable in a step stage's cost")
    refused(prog("  run svc (1);", HEAD.replace("budget 512;", "budget 512 - ⟨tokens;")),
            "`tokens` is not readable in a step stage's budget")
    refused(prog("  run svc (1);", HEAD.replace("block 16;", "block 16; queue by (⟨age);")),
            "`age` is not readable in a pool's queue key")


def test_context_variables_at_their_moments_link():
    head = HEAD.replace("block 16;", "block 16; evict by (size, -age); queue by (waited); "
                        "preempt by (-admission, position) requeue tail;")
    head = head.replace("cost 0.01;", "cost 0.01 + tokens * attention; serve by (remaining, decoding);")
    head += "stage shared : ps(min(present, 16));\n"
    p = compile_src(prog("  run svc (now);", head))
    assert p.pools[0].preempt.requeue == "tail"
    assert p.stages[1].kind.serve.keys[0].name == "remaining"


# -- hidden ------------------------------------------------------------------------------------------


def test_hidden_is_readable_in_the_session_only():
    compile_src(prog("  hold kv (4) { run E decode (o - 1); } cache (4 + o);"))
    refused(prog("  hold kv (⟨o) { run E decode (o); }"), "`o` is hidden: a hold's header")
    refused(prog("  run svc (1);", HEAD.replace("block 16;", "block 16; queue by (⟨o);")),
            "`o` is hidden: a pool's queue key")


def test_the_scheduler_s_own_attributes_cannot_be_hidden():
    refused(prog("  run svc (1);", HEAD.replace("hidden o;", "hidden o, ⟨cached;")),
            "`cached` cannot be hidden")
    refused(prog("  run svc (1);", HEAD.replace("hidden o;", "hidden o, ⟨zz;")),
            "`hidden zz`: the program sets no attribute `zz`")


# -- at admission ------------------------------------------------------------------------------------


def test_a_binding_may_not_draw():
    refused(prog("  hold kv (h) at admission (h = ⟨~exp(1)) { run svc (1); }"), "the binding `h` draws")


def test_the_body_may_not_read_a_live_binding():
    refused(prog("  hold kv (h + 1) at admission (⟨h = cachedin(kv)) { run svc (h); } cache (1);"),
            "the body reads `h`, a binding that reads live state (`cachedin(…)`)")


def test_a_binding_has_a_name_of_its_own():
    refused(prog("  hold kv (lam) at admission (⟨lam = 1) { run svc (1); }"), "the binding `lam` is a `let`")
    refused(prog("  set k = 1;\n  hold kv (k) at admission (⟨k = 2) { run svc (k); }"),
            "the binding `k`, which the body reads, is an attribute the program sets")


def test_a_binding_read_outside_its_hold():
    refused(prog("  hold kv (k) at admission (k = serial + 1) { run svc (k); }\n  run svc (⟨k);"),
            "`k` is an `at admission` binding, readable only inside the holds that bind it")


# -- definitions -------------------------------------------------------------------------------------


def test_a_drawing_argument_to_a_parameter_read_twice():
    src = "def twice(x) = x + x;\n" + prog("  set y = twice(⟨~exp(1));")
    refused(src, "the argument for `x` of `twice` draws, and the body reads `x` 2 times")


def test_an_argument_that_reads_what_the_body_assigns():
    src = "def bump(v) { set n = 1; observe seen = v; }\n" + prog("  set n = 0;\n  bump(⟨n);")
    refused(src, "an argument of `bump` reads `n`, which its body assigns")


def test_a_statement_argument_may_not_read_live_state():
    src = "def wait(v) { run svc (1); observe w = v; }\n" + prog("  wait(⟨now);")
    refused(src, "an argument of the statements `wait` reads the clock")


def test_a_parameter_the_body_assigns():
    refused("def f(⟨x) { set x = 1; }\n" + prog("  f(1);"), "`x` is a parameter of `f` and its body assigns it")


def test_a_definition_before_its_use():
    refused(prog("  set y = ⟨g(1);") + "def g(x) = x;\n", "`g` is used before its definition")


# -- families ----------------------------------------------------------------------------------------


def test_families_pair_member_for_member():
    base = "pool q[{q}] {{ cap 4; admit via S; }}\npool kv[{k}] {{ cap 100; }}\n" \
           "stage S[{s}] : step {{ cost 1; memory kv; }};\n"
    ok = base.format(q=2, k=2, s=2) + "session { hold q[0] (1) { run S[0] prefill (1); } }"
    compile_src(ok)
    compile_src(base.format(q=3, k=1, s=1) + "session { hold q[0] (1) { run S prefill (1); } }")
    bad = base.format(q=2, k=2, s=3).replace("admit via S", "admit via ⟨S")
    refused(bad + "session { run S[0] prefill (1); }",
            "`q` is a family of 2 and `S` a stage family of 3: a declaration names a family of its own size "
            "(member for member) or one of a single member (which every member shares), not a family of 3; "
            "declare `q[3]`, one for each member of `S`")
    bad = base.format(q=3, k=2, s=3).replace("memory kv", "memory ⟨kv")
    refused(bad + "session { run S[0] prefill (1); }",
            "`S` is a family of 3 and `kv` a pool family of 2: ")
    # one queue admitted via a family of engines (which engine takes its head?), and one engine whose
    # memory is a family of pools, are refused in the same words (the rule is directional: docs/language.md)
    bad = base.format(q=1, k=2, s=2).replace("pool q[1]", "pool q").replace("admit via S", "admit via ⟨S")
    refused(bad + "session { run S[0] prefill (1); }",
            "`q` is one pool and `S` a stage family of 2: a declaration names a family of its own size "
            "(member for member) or one of a single member (which every member shares), not a family of 2; "
            "declare `q[2]`, one for each member of `S`")
    bad = base.format(q=1, k=2, s=1).replace("stage S[1]", "stage S").replace("memory kv", "memory ⟨kv")
    refused(bad + "session { run S prefill (1); }", "`S` is one stage and `kv` a pool family of 2: ")


def test_a_member_of_a_family_of_one():
    p = compile_src("stage D[1] : fifo;\nsession { run D[0] (1); }")
    assert p.session[0].stages[0].index is None


def test_a_hold_names_each_pool_once_not_twice():
    # `hold m (a), m (b)` would leave `release m`, `lease m` and the admission test (one amount against
    # the cap, or the sum?) ambiguous: refused at the second name, with the sum as the way to write it
    msg = "the hold names pool `kv` twice; a hold takes one amount of each pool (write one amount, the sum)"
    refused(prog("  hold kv (1), ⟨kv (2) { run svc (1); }"), msg)
    fam = "pool m[3] { cap 4; }\nstage svc : fifo;\n"
    refused(fam + "session { hold m[1] (1), ⟨m[1] (1) { run svc (1); } }", "pool `m[1]` twice")
    refused(fam + "session { hold m[2] (1), m[0] (1), ⟨m[2.0] (1) { run svc (1); } }", "pool `m[2]` twice")
    compile_src(fam + "session { hold m[0] (1), m[1] (1), m[2] (1) { run svc (1); } }")
    # members chosen by computed indices are compared when the hold executes (test_pools.py)
    compile_src(fam + "session { set i = 1; hold m[0] (1), m[i] (1) { run svc (1); } }")


# -- which stage -------------------------------------------------------------------------------------


def test_which_stage_none_qualifies():
    refused("stage svc : fifo;\nsession { ⟨prefill 1; }", "unknown stage in a serving form: `prefill`")


def test_which_stage_two_step_engines():
    head = "pool kv { cap 10; }\nstage A : step { cost 1; memory kv; };\nstage B : step { cost 1; memory kv; };\n"
    refused(head + "session { ⟨decode (1); }", "`decode`: several step engines qualify (A, B)")


def test_which_stage_tool_on_a_step_engine_is_rejected_as_run_would_be():
    head = "pool kv { cap 10; }\nstage E : step { cost 1; memory kv; };\n"
    refused(head + "session { ⟨tool on E (1); }", "`run E (…)`: `E` is a step stage")


def test_run_modes():
    refused(prog("  ⟨run E (1);"), "`E` is a step stage, and a run there says what it is")
    refused(prog("  ⟨run svc prefill (1);"), "`svc` is no step stage; a mode is for a step stage only")


# -- gauges ------------------------------------------------------------------------------------------


def test_gauge_rules():
    s = prog("  run svc (1);")
    compile_src(s + "gauge u = used(kv) / 1000;")
    refused(s + "gauge g = ⟨serial;", "a gauge may not read an attribute")
    refused(s + "gauge g = ⟨now;", "a gauge may not read `now`")
    refused(s + "gauge g = ⟨cachedin(kv);", "a gauge may not read `cachedin(…)`")
    refused(s + "gauge g = ⟨work(svc);", "a gauge may not read `work(…)`")
    refused(s + "gauge g = ⟨budget_left(E);", "a gauge may not read `budget_left(…)`")
    refused(s + "gauge g = ⟨~exp(1);", "a gauge may not draw")
    head = HEAD.replace("pool kv {", "pool kv[2] {").replace("stage E : step", "stage E[2] : step")
    refused(prog("  run svc (1);", head) + "gauge g = used(kv[⟨lam]);", "`kv[0.5]`: `kv` has members 0 … 1")
    refused(prog("  set k = 1;\n  run svc (1);", head) + "gauge g = used(kv[⟨k]);",
            "a gauge may not read an attribute")
    refused(prog("  observe u = 1;\n  run svc (1);") + "⟨gauge u = 1;", "gauge `u` has the name of an observe (at 7:3)")


def test_gauge_aggregate_is_written_out_with_numbers():
    head = HEAD.replace("pool kv {", "pool kv[2] {").replace("stage E : step", "stage E[2] : step")
    p = compile_src(prog("  run svc (1);", head) + "gauge spread = max j in 2 (used(kv[j])) - 1;")
    g = p.gauges[0].value
    assert g.lhs.fn == "max" and [a.target.index.value for a in g.lhs.args] == [0.0, 1.0]


# -- name collisions ---------------------------------------------------------------------------------


def test_name_collisions():
    refused(prog("  ⟨set lam = 1;"), "`lam` is a `let` constant and an attribute this sets")
    refused(prog("  ⟨set present = 1;"), "`present` is a context variable; an attribute needs another name")
    refused(prog("  ⟨set svc = 1;"), "`svc` is a stage (at 3:7); an attribute needs another name")
    refused("let kv = 1;\npool ⟨kv { cap 1; }\nsession { }", "the pool `kv` has the name of a `let`")
    refused("let ⟨now = 1;\nsession { }", "`let now`: `now` is a context variable")
    refused("pool a { cap 1; }\nstage ⟨a : fifo;\nsession { }", "`a` is declared twice")


# -- cached ------------------------------------------------------------------------------------------


def test_cached_only_inside_a_hold_with_cache():
    compile_src(prog("  hold kv (4) { set c = cached; run svc (c); } cache (4);"))
    refused(prog("  hold kv (4) { set c = ⟨cached; run svc (c); }"),
            "`cached` in the body of a hold without `cache`")
    refused(prog("  hold kv (4) reuse (⟨2) { run svc (1); }"), "`reuse` on a hold without `cache`")


# -- lints -------------------------------------------------------------------------------------------


def test_lint_a_live_set_read_by_a_later_hold_header():
    refused(prog("  set h = cachedin(kv);\n  hold kv (⟨h + 1) { run svc (1); } cache (1);"),
            "`h` is set from live pool or stage state (at 7:3) and read in a hold's header")
    # transitively
    refused(prog("  set h = used(kv);\n  set g = h * 2;\n  hold kv (⟨g) { run svc (1); }"),
            "`g` is set from live pool or stage state")


def test_lint_a_constant_guard_strictly_between_0_and_1():
    refused(prog("  branch (⟨0.3) { run svc (1); }"), "the guard is the constant 0.3, strictly between 0 and 1")
    refused(prog("  branch (⟨lam * 4) { run svc (1); }"), "the guard is the constant 2; a guard is a test")
    p = compile_src(prog("  branch (1) { run svc (1); }"))
    assert p.session[0].guard.value == 1.0


# -- runs over several stages and share --------------------------------------------------------------


def test_share_rules():
    head = "stage a : ps(10);\nstage b : ps(20);\nstage c : fifo;\n"
    refused(head + "session { ⟨run a, b (1); }", "a run over several stages needs the program's `share")
    refused(head + "⟨share maxmin;\nsession { run a (1); }", "`share` with no run over several stages")
    refused(head + "share maxmin;\nsession { run a, ⟨c (1); }", "every stage of such a run is ps(φ)")
    p = compile_src(head + "share bottleneck;\nsession { run a, b (1); }")
    assert p.share == "bottleneck" and len(p.session[0].stages) == 2


def test_run_block():
    p = compile_src(prog("  run svc (1);") + "run { horizon 100; warmup 10; seed 7; arrivals 50; }")
    assert (p.run.horizon, p.run.warmup, p.run.seed, p.run.arrivals) == (100.0, 10.0, 7, 50)
    # at the warmup (it was at `run`), as an IR file's is at '$.run.warmup'
    refused(prog("  run svc (1);") + "run { horizon 10; ⟨warmup 20; }", "warmup 20 is not below the horizon 10")
    refused(prog("  run svc (1);") + "run { ⟨warmup 20; seed 3;\n  horizon 10; }", "warmup 20 is not below the "
            "horizon 10")
    refused(prog("  run svc (1);").replace("poisson(lam)", "batch(2)") + "run { ⟨arrivals 5; }",
            "`arrivals` needs an open workload")


def test_no_nan_in_the_ir_and_infinite_numbers():
    p = compile_src(prog("  run svc (1 / 0);"))
    assert p.session[0].work.value == "inf"
    assert not any(isinstance(c.value, float) and math.isnan(c.value) for c in p.constants)


@pytest.mark.parametrize("index,message", [
    ("inf", "`s` has members 0 … 1"), ("-inf", "`s` has members 0 … 1"), ("2", "`s` has members 0 … 1"),
    ("0.5", "`s` has members 0 … 1"), ("0/0", "this expression evaluates to NaN"),
])
def test_a_constant_member_index_out_of_range_or_not_whole(index, message):
    refused(f"stage s[2] : fifo;\nsession {{ run s[⟨{index}] (1); }}\n", message)
