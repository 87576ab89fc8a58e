"""Conformance of language.txt §3, Stages, by hand: "fifo(c): c servers, jobs in arrival order at rate 1.
ps(φ): every job at once, each at φ(present)/present. delay: every job on its own at rate 1. run a, b (w) is
one job that holds a and b from its start to its end … share maxmin is max-min fair …; share bottleneck gives
each flow its equal share at the tightest of its stages, min over s of φ_s / n_s, and leaves what that does not
use at the other stages unused … its utilisation is the capacity its flows carry, Σ rate / φ"; the step
engine's cost in `attention` ("attention = Σ n (K + n/2) over the prefill chunks, K the position before the
chunk", §2), `serve exclusive prefill`, "A run of zero work completes at once"; and §3, Pools: "A request that
can never fit — its units, or its reserve when that is larger, above the cap … — is rejected: the session
ends".

Each program runs on the tier serQ picks and on the general engine (conform.run); the stages' and pools'
figures are asserted as the JSON report reads them, every number derived in the comments.
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, run


def _stage(r, name) -> dict:
    return next(s for s in report_json(r)["stages"] if s["name"] == name)


SERVERS = """
stage a : ps(min(present, 2));
stage b : ps(1);
stage c : fifo(2);
workload { arrive batch(3); }
session {
  run a (1); observe ta = now;
  run b (3 - serial); observe tb = now;
  run c (1 + serial); observe tc = now;
}
run { horizon 20; }
"""


def test_ps_and_fifo_servers(monkeypatch):
    """a: three jobs of 1 under φ = min(present, 2): each at 2/3, all done at 1.5; present 3 · 1.5 over 20.
    b: works 3, 2, 1 (s0, s1, s2) from 1.5 under ps(1): each at 1/3 until s2's 1 is done at 4.5; s1 (1
    left) and s0 (2) at 1/2: s1 at 6.5; s0's last 1 alone: 7.5. Present 3 · 3 + 2 · 2 + 1 = 14 over 20,
    busy 6 of 20, service (3 + 5 + 6) / 3. c: fifo(2), arrivals s2 (3) at 4.5, s1 (2) at 6.5, s0 (1) at 7.5:
    a server each, no wait: 7.5, 8.5, 8.5."""
    r, obs = run(SERVERS, monkeypatch)
    assert [(s, t) for s, t, _v in obs["ta"]] == [(0, 1.5), (1, 1.5), (2, 1.5)]
    assert [(s, t) for s, t, _v in obs["tb"]] == [(2, 4.5), (1, 6.5), (0, 7.5)]
    assert sorted((s, t) for s, t, _v in obs["tc"]) == [(0, 8.5), (1, 8.5), (2, 7.5)]
    a, b, c = (_stage(r, n) for n in "abc")
    assert (a["present"], a["service"], a["completions"]) == (0.225, 1.5, 3)
    assert (b["present"], b["utilisation"], b["service"]) == pytest.approx((0.7, 0.3, 14 / 3), rel=1e-12)
    assert (c["present"], c["wait"], c["service"]) == (0.3, 0.0, 2.0)


def test_a_fifo_of_two_servers_queues_the_third(monkeypatch):
    """fifo(2), jobs of 1, 2, 3 at 0: s0 [0, 1], s1 [0, 2], s2 takes the first server free, [1, 4]: waits
    0, 0, 1; present 3 on [0, 1] (s2 waiting), 2 on [1, 2], 1 on [2, 4]: 7 over 10."""
    src = ("stage c : fifo(2);\nworkload { arrive batch(3); }\nsession { run c (1 + serial); observe t = now; }\n"
           "run { horizon 10; }\n")
    r, obs = run(src, monkeypatch)
    assert [(s, t) for s, t, _v in obs["t"]] == [(0, 1.0), (1, 2.0), (2, 4.0)]
    c = _stage(r, "c")
    assert (c["present"], c["wait"], c["completions"]) == pytest.approx((0.7, 1 / 3, 3), rel=1e-12)


FLOWS = """
stage a : ps(3);
stage b : ps(1);
share SHARE;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run a, b (2); } else { run a (2); }
  observe t = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("share, done, a_util, a_present", [
    # maxmin: both rates rise together; b (φ 1, one flow) fills at 1, so s0's flow stops there; s1's goes
    # on to a's 3 - 1 = 2. s1's 2 done at 1; then s0 alone at min(3, 1) = 1: done at 2. a carries (1 + 2) /
    # 3 on [0, 1] and 1/3 on [1, 2]: 4/3 over 20; present 2 + 1 over 20.
    ("maxmin", {1: 1.0, 0: 2.0}, 4 / 60, 3 / 20),
    # bottleneck: each flow its equal share at its tightest stage: s0 min(3/2, 1/1) = 1, s1 3/2, the rest
    # of a unused. s1 done at 4/3, s0 at 2 (rate 1 throughout). a carries 2.5/3 over 4/3 and 1/3 over 2/3:
    # 10/9 + 2/9 = 4/3; present 2 · 4/3 + 2/3 = 10/3 over 20.
    ("bottleneck", {1: 4 / 3, 0: 2.0}, 4 / 60, 1 / 6),
])
def test_the_shares_of_a_run_over_two_stages(monkeypatch, share, done, a_util, a_present):
    r, obs = run(FLOWS.replace("SHARE", share), monkeypatch)
    assert {s: t for s, t, _v in obs["t"]} == pytest.approx(done, rel=1e-12)
    a = _stage(r, "a")
    assert (a["utilisation"], a["present"]) == pytest.approx((a_util, a_present), rel=1e-12)


