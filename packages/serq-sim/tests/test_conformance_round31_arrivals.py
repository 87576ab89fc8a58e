"""Conformance of language.txt §2's arrival and run forms, by hand:

* "arrive renewal(~h2(mean, cv2)); supplies interarrival times; renewal(2) uses a constant two-second gap.
  Gaps must be positive and finite. The first renewal arrival occurs after one gap. For compatibility,
  poisson(rate) starts with an arrival at time zero, then uses exponential gaps of mean 1 / rate. Thus
  renewal(~exp(1 / rate)) has the same subsequent arrival schedule for the same seed, without the initial
  arrival at zero";
* "run { arrivals N; } requires exactly N open-workload arrivals and drains their sessions. horizon bounds
  both arrival generation and draining; failure to generate N arrivals or drain every session by that
  deadline is an error. Draining before or at warmup is also an error … The CLI accepts --arrivals N";
* "Reports keep horizon as the configured deadline and expose the actual termination time as end …
  Time averages and rates use end - warmup. Without an arrival limit, end equals horizon";
* `arrive closed(n)` (a session that ends is replaced), `arrive batch(n)`, and §3's Workload: "init runs
  at arrival, turn at every turn statement", with think times between turns.

Each program runs on the tier serQ picks and on the general engine (conform.run); the report is asserted as
its JSON reads (docs/simulator.md: `arrivals` counts every arrival, `ended` and `turns` after warm-up; an
observe of `now` is an instant, under `instants`).
"""

from __future__ import annotations

import pytest
from conform import report_json, run, run_error

ARRIVE = """
stage d : delay;
workload { arrive ARRIVE; }
session { observe t = now; run d (1); }
run { horizon 6; seed 5; }
"""


def _times(obs, name="t"):
    return [t for _s, t, _v in obs[name]]


@pytest.mark.parametrize("arrive, times, arrivals, ended", [
    # renewal(2): the first arrival after one gap: 2, 4, 6 (the horizon's instant happens,
    # docs/language.md); the one at 6 has not ended at the end, 6
    ("renewal(2)", [2.0, 4.0, 6.0], 3, 2),
    # batch(3): three sessions at 0, serials 0, 1, 2
    ("batch(3)", [0.0, 0.0, 0.0], 3, 3),
])
def test_a_workloads_arrival_times(monkeypatch, arrive, times, arrivals, ended):
    r, obs = run(ARRIVE.replace("ARRIVE", arrive), monkeypatch)
    assert _times(obs) == times and [s for s, _t, _v in obs["t"]] == list(range(len(times)))
    j = report_json(r)
    assert (j["arrivals"], j["ended"], j["end"], j["horizon"]) == (arrivals, ended, 6.0, 6.0)


def test_poisson_is_renewal_of_exp_with_an_arrival_at_zero(monkeypatch):
    """poisson(0.5) and renewal(~exp(2)) at one seed: the arrival gaps are one stream, in serial order
    (docs/simulator.md), so poisson's arrivals after its first at 0 are renewal's, one for one, to the
    last bit for a rate that is a power of two (-ln(1 - u) / 0.5 and -2 ln(1 - u) are one double)."""
    _r, p = run(ARRIVE.replace("ARRIVE", "poisson(0.5)").replace("horizon 6", "horizon 200"), monkeypatch)
    _r, q = run(ARRIVE.replace("ARRIVE", "renewal(~exp(2))").replace("horizon 6", "horizon 200"), monkeypatch)
    pt, qt = _times(p), _times(q)
    assert pt[0] == 0.0 and pt[1:] == qt and 0 < qt[0]
    # and the gaps are exponential of mean 2: ~100 arrivals over 200 s (a Poisson count of mean 100, sd 10)
    assert 70 <= len(qt) <= 130


