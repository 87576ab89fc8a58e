"""Invalid constant values are refused at link time, at their position (serq_ir.rules): what `serq run`
would refuse (or would run silently wrong), `serq check` refuses first."""

from __future__ import annotations

import json

import pytest
from sqhelpers import compile_src, refused

HEAD = """pool kv { cap 1000; }
stage svc : fifo;
workload { arrive poisson(1); }
"""


def prog(session: str, head: str = HEAD) -> str:
    return head + "session {\n" + session + "\n}\n"


@pytest.mark.parametrize("draw, why", [
    ("~uniform(5, 1)", "~uniform(5, 1): the low bound is above the high bound"),
    ("~uniform(0, inf)", "~uniform(0, inf): the bounds must be finite"),
    ("~erlang(0, 2)", "~erlang(0, 2): the number of phases must be a whole number of at least 1"),
    ("~erlang(2.5, 2)", "~erlang(2.5, 2): the number of phases must be a whole number of at least 1"),
    ("~erlang(2, -1)", "~erlang(2, -1): the mean is negative"),
    ("~exp(-1)", "~exp(-1): the mean is negative"),
    ("~h2(1, 0.5)", "~h2(1, 0.5): cv2 must be at least 1 and finite"),
    ("~bernoulli(1.5)", "~bernoulli(1.5): a probability is between 0 and 1"),
    ("~bernoulli(-0.1)", "~bernoulli(-0.1): a probability is between 0 and 1"),
])
def test_a_constant_draw_outside_its_domain(draw, why):
    refused(prog(f"  set x = ⟨{draw};\n  run svc (x);"), why)


def test_draws_at_the_edges_of_their_domains_link():
    for d in ("~uniform(1, 1)", "~erlang(1, 0)", "~exp(0)", "~exp(inf)", "~h2(0, 1)", "~bernoulli(0)",
              "~bernoulli(1)", "~det(-3)"):
        compile_src(prog(f"  set x = {d};\n  run svc (1);"))


def test_branch_with_a_probability_above_one():
    # told in the words written, not the kernel's draw ~bernoulli(2) it stands for
    refused(prog("  branch with (⟨2) { run svc (1); }"), "branch with (…): a probability is between 0 and 1, got 2")


def test_a_negative_ps_capacity():
    refused("stage p : ps(⟨-1);\n" + HEAD.split("\n", 2)[2] + "session { run p (1); }\n",
            "stage `p`: the capacity is negative (-1)")
    # 0 serves nothing, and is a capacity
    compile_src("stage p : ps(0);\n" + HEAD.split("\n", 2)[2] + "session { run p (1); }\n")


def test_a_negative_spill_work():
    # the write was taken as 0: the tier got the prefix at once, the link never ran
    head = "pool tier { cap 100; evict lru; }\npool kv { cap 8; evict lru; spill tier via link (⟨0 - 1) when (1); }\n" \
           "stage svc : fifo;\nstage link : fifo;\nworkload { arrive poisson(1); }\n"
    refused(prog("  hold kv (4) { run svc (1); } cache (4);", head), "pool `kv`: the spill's work is negative (-1)")
    compile_src(prog("  hold kv (4) { run svc (1); } cache (4);", head.replace("⟨0 - 1", "0")))


def test_a_negative_step_budget():
    head = "pool kv { cap 100; admit via E; }\nstage E : step { budget ⟨0 - 2; cost 1; memory kv; };\n" \
           "workload { arrive poisson(1); }\n"
    refused(prog("  hold kv (1) { run E prefill (2); }", head), "stage `E`: the budget is negative (-2)")
    # 0 schedules nothing, and is a budget
    compile_src(prog("  hold kv (1) { run E prefill (2); }", head.replace("⟨0 - 2", "0")))


def test_a_negative_step_cost():
    head = "pool kv { cap 100; admit via E; }\nstage E : step { budget 8; cost ⟨1 - 2; memory kv; };\n" \
           "workload { arrive poisson(1); }\n"
    refused(prog("  hold kv (1) { run E prefill (2); }", head), "stage `E`: the cost is negative (-1)")


@pytest.mark.parametrize("stmt, why", [
    ("hold kv (⟨-3) { run svc (1); }", "hold kv: the units are negative (-3)"),
    ("hold kv (1) reserve (⟨-1) { run svc (1); }", "hold kv: the reserve is negative (-1)"),
    ("hold kv (3) { grow kv (⟨-2); run svc (1); }", "grow kv: the amount is negative (-2)"),
    ("hold kv (3) { load kv (⟨-2); run svc (1); }", "load kv: the amount is negative (-2)"),
])
def test_a_negative_amount_of_memory(stmt, why):
    refused(prog("  " + stmt), why)