ATTENTION = """
pool kv { cap 100; }
stage E : step { budget 8; chunk 4; cost attention + 0 * tokens; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (8) { run E prefill (8) growing kv; } cache (8);
  observe t1 = now;
  hold kv (12) reuse (8) { run E prefill (4) growing kv; } cache (12);
  observe t2 = now;
  observe c = cached;
}
run { horizon 200; }
"""


def test_an_iterations_cost_in_attention(monkeypatch):
    """chunk 4: the first hold's prefill of 8 takes two chunks, n = 4 at K = 0 and at K = 4: 4 · (0 + 2) = 8,
    then 4 · (4 + 2) = 24: done at 32. The second hold consumes the 8 cached (cached 8), so its chunk of 4
    starts at K = 8: 4 · (8 + 2) = 40, done at 72. Three iterations, busy 72 of 200."""
    r, obs = run(ATTENTION, monkeypatch)
    assert (obs["t1"], obs["t2"], obs["c"]) == ([(0, 32.0, 32.0)], [(0, 72.0, 72.0)], [(0, 72.0, 8.0)])
    e = _stage(r, "E")
    assert (e["iterations"], e["utilisation"], e["tokens"], e["token_utilisation"]) == (3, 0.36, 4.0, 0.5)


EXCLUSIVE = """
pool reqs { cap 10; admit via E; }
stage E : step { budget 8; cost 1; serve exclusive prefill; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 1.5);
  hold reqs (1) { run E prefill (serial == 0 ? 2 : 6); observe f = now; run E decode (serial == 0 ? 3 : 2); }
  observe t = now;
}
run { horizon 20; }
"""


