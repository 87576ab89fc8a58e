"""A hold that outgrows its pool follows language.txt §3: it preempts itself and re-executes, and `stuck` names it.

§3 Statistics: "A hold that fits at admission but can never grow to what its body needs (prompt + out > cap
under preempt lifo) preempts itself and re-executes forever; the run would otherwise end at the horizon with
nothing but a preemption count, and the report now names the livelock." A run with a horizon goes on to it,
the session counted stuck once and the stuck warning saying it preempted itself again and again; a run with
no horizon (`horizon inf`) would never end, and is the run-time error at the hold at its first such
preemption (docs/language.md, "A hold that outgrows its pool"); a grower re-admitted and preempted again at
one instant meets the guard of 10 000 re-executions; a hold whose reserve, read again, is above the cap is
rejected as before. Every case on both tiers (the default and SERQ_SIM_TIER=general), by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_frontend
import serq_sim
from tiers import same_json

pytestmark = pytest.mark.timeout(120)


def compiled(src: str):
    return serq_frontend.compile(source=src, sets={}, defs={})


def pool(report: dict, name: str = "kv") -> dict:
    return next(p for p in report["pools"] if p["name"] == name)


def error_on_both_tiers(src: str, monkeypatch, **kw) -> str:
    """The first line of the run-time error of ``src`` (the place, time, session and message), the same words
    on the default tier and on the general engine."""
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        with pytest.raises(serq_sim.SimError) as e:
            serq_sim.run(compiled(src), **kw)
        out.append(str(e.value))
    assert out[0] == out[1]
    return out[0].splitlines()[0]


def no_horizon(where: str, units: str, pool_name: str, cap: str) -> str:
    return (f"{where}: hold: its growth takes the hold to {units} units of {pool_name}, above the pool's capacity "
            f"{cap}, so the hold preempted itself and, executed again, would grow into the same preemption for "
            "ever; the run has no horizon (horizon inf) to end it: give the run a horizon (horizon T, or --horizon "
            "T), the pool a larger capacity, the body a cut before the growth, or the hold a reserve of what it "
            "will need (reserve), which rejects it once that is above the capacity")


def livelock_words(units: str, cap: str) -> str:
    return ("on kv 1 session preempted itself again and again at the same position, its hold needing more than "
            f"the pool's capacity ({units} units for the first, capacity {cap}), so re-executed it grows into the "
            "same preemption for as long as the run goes on")


# A grow statement beyond the cap, time passing before it. By hand: session 0 is admitted at 0 with 2 of 4,
# runs d over [0, 1], and at 1 grows by 3 to 5 > 4, its hold alone: the pool's last holder is the grower, which
# preempts itself (position 0: a grow statement advances none); §3 re-executes the hold at once (2 fits), it
# runs d over [1, 2] and preempts itself again at 2, the second preemption at no greater position: stuck. So
# on to the horizon 9.5: preemptions at 1, 2, ..., 9 (9), admissions at 0, 1, ..., 9 (10), one session stuck,
# no rejection, 2 units held throughout (used 2), `done` never observed.
GROW = """pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(1); }
session { hold kv (2) { observe a = now; run d (1); grow kv (3); run d (1); } observe done = now; }
run { horizon 9.5; }
"""


def test_a_grow_beyond_the_cap_re_executes_to_the_horizon_and_is_stuck(monkeypatch):
    r = same_json(compiled(GROW), monkeypatch)
    kv = pool(r)
    assert (kv["preemptions"], kv["admissions"], kv["stuck"], kv["rejections"]) == (9, 10, 1, 0)
    assert kv["used"] == 2.0
    assert (r["end"], r["arrivals"], r["ended"]) == (9.5, 1, 0)
    assert r["instants"] == {"a": 10, "done": 0}
    [w] = [n for n in r["notes"] if n.startswith("warning: 1 session stuck in the run")]
    assert "kv (1 stuck, 9 preemption(s))" in w
    assert livelock_words("5", "4") in w, w
    assert not any(n.startswith("warning: pool kv rejected") for n in r["notes"])


# The step engine: prompt 4, 8 outputs, a pool of 2 blocks of 4 (cap 8), budget 16, cost 1. By hand: admitted at
# 0 with one block (computed 0), prefills 4 over [0, 1], decodes positions 5 .. 8 over [1, 5] (the second block
# at 5); at 5 position 9 needs a third block, 12 > 8, the hold alone: it preempts itself at position 8 (the
# iteration [5, 6] only preempted) and is admitted again at 6 (computed 8; its body recomputes from the prompt),
# and so on every 6: preemptions at 5, 11, 17, 23 (4; from the second at no greater position, 8: stuck),
# admissions at 0, 6, 12, 18, 24 (5) before the horizon 28; `c` observed 0, then 8 four times (mean 6.4).
STEP = """pool kv { cap 8; block 4; preempt lifo; }
stage E : step { budget 16; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (4) {
    observe c = computed;
    run E prefill (4) growing kv;
    run E decode (8) growing kv;
  }
  observe done = now;
}
run { horizon 28; }
"""


def test_a_growing_run_beyond_the_cap_re_executes_to_the_horizon_and_is_stuck(monkeypatch):
    r = same_json(compiled(STEP), monkeypatch)
    kv = pool(r)
    assert (kv["preemptions"], kv["admissions"], kv["stuck"], kv["rejections"]) == (4, 5, 1, 0)
    c = r["observes"]["c"]
    assert (c["count"], c["mean"]) == (5, 6.4)
    assert r["instants"] == {"done": 0}
    [w] = [n for n in r["notes"] if n.startswith("warning: 1 session stuck in the run")]
    assert livelock_words("12", "8") in w, w


def test_a_victim_of_another_sessions_growth_is_no_livelock(monkeypatch):
    # session 0 holds 2 of 4 from 0 and grows by 2 at 1 (4: fits alone); session 1, admitted at 0.5 with 2 and
    # the last admitted, is the victim at 1, re-queued, and waits for session 0, which ends at 2; admitted at 2,
    # it ends at 3.5. One preemption, three admissions, no session stuck, no livelock words; the run goes on to
    # its horizon 10 with both sessions ended
    src = """pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); run d (1); } }
  else { run d (0.5); hold kv (2) { run d (1.5); } }
}
run { horizon 10; }
"""
    r = same_json(compiled(src), monkeypatch)
    kv = pool(r)
    assert (kv["preemptions"], kv["admissions"], kv["stuck"], kv["rejections"]) == (1, 3, 0, 0)
    assert (r["end"], r["ended"]) == (10.0, 2)
    assert not any("again and again" in n for n in r["notes"])


# With no horizon the livelock never ends: the run-time error at the hold statement, at the instant of the
# first such preemption, naming the pool, the units, the cap, the time and the session.
@pytest.mark.parametrize("src, where, units, cap", [
    # the grow statement: at 1, session 0, the hold at 4:11, 5 units of a cap of 4
    (GROW.replace("horizon 9.5;", "horizon inf;"), "<source>:4:11: error: at t=1, session 0", "5", "4"),
    # the step engine: at 5, session 0, the hold at 5:3, 12 units (3 blocks of 4) of a cap of 8
    (STEP.replace("horizon 28;", "horizon inf;"), "<source>:5:3: error: at t=5, session 0", "12", "8"),
    # an open workload bounded by its arrivals (the run that never ended): session 0 arrives at 1 (renewal), is
    # admitted and grows at 2
    (GROW.replace("run { horizon 9.5; }", "run { horizon inf; arrivals 3; }").replace("batch(1)", "renewal(1)"),
     "<source>:4:11: error: at t=2, session 0", "5", "4"),
], ids=["grow", "step", "arrivals"])
def test_with_no_horizon_the_livelock_is_an_error_at_the_hold(src, where, units, cap, monkeypatch):
    assert error_on_both_tiers(src, monkeypatch) == no_horizon(where, units, "kv", cap)


def test_with_no_horizon_given_to_run_the_livelock_is_an_error_at_the_hold(monkeypatch):
    # horizon=math.inf given to serq_sim.run over the program's horizon 9.5: the same error as horizon inf
    import math

    msg = error_on_both_tiers(GROW.replace("batch(1)", "renewal(1)"), monkeypatch, horizon=math.inf, arrivals=1)
    assert msg == no_horizon("<source>:4:11: error: at t=2, session 0", "5", "kv", "4")


def test_with_no_horizon_a_grower_other_holders_make_room_for_runs_on(monkeypatch):
    # session 1's growth to 4 fits the cap but not beside session 0's 2: it is its own victim (the last
    # admitted), and its hold alone (4) is no livelock. By hand: admitted at 0.5 (2 + 2 of 4), it runs d over
    # [0.5, 1] and at 1 preempts itself; re-executed, its 2 fit again at once, and it preempts itself at 1.5, 2
    # and 2.5 too (4 preemptions, each at position 0: stuck from the second); at 3 session 0 leaves first (its
    # completion was scheduled first), the growth fits, and session 1 runs d over [3, 4]. No error: admissions
    # at 0 (session 0) and 0.5, 1, 1.5, 2, 2.5 (6); the run drains at 4. The stuck warning keeps its words for
    # a session cycling while the pool is short, with no livelock words.
    src = """pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) { run d (3); } }
  else { run d (0.5); hold kv (2) { run d (0.5); grow kv (2); run d (1); } }
}
run { horizon inf; }
"""
    r = same_json(compiled(src), monkeypatch)
    kv = pool(r)
    assert (kv["preemptions"], kv["admissions"], kv["stuck"], kv["rejections"]) == (4, 6, 1, 0)
    assert (r["end"], r["ended"]) == (4.0, 2)
    [w] = [n for n in r["notes"] if n.startswith("warning: 1 session stuck in the run")]
    assert "such a session can cycle between admission and preemption for as long as the pool is short" in w
    assert "again and again" not in w


def test_with_no_horizon_a_reserve_above_the_cap_still_rejects(monkeypatch):
    # §3: "A hold that reserves what it will need (reserve (known) after a preemption) is rejected instead,
    # once the reservation is above the cap." STEP with reserve (computed + 4): 4 at admission; the preemption
    # at 5 (computed 8) re-executes the hold, whose reserve 12 is above 8: rejected at 5 as it joins the queue
    # again, not the no-horizon error. One admission, one preemption, one rejection; the run ends at 6, when the
    # iteration [5, 6] that only preempted ends. kv: 4 on [0, 1], 8 on [1, 5], none on [5, 6]: 36 / 6 = 6.
    src = STEP.replace("hold kv (4) {", "hold kv (4) reserve (computed + 4) {").replace("horizon 28;", "horizon inf;")
    r = same_json(compiled(src), monkeypatch)
    kv = pool(r)
    assert (kv["preemptions"], kv["admissions"], kv["stuck"], kv["rejections"]) == (1, 1, 0, 1)
    assert (r["end"], r["ended"], kv["used"]) == (6.0, 1, 6.0)
    [w] = [n for n in r["notes"] if n.startswith("warning: pool kv rejected")]
    assert "1 on re-admission after a preemption (its units or reserve, evaluated again, above the capacity)" in w


# The same instant: a grow beyond the cap with no time before it is re-admitted and grows again at once. Under
# a horizon that is the guard of 10 000 re-executions at one instant: the error at the hold (4:22), at t=2, the
# instant of the growth, session 0.
REDO = ("hold: preempted and re-executed 10000 times at one instant without simulated time passing (its body "
        "makes the pool preempt it again before any time passes, as a grow beyond what the pool can ever give "
        "does, or one that the other holders leave no room for, where the pool preempts the grower itself)")
SAME_INSTANT = """pool kv { cap 4; preempt lifo; }
stage d : delay;
workload { arrive batch(1); }
session { run d (2); hold kv (2) { grow kv (3); run d (1); } }
run { horizon 10; }
"""


def test_a_grow_beyond_the_cap_at_one_instant_is_the_guards_error(monkeypatch):
    assert error_on_both_tiers(SAME_INSTANT, monkeypatch) == "<source>:4:22: error: at t=2, session 0: " + REDO


def test_a_grow_beyond_the_cap_at_one_instant_with_no_horizon_is_known_at_once(monkeypatch):
    # under horizon inf the first preemption is the error, before any re-execution: 5 units of a cap of 4
    msg = error_on_both_tiers(SAME_INSTANT.replace("horizon 10;", "horizon inf;"), monkeypatch)
    assert msg == no_horizon("<source>:4:22: error: at t=2, session 0", "5", "kv", "4")


def test_serq_run_says_it_in_one_message(tmp_path):
    # the command line: exit 1, the message with the hold's line and caret, no traceback
    prog = tmp_path / "p.sq"
    prog.write_text(GROW.replace("horizon 9.5;", "horizon inf;"))
    serq = Path(sys.executable).with_name("serq")
    r = subprocess.run([str(serq), "run", str(prog), "--no-progress"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == no_horizon(f"{prog}:4:11: error: at t=1, session 0", "5", "kv", "4"), r.stderr
    assert lines[1].strip().startswith("session { hold kv (2) {") and lines[2].strip() == "^", r.stderr