@pytest.mark.parametrize("stmt, why", [
    ("run svc (⟨-1);", "run svc: the work is negative (-1); a run's work is not negative"),
    ("run svc (⟨1 - 3);", "run svc: the work is negative (-2)"),
    ("tool ⟨-0.5;", "run tool: the work is negative (-0.5)"),
    ("hold kv (1) { transfer ⟨-1 from kv to kv2 (1); }", "run link: the work is negative (-1)"),
])
def test_a_negative_work(stmt, why):
    # a run's work is an amount too: a negative one was taken as 0
    head = HEAD + "pool kv2 { cap 10; }\nstage tool : fifo;\nstage link : fifo;\n"
    refused(prog("  " + stmt, head), why)


def test_a_zero_or_infinite_work_links():
    for w in ("0", "-0", "inf", "0 * -1"):
        compile_src(prog(f"  run svc ({w});"))


@pytest.mark.parametrize("n, why", [
    ("0", "the count of candidates is 0, not a whole number from 1 to 100000"),
    ("-1", "the count of candidates is -1"), ("2.5", "the count of candidates is 2.5"),
    ("inf", "the count of candidates is inf"), ("1e6", "the count of candidates is 1000000"),
])
def test_a_constant_count_of_choices_outside_its_range(n, why):
    refused(prog(f"  choose j in ⟨{n} by (1);\n  run svc (1);"), f"choose j: {why}")
    compile_src(prog("  choose j in 100000 by (1);\n  run svc (1);"))


def test_an_infinite_arrival_rate():
    refused("stage svc : fifo;\nworkload { arrive poisson(⟨inf); }\nsession { run svc (1); }\n",
            "the arrival rate must be a positive, finite number of arrivals per second, not inf")


@pytest.mark.parametrize("decl", ["stage svc[⟨n] : fifo;", "pool kv[⟨n] { cap 1; }"])
@pytest.mark.parametrize("n", ["1e9", "1e20", "100001"])
def test_a_family_too_large_to_build(decl, n):
    what = "stage" if decl.startswith("stage") else "pool"
    src = f"let n = {n};\n{decl}\nstage one : fifo;\nworkload {{ arrive poisson(1); }}\nsession {{ run one (1); }}\n"
    refused(src, f"makes more than 100000 {what}s: a program has at most 100000 {what}s")


def test_families_count_together():
    ok = "stage a[50000] : fifo;\nstage b[50000] : fifo;\nworkload { arrive poisson(1); }\n" \
         "session { run a[0] (1); }\n"
    compile_src(ok)
    refused(ok.replace("session", "⟨stage c : fifo;\nsession"), "the stage `c` makes more than 100000 stages")


def test_a_budget_reading_its_own_budget_left():
    head = "pool kv { cap 100; admit via E; }\n" \
           "stage E : step { budget 10 + ⟨budget_left(E); cost 1; memory kv; };\nworkload { arrive poisson(1); }\n"
    refused(prog("  hold kv (1) { run E prefill (3); }", head),
            "the budget of step stage `E` reads `budget_left(E)`, its own stage's")


def test_two_engines_reading_each_others_budget_left():
    head = ("pool kv { cap 100; admit via E; }\npool kw { cap 100; admit via F; }\n"
            "stage E : step { budget 10; chunk ⟨budget_left(F); cost 1; memory kv; };\n"
            "stage F : step { budget 10 + budget_left(E); cost 1; memory kw; };\n"
            "workload { arrive poisson(1); }\n")
    refused(prog("  hold kv (1) { run E prefill (3); }", head),
            "the chunk of step stage `E` reads `budget_left(F)`, and `F`'s budget or chunk reads "
            "`budget_left(E)` back")
    # one way is fine: F's budget reads E's, E's reads nothing
    compile_src(prog("  hold kv (1) { run E prefill (3); }",
                     head.replace("chunk ⟨budget_left(F); ", "")))


def test_a_seed_beyond_64_bits():
    refused(prog("  run svc (1);") + "run { seed ⟨2 ** 64; }\n".replace("2 ** 64", "18446744073709551616"),
            "the seed is at most 2**64 - 1")


# -- nesting ------------------------------------------------------------------------------------------


def test_a_sum_of_ten_thousand_terms_is_one_flat_node():
    # the stated limit of an aggregate is 10 000 terms; from about 1 000 it failed, "nests too deeply"
    from serq_ir import nodes as ir

    p = compile_src(prog("  set y = ~exp(1);\n  set x = sum j in 10000 (y * j);\n  run svc (x);"))
    e = p.session[1].value
    assert type(e) is ir.Call and e.fn == "sum" and len(e.args) == 10000


