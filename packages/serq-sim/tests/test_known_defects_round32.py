"""Known defects, round 32 (serq-sim).

1. A `queue by`, `evict by`, `preempt by`, `serve by` or `choose` key that came out NaN at run time (`prio * A`
   with `A` inf and `prio` 0: 0 * inf) ordered as docs/language.md says, and the report said nothing. It now
   warns once per key (code `nan-key`), naming where the key is written, the time and the session of its first
   NaN, on both tiers (the same JSON bytes). Each case is timed by hand: `arrive renewal(1)` starts session k at
   t = k + 1, each holds the pool of one unit for 10, so session 0 holds it over [1, 11] and sessions 1 to 9
   wait; session 3 (t = 4) is the one whose key is NaN.
2. A session whose own run has infinite work (`run S (inf)` at a delay, fifo or ps stage, a step stage's run of
   infinite tokens) never completes it, yet the report's "waits for ever" warning counted only the sessions that
   waited for it (at its pool, behind it at a fifo stage): it now counts the session itself, with where its run
   statement is, when no preemption can take a hold of it.
3. `est_wait(S)` of a step stage reads 0: the estimate is the stage's weighted wait from a run's arrival to its start
   (docs/language.md, "The online estimates"), and a run joins a step stage's residents at once. The value stands
   (it is what the definition gives); the compile warns at each place that reads it, saying to read `queued(P)` of
   the pool the stage admits from.
4. A signed zero through every built-in (min, max, their long folds, floor, ceil, abs, unary minus, `%`, sqrt, pow,
   sum): the fast tier's generated code, the general engine's lean code (min, max, floor and ceil written out) and
   its per-job reference give the same double, bit for bit, and so does the linker's folding of the same
   expression over constants; IEEE 754's sign where serQ keeps it, +0 for floor and ceil (docs/language.md). No
   disagreement was found; this holds it.
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (the programs are K.sq there, as the warnings name them)


def _compile(src: str):
    with open("K.sq", "w") as f:
        f.write(src)
    return serq_frontend.compile("K.sq", sets={}, defs={})


def _nan_notes(r: dict) -> list[str]:
    return [n for n, c in zip(r["notes"], r["codes"]) if c == "nan-key"]


QUEUE = """let A = inf;

pool p { cap 1; queue by (KEYS); }
stage s : delay;

workload { arrive renewal(1); }

session {
  set prio = serial == 3 ? 0 : 1;
  hold p (1) { run s (10); }
  end;
}

run { horizon 25; }
"""
QUEUE_MEANING = ("a NaN does not order (the hold it keys is the head only when it joined first); a key that can be "
                 "NaN (`0 * inf`, `inf - inf`, `x % 0`) orders by no number of its own")


@pytest.mark.parametrize("keys, col", [
    # a key is noted where a head lookup reads it, as the scan of the waiting holds does (admission.head): the
    # first lookup with more than one waiting that finds room is the release at 11 (at 4, when session 3
    # joins, the pool is full and no key is read). So for every form of the keys, though the orders kept
    # beside the queue evaluate them sooner: keys of attributes alone at the join (KeyedQueue; a last -waited
    # is left out), (K, waited) when K is grouped (the fast tier evaluates K at the join), an aging threshold
    # and a linear key when sorted in; keys read at every lookup (`now`)
    ("prio * A, serial", 27),
    ("serial, prio * A", 35),
    ("prio * A, -waited", 27),
    ("prio * A + now", 27),
    ("prio * A, waited", 27),
    ("waited > 100 ? 0 : prio * A", 27),
    ("prio * A - waited", 27),
])
def test_a_nan_queue_key_is_warned_once_on_both_tiers(keys, col, monkeypatch):
    r = same_json(_compile(QUEUE.replace("KEYS", keys)), monkeypatch)
    assert _nan_notes(r) == [f"warning: the `queue by` key at K.sq:3:{col} is NaN (first at t=11, session 3): "
                             + QUEUE_MEANING]


def test_no_nan_no_warning(monkeypatch):
    r = same_json(_compile(QUEUE.replace("KEYS", "prio * 2, serial")), monkeypatch)
    assert _nan_notes(r) == [] and "nan-key" not in r["codes"]


def test_two_keys_nan_each_warned_once_in_the_order_met(monkeypatch):
    # the lookup at 11 reads session 3's first key and then session 5's second (prio2 0), in join order; session
    # 7's first key, NaN again, is not said twice
    src = QUEUE.replace("KEYS", "prio * A, prio2 * A").replace(
        "set prio = serial == 3 ? 0 : 1;", "set prio = serial == 3 || serial == 7 ? 0 : 1;\n  set prio2 = serial == 5 ? 0 : 1;")
    r = same_json(_compile(src), monkeypatch)
    assert [n.split(":")[1:4] for n in _nan_notes(r)] == [[" the `queue by` key at K.sq", "3", "27 is NaN (first at t=11, session 3)"],
                                                           [" the `queue by` key at K.sq", "3", "37 is NaN (first at t=11, session 5)"]]


CHOOSE = """let A = inf;

