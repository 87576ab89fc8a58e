"""A seventh conformance audit, of the rules pool-reference.txt and program-reference.txt state about pools
and program items (those of language.txt's dialect: `preempt by … requeue`, `reserve held`, `queue by`
keys reading `waited`, `run { arrivals }`, the pool options' defaults), on the sentences the earlier rounds
(test_conformance_hand.py, _more, _sem, _pd, _audit … _audit6) leave out or touch only in passing:

(a) what a preemption victim's job does at a stage that is no step engine: it leaves a fifo stage (the
    next job there starts), a ps stage and a flow over several stages (the others' rates go up);
(b) the pool-reference's own examples and keys: the priority lanes of `queue by` with `waited`, keys that
    read the waiting session's own prefix, a spill predicate that is non-zero but not 1;
(c) amounts without `block` (the option's default, none), and a `grow` rounded to blocks;
(d) program items: the run's random streams (arrivals, workload, session, trace sampling), and a spill's
    link and a run's stage of the kind that runs their work (source and IR file alike).

Each program is small and deterministic and its outcome is worked out by hand in the docstring; `run`
runs it on the tier serQ picks and on the general engine (SERQ_SIM_TIER=general) and requires
byte-identical reports."""

from __future__ import annotations

import pytest
from conform import at, close, pool, run, stage

# --- (a) a victim's job leaves its stage ---------------------------------------------------------------------


def test_a_victim_leaves_a_fifo_stage_and_the_next_job_starts(monkeypatch):
    """pool-reference `preempt`: "The victim leaves its stage, releases its hold and caches its computed
    prefix. It re-enters the hold's first pool's queue to execute the hold again".

    m (cap 4, lifo). s0 holds 1 at 0, s1 holds 1 at 0 (admitted second: the last admitted) and runs f (4)
    on the fifo(1) stage f from 0. s2 joins f at 0.5 and waits behind s1. At 1 s0 grows 3: 2 + 3 > 4, so
    s1 is the victim: its job leaves f, where s2 starts at once (done at 3, not 5); s0's growth fits (4).
    s1 waits at the head of m's queue until s0 releases at 2, is admitted again (a1 at 0 and 2), joins f
    behind s2 and runs [3, 7). f: completions 2 (the aborted job is none), waits 0.5 (s2) and 1 (s1):
    0.75; service (2 + 4) / 2 = 3; present 1 on [0, 0.5), 2 on [0.5, 1), 1 on [1, 2), 2 on [2, 3), 1 on
    [3, 7): 8.5 / 100; busy on [0, 7): 0.07. m: used 2 on [0, 1), 4 on [1, 2), 1 on [2, 7): 0.11;
    admissions 3, waits 0, 0, 1."""
    r, o = run("""
pool m { cap 4; preempt lifo; }
stage f : fifo(1);
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (3); observe g = now; run d (1); } }
  else { branch (serial == 1) { hold m (1) { observe a1 = now; run f (4); observe f1 = now; } }
  else { run d (0.5); run f (2); observe f2 = now; } }
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["g"]) == [(0, 1.0)]
    assert at(o["a1"]) == [(1, 0.0), (1, 2.0)]
    assert at(o["f2"]) == [(2, 3.0)]
    assert at(o["f1"]) == [(1, 7.0)]
    f = stage(r, "f")
    assert (f.completions, f.wait, f.service, f.present, f.utilisation) == (2, 0.75, 3.0, 0.085, 0.07)
    m = pool(r, "m")
    assert (m.preemptions, m.admissions, m.used, m.holders) == (1, 3, 0.11, 0.08)


def test_a_victims_flow_leaves_its_stages_and_the_others_rates_go_up(monkeypatch):
    """pool-reference `preempt`: "The victim leaves its stage"; language.txt §3 Stages: "run a, b (w) is one
    job that holds a and b from its start to its end: a flow … share maxmin is max-min fair: every flow's
    rate rises together until a stage fills". A victim whose job is a flow leaves every stage of it, and
    the rates are recomputed. (A victim in a flow was a Python AttributeError: the network the flow's job
    stands at had no `detach`.)

    p ps(2), a ps(2), b ps(1), maxmin. At 0: s1 runs p (3), s2 a, b (3), s3 (holding m, admitted after s0)
    p, b (4). b fills first, at 0.5 each for s2 and s3; s1 then rises to 1.5 on p. At 1 s0 grows 3 on m
    (cap 4, lifo): 2 + 3 > 4, s3 is the victim and leaves p and b (it did 0.5 of 4, lost). Then s1 runs at
    2 on p alone (1.5 left: done at 1.75) and s2 at 1 (b alone; 2.5 left: done at 3.5). s0 runs d (10) to
    11, releases, and s3 is admitted again at 11: p, b (4) at 1 (b), done at 15. Stage p: present s1 on
    [0, 1.75), s3 on [0, 1) and [11, 15): 6.75 / 100; carried/φ 2/2 on [0, 1.75), 1/2 on [11, 15): 3.75 /
    100; 2 completions of service (1.75 + 4) / 2. Stage b: present 3.5 + 1 + 4 = 8.5, carried 1 on [0,
    3.5) and [11, 15): 0.075."""
    r, o = run("""
pool m { cap 4; preempt lifo; }
stage p : ps(2);
stage a : ps(2);
stage b : ps(1);
stage d : delay;
share maxmin;
workload { arrive batch(4); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (3); observe g = now; run d (10); } }
  branch (serial == 1) { run p (3); observe p1 = now; }
  branch (serial == 2) { run a, b (3); observe ab = now; }
  branch (serial == 3) { hold m (1) { observe a3 = now; run p, b (4); observe f3 = now; } }
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["g"]) == [(0, 1.0)]
    assert at(o["p1"]) == [(1, 1.75)]
    assert at(o["ab"]) == [(2, 3.5)]
    assert at(o["a3"]) == [(3, 0.0), (3, 11.0)]
    assert at(o["f3"]) == [(3, 15.0)]
    p, b = stage(r, "p"), stage(r, "b")
    assert (p.completions, p.service, p.present, p.utilisation) == (2, 2.875, 0.0675, 0.0375)
    assert (b.completions, b.present, b.utilisation) == (2, 0.085, 0.075)
    assert pool(r, "m").preemptions == 1



