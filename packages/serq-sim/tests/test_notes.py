"""The warnings about the figures: not steady, too few samples after the warm-up, holds rejected as never
fitting (the deadlock and stuck notes: test_hangs.py, test_pools.py). Each fires on a program built for it,
with its figures, and is silent on a steady run; the shipped examples' notes at their defaults are pinned
by test_golden_runs.py (a note these added there would fail it)."""

from __future__ import annotations

import math

import pytest
import serq_frontend
import serq_sim
from serq.cli import main
from serq_sim import notes
from serq_sim.api import registries
from serq_sim.backlog import Backlog
from serq_sim.engine import Simulation

MM1 = """
stage s : fifo;
workload {{ arrive poisson({rate}); }}
session {{ set t0 = now; run s (~exp(1)); observe response = now - t0; }}
run {{ horizon {horizon}; warmup {warmup}; }}
"""


def warnings(src: str, seed: int = 1) -> list[str]:
    return serq_sim.run(serq_frontend.compile(source=src), seed=seed).warnings


def backlog_of(src: str, seed: int = 1):
    """The run's :class:`serq_sim.backlog.Backlog` (and its report)."""
    sim = Simulation(serq_frontend.compile(source=src), registries(), seed=seed)
    report = sim.run()
    return sim.backlog, report


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_overloaded_queue_is_not_steady(seed):
    # rho = 1.2: the queue grows by 0.2 a second
    src = MM1.format(rate=1.2, horizon=2000, warmup=200)
    (w,) = warnings(src, seed)
    b, report = backlog_of(src, seed)
    assert len(b.times) == 20 and b.times[-1] == 2000.0
    live_end = b.live[-1]
    arrived = b.arrivals[-1] - b.arrivals0
    ended = arrived - (live_end - b.live0)
    assert ended == report.result.ended  # every session ended after the warm-up is counted
    assert w.startswith("warning: the run is not steady: the live sessions (the backlog) climb through the "
                        f"run: {b.live0:g} at the warm-up's end (t = 200) and {live_end:g} at t = 2000, a mean "
                        "of ")
    assert arrived > 1 and f"{arrived:g} sessions arrived and {ended:g} ended in that time" in w
    assert "over 20 bins of 90, the fitted growth " in w and ", t = " in w and "second half t = " in w
    # the backlog grows by about 0.2 a second: over 1 800 s, 360 (a random walk about it)
    assert 200 < live_end - b.live0 < 520


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_steady_queue_is_not_flagged(seed):
    assert warnings(MM1.format(rate=0.8, horizon=20000, warmup=2000), seed) == []


def test_near_the_knee_the_warning_tells_rho_0_9_from_1_1():
    """An M/M/1 over 2 000 mean service times after a warm-up of 200: at rho = 0.9 (steady, a mean of 9 in
    the system, but slow: its relaxation takes hundreds of service times) the warning fired for 3 of
    1 000 seeds when the rule was chosen, at rho = 1.1 (the backlog grows by 0.1 a second, 180 over the
    run) for 290 of 300. Here: at most 1 % of 200 seeds, and at least 90 % of 50."""
    steady = sum(bool(warnings(MM1.format(rate=0.9, horizon=2000, warmup=200), seed)) for seed in range(1, 201))
    over = sum(bool(warnings(MM1.format(rate=1.1, horizon=2000, warmup=200), seed)) for seed in range(1, 51))
    assert steady <= 2 and over >= 45, (steady, over)