def test_serve_exclusive_prefill(monkeypatch):
    """s0 at 0: its prefill of 2 alone [0, 1]; its first decode [1, 2], a decode-only batch. s1 queues at
    1.5. At 2 s0's decode is tentative and s1's waiting prefill fits: s1 prefills its 6 alone [2, 3] (s0
    displaced). From 3 a decode batch of both: s0's last 2 and s1's 2 over [3, 5]. Tokens 2, 1, 6, 2, 2:
    13/5; jobs 1, 1, 1, 2, 2: 7/5; two prefill-only, three decode-only."""
    r, obs = run(EXCLUSIVE, monkeypatch)
    assert [(s, t) for s, t, _v in obs["f"]] == [(0, 1.0), (1, 3.0)]
    assert [(s, t) for s, t, _v in obs["t"]] == [(0, 5.0), (1, 5.0)]
    e = _stage(r, "E")
    assert {k: e[k] for k in ("iterations", "tokens", "batch", "prefill_only", "decode_only", "mixed")} == \
        {"iterations": 5, "tokens": 2.6, "batch": 1.4, "prefill_only": 2, "decode_only": 3, "mixed": 0}


def test_a_run_of_zero_work_completes_at_once(monkeypatch):
    """Zero work on a step engine (prefill or decode), a fifo and a ps stage: done at 0, no iteration, no
    job (docs/language.md); then fifo jobs of 1 and 2: s0 [0, 1], s1 [1, 3], its wait 1."""
    src = ("stage E : step { budget 8; cost 1; }\nstage f : fifo;\nstage p : ps(1);\nworkload { arrive batch(2); }\n"
           "session { run E prefill (0); run E decode (0); run f (0); run p (0); observe a = now; "
           "run f (serial + 1); observe g = now; }\nrun { horizon 10; }\n")
    r, obs = run(src, monkeypatch)
    assert [t for _s, t, _v in obs["a"]] == [0.0, 0.0] and [t for _s, t, _v in obs["g"]] == [1.0, 3.0]
    e, f, p = (_stage(r, n) for n in ("E", "f", "p"))
    assert (e["iterations"], e["completions"], p["completions"]) == (0, 0, 0)
    assert (f["completions"], f["wait"], f["present"]) == (2, 0.5, 0.4)


def test_a_hold_that_can_never_fit_is_rejected(monkeypatch):
    """cap 4: units 5 (s0) and reserve 5 (s1) can never fit: their sessions end there (no sample); units
    and reserve of 4 (s2) and units 0.5 · 8 (s3) fit, one at a time: s2 [0, 1], s3 [1, 2]."""
    src = ("pool m { cap 4; }\nstage d : delay;\nworkload { arrive batch(4); }\nsession {\n"
           "  branch (serial == 0) { hold m (5) { run d (1); } }\n"
           "  branch (serial == 1) { hold m (1) reserve (5) { run d (1); } }\n"
           "  branch (serial == 2) { hold m (4) reserve (4) { run d (1); } }\n"
           "  branch (serial == 3) { hold m (0.5 * 8) { run d (1); } }\n"
           "  observe t = now;\n}\nrun { horizon 20; }\n")
    r, obs = run(src, monkeypatch)
    assert [(s, t) for s, t, _v in obs["t"]] == [(2, 1.0), (3, 2.0)]
    m = pool_json(r, "m")
    assert {k: m[k] for k in ("rejections", "admissions", "used", "wait", "queue")} == \
        {"rejections": 2, "admissions": 2, "used": 0.4, "wait": 0.5, "queue": 0.05}
    assert report_json(r)["ended"] == 4


SELF_VICTIM = """
pool kv { cap 8; block 4; preempt lifo; }
stage E : step { budget 8; cost 1; serve by (-admission); memory kv; }
workload { arrive batch(2); }
session {
  hold kv (4) { observe a = now; run E decode (5) growing kv; }
  observe t = now;
}
run { horizon 30; }
"""