def test_a_victim_leaves_a_ps_stage_whose_capacity_is_read_again(monkeypatch):
    """pool-reference `preempt`: "The victim leaves its stage"; language.txt §2 `ps ( expr )`: "throughput
    phi(present) shared equally" (language.md: φ is read when the jobs present change, a job starting or
    leaving the stage).

    p : ps(present >= 2 ? 1 : 4). s1 (holding m, admitted after s0) runs p (10) and s2 p (4) from 0: φ 1,
    0.5 each. At 1 s0's growth preempts s1, which leaves p: φ is read again, 4, for s2 alone: 3.5 left,
    done at 1.875. s1 is admitted again when s0 releases at 2 and runs alone at 4: done at 4.5."""
    _, o = run("""
pool m { cap 4; preempt lifo; }
stage p : ps(present >= 2 ? 1 : 4);
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold m (1) { run d (1); grow m (3); run d (1); } }
  branch (serial == 1) { hold m (1) { observe a1 = now; run p (10); observe f1 = now; } }
  branch (serial == 2) { run p (4); observe f2 = now; }
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["a1"]) == [(1, 0.0), (1, 2.0)]
    assert at(o["f2"]) == [(2, 1.875)]
    assert at(o["f1"]) == [(1, 4.5)]

# --- (b) the pool-reference's examples and keys ----------------------------------------------------------------

LANES = """
pool m { cap 1; queue by (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3,
                          serial); }
stage d : delay;
workload { arrive batch(6); }
session {
  set immediate = serial == 5;
  set prompt = serial == 1 || serial == 4 ? 100 : 200;
  run d (serial == 0 ? 0 : serial == 1 ? 1.5 : serial == 2 ? 1 : serial == 3 ? 2.5 : serial == 4 ? 3 : 5.5);
  hold m (1) { observe a = now; run d (2); }
}
run { horizon 100; }
"""


def test_the_priority_lanes_of_queue_by_with_waited(monkeypatch):
    """pool-reference `queue`, its example: "For priority lanes with a three-second aging threshold: queue by
    (immediate ? 0 : prompt > 128 && waited >= 3 ? 1 : prompt <= 128 ? 2 : 3, serial); This admits immediate
    requests, then aged long requests, then short requests, then other long requests." And "waited supplies
    seconds since the current hold entered the queue"; "Selection occurs at admission attempts".

    cap 1, each hold lasts 2, so the attempts that can admit are the releases at 2, 4, 6, 8, 10. Joins: s0
    (long) at 0, admitted at once; s2 (long) at 1, s1 (short) at 1.5, s3 (long) at 2.5, s4 (short) at 3, s5
    (long, immediate) at 5.5. At 2: s2 waited 1 (lane 3), s1 lane 2: s1. At 4: s2 waited exactly 3 (lane
    1, aged), s3 waited 1.5 (lane 3), s4 lane 2: s2. At 6: s5 lane 0, s3 waited 3.5 (lane 1), s4 lane 2:
    s5. At 8: s3 (lane 1) before s4 (lane 2). At 10: s4. (FIFO would be s0, s2, s1, s3, s4, s5.)"""
    _, o = run(LANES, monkeypatch)
    assert at(o["a"]) == [(0, 0.0), (1, 2.0), (2, 4.0), (5, 6.0), (3, 8.0), (4, 10.0)]


def test_a_queue_key_reads_each_waiting_sessions_own_prefix(monkeypatch):
    """pool-reference `queue`: "by reevaluates keys for every waiting hold before each admission attempt";
    "Keys may read visible session attributes, now and pool/stage queries". `cachedin(kv)` is the waiting
    hold's session's own prefix (language.md), so `queue by (-cachedin(kv), serial)` admits the longest
    cached prefix first.

    cap 20. s1 caches 2 and s2 caches 3 by 0.5 (holds of 2 and 3 with cache); s0 holds 15 on [1, 4) (15 +
    5 cached fit). s1, s2, s3 (nothing cached) join at 2 asking 12, which fits one at a time, for 1 each.
    The second holds have no cache clause, so they leave the prefixes where they are. At 4: keys -2, -3,
    0: s2; at 5: s1 (-2 < 0); at 6: s3. (FIFO would be s1, s2, s3.)"""
    _, o = run("""
pool kv { cap 20; queue by (-cachedin(kv), serial); }
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial == 0) { run d (1); hold kv (15) { run d (3); } }
  else {
    branch (serial < 3) { hold kv (serial + 1) { run d (0.5); } cache (serial + 1); }
    run d (2); hold kv (12) { observe a = now; run d (1); }
  }
}
run { horizon 100; }
""", monkeypatch)
    assert at(o["a"]) == [(2, 4.0), (1, 5.0), (3, 6.0)]


SPILL_WHEN = """
pool kv { cap 4; spill t via l (0) when (PRED); }
pool t { cap 100; }
stage l : delay;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (U) { run d (1); } cache (U); run d (2); observe c = cachedin(t); }
  else { run d (1.5); hold kv (4) { run d (1); } }
}
run { horizon 100; }
"""


def test_a_spill_predicate_spills_when_it_is_non_zero(monkeypatch):
    """pool-reference `spill`: pred "The prefix is spilled when this is non-zero. May read `size`." Not only
    1: any value other than 0, a negative one and NaN included (language.md: NaN is not zero, so it is
    true); a write of no work lands at once.

    s0 caches U units of kv (cap 4) at 1; s1's hold of 4 at 1.5 evicts that whole entry (no block): `size`
    is U. `when (size - 2)`: U = 4 gives 2, spilled (s0 reads 4 in t at 3); U = 2 gives 0, not spilled (0);
    U = 1 gives -1, spilled (1). `when (size % 0)` is NaN: U = 3 is spilled (3)."""
    for u, pred, spilled in ((4, "size - 2", 4.0), (2, "size - 2", 0.0), (1, "size - 2", 1.0),
                             (3, "size % 0", 3.0)):
        r, o = run(SPILL_WHEN.replace("PRED", pred).replace("(U)", f"({u})"), monkeypatch)
        assert o["c"] == [(0, 3.0, spilled)], (u, pred)
        kv = pool(r, "kv")
        assert (kv.evicted_entries, kv.evicted_units, kv.spills) == (1, u, 1 if spilled else 0)


# --- (c) amounts and blocks ----------------------------------------------------------------------------------


def test_without_block_amounts_are_not_rounded(monkeypatch):
    """pool-reference `Pool`: "Every option is optional"; `block` "allocation and caching granularity",
    default none: without it an amount is allocated and cached as it is, a fraction included, and an
    entry is evicted whole ("Eviction is per entry, or per block from the tail of the entry when the pool
    has block b", language.txt §3); `evict` defaults to lru ("release time, then release order").

    cap 5. s0 and s1 hold 2.5 each at 0 (5 used: both read 5) and cache 1.7 at 1 (min(1.7, 2.5), not
    rounded), s0's run ending first. s2 asks 3 (2.5 + 3 > 5 after s0's release alone), so it is admitted
    after s1's release: 3 + 3.4 cached > 5, and the lru entry goes, s0's (the same release time, released
    first), whole: 1.7 evicted, s1's stays. s2 reads 3 used and caches min(1.7, 3) at 2."""
    r, o = run("""
pool kv { cap 5; }
stage d : delay;
workload { arrive batch(3); }
session {
  hold kv (serial == 2 ? 3 : 2.5) { observe u = used(kv); run d (1); } cache (1.7);
  observe c = cachedin(kv);
  run d (5);
  observe e = cachedin(kv);
}
run { horizon 100; }
""", monkeypatch)
    assert o["u"] == [(0, 0.0, 5.0), (1, 0.0, 5.0), (2, 1.0, 3.0)]
    assert o["c"] == [(0, 1.0, 1.7), (1, 1.0, 1.7), (2, 2.0, 1.7)]
    assert o["e"] == [(0, 6.0, 0.0), (1, 6.0, 1.7), (2, 7.0, 1.7)]
    kv = pool(r, "kv")
    assert (kv.evicted_entries, kv.evicted_units) == (1, 1.7)


