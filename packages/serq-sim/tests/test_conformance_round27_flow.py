"""Conformance of language.txt §3 on what a session does between its pools and stages, sentences no earlier
test held in these combinations:

* Ties: "choose: the keys, in order, then the smallest index", a `choose` inside a `loop` (§2: a `loop`
  repeats its block until an `end;` does) read again at each pass, over a `fifo` stage family;
* Branching: "branch with (p) takes the first block with probability p, and is sugar the parser rewrites to
  branch (~bernoulli(p))", at the probabilities 1 and 0, and a computed p that is no probability;
* Stages: "A stage array held by some run with another is shared for the whole run: every job on it, a
  single-stage run included, is a flow of the policy", under "share maxmin … every flow's rate rises
  together until a stage fills" and "share bottleneck … leaves what that does not use at the other stages
  unused";
* Workload: "with a trace, turn loads the next turn's new, out, think, forced and sets more (ordered:
  session i replays trace session i)", more sessions than the trace has (docs/language.md: past the last
  one, serial mod the number of trace sessions), in a `loop` of turns under `run { arrivals N }`;
* Gauges: "read at the end of every instant (the state the instant's last event leaves …; what the
  instant passes through on the way is not read)", and "the least and greatest value held for a positive
  time".

Each program runs on the tier serQ picks and on the general engine (conform.run: the same report and
samples, byte for byte; the programs without pools, step stages or gauges take the fast tier); every
figure is computed by hand in the docstring.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import at, pool, run, run_error, stage
from serq_sim.fast import exclusion as fast_exclusion

CHOOSE_IN_A_LOOP = """
stage s[3] : fifo;
workload { arrive batch(4); }
session {
  set i = 0;
  loop {
    choose j in 3 by (queue(s[j]) + busy(s[j]));
    observe pick = j;
    run s[j] (1 + serial);
    set i = i + 1;
    branch (i == 2) { observe t = now; end; }
  }
}
run { horizon 20; }
"""


def test_a_choose_in_a_loop_is_read_again_at_each_pass_ties_to_the_least_index(monkeypatch):
    """Each session runs twice, `1 + serial` seconds each time, on the member with the fewest jobs.

    At 0, in serial order: s0 finds 0, 0, 0 and takes s[0] (the least index); s1 finds 1, 0, 0: s[1]; s2
    1, 1, 0: s[2]; s3 1, 1, 1: s[0], behind s0. At 1 s0's job ends and s3's starts (the stage's own
    completion), then s0 chooses again: 1, 1, 1: s[0], behind s3 (5 to 6). At 2 s1 finds 2, 0, 1: s[1]
    (2 to 4). At 3 s2 finds 2, 1, 0: s[2] (3 to 6). At 4 s1 ends. At 5 s3's first job ends and s0's
    starts; s3 finds 1, 0, 1: s[1] (5 to 9). s0 and s2 end at 6, s3 at 9.

    s[0]: s0, s3, s0, waits 0, 1 and 4: completions 3, wait 5/3, 6 busy seconds over 20: 0.3."""
    r, o = run(CHOOSE_IN_A_LOOP, monkeypatch)
    assert [(s, t, v) for s, t, v in o["pick"]] == [
        (0, 0.0, 0.0), (1, 0.0, 1.0), (2, 0.0, 2.0), (3, 0.0, 0.0),
        (0, 1.0, 0.0), (1, 2.0, 1.0), (2, 3.0, 2.0), (3, 5.0, 1.0)]
    assert at(o["t"]) == [(1, 4.0), (0, 6.0), (2, 6.0), (3, 9.0)]
    s0 = stage(r, "s", 0)
    assert (s0.completions, s0.wait, s0.utilisation) == (3, 5 / 3, 0.3)
    # the program is the fast tier's (conform.run compared its report with the general engine's)
    assert fast_exclusion(serq_frontend.compile(source=CHOOSE_IN_A_LOOP, sets={}, defs={})) is None


BRANCH_WITH = """
stage d : delay;
workload { arrive batch(3); }
session {
  branch with (1) { observe a = now; }
  branch with (0) { observe b = now; } else { observe c = now; }
  run d (1);
  branch with (P) { observe e = now; } else { observe f = now; }
}
run { horizon 20; }
"""


def test_branch_with_one_takes_the_first_block_and_zero_the_second(monkeypatch):
    """`branch with (1)` is `branch (~bernoulli(1))`, always 1; `branch with (0)` always 0: every session
    takes the first block of the first and the `else` of the second, at 0; the computed probabilities
    `serial / 2` and `1 - serial / 2` are 0 and 1 at the ends of their range, whatever the draw."""
    _, o = run(BRANCH_WITH.replace("P", "serial / 2"), monkeypatch)
    assert at(o["a"]) == at(o["c"]) == [(0, 0.0), (1, 0.0), (2, 0.0)] and o["b"] == []
    assert at(o["e"])[-1] == (2, 1.0) and at(o["f"])[0] == (0, 1.0)
    _, o = run(BRANCH_WITH.replace("P", "1 - serial / 2"), monkeypatch)
    assert at(o["e"])[0] == (0, 1.0) and at(o["f"])[-1] == (2, 1.0)


def test_a_computed_probability_outside_0_and_1_is_an_error_where_it_is_drawn(monkeypatch):
    """The draw of `~bernoulli(p)` needs a probability: s0's `serial - 1` is -1 at 1, a run-time error at
    the probability's place (line 8, column 16), naming the time and the session, on both tiers; so is
    s2's 1.5 had s0 not stopped the run."""
    assert run_error(BRANCH_WITH.replace("P", "serial - 1"), monkeypatch) == (
        "<source>:8:16: error: at t=1, session 0: branch with (…): a probability is between 0 and 1, got -1")
    assert run_error(BRANCH_WITH.replace("P", "serial * 0.75"), monkeypatch) == (
        "<source>:8:16: error: at t=1, session 2: branch with (…): a probability is between 0 and 1, got 1.5")


