"""A third conformance audit of language.txt §2/§3 (and the in-scope additions of program-reference.txt)
against the simulator, on the parts test_conformance_audit.py (the step engine) and
test_conformance_audit2.py (pools, spills, finite runs) leave out: the workload (every `arrive` form, the
renewal gap and when it is read, `init` and `turn` blocks, `turn;`, `hidden`, the run block and how
arrivals, horizon and warm-up meet), stages (`fifo` and its count, `ps(φ)` and when its capacity is read,
stage families and `choose` ties), expressions (the logical operators, NaN and infinities, precedence, the
functions, `min`/`max` over NaN, the draws at and beyond the edges of their domains, aggregates,
observables read from a session) and what the report makes of observes and gauges (count, mean, cv², the
batch-means CI, the quantiles, the note on a test that never held, warm-up). Each program is small and
deterministic and its outcome is worked out by hand in the comment above the assertion; `run` runs it on
the tier serQ picks and on the general engine (SERQ_SIM_TIER=general) and requires the two reports to be
byte-identical, and each error case is checked on both tiers. The spec sentence a test checks is quoted in
its docstring; where the spec is silent the rule is docs/language.md's ("Rules chosen where the spec is
silent") and the docstring says so.

Two defects this audit found are fixed: `min`/`max` with a NaN argument depended on the argument order
(Python's builtins; the reference's `f64::min` passes over NaN), and a constant renewal gap of 0, a negative
one or inf was a run-time error at t=0 rather than refused as a constant Poisson rate is."""

from __future__ import annotations

import math

import pytest
from conform import close, pool, refused, run, run_error, stage


def values(samples):
    return [v for _, _, v in samples]


def times(samples):
    return [t for _, t, _ in samples]


def batch_ci(xs: list[float], batches: int = 20) -> float:
    """The 95 % batch-means half-width written out (docs/simulator.md, Statistics): 20 batches of
    floor(n / 20) samples in order (the last n mod 20 left out), t = 2.093 over the batch means' standard
    error."""
    size = len(xs) // batches
    means = [sum(xs[k * size:(k + 1) * size]) / size for k in range(batches)]
    m = sum(means) / batches
    var = sum((b - m) ** 2 for b in means) / (batches - 1)
    return 2.093 * math.sqrt(var / batches)


# --- the workload: arrivals -----------------------------------------------------------------------------


def test_the_first_renewal_arrival_comes_after_one_gap_read_at_each_arrival(monkeypatch):
    """§2: "The first renewal arrival occurs after one gap." The gap is an expression read at the arrival it
    follows (`now` is "everywhere"); program-reference `run`: "Without arrivals the run ends at horizon".
    renewal(now + 1): read at 0, the first arrival is at 1; read there, 2 more: 3; then 4 more: 7; then 8:
    15. The reference's event loop handles every event up to the horizon inclusive (docs/language.md): with
    horizon 15 the arrival at 15 is one, and its session runs its first statements then."""
    r, o = run("""
stage d : delay;
workload { arrive renewal(now + 1); }
session { observe t = now; run d (1); }
run { horizon 15; }
""", monkeypatch)
    assert times(o["t"]) == [1.0, 3.0, 7.0, 15.0]
    assert (r.result.arrivals, r.result.ended, r.result.end) == (4, 3, 15.0)


def test_a_renewal_gap_reads_the_state_before_its_arrivals_session_runs(monkeypatch):
    """§2 `arrive renewal(expr)` "supplies interarrival times" (docs/language.md: the gap is read at the
    arrival it follows, before that arrival's session runs; it has no session, so it reads no attribute).
    renewal(1 + holders(m)), every session holding m for 10: read at 0 (no holder): 1; at 1, before the new
    session holds: 1 -> 2; at 2 one holder: 2 -> 4; at 4 two: 3 -> 7; at 7 three: 4 -> 11 > horizon 10."""
    _, o = run("""
pool m { cap 100; }
stage d : delay;
workload { arrive renewal(1 + holders(m)); }
session { observe t = now; hold m (1) { run d (10); } }
run { horizon 10; }
""", monkeypatch)
    assert times(o["t"]) == [1.0, 2.0, 4.0, 7.0]


@pytest.mark.parametrize("gap, want", [
    # ~det(x) is x; ~uniform(a, a) is a (docs/language.md: lo <= hi); ~erlang(k, 0) is 0, so 2 + it is 2
    ("~det(2)", [2.0, 4.0]),
    ("~uniform(1.5, 1.5)", [1.5, 3.0, 4.5]),
    ("2 + ~erlang(3, 0)", [2.0, 4.0]),
])
def test_a_drawn_renewal_gap(monkeypatch, gap, want):
    """§2: "arrive renewal(~h2(mean, cv2)); supplies interarrival times; renewal(2) uses a constant
    two-second gap." A drawn gap is drawn at every arrival; degenerate laws give their one value."""
    _, o = run(f"""
stage d : delay;
workload {{ arrive renewal({gap}); }}
session {{ observe t = now; }}
run {{ horizon 5; }}
""", monkeypatch)
    assert times(o["t"]) == want


@pytest.mark.parametrize("gap, msg", [
    ("0", "arrive renewal: the gap is 0; gaps must be positive and finite"),
    ("-1", "arrive renewal: the gap is -1; gaps must be positive and finite"),
    ("inf", "arrive renewal: the gap is inf; gaps must be positive and finite"),
    ("2 - 2", "arrive renewal: the gap is 0; gaps must be positive and finite"),
])
def test_a_constant_gap_that_is_not_positive_and_finite_does_not_link(gap, msg):
    """§2: "Gaps must be positive and finite." A constant gap is known at link time and refused there, as
    a constant Poisson rate is (this was a run-time error at t=0 before the audit)."""
    src = f"stage d : delay;\nworkload {{ arrive renewal({gap}); }}\nsession {{ run d (1); }}\nrun {{ horizon 5; }}\n"
    assert refused(src) == msg