# --- (d) program items ---------------------------------------------------------------------------------------

STREAMS = """
stage d : delay;
workload { arrive poisson(1); trace "t.csv"; init { INIT set w = ~uniform(0, 1); } }
session { turn; SESSION observe n = new; observe w = w; observe s = ~uniform(0, 1); run d (1); }
run { horizon 8; seed 3; }
"""


def test_arrivals_the_workload_the_session_and_trace_sampling_draw_from_their_own_streams(monkeypatch,
                                                                                          tmp_path):
    """program-reference `run`: seed is the "Seed of the random streams. Arrivals, the workload, the session,
    eviction and trace sampling each draw from their own." So one more draw in `init` (the workload's
    stream) moves no arrival, no trace session sampled (without `ordered`, each arrival replays a trace
    session drawn for it) and no draw of the session block, and one more draw in the session block moves
    none of the others: each stream's sequence is the same whatever the others draw. The trace's session
    i has new = i + 1, so `new` names the session sampled."""
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n"
                                    + "".join(f"{i},0,{i + 1},1,0,0\n" for i in range(20)))
    got = {}
    for init in ("", "set y = ~exp(1);"):
        for session in ("", "set z = ~exp(1);"):
            path = tmp_path / f"p{len(got)}.sq"
            path.write_text(STREAMS.replace("INIT", init).replace("SESSION", session))
            _, o = run("", monkeypatch, path=path)
            got[bool(init), bool(session)] = {k: [(s, t, v) for s, t, v in o[k]] for k in ("n", "w", "s")}
    base = got[False, False]
    assert len(base["n"]) >= 5 and len({v for _, _, v in base["n"]}) >= 3  # arrivals, several sessions drawn
    for (init, session), obs in got.items():
        assert obs["n"] == base["n"]  # the arrival times, the sessions, the trace sessions sampled
        assert (obs["w"] == base["w"]) == (not init)  # the workload's stream moves with init's draws only
        assert (obs["s"] == base["s"]) == (not session)  # the session's with the session block's only
        assert obs["w"] == got[init, False]["w"] and obs["s"] == got[False, session]["s"]