SHARED = """
stage a : ps(4);
stage b : ps(1);
workload { arrive batch(2); }
session {
  branch (serial == 0) { run a, b (2); } else { run a (9); }
  observe t = now;
}
SHARE
run { horizon 10; }
"""


@pytest.mark.parametrize("share, t1, present_a", [
    # maxmin: both rates rise together to 1, where b is full; s0 stops there, and s1's single-stage run
    # on a goes on to 3 (a full at 1 + 3). s0's 2 take 2 s; s1 has 6 done at 2 and its last 3 alone at 4:
    # 2.75. a: 4 of 4 on [0, 2], 4 on [2, 2.75]: utilisation 11 / 40; present 2 on [0, 2], 1 on [2, 2.75].
    ("share maxmin;", 2.75, 4.75 / 10),
    # bottleneck: s0 min(4/2, 1/1) = 1, s1 4/2 = 2, and a's other unit unused. s0 done at 2, s1 has 4
    # done and 5 left alone at 4: 3.25. a: 3 of 4 on [0, 2], 4 on [2, 3.25]: 11 / 40 again; present 2 on
    # [0, 2], 1 on [2, 3.25]. (s1's run as a plain ps job would have 4/2 too: the policies differ here.)
    ("share bottleneck;", 3.25, 5.25 / 10),
])
def test_a_single_stage_run_on_a_shared_array_is_a_flow_of_the_policy(monkeypatch, share, t1, present_a):
    """s0's run holds a and b; s1's holds a alone, and a is held by a run with another, so s1's job is a
    flow of the policy too."""
    r, o = run(SHARED.replace("SHARE", share), monkeypatch)
    assert at(o["t"]) == [(0, 2.0), (1, t1)]
    sa, sb = stage(r, "a"), stage(r, "b")
    assert (sa.utilisation, sa.present, sa.completions) == (11 / 40, present_a, 2)
    assert (sb.utilisation, sb.present) == (0.2, 0.2)


TRACE = "session,turn,new,out,think,forced\n0,0,3,1,2,0\n0,1,5,2,0,1\n1,0,4,1,1,0\n"

REPLAY = """
stage s : fifo;
stage pause : delay;
workload { arrive renewal(1); trace "t.csv" ordered; }
session {
  turn;
  loop {
    observe n = new * 10 + out;
    observe m = more;
    observe f = forced;
    run s (new);
    branch (more) { run pause (think); turn; } else { observe last = turn_no; end; }
  }
}
run { arrivals 3; }
"""