@pytest.mark.parametrize("gap, at", [
    # ~exp(0) draws 0 at once; used(m) is 0 when the first gap is read at 0
    ("~exp(0)", "<source>:3:27: error: at t=0"),
    ("used(m)", "<source>:3:27: error: at t=0"),
    # 2 - holders(m): read at 0, 2 (first arrival at 2); at 2, before its session holds, 2 again (4); at 4
    # one holder: 1 (5); at 5 two: 0
    ("2 - holders(m)", "<source>:3:27: error: at t=5"),
])
def test_a_drawn_or_computed_gap_is_checked_when_it_is_drawn(monkeypatch, gap, at):
    """§2: "Gaps must be positive and finite." A gap computed at run time is checked each time it is read:
    a run-time error at the gap, naming the time, the same on both tiers."""
    src = f"""pool m {{ cap 100; }}
stage d : delay;
workload {{ arrive renewal({gap}); }}
session {{ hold m (1) {{ run d (100); }} }}
run {{ horizon 50; }}
"""
    first = run_error(src, monkeypatch)
    assert first.startswith(at + ": arrive renewal: the gap is 0; gaps must be positive and finite"), first


def test_poisson_arrives_at_zero_and_arrivals_1_is_that_arrival(monkeypatch):
    """§2: "poisson(rate) starts with an arrival at time zero"; "run { arrivals N; } requires exactly N
    open-workload arrivals and drains their sessions"; "Reports keep horizon as the configured deadline and
    expose the actual termination time as end". poisson(0.001), arrivals 1: the one arrival at 0, its
    session runs 2: end 2, live 1 over [0, 2]."""
    r, o = run("""
stage d : delay;
workload { arrive poisson(0.001); }
session { set t0 = now; observe t = t0; run d (2); observe e = now - t0; }
run { horizon 100; arrivals 1; }
""", monkeypatch)
    assert o["t"] == [(0, 0.0, 0.0)] and o["e"] == [(0, 2.0, 2.0)]
    res = r.result
    assert (res.arrivals, res.ended, res.end, res.horizon, res.mean_live) == (1, 1, 2.0, 100.0, 1.0)


@pytest.mark.parametrize("arrive, advice", [
    ("batch(2)", "; `arrive batch(2)` starts its 2 sessions at time 0 and no more, so no count of arrivals ends it: "
                 "remove the count and bound the run by its horizon (`--horizon inf`, `run { horizon inf; }`, runs "
                 "the 2 to the end), or keep the count and make the workload open (`arrive poisson(RATE);` with a "
                 "horizon)"),
    ("closed(2)", "; `arrive closed(2)` starts a session again as each one ends, so no count of arrivals ends it: "
                  "remove the count and bound the run by its horizon (`--horizon T`, `run { horizon T; }`), or run "
                  "M sessions, 2 at a time, as `arrive batch(M);` behind a pool of 2 slots (`pool slots { cap 2; }`, "
                  "the session inside `hold slots (1) { … }`; `--horizon inf` runs them to the end), or keep the "
                  "count and make the workload open (`arrive poisson(RATE);` with a horizon)"),
    ("none", "")])
def test_arrivals_needs_an_open_workload(arrive, advice):
    """program-reference `run`: arrivals "Only with an open workload (poisson or renewal)"; what works instead
    said after it."""
    src = (f"stage d : delay;\nworkload {{ arrive {arrive}; }}\nsession {{ run d (1); }}\n"
           "run { horizon 5; arrivals 2; }\n")
    assert refused(src) == "`arrivals` needs an open workload (`arrive poisson` or `arrive renewal`)" + advice


@pytest.mark.parametrize("block, msg", [
    # program-reference `run`: warmup "Must be below horizon."
    ("horizon 5; warmup 5;", "warmup 5 is not below the horizon 5"),
    ("horizon 5; warmup 6;", "warmup 6 is not below the horizon 5"),
    ("horizon 0;", None),
    ("horizon 5; arrivals 0;", None),
    ("horizon 5; arrivals 2.5;", None),
    ("horizon 5; horizon 6;", None),
])
def test_a_run_block_the_spec_refuses(block, msg):
    """program-reference `run`: horizon the end of the simulation, warmup "Must be below horizon", arrivals
    "a positive integer"; a field is given once."""
    src = f"stage d : delay;\nworkload {{ arrive renewal(1); }}\nsession {{ run d (1); }}\nrun {{ {block} }}\n"
    got = refused(src)
    assert msg is None or got == msg, got


def test_the_run_blocks_defaults_and_any_order(monkeypatch):
    """program-reference `run`: warmup default 0, seed default 1; docs/language.md: "any subset, any order"."""
    r, _ = run("""
stage d : delay;
workload { arrive batch(2); }
session { run d (1); }
run { warmup 0.5; horizon 3; }
""", monkeypatch)
    res = r.result
    assert (res.seed, res.warmup, res.horizon, res.end, res.ended) == (1, 0.5, 3.0, 3.0, 2)
    r, _ = run("stage d : delay;\nworkload { arrive batch(2); }\nsession { run d (1); }\nrun { horizon 3; }\n",
               monkeypatch)
    assert (r.result.seed, r.result.warmup) == (1, 0.0)


def test_arrive_none_starts_no_session_and_says_so(monkeypatch):
    """§2 `arrive none;` (docs/language.md: "A workload that starts no session is a warning")."""
    r, _ = run("stage d : delay;\nworkload { arrive none; }\nsession { run d (2); }\nrun { horizon 10; }\n",
               monkeypatch)
    assert (r.result.arrivals, r.result.ended, r.result.mean_live) == (0, 0, 0.0)
    assert any(n.startswith("warning: nothing starts a session") for n in r.result.notes)


# --- the workload: init, turn, warm-up ---------------------------------------------------------------------


def test_a_batch_runs_every_init_at_arrival_before_any_session_block(monkeypatch):
    """§3 Workload: "init runs at arrival"; §2 `arrive batch(n)`; §3: commands "run whenever a session is
    ready, in the order sessions became ready"; "After every event the interpreter settles: it runs every
    ready session, then retries growers and admissions". batch(3): the three sessions arrive at 0, serials
    0, 1, 2, each init running at its arrival (holders(m) is 0 for all three: no session block has run);
    then the session blocks in serial order, each joining m's queue; then the settle admits all three, and
    each body reads holders 3."""
    _, o = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(3); init { observe h0 = holders(m); set k = 10 * serial; } }
