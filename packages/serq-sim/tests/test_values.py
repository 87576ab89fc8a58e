"""Invalid computed values are run-time errors naming the statement, the time and the session, in both
tiers, where they used to be clamped or run silently (serq_ir.rules; their constant twins are link errors,
serq-frontend's tests/test_values.py)."""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim

# y is 2 + an exponential draw: > 2, so every expression below is invalid for every session
HEAD = "stage svc : fifo;\n"
SESSION = "session {\n  set y = 2 + ~exp(1);\n  STMT\n  end;\n}\nrun { horizon 50; }\n"


def run(tmp_path, text: str, tier: str):
    f = tmp_path / "prog.sq"
    f.write_text(text)
    prog = serq_frontend.compile(str(f))
    return serq_sim.run(prog, check_invariants=tier == "general"), str(f)


def refused(tmp_path, text: str, tier: str, line: int, col: int, message: str):
    with pytest.raises(serq_sim.SimError) as e:
        run(tmp_path, text, tier)
    first = str(e.value).splitlines()[0]
    f = tmp_path / "prog.sq"
    assert first.startswith(f"{f}:{line}:{col}: error: at t=0"), first
    assert message in first, first
    assert len(str(e.value).splitlines()) == 3  # the source line and a caret


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize("stmt, col, message", [
    ("set x = ~uniform(y, 1);", 11, "session 0: ~uniform("),
    ("set x = ~erlang(y - 2, 1);", 11, "the number of phases must be a whole number of at least 1"),
    ("set x = ~exp(-y);", 11, "~exp(-"),
    ("set x = ~h2(1, 1 - y);", 11, "cv2 must be at least 1 and finite"),
    ("branch with (y) { run svc (1); }", 16, "branch with (…): a probability is between 0 and 1, got "),
])
def test_a_computed_draw_outside_its_domain(tmp_path, tier, stmt, col, message):
    text = HEAD + "workload { arrive poisson(1); }\n" + SESSION.replace("STMT", stmt)
    refused(tmp_path, text, tier, 5, col, message)


def test_a_computed_draw_inside_its_domain_draws_as_a_constant_one(tmp_path):
    # the check adds no draw: ~uniform(0, max(4, y - 100)) draws what ~uniform(0, 4) draws
    text = HEAD + "workload { arrive poisson(1); }\n" + SESSION.replace(
        "STMT", "set x = ~uniform(0, max(4, y - 100)); observe x = x; run svc (1);")
    a, _ = run(tmp_path, text, "general")
    b, _ = run(tmp_path, text.replace("max(4, y - 100)", "4"), "general")
    assert list(a.observe("x").values) == list(b.observe("x").values)
    assert len(a.observe("x").values) > 10


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_computed_negative_ps_capacity(tmp_path, tier):
    # ps(2 - present): with 3 present the capacity is -1; jobs used to stay there forever
    text = "stage p : ps(2 - present);\nworkload { arrive batch(3); }\nsession { run p (1); end; }\n"
    f = tmp_path / "prog.sq"
    with pytest.raises(serq_sim.SimError) as e:
        run(tmp_path, text, tier)
    assert str(e.value).splitlines()[0] == (f"{f}:1:14: error: at t=0: stage p: the capacity is negative (-1) at "
                                            "present = 3; a ps stage's capacity is at least 0")  # (at the capacity)


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_zero_ps_capacity_is_allowed(tmp_path, tier):
    # ps(present > 1 ? 0 : 1): nothing is served while two are present (the run ends at its horizon)
    text = "stage p : ps(present > 1 ? 0 : 1);\nworkload { arrive batch(2); }\nsession { run p (1); end; }\n" \
           "run { horizon 10; }\n"
    r, _ = run(tmp_path, text, tier)
    assert r.result.ended == 0


@pytest.mark.parametrize("stmt, col, message", [
    ("hold kv (2 - y) { run svc (1); }", 12, "the units of kv are negative (-"),
    ("hold kv (1) reserve (1 - y) { run svc (1); }", 24, "the reserve of kv is negative (-"),
    ("hold kv (3) { grow kv (2 - y); run svc (1); }", 17, "grow kv: the amount is negative (-"),
    ("hold kv (3) { load kv (2 - y); run svc (1); }", 17, "load kv: the amount is negative (-"),
])
def test_a_computed_negative_amount_of_memory(tmp_path, stmt, col, message):
    # these were clamped to 0
    text = "pool kv { cap 100; }\n" + HEAD + "workload { arrive poisson(1); }\n" + SESSION.replace("STMT", stmt)
    refused(tmp_path, text, "general", 6, col, "session 0: " + message)