def test_an_ordered_trace_replays_session_i_and_wraps_past_its_last(monkeypatch, tmp_path):
    """Arrivals at 1, 2, 3 (a renewal's first after one gap), three of them; s0 replays trace session 0,
    s1 session 1, s2 session 0 again (2 mod 2). Each turn's row: new, out, forced and more, and `think` the
    pause before the next turn.

    s0 at 1: 3, 1, more 1; runs s over [1, 4]. s1 at 2: 4, 1, more 0; waits for s (4 to 8), ends at 8
    after its one turn. s2 at 3: session 0's first row; s over [8, 11]. s0 pauses 2 after 4 and at 6
    loads its second row, 5, 2, forced 1, more 0: s over [11, 16], it ends at 16 after turn 2. s2 pauses
    2 after 11, loads at 13 and runs s over [16, 21]. The run ends when the last arrival's session ends,
    at 21. s: 20 busy seconds over 21; waits 0, 2, 5, 5, 3."""
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "p.sq").write_text(REPLAY)
    r, o = run("", monkeypatch, path=tmp_path / "p.sq")
    assert o["n"] == [(0, 1.0, 31.0), (1, 2.0, 41.0), (2, 3.0, 31.0), (0, 6.0, 52.0), (2, 13.0, 52.0)]
    assert [v for _s, _t, v in o["m"]] == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert [v for _s, _t, v in o["f"]] == [0.0, 0.0, 0.0, 1.0, 1.0]
    assert o["last"] == [(1, 8.0, 1.0), (0, 16.0, 2.0), (2, 21.0, 2.0)]
    assert r.result.end == 21.0
    s = stage(r, "s")
    assert (s.completions, s.utilisation, s.wait) == (5, 20 / 21, 3.0)
    assert [list(r.observes["n"].turns)] == [[1, 1, 1, 2, 2]]


GAUGE = """
pool p { cap 10; }
stage d : delay;
gauge g = used(p);
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold p (2) { run d (1); } }
  branch (serial == 1) { hold p (3) { run d (2); } }
  branch (serial == 2) { run d (1); hold p (4) { run d (1); } }
}
run { horizon HORIZON; }
"""


@pytest.mark.parametrize("horizon, mean, least", [
    # [0, 1]: 2 + 3 = 5. At 1 s0's release (scheduled first) leaves 3, then s2's hold makes it 7: the
    # instant ends at 7, and 3 is never read. At 2 s1 and s2 release: 0, held for no time before the
    # horizon: the least value held for a positive time is 5.
    (2, 6.0, 5.0),
    # To 3 the 0 is held for a second: mean 12 / 3, least 0.
    (3, 4.0, 0.0),
])
def test_a_gauge_reads_each_instants_end_and_its_extremes_are_held_for_a_positive_time(monkeypatch, horizon,
                                                                                      mean, least):
    """Gauges take the general engine (the fast tier has none): the two tiers agree all the same."""
    prog = serq_frontend.compile(source=GAUGE.replace("HORIZON", str(horizon)), sets={}, defs={})
    reports = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        reports.append(serq_sim.run(prog))
    g = reports[1].result.gauges["g"]
    assert reports[0].result.gauges["g"] == g
    assert (g.mean, g.min, g.max) == (mean, least, 7.0)


VICTIM_IN_A_FLOW = """
pool kv { cap 4; preempt lifo; }
stage a : ps(2);
stage b : ps(1);
stage d : delay;
share maxmin;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run d (0.5); hold kv (2) { observe s = now; run a, b (3); } }
  branch (serial == 1) { hold kv (2) { run d (1); grow kv (1); run d (1); } }
  branch (serial == 2) { run a (2); }
  observe t = now;
}
run { horizon 10; }
"""


def test_a_victim_in_a_flow_leaves_every_stage_of_it_and_the_others_rates_rise(monkeypatch):
    """§3 grow: the victim's "job leaves its stage, its hold is released …, and it re-enters the head of
    the pool's queue with the hold statement to execute again"; a pool that is no engine's memory "preempts
    its most recently admitted holder"; Stages: a run over several stages "is one job that holds a and b
    from its start to its end", and a single-stage run on an array another run holds is a flow (maxmin).

    s2's run on a is alone over [0, 0.5] at 2: 1 left. At 0.5 s0 (admitted then, the last) starts its flow
    over a and b: both rise to 1, where b fills and a does too (1 + 1). At 1 s1's grow of 1 does not fit
    (2 + 2 + 1 > 4): s0 is preempted, its flow leaves a and b with 0.5 of its 3 done, and it waits at the
    head of kv's queue (2 + 1 + 2 > 4). s2 alone again at 2: its last 0.5 by 1.25. At 2 s1 ends, s0 is
    admitted and runs its hold again from the start: 3 at 1 (b's capacity), done at 5.

    a carries 2 on [0, 0.5] (s2), 2 on [0.5, 1] (1 + 1), 2 on [1, 1.25] (s2) and 1 on [2, 5] (s0, held
    to b's 1): utilisation (1 + 1 + 0.5 + 3) / 2 / 10 = 0.275; present 1, 2, 1 and 1 there: 4.75 over 10;
    completed s2 (1.25 s) and s0's second run (3 s): service 2.125. b: 1 of 1 on [0.5, 1] and [2, 5]:
    0.35. kv: s1 2 on [0, 1] and 3 on [1, 2], s0 2 on [0.5, 1] and [2, 5]: 12 over 10; waits 0, 0 and 1
    (s0's re-entry)."""
    r, o = run(VICTIM_IN_A_FLOW, monkeypatch)
    assert at(o["s"]) == [(0, 0.5), (0, 2.0)]
    assert at(o["t"]) == [(2, 1.25), (1, 2.0), (0, 5.0)]
    sa, sb = stage(r, "a"), stage(r, "b")
    assert (sa.completions, sa.utilisation, sa.present, sa.service) == (2, 0.275, 0.475, 2.125)
    assert (sb.completions, sb.utilisation, sb.present) == (1, 0.35, 0.35)
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.used, kv.wait) == (3, 1, 1.2, 1 / 3)