def test_a_step_that_only_preempts_lasts_its_cost(monkeypatch):
    """§3: "An iteration that schedules no token is not an iteration, unless it preempted: then it is the
    scheduler step that only preempted … It lasts C at zero tokens", and Statistics' `stuck`. Two decodes
    of 5 in holds of 4 (one block each, the pool's 8 full), served last admitted first. [0, 4]: a token each
    an iteration, positions 1 … 4. At 4 s1, served first, wants a second block: the victim is the last
    admitted, s1 itself, and under preempt lifo the residents after it (s0) get nothing: a step of no token
    that preempted, [4, 5]. The pool is not admitted by the engine, so s1 is admitted again at the next
    event, 5 (a = 5), and starts over (its program reads no `computed`). [5, 6]: s1 first (position 1),
    then s0 wants its second block: the victim is s1 again (admitted last), preempted a second time short
    of its first preemption's position: stuck. s0's fifth token: done at 6. s1 again at 6, alone: five
    tokens over [6, 11] (a second block at the fifth). Eleven iterations, ten with tokens (decode-only);
    tokens 2 · 4 + 0 + 1 + 5 = 14 over 11. kv: 8 on [0, 4], 4 on [4, 5], 8 on [5, 6], 4 on [6, 10], 8 on
    [10, 11]: 68 over 30; s1 queued [4, 6]: 2/30; waits 0, 0, 1, 1."""
    r, obs = run(SELF_VICTIM, monkeypatch)
    assert obs["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (1, 5.0, 5.0), (1, 6.0, 6.0)]
    assert obs["t"] == [(0, 6.0, 6.0), (1, 11.0, 11.0)]
    e = _stage(r, "E")
    assert {k: e[k] for k in ("iterations", "decode_only", "prefill_only", "mixed")} == \
        {"iterations": 11, "decode_only": 10, "prefill_only": 0, "mixed": 0}
    assert (e["tokens"], e["batch"]) == pytest.approx((14 / 11, 14 / 11), rel=1e-12)
    kv = pool_json(r, "kv")
    assert {k: kv[k] for k in ("preemptions", "stuck", "admissions", "wait")} == \
        {"preemptions": 2, "stuck": 1, "admissions": 4, "wait": 0.5}
    assert (kv["used"], kv["queue"]) == pytest.approx((68 / 30, 2 / 30), rel=1e-12)


NO_ADMISSION_AFTER_PREEMPTION = """
pool reqs { cap 10; admit via E; }
pool kv { cap 12; block 4; preempt by (-admission) requeue tail; }
stage E : step { budget 16; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 2 ? 0.5 : 0);
  hold reqs (1), kv (serial == 1 ? 8 : 4) {
    observe a = now;
    run E prefill (serial == 1 ? 8 : serial == 0 ? 4 : 2) growing kv;
    run E decode (serial == 2 ? 0 : 4) growing kv;
  }
  observe t = now;
}
run { horizon 30; }
"""


def test_no_admission_in_a_step_that_preempted(monkeypatch):
    """§3: a queue admitted via a step stage is served "at the start of an iteration … and not in an
    iteration that preempted" (vLLM's schedule(), scheduler.py:869). [0, 1]: s0 (4 units) and s1 (8)
    admitted and prefilled: kv's 12 full. s2 queues at 0.5 (4 units). [1, 2]: s0's decode wants a second
    block: the victim is the last admitted, s1, whose 8 go back; it requeues at the tail (behind s2); s0
    grows to 8 and decodes. 4 are free and s2, the head, fits, but the step preempted: no admission. [2,
    3]: s2 admitted (a = 2), its prefill of 2 done at 3. s0's decodes end at 5; s1 (8 + s0's 8 > 12 until
    then) is admitted at 5, prefills [5, 6], decodes [6, 10] growing to 12 at position 9. kv used 12 + 8 +
    12 + 8 · 2 + 8 + 12 · 4 = 104 over 30; reqs queued [0.5, 2] (s2) and [1, 5] (s1): 5.5 over 30, over
    four admissions 1.375."""
    r, obs = run(NO_ADMISSION_AFTER_PREEMPTION, monkeypatch)
    assert obs["a"] == [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 2.0, 2.0), (1, 5.0, 5.0)]
    assert obs["t"] == [(2, 3.0, 3.0), (0, 5.0, 5.0), (1, 10.0, 10.0)]
    reqs, kv = pool_json(r, "reqs"), pool_json(r, "kv")
    assert (reqs["queue"], reqs["wait"], reqs["admissions"]) == pytest.approx((5.5 / 30, 1.375, 4), rel=1e-12)
    assert (kv["used"], kv["preemptions"]) == pytest.approx((104 / 30, 1), rel=1e-12)