RUN_HEAD = ("pool kv { cap 100; admit via E; }\npool tier { cap 100; }\n" + HEAD
            + "stage p : ps(1);\nstage d : delay;\nstage link : fifo;\n"
            + "stage E : step { budget 8; cost 1; memory kv; };\n")


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize("stmt, col, message", [
    ("run svc (2 - y);", 3, "the run's work is negative (-"),
    ("run svc (y * 0 / 0);", 3, "the run's work is NaN"),
    ("run p (2 - y);", 3, "the run's work is negative (-"),
    ("run d (2 - y);", 3, "the run's work is negative (-"),
    ("run p, svc (2 - y);", 3, "the run's work is negative (-"),
    ("hold kv (4) { run E prefill (2 - y); }", 17, "the run's work is negative (-"),
    ("hold kv (4) { run E decode (2 - y); }", 17, "the run's work is negative (-"),
    ("hold kv (4) { decode (2 - y); }", 17, "the run's work is negative (-"),
    # (the transfer's KV lands in a hold of kv: one it stands in no hold of is refused at the link)
    ("hold tier (1), kv (1) { transfer (2 - y) from tier to kv (1); }", 27, "the run's work is negative (-"),
])
def test_a_computed_negative_or_nan_work(tmp_path, tier, stmt, col, message):
    # a negative work was taken as 0 (the run completed at once); NaN was already an error
    share = ""
    if "run p, svc" in stmt:  # a run over several stages is over ps stages, and says how they are shared
        stmt, share = "run p, d2 (2 - y);", "share maxmin;\n"
    text = RUN_HEAD + "stage d2 : ps(2);\nworkload { arrive poisson(1); }\n" + SESSION.replace("STMT", stmt) + share
    refused(tmp_path, text, tier, 12, col, "session 0: " + message)


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_a_negative_work_is_an_error_on_the_fast_tier_too(tmp_path, tier, monkeypatch):
    # the program is one the fast tier takes; SERQ_SIM_TIER=general forces the general engine
    from serq_sim import fast

    text = HEAD + "workload { arrive poisson(1); }\nsession {\n  set y = serial;\n  run svc (1 - y);\n}\n" \
        "run { horizon 50; }\n"
    f = tmp_path / "prog.sq"
    f.write_text(text)
    prog = serq_frontend.compile(str(f))
    assert fast.exclusion(prog) is None
    monkeypatch.setenv("SERQ_SIM_TIER", "" if tier == "fast" else "general")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"{f}:5:3: error: at t=") and lines[0].endswith(
        ", session 2: the run's work is negative (-1)"), lines[0]
    assert lines[1:] == ["    run svc (1 - y);", "    ^"]
    # zero work (session 1) still completes at once, and -0 is 0
    f.write_text(text.replace("1 - y", "-(y * 0)"))
    assert serq_sim.run(serq_frontend.compile(str(f)), horizon=5).result.ended > 2


@pytest.mark.parametrize("tier", ["fast", "general"])
@pytest.mark.parametrize("n, shown", [("2 - y", "-"), ("y * 0 / 0", "NaN"), ("y - y + 2.5", "2.5"),
                                      ("y - y + 1e9", "1000000000"), ("y / 0", "inf"), ("y - y", "0")])
def test_a_computed_count_of_choices_outside_its_range(tmp_path, monkeypatch, tier, n, shown):
    # NaN and counts below 1 chose 0, 2.5 chose among 2, and 1e9 or inf evaluated the keys 1e9 times
    from serq_sim import fast

    text = "stage svc[2] : fifo;\nworkload { arrive poisson(1); }\n" + SESSION.replace(
        "STMT", f"choose j in {n} by (queue(svc[min(j, 1)]));\n  run svc[min(j, 1)] (1);")
    f = tmp_path / "prog.sq"
    f.write_text(text)
    prog = serq_frontend.compile(str(f))
    assert fast.exclusion(prog) is None
    monkeypatch.setenv("SERQ_SIM_TIER", "" if tier == "fast" else "general")
    with pytest.raises(serq_sim.SimError) as e:
        serq_sim.run(prog)
    first = str(e.value).splitlines()[0]
    # (at the count's expression: test_known_defects_round44_choose_count)
    assert first.startswith(f"{f}:5:15: error: at t=0, session 0: choose j: the count of candidates is {shown}"), first
    assert first.endswith("not a whole number from 1 to 100000") or shown == "NaN", first