VICTIM_IN_A_FIFO_QUEUE = """
pool kv { cap 4; preempt lifo; }
stage f : fifo;
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { hold kv (1) { run d (0.5); grow kv (2); observe g = now; run d (1); } }
  branch (serial == 1) { run f (2); }
  branch (serial == 2) { hold kv (2) { observe s = now; run f (1); } }
  observe t = now;
}
run { horizon 10; }
"""


def test_a_victim_waiting_at_a_fifo_stage_leaves_its_queue(monkeypatch):
    """§3 grow: the victim's "job leaves its stage"; Stages: "fifo(c): c servers, jobs in arrival order".

    At 0 s1 takes f's server for 2 and s2, holding 2 of kv, waits behind it. At 0.5 s0's grow of 2 does
    not fit (1 + 2 + 2 > 4); the last admitted holder is s2, waiting at f: it leaves f's queue, releases
    its 2 and waits at kv's head (3 + 2 > 4). s0 grows (g = 0.5) and releases at 1.5; s2 is admitted then,
    joins f behind s1 and is served over [2, 3].

    f: two completions, s1 (no wait) and s2 (0.5 from 1.5): wait 0.25; present 2 on [0, 0.5], 1 on
    [0.5, 1.5], 2 on [1.5, 2], 1 on [2, 3]: 4 over 10. kv: s0 1 on [0, 0.5], 3 on [0.5, 1.5]; s2 2 on
    [0, 0.5] and [1.5, 3]: 7.5 over 10; waits 0, 0 and 1 (s2's re-entry)."""
    r, o = run(VICTIM_IN_A_FIFO_QUEUE, monkeypatch)
    assert at(o["g"]) == [(0, 0.5)] and at(o["s"]) == [(2, 0.0), (2, 1.5)]
    assert at(o["t"]) == [(0, 1.5), (1, 2.0), (2, 3.0)]
    f = stage(r, "f")
    assert (f.completions, f.wait, f.present, f.utilisation) == (2, 0.25, 0.4, 0.3)
    kv = pool(r, "kv")
    assert (kv.admissions, kv.preemptions, kv.used, kv.wait) == (3, 1, 0.75, 1 / 3)


RECORDS = """
stage s : fifo;
workload { arrive batch(3); }
session {
  set i = 0;
  loop {
    set sent = now;
    run s (1);
    set i = i + 1;
    record req { sent = sent; wait = now - sent - 1; i = i; q = queue(s); }
    branch (i == 2) { end; }
  }
}
run { horizon 20; warmup 2; }
"""


def test_a_records_columns_are_read_when_it_runs_and_the_warm_up_keeps_rows_by_their_send_time(monkeypatch):
    """§3 Statistics: "observe x = e records a sample after warm-up with the time, session and turn"; a
    `record` row is every column "evaluated when the statement runs", kept when its `sent` is at or after
    the warm-up's end (docs/language.md, Statements), in a `loop` that ends at its second pass.

    One fifo server, three sessions of two 1-second jobs each. First passes: s0 [0, 1], s1 [1, 2], s2
    [2, 3], sent 0: their rows (at 1, 2, 3) are before the warm-up. Second passes, sent 1, 2 and 3, in the
    order of the first passes' ends: s0 [3, 4], s1 [4, 5], s2 [5, 6]. s0's row at 4 has sent 1, before the
    warm-up's end: left out although written after it. s1's at 5: waited 5 - 2 - 1 = 2, and s2, started at
    s1's completion, is the job at s (queue 1). s2's at 6: waited 2, queue 0. Records are no fast-tier
    program's; the general engine runs both, and they agree."""
    prog = serq_frontend.compile(source=RECORDS, sets={}, defs={})
    rows = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        rec = serq_sim.run(prog).records("req")
        rows.append({k: [float(x) for x in rec[k]] for k in ("session", "turn", "time", "sent", "wait", "i", "q")})
    assert rows[0] == rows[1] == {"session": [1, 2], "turn": [0, 0], "time": [5, 6], "sent": [2, 3],
                                  "wait": [2, 2], "i": [2, 2], "q": [1, 0]}