def test_ps_jobs_that_finish_together_leave_in_start_order(monkeypatch):
    """§3, Ties: "jobs of a ps stage with equal finish tags finish in the order they started". On ps(1), s2
    starts at 1 (work 3), s1 at 2 (work 2), s0 at 3 (work 1): alone [1, 2] (s2 2 left), two at 1/2 [2, 3]
    (1.5 and 1.5 left), three at 1/3 until s0's 1 is done at 6 (0.5 left each), two at 1/2: s2 and s1 both
    at 7. The fifo after it serves them in that order: s0 [6, 7], s2 [7, 8], s1 [8, 9]."""
    src = ("stage d : delay;\nstage p : ps(1);\nstage f : fifo;\nworkload { arrive batch(3); }\n"
           "session { run d (3 - serial); run p (serial + 1); run f (1); observe t = now; }\nrun { horizon 20; }\n")
    _r, obs = run(src, monkeypatch)
    assert [(s, t) for s, t, _v in obs["t"]] == [(0, 7.0), (2, 8.0), (1, 9.0)]


ESTIMATES = """
stage s : fifo;
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) { run s (serial + 1); }
  else { run d (3.5); observe p = price(s, 1, 0.5); }
  observe l = est_lambda(s);
  observe r = est_rho(s);
  observe w = est_wait(s);
}
run { horizon 10; }
"""


def test_a_stages_online_estimates_and_price(monkeypatch):
    """§2's price(s, s_hit, ds), est_lambda, est_rho, est_wait (docs/language.md, The online estimates:
    weights α = 0.01, the first completion sets service and wait, λ̂ from the second, ρ̂ = min(λ̂ ŝ, 0.99)).
    On one server s0 (1 s) runs [0, 1], s1 (2 s) [1, 3] after a wait of 1. At 1: ŝ = 1, Ŵ = 0, λ̂ = ρ̂ = 0.
    At 3: the gap between the two starts, 1: λ̂ = 1; ŝ = 0.99 + 0.02 = 1.01, Ŵ = 0.01, ρ̂ = min(1.01, 0.99).
    price(s, 1, 0.5) at 3.5: s_m = 1.5; 0.5 + 1 · (2.25 - 1) / (2 · 0.01) + 1 · 0.01 · 0.5 / 0.01 = 63.5."""
    _r, obs = run(ESTIMATES, monkeypatch)
    assert [(t, v) for _s, t, v in obs["l"]] == [(1.0, 0.0), (3.0, 1.0), (3.5, 1.0)]
    assert [v for _s, _t, v in obs["r"]] == [0.0, 0.99, 0.99]
    assert [v for _s, _t, v in obs["w"]] == pytest.approx([0.0, 0.01, 0.01], rel=1e-12)
    assert obs["p"][0][2] == pytest.approx(63.5, rel=1e-12)


def test_budget_left_read_from_a_session(monkeypatch):
    """budget_left(E) is the budget the iteration planned now would leave (§3, admit via: "budget_left(S)
    then evaluates to the budget left"): at 0 s0's decode is resident (a token of 8): 7; at 0.25 still 7
    (the iteration [0, 1] runs); at 1.25 s0's decode and s1's prefill, cut at the chunk 3: 8 - 4 = 4."""
    src = ("stage E : step { budget 8; chunk 3; cost 1; }\nstage d : delay;\nworkload { arrive batch(3); }\n"
           "session {\n  branch (serial == 0) { run E decode (5); }\n"
           "  branch (serial == 1) { run d (0.5); run E prefill (10); }\n"
           "  branch (serial == 2) { observe b = budget_left(E); run d (0.25); observe b = budget_left(E); "
           "run d (1); observe b = budget_left(E); }\n}\nrun { horizon 10; }\n")
    _r, obs = run(src, monkeypatch)
    assert [(t, v) for _s, t, v in obs["b"]] == [(0.0, 7.0), (0.25, 7.0), (1.25, 4.0)]