RENEWAL = """
stage d : delay;
workload { arrive renewal(1); }
session { run d (3.5); }
run { horizon 200; warmup WARMUP; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
def test_the_backlog_bins_by_hand(tier, monkeypatch):
    """Arrivals at 1, 2, 3, …, each live 3.5: from t = 4 the live count is 4 over [k, k + 0.5) and 3 over
    [k + 0.5, k + 1). 20 bins of 10: the first holds 1 + 2 + 3 over [1, 4) and 6 × 3.5 after, a mean of
    2.7; every other bin 3.5; at each bin's end 3 live, the arrivals before it counted. With a warm-up of
    20 the bins are 20 of 9 from 20 on, the count at the warm-up's end 3 (arrivals 17, 18, 19: the warm-up's
    event comes before the arrival at its instant)."""
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    b, _ = backlog_of(RENEWAL.replace("WARMUP", "0"))
    assert b.means() == [2.7] + [3.5] * 19
    assert list(b.times) == [10.0 * k for k in range(1, 21)]
    assert list(b.live) == [3.0] * 20 and list(b.arrivals) == [10.0 * k - 1 for k in range(1, 21)]
    assert (b.live0, b.arrivals0) == (0, 0)
    b, _ = backlog_of(RENEWAL.replace("WARMUP", "20"))
    assert list(b.times) == [20.0 + 9 * k for k in range(1, 21)]
    assert b.means() == [3.5] * 20
    assert (b.live0, b.arrivals0) == (3, 19)
    assert notes.steadiness(b, 199) == []  # flat: no scatter and no slope


def test_bins_that_merge_and_a_drain():
    """Without a horizon the bins start at 2^-10 and merge by pairs at 40: a run that drains (``arrivals
    N``) keeps between 20 and 40, and the test leaves out those after the last arrival."""
    b = Backlog(0.0, math.inf)
    # live 1 over [0, 50), 2 over [50, 60) (the second arrival at 50), 1 over [60, 100), then 0 up to 300
    for now, live, live_t, area, arrivals in [(50.0, 1, 0.0, 0.0, 1), (60.0, 2, 50.0, 50.0, 2),
                                              (100.0, 1, 60.0, 70.0, 2), (300.0, 0, 100.0, 110.0, 2)]:
        b.cut(now, live, live_t, area, arrivals)
    # 300 / 4 = 75 bins of 4 merged; 37 of 8 did not need to
    assert b.times.tolist() == [8.0 * k for k in range(1, 38)]
    means = b.means()
    assert means[:6] == [1.0] * 6 and means[6] == (2 * 1 + 6 * 2) / 8 and means[7] == (4 * 2 + 4 * 1) / 8
    assert means[8:12] == [1.0] * 4
    assert means[12] == (4 * 1 + 4 * 0) / 8 and means[13:] == [0.0] * 24
    # the bins up to the one of the last arrival (at 50: (48, 56]); the live count then 2, 1 arrived since
    assert notes.backlog_bins(b, 2) == (means[:7], 56.0, 2.0, 2.0)


def test_the_trend_figures_by_hand():
    # bins 0, 1, …, 19: slope 1 per bin, no residual: t = inf; the growth 20 / the mean 9.5
    r = notes.trend([float(k) for k in range(20)], 0, 19)
    assert r["t"] == math.inf and r["rise"] == 20 / 9.5 and r["growth"] == 19 / 9.5
    assert r["half_t"] == math.inf and r["half_rise"] == 20 / 9.5
    assert notes.climbs(r)
    assert notes.trend([1.0] * 9, 1, 1) is None  # too few bins
    assert notes.trend([0.0] * 20, 0, 0) is None  # nothing in the system
    assert not notes.climbs(notes.trend([1.0] * 20, 1, 1))  # flat, no scatter: t NaN
    # alternating 0, 2, 0, 2, …: no slope
    assert abs(notes.trend([float(2 * (k % 2)) for k in range(20)], 0, 2)["t"]) < 1
    # a backlog that fills to its level in the first half and stays there (a warm-up too short for the
    # level, not an overload): the whole run climbs (t > 6), the second half does not
    fill = [min(k, 10) + 0.1 * (-1) ** k for k in range(20)]
    r = notes.trend(fill, 0, 10)
    assert r["t"] > notes.TREND_T and r["rise"] > notes.TREND_RISE and r["growth"] > notes.TREND_GROWTH
    assert r["half_t"] < notes.HALF_T and not notes.climbs(r)
    # a climb of the bins with arrivals no greater than completions (the live count back where it began)
    assert not notes.climbs(notes.trend([float(k) for k in range(20)], 5, 5))


def test_a_short_run_after_the_warm_up_has_too_few_samples():
    (w,) = warnings(MM1.format(rate=0.5, horizon=60, warmup=20))
    assert w.startswith("warning: too few samples after the warm-up (t = 20) for a CI and quantiles (at least 40): "
                        "response ")
    assert warnings(MM1.format(rate=0.5, horizon=2000, warmup=20)) == []


def test_holds_that_never_fit_are_rejected_with_their_share():
    src = """
    pool kv { cap 100; }
    stage s : delay;
    workload { arrive poisson(1); }
    session { set n = serial % 4 == 0 ? 150 : 50; set t0 = now; hold kv (n) { run s (0.1); }
              observe response = now - t0; }
    run { horizon 400; warmup 0; }
    """
    report = serq_sim.run(serq_frontend.compile(source=src))
    pool = report.pool("kv")
    (w,) = report.warnings
    total = pool.rejections + pool.admissions
    assert pool.rejections > 0
    assert w == (f"warning: pool kv rejected {pool.rejections} hold(s) that can never fit its capacity 100 "
                 f"({pool.rejections / total * 100:.3g} % of its {total} rejections and admissions after the "
                 f"warm-up: {pool.rejections} rejected, {pool.admissions} admitted; a hold still queued at the "
                 "end is in neither); their sessions ended there, so the latency figures cover only the admitted")
    # every fourth session asks for 150 of 100
    assert abs(pool.rejections / total - 0.25) < 0.06


STUCK = """
pool p { cap 10; preempt lifo; }
pool q { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    run d (2);
    hold p (4) { run d (1); grow p (4); run d (1); }
  } else {
    run d (1);
    hold p (4) { run d (2); hold q (1) { run d (20); } }
  }
}
run { horizon 30; }
"""


def test_a_session_stuck_in_preemption_is_a_warning():
    # session 0 grows p to 8 + 4 > 10 at 3 while session 1 holds 4 until 23: it preempts itself, is
    # admitted again at once, and fails again at the same position every second (test_preempt_rules.py):
    # 20 preemptions, the second and later without progress (stuck, counted once)
    report = serq_sim.run(serq_frontend.compile(source=STUCK))
    p = report.pool("p")
    assert (p.preemptions, p.stuck) == (20, 1)
    assert report.warnings == [
        "warning: 1 session stuck in the run, preempted again without progress (at no greater "
        "position than at their previous preemption): p (1 stuck, 20 preemption(s)); such a session can cycle "
        "between admission and preemption for as long as the pool is short, and its latency grows with it; on p no "
        "growing run or load advances a hold's position, so every preemption there found position 0, and only a "
        "session preempted again by its own growth is counted (re-executed, its hold grows into the same "
        "shortage)"]


DEADLOCK = """pool p1 { cap 1; }
pool p2 { cap 1; }
stage s : fifo;
workload { arrive batch(2); }
session {
  branch (serial % 2 == 0) { hold p1 (1) { run s (1); hold p2 (1) { run s (1); } } }
  else { hold p2 (1) { run s (1); hold p1 (1) { run s (1); } } }
}
run { horizon 100; }
"""

REJECT = """pool kv { cap 100; }
stage s : delay;
workload { arrive poisson(1); }
session { hold kv (serial % 4 == 0 ? 150 : 50) { run s (0.1); } }
run { horizon 400; warmup 0; }
"""

#: a program built to trigger each warning, and how the warning starts
WARNINGS = {
    "overload": (MM1.format(rate=1.2, horizon=2000, warmup=200), "warning: the run is not steady: "),
    "few samples": (MM1.format(rate=0.5, horizon=60, warmup=20), "warning: too few samples after the warm-up"),
    "rejection": (REJECT, "warning: pool kv rejected "),
    "stuck": (STUCK, "warning: 1 session stuck in the run"),
    "deadlock": (DEADLOCK, "warning: 2 sessions wait for ever at the end of the run"),
}


@pytest.mark.parametrize("kind", list(WARNINGS))
def test_strict_fails_on_each_warning(kind, tmp_path, capsys):
    src, head = WARNINGS[kind]
    path = tmp_path / "p.sq"
    path.write_text(src)
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--no-progress"])
    assert info.value.code == 0  # a warning alone is no error
    plain = capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--no-progress", "--strict"])
    out = capsys.readouterr().out
    assert info.value.code == 4 and out == plain
    (line,) = [x for x in out.splitlines() if x.startswith("warning:")]  # that warning, and it alone
    assert line.startswith(head)


# -- a workload that starts no session ------------------------------------------------------------------

NOTHING = "stage s : fifo;\n{workload}session {{ run s (1); observe x = 1; }}\nrun {{ horizon 10; }}\n"


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("workload", ["", "workload { arrive none; }\n"])
def test_a_workload_without_arrivals_is_a_warning(monkeypatch, tier, workload):
    # it ran with no session and no word: a report of zeros and NaN, as a measured idle system would be
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    report = serq_sim.run(serq_frontend.compile(source=NOTHING.format(workload=workload)))
    assert report.result.arrivals == 0
    assert report.warnings == [
        "warning: nothing starts a session: the workload has no arrivals (`arrive none`, or no `arrive`) and no "
        "preset session, so the run simulates no session; give the workload `arrive poisson(rate);`, "
        "`renewal(gap)`, `closed(n)` or `batch(n)`"]


def test_a_trace_starts_no_session_itself(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("session,turn,new,out,think,forced\n0,0,10,5,1,0\n")
    src = NOTHING.format(workload=f'workload {{ arrive none; trace "{trace.name}"; }}\n')
    (tmp_path / "p.sq").write_text(src)
    [w] = serq_sim.run(serq_frontend.compile(str(tmp_path / "p.sq"))).warnings
    assert "no preset session (its trace starts none: a session that arrives takes a trace session's turns)" in w


def test_a_population_of_zero_in_an_ir_is_a_warning():
    import msgspec
    from serq_ir import nodes as N

    p = serq_frontend.compile(source=NOTHING.format(workload="workload { arrive batch(1); }\n"))
    p = msgspec.structs.replace(p, workload=msgspec.structs.replace(p.workload, arrive=N.Batch(n=0)))
    [w] = serq_sim.run(p).warnings
    assert w.startswith("warning: nothing starts a session: the workload has a population of 0 (`arrive batch(0)`)")


def test_sessions_started_otherwise_are_no_warning():
    # presets (the vLLM scenarios' requests, with `arrive none`), batch, closed, renewal: no such warning
    for workload in ("arrive batch(2);", "arrive closed(1);", "arrive renewal(1);", "arrive poisson(1);"):
        report = serq_sim.run(serq_frontend.compile(source=NOTHING.format(workload=f"workload {{ {workload} }}\n")))
        assert not any("nothing starts" in w for w in report.warnings), workload
    import msgspec
    from serq_ir import nodes as N

    p = serq_frontend.compile(source=NOTHING.format(workload="workload { arrive none; }\n"))
    p = msgspec.structs.replace(p, workload=msgspec.structs.replace(p.workload, presets=[N.Preset(at=1.0)]))
    report = serq_sim.run(p)
    assert report.result.arrivals == 1 and not any("nothing starts" in w for w in report.warnings)


def test_serq_run_says_it_on_stderr_before_the_run(tmp_path, capsys):
    path = tmp_path / "p.sq"
    path.write_text(NOTHING.format(workload=""))
    for strict, status in ((False, 0), (True, 4)):
        with pytest.raises(SystemExit) as info:
            main(["run", str(path), "--no-progress", *(["--strict"] if strict else [])])
        out = capsys.readouterr()
        assert info.value.code == status
        assert out.err.startswith("serq: warning: nothing starts a session: the workload has no arrivals"), out.err
        assert "warning: nothing starts a session" in out.out  # the report says it too


def test_too_few_request_rows_say_the_metrics_lack_a_ci_not_their_quantiles():
    # 12 requests recorded in the table the request metrics are read from, and one other table: the
    # metrics' quantiles are printed from 12 rows (vLLM's are), only their CI needs 40; the other table has
    # no statistics to warn about
    src = """
    pool q { cap 1; }
    stage s : fifo;
    workload { arrive poisson(1); }
    session {
      set t0 = now;
      hold q (1) { run s (0.1); }
      record request { sent = t0; first_token = now; last_token = now; output = 1; }
      record other { at = now; }
    }
    run { horizon 1e9; warmup 0; arrivals 12; }
    """
    report = serq_sim.run(serq_frontend.compile(source=src))
    m = report.result.requests
    assert m is not None and m.ttft.count == 12
    assert m.ttft.median == m.ttft.median and m.ttft.ci != m.ttft.ci  # a median (not NaN), no CI
    (w,) = report.warnings
    assert w == ("warning: too few samples after the warm-up (t = 0) for the CI of the request metrics "
                 "(at least 40 rows; their quantiles are given all the same): record request 12; send more "
                 "than 12 arrivals (--arrivals)")