session { hold m (1) { observe h = holders(m); observe kk = k; run d (1); } }
run { horizon 5; }
""", monkeypatch)
    assert o["h0"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.0, 0.0)]
    assert o["h"] == [(0, 0.0, 3.0), (1, 0.0, 3.0), (2, 0.0, 3.0)]
    assert values(o["kk"]) == [0.0, 10.0, 20.0]


def test_init_turn_blocks_and_turn_no_after_a_warm_up(monkeypatch):
    """§3 Workload: "init runs at arrival, turn at every turn statement"; §2 `turn;` "next turn's
    attributes (workload `turn`, trace)"; §3 Statistics: "observe x = e records a sample after warm-up";
    docs/simulator.md: a sample at the warm-up instant counts, `ended` and `turns` count after it;
    docs/language.md: init and turn accept `branch` over set and observe. renewal(1), warm-up 2, horizon 3:
    arrivals at 1, 2, 3. s0 (at 1) is all before the warm-up. s1 at 2: init sets k = 100 and observes it,
    its branch sets k = -1; turn 1 (turn_no 1): k = 0; at 2.5 turns 2 and 3: k = 2, then 5; it ends at 2.5.
    s2 at 3 (the horizon instant): init 200, turn 1: 201. Turns after the warm-up: 3 + 1."""
    r, o = run("""