def test_the_stage_observables_work_busy_queue(monkeypatch):
    """At 0.5, two jobs of 1 and 2 on each of a fifo, a ps(1) and a delay stage since 0 (docs/language.md:
    `queue(s)` the jobs at the stage, served or waiting; `busy(s)` those in service): fifo: work 0.5 + 2,
    busy 1, queue 2; ps: each served 0.25, work 0.75 + 1.75, busy 2; delay: work 0.5 + 1.5, busy 2."""
    src = ("stage f : fifo;\nstage p : ps(1);\nstage y : delay;\nstage d : delay;\nworkload { arrive batch(7); }\n"
           "session {\n  branch (serial < 2) { run f (serial + 1); }\n"
           "  branch (serial >= 2 && serial < 4) { run p (serial - 1); }\n"
           "  branch (serial >= 4 && serial < 6) { run y (serial - 3); }\n"
           "  branch (serial == 6) { run d (0.5); observe wf = work(f); observe wp = work(p); observe wy = work(y);"
           " observe bf = busy(f); observe bp = busy(p); observe by = busy(y); observe qf = queue(f);"
           " observe qp = queue(p); observe qy = queue(y); }\n}\nrun { horizon 10; }\n")
    _r, obs = run(src, monkeypatch)
    got = {k: obs[k][0][2] for k in ("wf", "wp", "wy", "bf", "bp", "by", "qf", "qp", "qy")}
    assert got == {"wf": 2.5, "wp": 2.5, "wy": 2.0, "bf": 1.0, "bp": 2.0, "by": 2.0, "qf": 2.0, "qp": 2.0, "qy": 2.0}


THREE_STAGES = """
stage a : ps(1);
stage b : ps(2);
stage c : ps(4);
share SHARE;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run a, b, c (2); }
  branch (serial == 1) { run b, c (2); }
  branch (serial == 2) { run c (2); }
  observe t = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("share, done, c_present", [
    # maxmin: the rates rise together; a (1 flow, φ 1) fills at 1: f0 stops at 1; b (f0, f1, φ 2) fills
    # at f1 = 1; c (φ 4) gives f2 the rest, 2. f2's 2 done at 1; f0, f1 at rate 1 done at 2 (still held by a
    # and b). c carries (1 + 1 + 2) / 4 on [0, 1] and 2/4 on [1, 2]: 1.5 over 10; present 3 then 2: 5
    ("maxmin", {2: 1.0, 0: 2.0, 1: 2.0}, 0.5),
    # bottleneck: each its equal share at its tightest stage: f0 min(1/1, 2/2, 4/3) = 1, f1 min(2/2, 4/3)
    # = 1, f2 4/3: done at 1.5; c carries (1 + 1 + 4/3) / 4 over 1.5 and 2/4 over 0.5: 1.5; present 3 · 1.5
    # + 2 · 0.5 = 5.5
    ("bottleneck", {2: 1.5, 0: 2.0, 1: 2.0}, 0.55),
])
def test_flows_over_three_stages(monkeypatch, share, done, c_present):
    r, obs = run(THREE_STAGES.replace("SHARE", share), monkeypatch)
    assert {s: t for s, t, _v in obs["t"]} == done
    a, b, c = (_stage(r, n) for n in "abc")
    assert (a["utilisation"], b["utilisation"], c["utilisation"], b["present"]) == \
        pytest.approx((0.2, 0.2, 0.15, 0.4), rel=1e-12)
    assert c["present"] == pytest.approx(c_present, rel=1e-12)