def test_a_constant_sum_folds_as_the_chain_of_additions_does():
    v = compile_src(prog("  set x = sum j in 3 (0.1 * (j + 1));\n  run svc (x);")).session[0].value.value
    assert v == (0.1 + 0.2) + 0.30000000000000004


def test_an_expression_nested_too_deeply():
    deep = "-(" * 65 + "y" + ")" * 65
    with pytest.raises(Exception) as e:
        compile_src(prog(f"  set y = ~exp(1);\n  set x = {deep};\n  run svc (x);"))
    first = str(e.value).splitlines()[0]
    assert first.startswith("<source>:6:") and "this expression nests more than 64 deep" in first
    compile_src(prog(f"  set y = ~exp(1);\n  set x = {deep[4:-2]};\n  run svc (x);"))


def test_blocks_nested_too_deeply():
    body = "loop {\n" * 32 + "⟨loop { run svc (1); }\n" + "}\n" * 32
    refused(prog(body), "loops, branches and holds nest more than 32 deep here")
    compile_src(prog("loop {\n" * 32 + "run svc (1);\n" + "}\n" * 32))


def test_a_program_nested_a_thousand_deep_is_refused_where_it_nests():
    # 2 000 unary minuses: a RecursionError in the sugar layers, "nests too deeply" with no position
    src = prog("  set y = ~exp(1);\n  set x = " + "-" * 2000 + "y;\n  run svc (x);")
    with pytest.raises(Exception) as e:
        compile_src(src)
    first = str(e.value).splitlines()[0]
    assert first.startswith("<source>:6:") and "the program nests more than 1000 deep here" in first


def test_definitions_expand_at_most_64_deep_inside_one_another():
    # each expansion copies the ones inside it: a chain of 1 000 defs took hours (cubic) before linking
    def chain(n):
        return "".join(f"def f{k}(a) = {'a' if k == 0 else f'f{k - 1}(a)'};\n" for k in range(n))
    ok = chain(64) + prog("  set x = f63(~exp(1));\n  run svc (x);")
    compile_src(ok)
    for n in (65, 1000):
        with pytest.raises(Exception) as e:
            compile_src(chain(n) + prog("  set x = f0(~exp(1));\n  run svc (x);"))
        first = str(e.value).splitlines()[0]
        assert first.startswith("<source>:65:14: error: definitions expand more than 64 deep inside one another "
                                "here (`f63` is 64 deep already)"), first


# -- what writing out definitions and aggregates may make: 200 000 nodes in all -------------------------------


def _compile_guarded(src: str):
    """Compile under the fuzz tests' guard (30 s, the address space capped): a blow-up fails the test."""
    import sys

    from sqhelpers import ROOT

    sys.path.insert(0, str(ROOT / "packages" / "serq-sim" / "tests"))
    from fuzzir import bounded

    with bounded("the compile"):
        return compile_src(src)


def _first_line(src: str) -> str:
    with pytest.raises(Exception) as e:
        _compile_guarded(src)
    assert type(e.value).__name__ == "CompileError", repr(e.value)
    return str(e.value).splitlines()[0]


LIMIT = ("and the program's definitions, aggregates, queue calls and requests of its server written out make more "
         "than 200000 nodes")


def test_definitions_that_double_are_refused_at_the_use_that_writes_out_too_much():
    # f_k(a) = f_{k-1}(a) + f_{k-1}(a): f40 is 2**41 - 1 nodes (it did not end). f_k's body is 2**(k+1) - 1
    # nodes, so defining f1 … f15 writes out 2 * (2**16 - 2 - 15) = 131 038; f16's first use of f15 adds
    # 65 535 (196 573), its second crosses 200 000. Before positions were one link per expansion, even
    # reaching that took minutes (each node copied the chain of uses it came through).
    defs = "def f0(a) = a;\n" + "".join(f"def f{k}(a) = f{k - 1}(a) + f{k - 1}(a);\n" for k in range(1, 41))
    first = _first_line(defs + prog("  set x = f40(~exp(1));\n  run svc (x);"))
    assert first.startswith("<source>:17:23: error: this use of `f15` writes out 65535 nodes, " + LIMIT), first
    _compile_guarded(defs.split("def f16")[0] + prog("  set y = ~exp(1);\n  set x = f14(y);\n  run svc (x);"))


def test_statement_definitions_that_double_are_refused_at_the_use_that_writes_out_too_much():
    # g0 is a set of a number (2 nodes); g_k is 2**(k+1): g1 … g15 write out 2**17 - 4 = 131 068, g16's
    # first use of g15 65 536 more (196 604), its second crosses
    defs = "def g0() { set z = 1; }\n" + "".join(f"def g{k}() {{ g{k - 1}(); g{k - 1}(); }}\n"
                                                 for k in range(1, 41))
    first = _first_line(defs + prog("  g40();\n  run svc (1);"))
    assert first.startswith("<source>:17:20: error: this use of `g15` writes out 65536 nodes, " + LIMIT), first