pool m[3] { cap 1; }
stage s : delay;

workload { arrive renewal(1); }

session {
  set w = serial == 2 ? 0 : 1;
  choose j in 3 by (KEYS);
  hold m[j] (1) { run s (1); }
  end;
}

run { horizon 10; }
"""


@pytest.mark.parametrize("keys", ["j == 1 ? w * A : 5 - j", "j == 1 ? w * A : 5 - j, j"])
def test_a_nan_choose_key(keys, monkeypatch):
    # session 2 chooses at t=3, its candidate 1's key 0 * inf
    r = same_json(_compile(CHOOSE.replace("KEYS", keys)), monkeypatch)
    assert _nan_notes(r) == ["warning: the `choose` key at K.sq:10:21 is NaN (first at t=3, session 2): a NaN does "
                             "not order (where it decides, the candidate met first stays); a key that can be NaN "
                             "(`0 * inf`, `inf - inf`, `x % 0`) orders by no number of its own"]


# session 0 (t=2) holds gpu over [2, 5]; session 1 (t=4) holds 0 and grows to 1: the candidates' keys are read
# then, session 1's 0 * inf
PREEMPT = """let A = inf;

pool gpu { cap 1; preempt by (w * A) requeue head; }
stage svc : fifo;

workload { arrive renewal(2); }

session {
  set w = serial == 1 ? 0 : -1;
  branch (serial == 0) {
    hold gpu (1) { run svc (3); }
  } else {
    hold gpu (0) {
      grow gpu (1);
      run svc (3);
    }
  }
  end;
}

run { horizon 5; }
"""
# session 0 (t=2) caches 1 unit at 3 and ends; session 1 (t=4) needs both units: the entry of session 0 (ended:
# no session) is keyed then
EVICT = """let A = inf;

pool m { cap 2; block 1; evict by (w * A); }
stage s : delay;

workload { arrive renewal(2); }

session {
  set w = serial == 0 ? 0 : 1;
  hold m (serial == 0 ? 1 : 2) { run s (1); } cache (1);
  end;
}

run { horizon 5; }
"""
KEPT = """let A = inf;

pool kv { cap 6; block 1; preempt by (w * A); }
stage E : step { budget 10; cost 1; memory kv; }

workload { arrive renewal(1); }

session {
  set w = serial == 1 ? 0 : -1;
  hold kv (1) { run E decode (4) growing kv; }
  end;
}

run { horizon 8; }
"""
# three decodes at 0 on a budget of 1: the residents are ordered at the first iteration, session 1's key 0 * inf
SERVE = """let A = inf;