def test_a_computed_nan_lease_time(tmp_path):
    # it was taken as inf: the lease held the pool for ever (a NaN cache length or reuse bound was an error)
    text = "pool kv { cap 100; }\npool kw { cap 100; }\n" + HEAD + "workload { arrive poisson(1); }\n" + \
        SESSION.replace("STMT", "hold kv (4), kw (1) { run svc (1); } lease kw (y * 0 / 0);")
    refused_at = "session 0: the lease time is NaN"
    with pytest.raises(serq_sim.SimError) as e:
        run(tmp_path, text, "general")
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{tmp_path / 'prog.sq'}:7:50: error: at t=1, ") and first.endswith(refused_at), first  # at the lease's time
    # a negative one is refused as well (it was taken as 0, the lease ending at once): a lease's time is a
    # duration, an amount (test_conformance_round46_negative_clauses)
    with pytest.raises(serq_sim.SimError) as e:
        run(tmp_path, text.replace("y * 0 / 0", "-1 - y"), "general")
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{tmp_path / 'prog.sq'}:7:50: error: at t=1, session 0: the lease time is negative ("), first


def test_a_computed_negative_step_cost(tmp_path):
    # cost 1 - tokens: negative once an iteration serves 2 tokens; it was clamped to 0
    text = ("pool kv { cap 100; admit via E; }\nstage E : step { budget 8; cost 1 - tokens; memory kv; };\n"
            "workload { arrive batch(1); }\nsession { hold kv (1) { run E prefill (4); } end; }\n")
    f = tmp_path / "prog.sq"
    with pytest.raises(serq_sim.SimError) as e:
        run(tmp_path, text, "general")
    # at the cost, where a constant negative one is refused (2:33), not at the stage
    assert str(e.value).splitlines()[0] == (f"{f}:2:33: error: at t=0, session 0: stage E: the iteration's cost is negative (-3) "
                                            "(its batch: tokens 4, decoders 0, prefilled 4, residents 1, kv_decode 0, "
                                            "kv_prefill 1)")


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("budget, shown", [("0 - residents - 1", "negative (-1)"), ("residents * 0 / 0", "NaN")])
def test_a_computed_negative_or_nan_step_budget(tmp_path, monkeypatch, tier, budget, shown):
    # a negative budget used to serve nothing, with no word (a constant one does not link)
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    text = (f"pool kv {{ cap 100; admit via E; }}\nstage E : step {{ budget {budget}; cost 1; memory kv; }};\n"
            "workload { arrive batch(1); }\nsession { hold kv (1) { run E prefill (4); } end; }\n")
    f = tmp_path / "prog.sq"
    with pytest.raises(serq_sim.SimError) as e:
        run(tmp_path, text, "general")
    assert str(e.value).splitlines()[0] == f"{f}:2:25: error: at t=0: stage E: the budget is {shown}"  # (at the budget)


@pytest.mark.parametrize("work, shown", [("size - 5", "negative (-1)"), ("size * 0 / 0", "NaN")])
def test_a_computed_negative_or_nan_spill_work(tmp_path, work, shown):
    # the link's write of a spill was started with work 0 (it never ran) where the work was negative or NaN
    text = ("pool tier { cap 100; evict lru; }\nstage link : delay;\n"
            f"pool kv {{ cap 8; evict lru; spill tier via link ({work}) when (1); }}\n"
            "stage svc : delay;\nworkload { arrive poisson(1); }\n"
            "session { hold kv (4) { run svc (1); } cache (4); end; }\nrun { horizon 50; }\n")
    f = tmp_path / "prog.sq"
    with pytest.raises(serq_sim.SimError) as e:
        run(tmp_path, text, "general")
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"{f}:3:50: error: at t=") and first.endswith(f"pool kv: the spill's work is {shown}"), first
    # a positive work writes: the link runs
    r, _ = run(tmp_path, text.replace(work, "size"), "general")
    assert [st for st in r.result.stages if st.name == "link"][0].completions > 0


def test_a_plugin_run_of_negative_work_is_an_error(tmp_path):
    # the engine's run_job and run_flow (what a stage kind or a plugin calls) refuse what the compiled code
    # refuses: NaN and negative work; zero completes at once
    f = tmp_path / "prog.sq"
    f.write_text(HEAD + "workload { arrive batch(1); }\nsession { run svc (1); end; }\n")
    prog = serq_frontend.compile(str(f))
    from serq_sim.api import registries
    from serq_sim.engine import Simulation

    sim = Simulation(prog, registries())
    s = sim.spawn()
    st = sim.stages[0]
    for w, shown in ((-2.0, "negative (-2)"), (math.nan, "NaN")):
        for call in (lambda w=w: sim.run_job(s, st, w, "plain", None, 0), lambda w=w: sim.run_flow(s, [st], w, 0)):
            with pytest.raises(serq_sim.SimError) as e:
                call()
            assert f"the run's work is {shown}" in str(e.value).splitlines()[0]
    sim.run_job(s, st, 0.0, "plain", None, 0)
    assert s.job is None