def test_a_renewal_gap_reads_the_state_before_the_arrivals_session(monkeypatch):
    """docs/language.md: `renewal(g)` reads g at 0 and at every arrival, before that arrival's session
    runs. renewal(1 + holders(m)), each session holding m for 10: at 0 the gap is 1 (no holder) → 1; at 1,
    before s0 holds, 1 → 2; at 2 s0 holds: 2 → 4; at 4 s0, s1: 3 → 7; at 7: 4 → 11, past the horizon 10."""
    src = ("pool m { }\nstage d : delay;\nworkload { arrive renewal(1 + holders(m)); }\n"
           "session { observe t = now; hold m (1) { run d (10); } }\nrun { horizon 10; }\n")
    r, obs = run(src, monkeypatch)
    assert _times(obs) == [1.0, 2.0, 4.0, 7.0]
    assert report_json(r)["arrivals"] == 4


@pytest.mark.parametrize("gap, message", [
    ("0", "arrive renewal: the gap is 0; gaps must be positive and finite"),
    ("-1", "arrive renewal: the gap is -1; gaps must be positive and finite"),
    ("inf", "arrive renewal: the gap is inf; gaps must be positive and finite"),
])
def test_a_renewal_gap_is_positive_and_finite(monkeypatch, gap, message):
    """A constant gap outside (0, inf) does not link; the same gap computed from the state (holders(m) is 0
    at 0) is a run-time error at t=0."""
    import serq_frontend

    src = f"pool m {{ }}\nstage d : delay;\nworkload {{ arrive renewal({gap}); }}\nsession {{ run d (1); }}\nrun {{ horizon 5; }}\n"
    with pytest.raises(serq_frontend.CompileError) as e:
        serq_frontend.compile(source=src, sets={}, defs={})
    assert message in str(e.value)
    computed = src.replace(f"renewal({gap})", f"renewal(holders(m) + {gap})" if gap != "inf"
                           else "renewal(1 / holders(m))")
    assert run_error(computed, monkeypatch).endswith(f"error: at t=0: {message}")


DRAIN = """
stage d : delay;
workload { arrive renewal(2); }
session { run d (1); observe x = serial; }
run { horizon HORIZON; warmup WARMUP; arrivals 3; }
"""


@pytest.mark.parametrize("horizon, warmup, end, ended, present, throughput", [
    # three arrivals at 2, 4, 6, each on d for 1: drained at 7, the end; d busy [2, 3], [4, 5], [6, 7]:
    # 3 over end - warmup = 7; three completions over 7
    (100, 0, 7.0, 3, 3 / 7, 3 / 7),
    # warm-up 2: over [2, 7], busy 3 of 5, completions at 3, 5, 7 over 5
    (100, 2, 7.0, 3, 0.6, 0.6),
    # warm-up 6.5: over [6.5, 7], busy throughout (1), one completion over 0.5 (2); `ended` counts after
    # the warm-up (1), `arrivals` every arrival (3)
    (100, 6.5, 7.0, 1, 1.0, 2.0),
    # the horizon at exactly the drain: the instant happens, the run drained by the deadline
    (7, 0, 7.0, 3, 3 / 7, 3 / 7),
])
def test_a_run_of_n_arrivals_ends_when_drained(monkeypatch, horizon, warmup, end, ended, present, throughput):
    r, obs = run(DRAIN.replace("HORIZON", str(horizon)).replace("WARMUP", str(warmup)), monkeypatch)
    j = report_json(r)
    assert (j["end"], j["horizon"], j["warmup"], j["arrivals"], j["ended"]) == (end, float(horizon), warmup, 3, ended)
    d = j["stages"][0]
    assert (d["present"], d["throughput"]) == pytest.approx((present, throughput), rel=1e-12)
    assert [v for _s, t, v in obs["x"] if t >= warmup] == [float(s) for s in range(3 - ended, 3)]