stage E : step { budget 1; cost 1; serve by (prio * A); }
workload { arrive batch(3); }
session { set prio = serial == 1 ? 0 : -1; run E decode (2); observe done = now; }
run { horizon 10; }
"""


@pytest.mark.parametrize("src, want", [
    (PREEMPT, "the `preempt by` key at K.sq:3:31 is NaN (first at t=4, session 1): a NaN counts as inf (the "
              "candidate comes after every one whose key is a number)"),
    (EVICT, "the `evict by` key at K.sq:3:36 is NaN (first at t=4, session 0): a NaN does not order (the entry it keys is "
            "evicted first only when it comes first in the pool's order)"),
    (SERVE, "the `serve by` key at K.sq:3:46 is NaN (first for the run of session 1 that joined the stage at t=0): "
            "a NaN counts as inf (the resident is served after every one whose key is a number)"),
    # session 1's run joins at 1, during the iteration [0.5, 1.5]: the ranked residents read its key then,
    # the per-job planning at 1.5; both name the run's join
    (SERVE.replace("batch(3)", "renewal(0.5)"),
     "the `serve by` key at K.sq:3:46 is NaN (first for the run of session 1 that joined the stage at t=1): "
     "a NaN counts as inf (the resident is served after every one whose key is a number)"),
    # a step stage's memory pool whose keys are kept in an order of its residents (orders.keys_order, read at
    # a job's join): the NaN is noted when a victim is first asked for with session 1 a candidate, at 4, as
    # the per-job reference's walk of the candidates notes it
    (KEPT, "the `preempt by` key at K.sq:3:39 is NaN (first at t=4, session 1): a NaN counts as inf (the "
           "candidate comes after every one whose key is a number)"),
])
def test_nan_keys_of_the_general_engine(src, want, monkeypatch):
    r = same_json(_compile(src), monkeypatch)
    assert _nan_notes(r) == [f"warning: {want}; a key that can be NaN (`0 * inf`, `inf - inf`, `x % 0`) orders by "
                             "no number of its own"]


def test_serve_by_nan_still_serves_it_last(monkeypatch):
    # the warning changes no figure: session 1 (NaN, as inf) is served after sessions 0 and 2, one token an
    # iteration of 1: s0 over [0, 2], s2 over [2, 4], s1 over [4, 6]
    import serq_sim

    monkeypatch.setenv("SERQ_SIM_TIER", "general")
    rep = serq_sim.run(_compile(SERVE))
    o = rep.observes["done"]
    assert dict(zip(o.sessions.tolist(), o.values.tolist())) == {0: 2.0, 2: 4.0, 1: 6.0}


# 2. `arrive renewal(2)`: session k at 2(k + 1); session 1 (t=4) runs inf, the others 1; horizon 10
INFINITE = """stage s : KIND;

workload { arrive renewal(2); }

session {
  branch (serial == 1) { run s (inf); } else { run s (1); }
  end;
}

run { horizon 10; }
"""
OWN_RUN = ("warning: 1 session waits for ever at the end of the run (each waits in a run of infinite work of its "
           "own, which never completes): 1 at stage {stage}, in a run of infinite work (session 1, in the run at "
           "K.sq:{at})")


def _forever(r: dict) -> list[str]:
    return [n for n, c in zip(r["notes"], r["codes"]) if c == "waits-for-ever"]


@pytest.mark.parametrize("kind, ended", [
    # sessions 0, 2, 3 end at 3, 7 and 9 (the other server of fifo(2)); 4 arrives at 10 and would end at 11
    ("delay", 3), ("fifo(2)", 3),
    # at an infinite rate the runs of work 1 end as they start, session 4's at 10 too
    ("ps(inf)", 4),
    ("ps(1)", None),
])
def test_a_run_of_infinite_work_waits_for_ever(kind, ended, monkeypatch):
    r = same_json(_compile(INFINITE.replace("KIND", kind)), monkeypatch)
    assert r["arrivals"] == 5 and ended in (None, r["ended"])
    assert _forever(r) == [OWN_RUN.format(stage="s", at="6:26")]


def test_a_step_run_of_infinite_tokens_waits_for_ever(monkeypatch):
    src = """stage E : step { budget 4; cost 1; }
workload { arrive renewal(2); }
session { run E decode (serial == 1 ? inf : 2); }
run { horizon 10; }
"""
    r = same_json(_compile(src), monkeypatch)
    assert _forever(r) == [OWN_RUN.format(stage="E", at="3:11")]


@pytest.mark.parametrize("work, rule", [("1e9", ""), ("inf", " preempt lifo;")])
def test_a_run_that_ends_or_a_hold_a_preemption_can_take_is_not_told(work, rule, monkeypatch):
    # a long run ends after the horizon; a hold of a pool with a preemption rule may be taken from the run (and
    # then session 1, queued at m from 10, may be admitted). Session 0 at 5; the next arrival after the horizon
    src = f"""pool m {{ cap 1;{rule} }}