@pytest.mark.parametrize(("seed", "exc"), [(-1, ValueError), (2**64, ValueError), (1.5, TypeError)])
def test_a_seed_outside_64_bits_is_refused(seed, exc):
    # -1 used to run as 2**64 - 1, 2**64 as 0. A bad seed is a bad argument as run's others are (ValueError
    # for an int out of range, TypeError for what is no int), not a SimError, the class of a run's errors
    prog = serq_frontend.compile(source="stage s : fifo;\nworkload { arrive batch(1); }\nsession { run s (1); }\n")
    with pytest.raises(exc, match=r"seed must be an integer from 0 to 2\*\*64 - 1"):
        serq_sim.run(prog, seed=seed)
    serq_sim.run(prog, seed=2**64 - 1)


def test_a_block_finer_than_the_amounts_precision(tmp_path):
    # --set bs=1e-308 on vllm.sq: x / block overflowed in the rounding to blocks (OverflowError)
    text = ("pool kv { cap 1e-300; block 1e-308; evict lru; }\nstage svc : fifo;\nworkload { arrive batch(2); }\n"
            "session { hold kv (1e-300) { run svc (1); } cache (1e-300); hold kv (1e-300) { run svc (1); } end; }\n")
    r, _ = run(tmp_path, text, "general")
    assert r.result.ended == 2
    assert math.isfinite(r.result.pools[0].used)


# -- what serq check accepts runs: Python's limits on generated code --------------------------------------

NEST = "stage svc : fifo;\nPOOL\nworkload { arrive poisson(1); }\nsession {\n  set y = ~exp(1);\nBODY\n  end;\n}\n" \
       "run { horizon 30; }\n"


@pytest.mark.parametrize("pool", [False, True])
@pytest.mark.parametrize("body", [
    "loop {\n" * 21 + "run svc (y); end;\n" + "}\n" * 21,                 # 21 nested loops
    "branch (y > 0) {\n" * 32 + "run svc (y);\n" + "}\n" * 32,            # indentation
    "set x = sum j in 200 (y * j);\nrun svc (x / 10000);",                 # 200 nested parentheses
    "set x = sum j in 10000 (y * j);\nrun svc (x / 1e7);",
    "set x = " + "-(" * 63 + "y" + ")" * 63 + ";\nrun svc (x * x);",
])
def test_deep_programs_run_in_both_tiers(tmp_path, pool, body):
    # each was a SyntaxError, IndentationError or RecursionError traceback out of `serq run`
    text = NEST.replace("POOL", "pool kv { cap 10; }" if pool else "").replace("BODY", body)
    fast, _ = run(tmp_path, text, "fast")
    general, _ = run(tmp_path, text, "general")
    assert fast.result.arrivals > 10 and fast.result == general.result


def test_ten_nested_holds_run(tmp_path):
    body = "hold kv (1) {\n" * 10 + "run svc (y);\n" + "}\n" * 10
    r, _ = run(tmp_path, NEST.replace("POOL", "pool kv { cap 100; }").replace("BODY", body), "general")
    assert r.result.ended > 10 and r.result.pools[0].admissions >= 10 * r.result.ended


def test_a_sum_is_the_chain_of_its_additions(tmp_path):
    # the flat sum folds left as the written-out chain (((y*0 + y*1) + y*2) + …) does, to the last bit
    terms = " + ".join(f"y * {k}.1" for k in range(40))
    a, _ = run(tmp_path, NEST.replace("POOL", "").replace("BODY", "observe x = sum j in 40 (y * (j + 0.1));"),
               "fast")
    b, _ = run(tmp_path, NEST.replace("POOL", "").replace("BODY", f"observe x = {terms};"), "fast")
    assert list(a.observe("x").values) == list(b.observe("x").values) and len(a.observe("x").values) > 10


def test_many_stage_families_run(tmp_path):
    # 20 000 stage lines: the fast tier's one function was a MemoryError in compile(); past 200 families the
    # general engine runs the program
    n = 300
    text = "".join(f"stage s{i} : fifo;\n" for i in range(n)) + "workload { arrive poisson(1); }\nsession {\n" + \
        "".join(f"  run s{i} (0.001);\n" for i in range(n)) + "}\nrun { horizon 20; }\n"
    r, _ = run(tmp_path, text, "fast")
    assert r.tier == "general" and r.result.ended > 5