@pytest.mark.parametrize("horizon, warmup, message", [
    # the third session arrives at 6 and is on d until 7: live at the horizon 6.5
    (6.5, 0, "at t=6.5: run { arrivals 3; }: 1 session still live at the horizon (not drained)"),
    # the second arrives at 4 > horizon 3.5: one arrival generated by the deadline, and said in the singular
    # (it said "only 1 arrivals")
    (3.5, 0, "at t=3.5: run { arrivals 3; }: only 1 arrival by the horizon"),
    # drained at 7 with the warm-up at 7: nothing to measure
    (100, 7, "at t=7: run { arrivals 3; }: drained at t=7, at or before the warmup 7 (nothing to measure)"),
])
def test_a_run_of_n_arrivals_that_does_not_drain_is_an_error(monkeypatch, horizon, warmup, message):
    err = run_error(DRAIN.replace("HORIZON", str(horizon)).replace("WARMUP", str(warmup)), monkeypatch)
    assert message in err


def test_the_arrivals_override_of_the_api(monkeypatch):
    """`serq_sim.run(prog, arrivals=5)` (the CLI's --arrivals) overrides the source's 3: arrivals at 2, …,
    10, drained at 11; on both tiers."""
    import serq_frontend
    from tiers import same_json

    prog = serq_frontend.compile(source=DRAIN.replace("HORIZON", "100").replace("WARMUP", "0"), sets={}, defs={})
    j = same_json(prog, monkeypatch, arrivals=5)
    assert (j["end"], j["arrivals"], j["ended"]) == (11.0, 5, 5)


CLOSED = """
stage think : delay;
stage cpu : fifo;
workload { arrive closed(3); }
session { set t0 = now; run cpu (1); observe r = now - t0; run think (2); }
run { horizon 12; }
"""


def test_a_closed_population_replaces_each_session_that_ends(monkeypatch):
    """Three sessions at 0 on one server of 1 s: responses 1, 2, 3 (done at 1, 2, 3). Each thinks 2 and ends
    (s0 at 3, s1 at 4, s2 at 5, …) and its replacement arrives then, finding the server free: a response of
    1, done at 4, 5, …; at 12 s11 is done (its sample kept, the horizon's instant) and s12 arrives. Arrivals
    3 + 10 replacements (ends at 3 … 12) = 13, ended 10. cpu: present 3, 2, 1 over [0, 3] then 1: 15/12;
    waits 0, 1, 2, then 0 (×9): 3/12; utilisation 1. think: present 1 on [1, 2], 2 from 2: 21/12; 10
    completions."""
    r, obs = run(CLOSED, monkeypatch)
    assert [v for _s, _t, v in obs["r"]] == [1.0, 2.0, 3.0] + [1.0] * 9
    assert [s for s, _t, _v in obs["r"]] == list(range(12))
    j = report_json(r)
    assert (j["arrivals"], j["ended"], j["mean_live"]) == (13, 10, 3.0)
    cpu, think = (next(s for s in j["stages"] if s["name"] == n) for n in ("cpu", "think"))
    assert (cpu["present"], cpu["wait"], cpu["utilisation"], cpu["completions"]) == (1.25, 0.25, 1.0, 12)
    assert (think["present"], think["completions"], think["service"]) == (1.75, 10, 2.0)


TURNS = """
stage d : delay;
stage tool : delay;
workload {
  arrive batch(2);
  init { set K = 100 * (serial + 1); observe k0 = K; observe n0 = turn_no; }
  turn { set n = 10 * turn_no; }
}
session {
  turn;
  loop {
    run d (1);
    set K = K + n;
    observe k = K;
    branch (turn_no < 3) { tool (2 + serial); turn; } else { end; }
  }
}
run { horizon 100; }
"""