def test_aggregates_write_out_at_most_200_000_nodes_in_all():
    # each `sum j in 10000 (y * j + 1)` writes 10 000 terms of 5 nodes: four make 200 000, the fifth crosses
    sets = "".join(f"  set x{k} = sum j in 10000 (y * j + 1);\n" for k in range(5))
    first = _first_line(prog("  set y = ~exp(1);\n" + sets + "  run svc (x0);"))
    assert first.startswith("<source>:10:12: error: `sum j in 10000 (…)` writes out 50000 nodes, " + LIMIT), first
    _compile_guarded(prog("  set y = ~exp(1);\n" + sets.rsplit("  set", 1)[0] + "  run svc (x0);"))
    # one aggregate of 10 000 terms of 23 nodes (eleven y added, times j): 230 000
    big = "(" + " + ".join(["y"] * 11) + ")"
    first = _first_line(prog(f"  set y = ~exp(1);\n  set x = max j in 10000 ({big} * j);\n  run svc (x);"))
    assert first.startswith("<source>:6:11: error: `max j in 10000 (…)` writes out 230000 nodes, " + LIMIT), first


def test_an_aggregate_writes_out_at_most_ten_thousand_terms_with_those_inside_it():
    # max j in 1000 (max i in 1000 (…)) wrote out a million terms (41 s); 10 000 × 10 000 did not end
    compile_src(prog("  set y = ~exp(1);\n  set x = max j in 100 (max i in 100 (y * i + j));\n  run svc (x);"))
    with pytest.raises(Exception) as e:
        compile_src(prog("  set y = ~exp(1);\n  set x = max j in 101 (min i in 100 (y * i + j));\n  run svc (x);"))
    first = str(e.value).splitlines()[0]
    assert first.startswith("<source>:6:11: error: `max j in …` writes out 101 × 100 terms with the aggregates "
                            "inside it; an aggregate writes out at most 10000 terms"), first


def test_queue_calls_count_against_the_same_limit():
    # a queue call copies its entry's body: 1 000 sets of 6 nodes and the hold's 5 make 6 005 nodes a call,
    # so 33 calls write out 198 165 and the 34th (line 8 + 34) crosses 200 000. The queues had a limit of
    # their own, 100 000 statements, under which these 60 calls (360 300 nodes) compiled.
    body = " ".join(f"set t{k} = now + {k} * p;" for k in range(1000))
    calls = "\n".join("  P[0].prefill (1);" for _ in range(60))
    src = (f"queue P[2] : prefill {{\n  pool kv {{ cap 1000; }}\n  serve fifo;\n  nic ps(100);\n"
           f"  prefill (p) {{ {body} hold kv (p) {{ run (p); }} }}\n}}\nworkload {{ arrive poisson(1); }}\n"
           f"session {{\n{calls}\n  end;\n}}\n")
    first = _first_line(src)
    assert first.startswith("<source>:42:3: error: this call of `P.prefill` writes out 6005 nodes, " + LIMIT), first


@pytest.mark.parametrize("args", [["ast"], ["ast", "--desugar"], ["fmt"]])
def test_ast_and_fmt_refuse_what_compile_refuses_and_print_what_it_accepts(tmp_path, args):
    # `serq ast` on a chain of 1 200 additions (or 990, which compiles) was a RecursionError traceback:
    # parse did not walk the nesting as compile does, and printing the AST recursed past the default limit
    import subprocess
    import sys

    serq = [sys.executable, "-c", "from serq.cli import main; main()"]
    deep = tmp_path / "deep.sq"
    deep.write_text("let x = " + "1+" * 1200 + "1;\n")
    before = deep.read_bytes()
    r = subprocess.run([*serq, *args, str(deep)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{deep}:1:") and "the program nests more than 1000 deep here" in r.stderr
    assert r.stdout == "" and deep.read_bytes() == before
    ok = tmp_path / "ok.sq"
    ok.write_text("let x = " + "1+" * 990 + "1;\n")
    r = subprocess.run([*serq, *args, str(ok)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    if args[0] == "ast":
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(10_000)  # json.loads recurses a frame per level
        try:
            e, depth = json.loads(r.stdout)[0]["value"], 0
        finally:
            sys.setrecursionlimit(limit)
        while e.get("node") == "Binary":  # the chain of additions, left-nested: 990 of them, then the first 1
            e, depth = e["lhs"], depth + 1
        assert depth == 990 and e == {"node": "Num", "value": 1.0, "pos": "1:9"}