stage d : delay;
workload {
  arrive renewal(1);
  init { set k = serial * 100; observe ik = k; branch (serial == 1) { set k = -1; } }
  turn { set k = k + turn_no; observe tk = k; }
}
session { observe first = turn_no; turn; observe a = k; run d (0.5); turn; turn; observe b = k; observe tn = turn_no; }
run { horizon 3; warmup 2; }
""", monkeypatch)
    assert o["ik"] == [(1, 2.0, 100.0), (2, 3.0, 200.0)]
    assert o["tk"] == [(1, 2.0, 0.0), (1, 2.5, 2.0), (1, 2.5, 5.0), (2, 3.0, 201.0)]
    assert o["first"] == [(1, 2.0, 0.0), (2, 3.0, 0.0)]
    assert o["a"] == [(1, 2.0, 0.0), (2, 3.0, 201.0)]
    assert (o["b"], o["tn"]) == ([(1, 2.5, 5.0)], [(1, 2.5, 3.0)])
    res = r.result
    assert (res.arrivals, res.ended, res.turns) == (3, 1, 4)
    # the samples carry the turn they were taken in
    assert r.observe("tk").turns.tolist() == [1, 2, 3, 1]


def test_turns_and_think_times_in_a_finite_run(monkeypatch):
    """§2 `turn;`, a think time as a run on a delay stage (§3 Stages: "delay: every job on its own at rate
    1"), program-reference `run` arrivals. renewal(1), arrivals 2: s0 turn 1 at 1, service [1, 2], think
    ~det(2) [2, 4], turn 2 at 4, service [4, 5], ends; s1 the same from 2, ends at 6: end 6. Warm-up 3:
    the turns at 4 and 5 count, and both ends."""
    r, o = run("""
stage svc : fifo;
stage think : delay;
workload { arrive renewal(1); }
session { turn; observe tn = turn_no; run svc (1); run think (~det(2)); turn; observe tn = turn_no; run svc (1); }
run { horizon 100; arrivals 2; warmup 3; }
""", monkeypatch)
    assert o["tn"] == [(0, 4.0, 2.0), (1, 5.0, 2.0)]
    res = r.result
    assert (res.end, res.arrivals, res.ended, res.turns) == (6.0, 2, 2, 2)
    # over [3, 6]: s0 live to 5, s1 to 6: (2 + 3) / 3; svc completions at or after 3 (docs/language.md):
    # s1's first at 3 (the warm-up instant), s0's second at 5, s1's at 6
    assert close(res.mean_live, 5 / 3) and stage(r, "svc").completions == 3


# --- the workload: hidden --------------------------------------------------------------------------------

HIDDEN = """pool t {{ cap 10; }}
pool m {{ cap 10; {popt} }}
stage d : delay;
stage E : step {{ budget 4; cost 1; {sopt} }}
workload {{ arrive batch(1); hidden o; turn {{ set o = 2; }} }}
session {{ turn; {stmt} }}
run {{ horizon 5; }}
"""


@pytest.mark.parametrize("popt, sopt, stmt, what", [
    ("", "", "hold m (o) { run d (1); }", "a hold's header (units, reserve, reuse: read at admission)"),
    ("", "", "hold m (1) reserve (o) { run d (1); }", "a hold's header (units, reserve, reuse: read at admission)"),
    ("", "", "hold m (1) reuse (o) { run d (1); } cache (1);",
     "a hold's header (units, reserve, reuse: read at admission)"),
    ("", "", "hold m (x) at admission (x = o) { run d (1); }",
     "a hold's header (units, reserve, reuse: read at admission)"),
    ("queue by (o);", "", "hold m (1) { run d (1); }", "a pool's queue key"),
    ("evict by (o);", "", "hold m (1) { run d (1); }", "an eviction key or a spill clause"),
    ("spill t via d (o) when (1);", "", "hold m (1) { run d (1); }", "an eviction key or a spill clause"),
    ("spill t via d (1) when (o);", "", "hold m (1) { run d (1); }", "an eviction key or a spill clause"),
    ("preempt by (o);", "", "hold m (1) { run d (1); }", "a preemption key"),
    ("", "serve by (o);", "run E decode (1);", "a step stage's serve key"),
])
def test_a_hidden_attribute_is_a_link_error_where_the_scheduler_reads(popt, sopt, stmt, what):
    """§3 hidden: "a hidden attribute may be read in a session statement (decode (o - 1)), a run or a hold's
    cache, and is a link error in a hold's units, reserve or reuse (read at admission), a queue or eviction
    key, a spill clause, a ps stage's capacity, or a step stage's budget, cost, chunk or serve keys"
    (pool-reference: preemption keys read "its visible attributes"; a ps capacity, budget, cost and chunk
    read no attribute at all)."""
    assert refused(HIDDEN.format(popt=popt, sopt=sopt, stmt=stmt)) == (
        f"`o` is hidden: {what} is the scheduler's, and may not read it")


def test_a_hidden_attribute_is_read_in_the_sessions_own_statements(monkeypatch):
    """§3 hidden: a hidden attribute "may be read in a session statement, a run or a hold's cache"
    (docs/language.md's Moments: a hold's lease time too). o = 2: the run takes 2 (done at 2); the hold of 1
    for 1 caches min(o, 1) = 1 ... its allocation, 1; the lease of o = 2 s keeps the unit until 5; the
    branch, choose and observe read o."""
    _, o = run(HIDDEN.format(popt="", sopt="", stmt="""
  run d (o); observe t1 = now;
  hold m (1) { run d (1); } cache (o) lease m (o);
  observe held = used(m); observe c = cachedin(m);
  run d (o + 0.5); observe held = used(m); observe c = cachedin(m);
  branch (o > 1) { observe big = o; }
  choose j in 3 by (j == o ? 0 : 1); observe jj = j;
""").replace("horizon 5", "horizon 10"), monkeypatch)
    assert o["t1"] == [(0, 2.0, 2.0)]
    # at 3 the lease holds the unit (nothing cached yet); at 5.5 the lease ended at 5 and cached its 1
    assert (values(o["held"]), values(o["c"])) == ([1.0, 0.0], [0.0, 1.0])
    assert (values(o["big"]), values(o["jj"])) == ([2.0], [2.0])


# --- stages --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, done", [
    # §2 kind := fifo [ ( c ) ]: `fifo` is one server; jobs of 1 at 0: 1, 2, 3
    ("fifo", [1.0, 2.0, 3.0]),
    # a count that is a constant expression over lets (c + 1 = 2 servers): 1, 1, 2
    ("fifo(c + 1)", [1.0, 1.0, 2.0]),
    # fifo(inf): every job served at once
    ("fifo(inf)", [1.0, 1.0, 1.0]),
    # ps(c) = ps(1): three jobs of 1 share it: each at 1/3, all done at 3 (in start order, §3 Ties)
    ("ps(c)", [3.0, 3.0, 3.0]),
    # delay: every job at rate 1
    ("delay", [1.0, 1.0, 1.0]),
])
def test_stage_kinds_and_their_counts(monkeypatch, kind, done):
    """§3 Stages: "fifo(c): c servers, jobs in arrival order at rate 1. ps(φ): every job at once, each at
    φ(present)/present. delay: every job on its own at rate 1." §2: every constant "is a number or inf"."""
    _, o = run(f"""
let c = 1;
stage f : {kind};
workload {{ arrive batch(3); }}
session {{ run f (1); observe t = now; }}
run {{ horizon 10; }}
""", monkeypatch)
    assert o["t"] == [(s, t, t) for s, t in zip(range(3), done)]


@pytest.mark.parametrize("kind, msg", [
    ("fifo(0)", "stage `f`: a fifo has a whole number of servers, at least 1, not 0"),
    ("fifo(2.5)", "stage `f`: a fifo has a whole number of servers, at least 1, not 2.5"),
    ("ps(-1)", "stage `f`: the capacity is negative (-1); a ps stage's capacity is at least 0"),
    ("ps(0 / 0)", "this expression evaluates to NaN"),
])
def test_stage_counts_and_capacities_the_linker_refuses(kind, msg):
    """§2: "Every constant (… a fifo count …) is a number or inf; one that evaluates to NaN … does not
    link"; docs/language.md "Amounts are not negative": a ps capacity is at least 0."""
    assert refused(f"stage f : {kind};\nworkload {{ arrive batch(1); }}\nsession {{ run f (1); }}\n") == msg


def test_a_ps_stage_alone_runs_its_job_at_the_whole_capacity(monkeypatch):
    """§3 Stages: "ps(φ): every job at once, each at φ(present)/present": one job alone on ps(2) runs at 2
    (a ps stage is no server of rate 1): work 2 done at 1; two jobs of 2 on ps(2) at 1 each: done at 2."""
    _, o = run("""
stage p : ps(2);
stage q : ps(2);
workload { arrive batch(3); }
session { branch (serial == 0) { run p (2); } else { run q (2); } observe t = now; }
run { horizon 10; }
""", monkeypatch)
    assert o["t"] == [(0, 1.0, 1.0), (1, 2.0, 2.0), (2, 2.0, 2.0)]


def test_a_ps_capacity_is_read_when_the_number_present_changes(monkeypatch):
    """§2 `ps ( expr )`: "throughput phi(present) shared equally; expr reads present". The capacity is read
    when the jobs present change (a job starts or leaves), as the reference's ps stage reschedules, and held
    until the next change (docs/language.md): one that reads other state (here used(m)) keeps the value it
    read then. φ = 1 + used(m). s0 (work 3) starts at 0: φ = 1. s1 holds m (used 1) over [1, 3): no job of p
    starts or leaves at 1, so s0 stays at 1 (2 left at 1.5, where continuous reading would leave 1.5). s2
    (work 0.5) joins at 1.5: read again, φ = 2, 1 each: s2 done at 2, s0 1.5 - 0.5 = 1 left; s2 leaves: φ = 2
    for s0 alone: done at 2.5 (continuous reading: 2.25)."""
    _, o = run("""
pool m { cap 10; }
stage p : ps(1 + used(m));
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run p (3); observe done = now; }
  branch (serial == 1) { run d (1); hold m (1) { run d (2); } }
  branch (serial == 2) { run d (1.5); run p (0.5); observe done = now; }
}
run { horizon 10; }
""", monkeypatch)
    assert o["done"] == [(2, 2.0, 2.0), (0, 2.5, 2.5)]


def test_choose_keys_in_order_then_the_least_index(monkeypatch):
    """§2 `choose NAME in expr by ( expr , ... )`: "NAME := argmin over 0..n, keys in order"; §3 Ties:
    "choose: the keys, in order, then the smallest index". docs/language.md: a NaN key does not order (a
    later candidate replaces the best so far only when its keys compare less at the first key where they
    differ, and no comparison with NaN is true: where a NaN decides, the candidate met first stays)."""
    _, o = run("""
stage d : delay;
workload { arrive batch(1); }
session {
  set z = 0; set n = z / z;
  choose c in 4 by (c < 2 ? 1 : 0, -c); observe cc = c;
  choose e in 4 by (1, 1); observe ce = e;
  choose g in 1 by (7); observe cg = g;
  choose h in 3 by (-h, 0 / z); observe ch = h;
  choose a in 3 by (a == 1 ? n : 5); observe ca = a;
  choose b in 3 by (b == 0 ? n : 5 - b); observe cb = b;
  choose q in 3 by (1, q == 0 ? n : 0); observe cq = q;
  choose r in 3 by (r == 2 ? 0 : 1, r == 0 ? n : 0); observe cr = r;
}
run { horizon 5; }
""", monkeypatch)
    # (1, 0), (1, -1), (0, -2), (0, -3): the second key decides among the first's ties: 3
    assert [values(o[k]) for k in ("cc", "ce", "cg", "ch")] == [[3.0], [0.0], [0.0], [2.0]]
    # NaN at index 1 loses to 5 at index 0; NaN at index 0 keeps its place against 4 and 3
    assert (values(o["ca"]), values(o["cb"])) == ([0.0], [0.0])
    # (1, NaN) stays against (1, 0), whose first differing key is the NaN's; (0, 0) is less at the first key
    assert (values(o["cq"]), values(o["cr"])) == ([0.0], [2.0])


def test_a_stage_family_sized_by_a_let_and_choose_by_two_keys(monkeypatch):
    """§2 `stage NAME [ '[' N ']' ] : kind` (docs/language.md: "Family sizes … are constant expressions over
    lets"), members s[0] … s[N-1] each a stage of its own, reported as `s[i]`; choose's keys in order. Keys
    (queue(s[j]), -j): at 0 both empty, -1 < 0: s[1]; at 0.25 s[0] (0 against 1); at 0.5 both 1: s[1]; at
    0.75 s[0] (1 against 2). s[1] serves s0 [0, 1], s2 [1, 2]; s[0] s1 [0.25, 1.25], s3 [1.25, 2.25]."""
    r, o = run("""
let N = 2;
stage s[N] : fifo;
stage d : delay;
workload { arrive batch(4); }
session { run d (serial * 0.25); choose j in N by (queue(s[j]), -j); observe jj = j; run s[j] (1); observe t = now; }
run { horizon 10; }
""", monkeypatch)
    assert values(o["jj"]) == [1.0, 0.0, 1.0, 0.0]
    assert times(o["t"]) == [1.0, 1.25, 2.0, 2.25]
    for i in (0, 1):
        s = stage(r, "s", i)
        assert (s.completions, s.wait, s.service, s.utilisation) == (2, 0.25, 1.0, 0.2)


# --- expressions -----------------------------------------------------------------------------------------

EXPR = """let N = 3;
pool m[2] {{ cap 10; }}
pool u {{ }}
stage d : delay;
workload {{ arrive batch({n}); }}
session {{
  set z = 0; set n = z / z; set i = 1 / z;
  {body}
}}
run {{ horizon 5; }}
"""


def expr_values(body: str, monkeypatch, n: int = 1) -> dict[str, list[float]]:
    _, o = run(EXPR.format(n=n, body=body), monkeypatch)
    return {k: values(v) for k, v in o.items()}


def test_logical_operators_give_0_or_1_and_nan_is_true(monkeypatch):
    """§2: "comparisons (0/1), &&, ||, !, c ? a : b (a non-zero operand is true; only a branch guard is held to
    0 or 1)"; docs/language.md "NaN is true" (NaN is not zero), while a comparison with NaN is false (IEEE
    754: NaN == NaN is 0, NaN != NaN 1)."""
    got = expr_values("""
  observe a = 2 && 3; observe b = 0 || 5; observe c = !5; observe d2 = !0; observe e = 0 && 1; observe f = 0 || 0;
  observe g = n && 1; observe h = !n; observe k = n ? 1 : 2; observe l = n == n; observe p = n != n;
  observe q = n < 1; observe r = i > 1e308; observe s = -3 ? 1 : 2; observe t = 0.5 || 0;""", monkeypatch)
    assert got == {"a": [1.0], "b": [1.0], "c": [0.0], "d2": [1.0], "e": [0.0], "f": [0.0], "g": [1.0],
                   "h": [0.0], "k": [1.0], "l": [0.0], "p": [1.0], "q": [0.0], "r": [1.0], "s": [1.0], "t": [1.0]}


def test_and_or_and_the_conditional_evaluate_only_what_decides(monkeypatch):
    """§2 &&, ||, c ? a : b. The spec does not say whether the right operand is evaluated when the left
    decides; the reference short-circuits (its evaluator returns 0 for `0 && …` and 1 for `1 || …` without
    the right operand) and evaluates only the arm a conditional takes, and so does this implementation
    (docs/language.md): m[serial - 1] names no member for serial 0, which is not reached."""
    got = expr_values("""
  observe sc = serial > 0 && used(m[serial - 1]) >= 0;
  observe sc2 = serial == 0 || used(m[serial - 1]) >= 0;
  observe tern = serial == 0 ? 7 : used(m[serial - 1]) + 1;""", monkeypatch, n=2)
    assert got == {"sc": [0.0, 1.0], "sc2": [1.0, 1.0], "tern": [7.0, 1.0]}
    # the other order evaluates the reference first: an error at it for serial 0
    src = EXPR.format(n=2, body="observe bad = used(m[serial - 1]) >= 0 && serial > 0;")
    first = run_error(src, monkeypatch)
    assert first.startswith("<source>:8:") and "at t=0, session 0: pool m: index -1" in first, first


def test_precedence_and_associativity(monkeypatch):
    """docs/language.md, Expressions: "Precedence from low to high: c ? a : b, ||, &&, comparisons, + -,
    * / %, unary - !". The spec gives none; binary operators, comparisons included, associate to the left
    (docs/language.md): 3 > 2 > 1 is (3 > 2) > 1, 0."""
    got = expr_values("""
  observe a = 1 || 0 ? 5 : 6; observe b = 0 ? 1 : 2 + 3; observe c = 2 - 3 - 4; observe d2 = 8 / 4 / 2;
  observe e = -2 * -3; observe f = 1 + 2 * 3 == 7; observe g = !0 + 1; observe h = 1 < 2 < 3;
  observe k = 3 > 2 > 1; observe l = 2 * 3 % 4; observe p = 0 ? 1 : 0 ? 2 : 3; observe q = 1 || 0 && 0;
  observe r = -2 * 3 + 10 % 4;""", monkeypatch)
    assert got == {"a": [5.0], "b": [5.0], "c": [-5.0], "d2": [1.0], "e": [6.0], "f": [1.0], "g": [2.0],
                   "h": [1.0], "k": [0.0], "l": [2.0], "p": [3.0], "q": [1.0], "r": [-4.0]}


def test_functions_infinities_and_nan(monkeypatch):
    """§2: "min, max, abs, floor, ceil, sqrt, exp, ln, pow"; §2: "Every constant … is a number or inf"; a
    computed value may be NaN or infinite (docs/language.md "Constants whose value is NaN": "Any other
    expression may compute NaN at run time (y % 0, inf - inf, 0 * inf)")."""
    got = expr_values("""
  observe a = floor(-2.5); observe b = ceil(-2.5); observe c = abs(-3); observe d2 = sqrt(16);
  observe e = ln(exp(2)); observe f = pow(2, 10); observe g = sqrt(-1); observe h = ln(0);
  observe k = 1 / z; observe l = -1 / z; observe p = z / z; observe q = i - i; observe r = 0 * i;
  observe s = 7 % (z + 3); observe t = -7 % 3; observe v = i > 1e308 ? inf : 0; observe w = min(3, i);""",
                      monkeypatch)
    nan = got.pop("g") + got.pop("p") + got.pop("q") + got.pop("r")
    assert all(math.isnan(x) for x in nan)
    inf = math.inf
    assert got == {"a": [-3.0], "b": [-2.0], "c": [3.0], "d2": [4.0], "e": [2.0], "f": [1024.0], "h": [-inf],
                   "k": [inf], "l": [-inf], "s": [1.0], "t": [-1.0], "v": [inf], "w": [3.0]}


def test_min_and_max_pass_over_nan(monkeypatch):
    """§2 min, max and the aggregates max j in n (e), min j in n (e); the spec gives no rule for NaN, the
    reference computes them with f64::min/max, which return the other argument when one is NaN
    (docs/language.md "min and max pass over NaN"). Before the audit they were Python's builtins, whose
    answer depended on the order: min(n, 1) was NaN and min(1, n) 1."""
    got = expr_values("""
  observe a = min(n, 1); observe b = min(1, n); observe c = max(n, 1); observe d2 = max(1, n);
  observe e = min(n, n); observe f = min(3, n, 2); observe g = max(n, 2, n, 5, n);
  observe h = max j in 3 (j == 0 ? n : j); observe k = min j in 3 (j == 2 ? n : -j);
  observe l = min(0 / 0, 1); observe p = min(n, inf); observe q = max(n, -inf);""", monkeypatch)
    assert math.isnan(got.pop("e")[0])
    assert got == {"a": [1.0], "b": [1.0], "c": [1.0], "d2": [1.0], "f": [2.0], "g": [5.0], "h": [2.0],
                   "k": [-1.0], "l": [1.0], "p": [math.inf], "q": [-math.inf]}


def test_min_and_max_over_nan_in_a_header_an_engine_admits(monkeypatch):
    """The same rule in a hold's header that a step stage's scheduler admits (serq_sim.pools.prepared
    writes the header out, and leaves out an infinite argument of min): min(NaN, inf) is inf, so the units
    are 1; max(NaN, 2, -inf) is 2."""
    _, o = run("""
let L = inf;
pool kv { cap 100; admit via E; }
pool reqs { cap 10; }
stage E : step { budget 4; cost 1; }
workload { arrive batch(1); }
session {
  set z = 0;
  hold kv (min(z / z, L) > 5 ? 1 : 3), reqs (max(z / z, 2, -L)) {
    observe u = used(kv); observe r = used(reqs); run E prefill (1);
  }
}
run { horizon 5; }
""", monkeypatch)
    assert (values(o["u"]), values(o["r"])) == ([1.0], [2.0])


def test_draws_at_the_edges_of_their_domains(monkeypatch):
    """§2 draws: ~exp(mean), ~det(x), ~uniform(lo,hi), ~erlang(k,mean), ~h2(mean,cv2), ~bernoulli(p);
    docs/language.md "The domains of the draws": mean >= 0, lo <= hi, an infinite mean is allowed (the draw
    is inf), ~det(x) any number. At the edges the draw has one value."""
    got = expr_values("""
  set one = 1;
  observe u = ~uniform(2, 2); observe e0 = ~exp(0); observe er = ~erlang(3, 0); observe h = ~h2(0, 4);
  observe b0 = ~bernoulli(0); observe b1 = ~bernoulli(1); observe ei = ~exp(inf); observe dn = ~det(-3);
  observe ui = ~uniform(one, one); observe bi = ~bernoulli(one); observe eri = ~erlang(one * 2, 0);""",
                      monkeypatch)
    assert got == {"u": [2.0], "e0": [0.0], "er": [0.0], "h": [0.0], "b0": [0.0], "b1": [1.0],
                   "ei": [math.inf], "dn": [-3.0], "ui": [1.0], "bi": [1.0], "eri": [0.0]}


@pytest.mark.parametrize("draw, msg", [
    ("~uniform({5}, 1)", "~uniform(5, 1): the low bound is above the high bound"),
    ("~erlang({2.5}, 1)", "~erlang(2.5, 1): the number of phases must be a whole number of at least 1"),
    ("~h2(1, {0.5})", "~h2(1, 0.5): cv2 must be at least 1 and finite (a hyperexponential is at least as "
                      "variable as ~exp)"),
    ("~bernoulli({1.5})", "~bernoulli(1.5): a probability is between 0 and 1"),
    ("~exp({-1})", "~exp(-1): the mean is negative"),
])
def test_a_draw_outside_its_domain(monkeypatch, draw, msg):
    """docs/language.md "The domains of the draws": "A draw whose parameters are constants outside its domain
    does not link (at the draw); one whose parameters are computed is checked when it is drawn, a run-time
    error at the draw naming the time and the session." (The reference clamped some: erlang's k to 1, h2's cv2
    to 1.)"""
    const = draw.replace("{", "").replace("}", "")
    assert refused(f"stage d : delay;\nworkload {{ arrive batch(1); }}\nsession {{ observe x = {const}; }}\n") == msg
    computed = draw.replace("{", "(one * ").replace("}", ")")
    src = (f"stage d : delay;\nworkload {{ arrive batch(1); }}\n"
           f"session {{ set one = 1; run d (1); observe x = {computed}; }}\nrun {{ horizon 5; }}\n")
    assert run_error(src, monkeypatch) == f"<source>:3:47: error: at t=1, session 0: {msg}"


def test_aggregates_are_written_out_over_their_index(monkeypatch):
    """§2: "aggregates over an index, max j in n (e), min j in n (e), sum j in n (e) (n a number, a
    constant's name or a parenthesised constant expression; the linker writes the terms out with j = 0 …
    n-1, so max k in 2 (used(kv[k])) is max(used(kv[0]), used(kv[1]))". Inside a hold of 4 on m[1]:
    max of used 0, 4 plus min of holders 0, 1."""
    got = expr_values("""
  hold m[1] (4) {
    observe a = max j in N (j * 2); observe b = sum j in (N + 1) (j); observe c = min j in 2 (max k in 3 (j * 10 + k));
    observe d2 = sum j in 4 (j * j); observe e = max j in 2 (used(m[j])) + min j in 2 (holders(m[j]));
  }""", monkeypatch)
    assert got == {"a": [4.0], "b": [6.0], "c": [2.0], "d2": [14.0], "e": [4.0]}


@pytest.mark.parametrize("body, msg", [
    ("set j = 1; observe x = sum j in 2 (j);", "`sum j in …`: `j` is a name the program has already; give the "
                                               "index a name of its own: write `sum j2 in …` and `j2` in its body"),
    ("observe x = sum serial in 2 (1);", "`sum serial in …`: `serial` is a name the program has already; give "
                                         "the index a name of its own: write `sum serial2 in …` and `serial2` in "
                                         "its body"),
    ("observe x = sum j in 0 (1);", "the count of `sum j in …` must be an integer of at least 1, not 0"),
    ("observe x = sum j in 1.5 (1);", "the count of `sum j in …` must be an integer of at least 1, not 1.5"),
    ("observe x = sum j in serial (1);", "the count of `sum j in …` must be a constant (numbers and `let`s): "
                                         "it reads `serial`"),
])
def test_an_aggregate_the_linker_refuses(body, msg):
    """§2: n "a number, a constant's name or a parenthesised constant expression", "and j may not be a name
    the program already has"."""
    assert refused(EXPR.format(n=1, body=body)) == msg


def test_pool_observables_read_from_a_session(monkeypatch):
    """§2 observables used(p), free(p), cachedin(p), holders(p), queued(p); §3: cached prefixes never block
    an admission, so they are room: free is cap - used (docs/language.md; a pool without cap has inf free).
    s0 holds 3 of m (cap 10) for 1 with cache (3): at 0.5 used 3, free 7, holders 1; at 1 it caches 3: used 0,
    free 10 (the 3 cached are free), its own cachedin 3; the pool u without a cap: free inf."""
    _, o = run("""
pool m { cap 10; }
pool u { }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold m (3) { run d (1); } cache (3); observe own = cachedin(m); }
  else {
    run d (0.5); observe us = used(m); observe fr = free(m); observe ho = holders(m); observe mine = cachedin(m);
    run d (0.5); observe us = used(m); observe fr = free(m); observe ho = holders(m); observe fu = free(u);
  }
}
run { horizon 5; }
""", monkeypatch)
    assert [values(o[k]) for k in ("us", "fr", "ho", "mine", "own", "fu")] == [
        [3.0, 0.0], [7.0, 10.0], [1.0, 0.0], [0.0], [3.0], [math.inf]]


# --- observes and gauges in the report ------------------------------------------------------------------------

OBS = """
stage d : delay;
workload {{ arrive batch({n}); }}
session {{ {body} }}
run {{ horizon 5; {run} }}
"""


def test_the_statistics_of_an_observe(monkeypatch):
    """§1: the report gives "per-observation statistics"; docs/simulator.md, Statistics: "count, mean, 95 %
    batch-means half-width over 20 batches (t = 2.093), cv² (sample variance / mean²), the quantiles p50,
    p90, p95, p99 (the ⌈q n⌉-th smallest, nearest rank …)"; the reference's batch means take 20 batches of
    ⌊n / 20⌋ samples in order (`chunks_exact`), so the last n mod 20 samples are in the mean, not the CI.
    x = serial over batch(41): 0 … 40: mean 20, sample variance 41·42/12 = 143.5, cv² 143.5/400; p50 the
    21st smallest, 20; p90 the 37th, 36; p95 the 39th, 38; p99 the 41st, 40; the CI over 20 batches of 2
    (means 0.5, 2.5, …, 38.5). The same with the 41st sample inf: the mean (and cv²) inf, NaN; p99 inf;
    the CI unchanged (the 41st is in no batch)."""
    r, _ = run(OBS.format(n=41, run="", body="observe x = serial; observe y = serial == 40 ? 1 / 0 : serial;"),
               monkeypatch)
    x, y = r.result.observes["x"], r.result.observes["y"]
    ci = batch_ci([float(k) for k in range(41)])
    assert close(ci, 2.093 * math.sqrt(140 / 20))
    assert (x.count, x.mean, x.p50, x.p90, x.p95, x.p99) == (41, 20.0, 20.0, 36.0, 38.0, 40.0)
    assert close(x.cv2, 143.5 / 400) and close(x.ci, ci)
    assert (y.count, y.mean, y.p50, y.p90, y.p95, y.p99) == (41, math.inf, 20.0, 36.0, 38.0, math.inf)
    assert math.isnan(y.cv2) and close(y.ci, ci)


def test_below_40_samples_an_observe_has_no_ci_or_quantiles(monkeypatch):
    """docs/simulator.md: "CI and quantiles NaN below 40 samples"; the report warns of too few samples. An
    observe never reached has count 0 and NaN mean; one sample has no variance (cv² NaN)."""
    r, _ = run(OBS.format(n=39, run="", body="observe x = serial; branch (serial == 5) { observe one = 3; } "
                                             "branch (serial > 100) { observe never = 1; }"), monkeypatch)
    x, one, never = (r.result.observes[k] for k in ("x", "one", "never"))
    assert (x.count, x.mean, one.count, one.mean, never.count) == (39, 19.0, 1, 3.0, 0)
    assert all(math.isnan(v) for v in (x.ci, x.p50, x.p99, one.cv2, never.mean, never.ci))
    assert close(x.cv2, (39 * 40 / 12) / 19 ** 2)
    assert any(n.startswith("warning: too few samples") and "x 39, one 1" in n for n in r.result.notes)


@pytest.mark.parametrize("n, body, noted", [
    # §3 Statistics: a test-valued observe "that was 0 over 40 or more samples gets a line under the table"
    (40, "observe t = serial < 0;", "note: observe t is constant 0 over 40 samples"),
    # fewer than 40: no note
    (39, "observe t = serial < 0;", None),
    # "A test that always held is not noted."
    (40, "observe t = serial >= 0;", None),
    # a test at every site (docs/language.md): && and ! are tests too
    (41, "observe t = !(serial >= 0) && 1;", "note: observe t is constant 0 over 41 samples"),
    # not a test (its outermost operator is no comparison, &&, || or !): no note
    (40, "observe t = 0 * serial;", None),
])
def test_the_note_on_a_test_that_never_held(monkeypatch, n, body, noted):
    """§3 Statistics: "An observe whose expression is a test (its outermost operator a comparison, &&, ||
    or !) and that was 0 over 40 or more samples gets a line under the table … A test that always held is
    not noted." (The note counts the samples after the warm-up.)"""
    r, _ = run(OBS.format(n=n, run="", body=body), monkeypatch)
    notes = [s for s in r.result.notes if s.startswith("note: observe")]
    assert notes == ([noted] if noted else [])


def test_samples_before_the_warm_up_are_left_out_and_one_at_it_counts(monkeypatch):
    """§3 Statistics: "observe x = e records a sample after warm-up"; docs/simulator.md: "A sample taken at
    the warm-up instant counts". renewal(1), warm-up 2: the samples at 1 are out, those at 2 and 3 in; the
    test-valued one is 0 over 2 samples only (no note: fewer than 40)."""
    r, o = run("""
stage d : delay;
workload { arrive renewal(1); init { observe at = now; } }
session { observe x = serial; observe t = serial < 0; }
run { horizon 3; warmup 2; }
""", monkeypatch)
    assert (o["at"], o["x"]) == ([(1, 2.0, 2.0), (2, 3.0, 3.0)], [(1, 2.0, 1.0), (2, 3.0, 2.0)])
    x = r.result.observes["x"]
    assert (x.count, x.mean, r.result.observes["t"].count) == (2, 1.5, 2)
    assert not any(s.startswith("note: observe") for s in r.result.notes)


def test_a_gauges_time_average_ci_and_extremes_are_over_the_window_after_the_warm_up(monkeypatch):
    """§3 Gauges: "the report gives its time average over [warmup, end], with a batch-means 95% CI over 20
    windows, and the least and greatest value held for a positive time". used(m): 7 on [0, 2) (s0 5, s1
    2), 3 on [2, 4) (s0 gives back 5 and holds 1), 1 on [4, 10), 0 on [10, 20]. Warm-up 2: over [2, 20]
    the mean is (3·2 + 1·6) / 18; the 7 held before the warm-up is no extreme: max 3, min 0. The CI: the
    20 windows of 0.9 over [2, 20], each the time average of its piece."""
    r, _ = run("""
pool m { cap 10; }
stage d : delay;
workload { arrive batch(2); }
gauge h = used(m);
session { branch (serial == 0) { hold m (5) { run d (2); } hold m (1) { run d (8); } } else { hold m (2) { run d (4); } } }
run { horizon 20; warmup 2; }
""", monkeypatch)
    g = r.gauge("h")
    assert (g.times.tolist(), g.values.tolist()) == ([0.0, 2.0, 4.0, 10.0], [7.0, 3.0, 1.0, 0.0])
    s = r.result.gauges["h"]
    assert close(s.mean, 12 / 18) and (s.min, s.max) == (0.0, 3.0)
    pieces = [(2.0, 4.0, 3.0), (4.0, 10.0, 1.0), (10.0, 20.0, 0.0)]
    w = 18 / 20
    windows = []
    for k in range(20):
        lo, hi = 2 + k * w, 2 + (k + 1) * w
        windows.append(sum(v * max(0.0, min(b, hi) - max(a, lo)) for a, b, v in pieces) / w)
    m = sum(windows) / 20
    ci = 2.093 * math.sqrt(sum((x - m) ** 2 for x in windows) / 19 / 20)
    assert abs(s.ci - ci) < 1e-9
    p = pool(r, "m")
    assert close(p.used, 12 / 18) and p.admissions == 1  # s0's second hold, at 2