def test_turns_and_think_times(monkeypatch):
    """init runs once at arrival (turn_no 0), the turn block at every `turn;` (turn_no 1, 2, 3 there: n 10,
    20, 30). s0: K 100, then 110 at 1, think 2, 130 at 4, think 2, 160 at 7, ends. s1 thinks 3: K 200, 210 at
    1, 230 at 5, 260 at 9. `tool Z;` runs on the stage `tool`: 4 thinks, 2 + 2 + 3 + 3 = 10 s; turns 6."""
    r, obs = run(TURNS, monkeypatch)
    assert [(s, v) for s, _t, v in obs["k0"]] == [(0, 100.0), (1, 200.0)]
    assert [v for _s, _t, v in obs["n0"]] == [0.0, 0.0]
    assert [(s, t, v) for s, t, v in obs["k"]] == [(0, 1.0, 110.0), (1, 1.0, 210.0), (0, 4.0, 130.0),
                                                    (1, 5.0, 230.0), (0, 7.0, 160.0), (1, 9.0, 260.0)]
    j = report_json(r)
    tool = next(s for s in j["stages"] if s["name"] == "tool")
    assert (j["turns"], j["ended"], tool["completions"], tool["service"]) == (6, 2, 4, 2.5)


def test_the_cli_arrivals_overrides_the_source_for_run_and_ir(tmp_path, capsys, monkeypatch):
    """§2: "The CLI accepts --arrivals N for run and ir, overriding the source value": `serq ir
    --arrivals 5` writes 5 in the IR's run block (the span naming the flag), `serq run --arrivals 5
    --json` drains at 11 (arrivals at 2, …, 10, each on d for 1), on the default tier and the general
    engine alike."""
    import json

    from serq.cli import main

    path = tmp_path / "p.sq"
    path.write_text(DRAIN.replace("HORIZON", "100").replace("WARMUP", "0"))
    with pytest.raises(SystemExit) as info:
        main(["ir", str(path), "--arrivals", "5"])
    assert info.value.code in (0, None)
    run_block = json.loads(capsys.readouterr().out)["run"]
    assert (run_block["arrivals"], run_block["span"]["arrivals"]) == (5, "--arrivals 5")
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        with pytest.raises(SystemExit) as info:
            main(["run", str(path), "--arrivals", "5", "--json", "--no-progress"])
        assert info.value.code in (0, None)
        j = json.loads(capsys.readouterr().out)
        assert (j["end"], j["arrivals"], j["ended"], j["horizon"]) == (11.0, 5, 5, 100.0)


TRACE_CSV = "session,turn,new,out,think,forced\n0,1,10,2,1.5,0\n0,2,20,3,2.5,1\n1,1,30,4,0.5,0\n"
TRACED = """
stage d : delay;
stage tk : delay;
workload { arrive batch(3); trace "t.csv" ordered; }
session {
  turn;
  loop {
    observe n = new;
    observe o = out;
    observe f = forced;
    observe m = more;
    observe k = turn_no;
    run d (1);
    branch (more) { run tk (think); turn; } else { end; }
  }
}
run { horizon 20; }
"""


def test_a_trace_replayed_in_order(tmp_path, monkeypatch):
    """§3, Workload: "with a trace, turn loads the next turn's new, out, think, forced and sets more
    (ordered: session i replays trace session i)" (docs/language.md: serial mod the trace's sessions). s0
    replays trace session 0: (10, 2, think 1.5, more 1) at 0, then after d's 1 and the think of 1.5, (20,
    3, forced 1, more 0) at 2.5; s1 session 1's one turn (30, 4, more 0); s2 (2 mod 2) session 0 again.
    turn_no counts the turns. tk runs two thinks of 1.5; turns 5."""
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    path = tmp_path / "p.sq"
    path.write_text(TRACED)
    r, obs = run("", monkeypatch, path=path)
    want = {"n": [10, 30, 10, 20, 20], "o": [2, 4, 2, 3, 3], "f": [0, 0, 0, 1, 1], "m": [1, 0, 1, 0, 0],
            "k": [1, 1, 1, 2, 2]}
    for name, values in want.items():
        assert [v for _s, _t, v in obs[name]] == [float(v) for v in values], name
        assert [(s, t) for s, t, _v in obs[name]] == [(0, 0.0), (1, 0.0), (2, 0.0), (0, 2.5), (2, 2.5)]
    j = report_json(r)
    tk = next(s for s in j["stages"] if s["name"] == "tk")
    assert (j["turns"], tk["completions"], tk["service"]) == (5, 2, 1.5)