def test_a_grow_adds_its_amount_rounded_to_blocks_to_the_allocation(monkeypatch):
    """language.txt §3: "grow m (d) enlarges the innermost hold on m by d (rounded to blocks)"; "min(ℓ,
    computed) units stay cached, rounded down to blocks (computed is the allocation, or the position a
    growing run or a load reached)"; pool-reference `block`: "Allocations round up … An entry is evicted
    from its tail, block by block". The spec does not say whether the slack of the hold's last block
    counts; language.md's rule: d rounded up is added to the allocation.

    cap 12, block 4. s0 holds 1 (4 used), grows 3 (4 + 4 = 8: not round_up(1 + 3) = 4), grows 1 (12), and
    caches min(100, 12) = 12 at 1. s1 at 2 holds 1: 4 + 12 cached > 12, one block of s0's entry goes (8
    left); it loads 1 and grows 3 (8 used): another block (4 left). Its release at 3 caches its position,
    1, rounded down: nothing."""
    r, o = run("""
pool m { cap 12; block 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold m (1) { observe u = used(m); grow m (3); observe u = used(m); grow m (1); observe u = used(m);
                 run d (1); } cache (100);
    observe c = cachedin(m);
  } else {
    run d (2); hold m (1) { load m (1); grow m (3); observe u = used(m); run d (1); } cache (100);
    observe c = cachedin(m);
  }
}
run { horizon 100; }
""", monkeypatch)
    assert o["u"] == [(0, 0.0, 4.0), (0, 0.0, 8.0), (0, 0.0, 12.0), (1, 2.0, 8.0)]
    assert o["c"] == [(0, 1.0, 12.0), (1, 3.0, 0.0)]
    m = pool(r, "m")
    assert (m.evicted_entries, m.evicted_units) == (0, 8.0)
    assert close(m.cached, (12 * 1 + 4 * 98) / 100)  # 12 on [1, 2), 4 on [2, 100]