stage s : delay;
workload {{ arrive renewal(5); }}
session {{ hold m (1) {{ run s ({work}); }} }}
run {{ horizon 10; }}
"""
    r = same_json(_compile(src), monkeypatch)
    assert _forever(r) == []


# 3. requests of 3 tokens at 1, 2, …, on an engine of budget 8 admitting from reqs (cap 2): the third waits at
# reqs for a slot, none waits at the engine
EST_WAIT = """pool reqs { cap 2; admit via E; }
stage E : step { budget 8; cost 1; }
stage f : fifo;

workload { arrive renewal(1); }

session {
  observe w = est_wait(STAGE);
  hold reqs (1) { run E decode (3); }
  end;
}

run { horizon 20; }
"""


def test_est_wait_of_a_step_stage_is_warned_at_compile_time(capsys, monkeypatch):
    r = same_json(_compile(EST_WAIT.replace("STAGE", "E")), monkeypatch)
    err = capsys.readouterr().err
    assert err.count("warning:") == 1
    assert err.startswith("K.sq:8:15: warning: `est_wait(E)` is 0 throughout the run: step stage `E` has no queue of "
                          "its own (a run joins its residents at once, so no run waits there); read `queued(reqs)`, "
                          "the requests waiting in the queue of the pool it admits from\n")
    assert "    observe w = est_wait(E);\n                ^" in err
    assert r["observes"]["w"]["mean"] == 0.0 and r["observes"]["w"]["count"] == 20


def test_est_wait_of_another_stage_is_not_warned(capsys, monkeypatch):
    same_json(_compile(EST_WAIT.replace("STAGE", "f")), monkeypatch)
    assert "warning" not in capsys.readouterr().err


# 4. z = +0 and n = -0 computed (serial is 0), each expression observed computed and again over constants
SIGNED = [
    ("min(z, n)", 0.0), ("min(n, z)", -0.0), ("max(z, n)", 0.0), ("max(n, z)", -0.0), ("min(n, z, z)", -0.0),
    ("max(z, n, n)", 0.0), ("min j in 40 (j == 3 ? n : 1 + j)", -0.0), ("max j in 40 (j == 3 ? n : -1 - j)", -0.0),
    ("floor(n)", 0.0), ("ceil(n)", 0.0), ("ceil(m)", 0.0), ("ceil(n * 5)", 0.0), ("abs(n)", 0.0), ("-z", -0.0),
    ("-n", 0.0), ("n % 3", -0.0), ("z % -3", 0.0), ("m3 % 3", -0.0), ("n % inf", -0.0), ("sqrt(n)", -0.0),
    ("pow(n, 3)", -0.0), ("pow(n, 2)", 0.0), ("sum j in 2 (n)", -0.0), ("sum j in 40 (n)", -0.0), ("n + z", 0.0),
]
SIGNED_SRC = """GAUGE
workload { arrive batch(1); }
session {
  set z = serial * 0;
  set n = -z;
  set m = -0.75 + serial;
  set m3 = -3 + serial;
OBSERVES
  end;
}
run { horizon 1; }
"""


def _constant(e: str) -> str:
    import re

    for name, value in (("z", "0"), ("n", "(-0)"), ("m3", "(-3)"), ("m", "(-0.75)")):
        e = re.sub(rf"\b{name}\b", value, e)
    return e


def test_signed_zeros_agree_on_every_path(monkeypatch):
    import struct

    import serq_sim

    obs = "\n".join(f"  observe v{i} = {e};\n  observe c{i} = {_constant(e)};" for i, (e, _) in enumerate(SIGNED))
    got = {}
    for gauge in ("", "gauge g = 1;"):  # (a gauge: the general engine's lean code, not the fast tier)
        prog = _compile(SIGNED_SRC.replace("GAUGE", gauge).replace("OBSERVES", obs))
        for tier in ("", "general"):
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
            r = serq_sim.run(prog)
            got[gauge, tier, r.tier] = [struct.pack("<d", r.observes[f"{k}{i}"].values[0])
                                        for i in range(len(SIGNED)) for k in "vc"]
    assert set(got) == {("", "", "fast"), ("", "general", "general"), ("gauge g = 1;", "", "general"),
                        ("gauge g = 1;", "general", "general")}
    want = [struct.pack("<d", v) for _e, v in SIGNED for _k in "vc"]
    for key, bits in got.items():
        assert bits == want, (key, [SIGNED[i // 2][0] for i, (a, b) in enumerate(zip(bits, want)) if a != b])