SPILL_VIA = """
pool kv { cap 4; spill t via l (size) when (1); }
pool t { cap 100; }
stage l : LINK;
stage E : step { budget 2; cost 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (4) { run d (1); } cache (4); run d (6); observe c = cachedin(t); }
  else { run d (1.5); hold kv (4) { run d (1); } RUN }
}
run { horizon 100; }
"""


def test_a_spills_link_and_a_runs_stage_run_the_work_their_kind_runs(monkeypatch):
    """pool-reference `spill`: LINK is "The stage the write takes time on", work the "Work the write puts on
    LINK"; language.txt §3: "a step engine's prefill and decode work is in the unit of B, tokens", a plain
    run's "time at rate 1". A write is plain work, so a step stage as LINK is the user's mistake, said when
    the program links, at the stage's name (it compiled and the first eviction stopped the run with
    `error: at t=1.5: run l: a run on a step stage is prefill or decode`, no place in the program). An IR
    file is held to the same rules as the source (language.md), for the spill's link and for a run's mode:
    a step stage's run is prefill or decode, and a mode is a step stage's.

    With l a fifo stage the program runs: s1's hold at 1.5 evicts s0's 4, written on l in [1.5, 5.5]."""
    import msgspec
    import serq_frontend
    import serq_ir
    from conform import refused

    why = refused(SPILL_VIA.replace("LINK", "step { budget 2; cost 1; }").replace("RUN", ""))
    assert why.startswith("pool `kv`: `spill … via l`: `l` is a step stage"), why
    _, o = run(SPILL_VIA.replace("LINK", "fifo").replace("RUN", ""), monkeypatch)
    assert o["c"] == [(0, 7.0, 4.0)]

    def check(src, edit):
        prog = serq_frontend.compile(source=src, sets={}, defs={})
        bad = edit(prog)
        with pytest.raises(serq_ir.IRError) as e:
            serq_ir.decode(msgspec.json.encode(bad), name="p.ir.json")
        return str(e.value)

    src = SPILL_VIA.replace("LINK", "fifo")
    names = [s.name for s in serq_frontend.compile(source=src.replace("RUN", ""), sets={}, defs={}).stages]
    li, ei = names.index("l"), names.index("E")

    def step_link(p):  # the stage l made a step stage
        stages = list(p.stages)
        stages[li] = msgspec.structs.replace(stages[li], kind=stages[ei].kind)
        return msgspec.structs.replace(p, stages=stages)

    assert "a spill's write is plain work, and stage 'l' is a step stage - at '$.pools[0].spill.link'" in check(
        src.replace("RUN", ""), step_link)

    def mode(p, to):  # the last statement of the session's else-arm, a run, given the mode `to`
        body = list(p.session)
        br = body[-1]
        orelse = list(br.orelse)
        orelse[-1] = msgspec.structs.replace(orelse[-1], mode=to)
        body[-1] = msgspec.structs.replace(br, orelse=orelse)
        return msgspec.structs.replace(p, session=body)

    assert "a run on step stage 'E' is prefill or decode, not plain" in check(
        src.replace("RUN", "run E prefill (1);"), lambda p: mode(p, "plain"))
    assert "a run of mode 'prefill' is for a step stage, and stage 'd' is no step" in check(
        src.replace("RUN", "run d (1);"), lambda p: mode(p, "prefill"))
