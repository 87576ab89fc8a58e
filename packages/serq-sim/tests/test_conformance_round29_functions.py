"""Conformance of the pool functions and the rest of pool-reference.txt and program-reference.txt, by hand:

* `used`, `free`, `holders`, `queued`, `cachedin`, `blocksize` read from a session and from gauges on a
  pool with `block` and `reserve held` and a hold nested in another (docs/language.md: `free(p)` is
  `cap - used - Σ u_i`, `holders` counts each hold's allocation, `queued` the admission queue);
* a pool family's `spill cpu via link (work) when (pred)` paired member for member (docs/language.md,
  Pools), `pred` reading `size`, and gauges over the family (`max j in 2 (…)`, `sum j in 2 (…)`);
* program-reference.txt's `run { arrivals N }`: "the run ends when the N-th session has arrived and every
  session has ended … The report gives the time the run ended as end, and its rates and time averages are
  over end − warmup", beside a pool.

Each program runs on the tier serQ picks and on the general engine (conform.run: the JSON reports and every
observe's samples the same bytes); the report is asserted as its JSON reads, and every number is derived
by hand in the comments.
"""

from __future__ import annotations

import pytest
from conform import pool_json, report_json, run

# block 4, cap 12, reserve held. s1's outer hold of 1 reserving 6: a = 4, r = 8, u = 4 (used 4). s2's hold
# of 3 (r 4) joined behind it: 4 + 4 + 4 = 12 <= 12, admitted at 0 (used 8). s1's inner hold of 2 (r 4)
# joins then: 8 + 4 + 4 > 12, it waits until s2 ends at 1 (4 + 4 + 4); it runs over [1, 2] and caches
# min(8, 4) = 4; the outer hold ends at 3 (no cache). s0 reads the pool at 0.5, 1.5 and 2.5.
FUNCTIONS = """
pool kv { cap 12; block 4; reserve held; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    loop {
      run d (0.5);
      observe u = used(kv);
      observe f = free(kv);
      observe h = holders(kv);
      observe q = queued(kv);
      observe b = blocksize(kv);
      run d (0.5);
      branch (now >= 3) { end; }
    }
  }
  branch (serial == 1) { hold kv (1) reserve (6) { hold kv (2) { run d (1); } cache (8); run d (1); } run d (1); observe c = cachedin(kv); }
  branch (serial == 2) { hold kv (3) { observe a = now; run d (1); } }
}
gauge hg = holders(kv);
gauge fg = free(kv);
run { horizon 4; }
"""


def test_the_pool_functions_under_reserve_held(monkeypatch):
    """At 0.5: used 8 (s1's outer 4, s2's 4), free 12 - 8 - u 4 = 0, two holders, s1's inner hold queued.
    At 1.5: used 8 (outer and inner), free 0, two holders (the nested holds count once each), none queued.
    At 2.5: used 4, free 12 - 4 - 4 = 4, one holder. s1's cachedin at 4: 4. blocksize 4 throughout.
    Report: used 8, 8, 4, 0 on the four seconds: 5; cached 4 on [2, 4]: 2; holders 2, 2, 1, 0: 1.25;
    queue 1 on [0, 1]: 0.25; waits 0, 0, 1: 1/3. The gauges: holders as the report's, 1.25 (least 0,
    greatest 2); free 0, 0, 4, 12: 4 (least 0, greatest 12)."""
    r, o = run(FUNCTIONS, monkeypatch)
    assert [v for _s, _t, v in o["u"]] == [8.0, 8.0, 4.0]
    assert [t for _s, t, _v in o["u"]] == [0.5, 1.5, 2.5]
    assert [v for _s, _t, v in o["f"]] == [0.0, 0.0, 4.0]
    assert [v for _s, _t, v in o["h"]] == [2.0, 2.0, 1.0]
    assert [v for _s, _t, v in o["q"]] == [1.0, 0.0, 0.0]
    assert [v for _s, _t, v in o["b"]] == [4.0, 4.0, 4.0]
    assert o["c"] == [(1, 4.0, 4.0)]
    assert o["a"] == [(2, 0.0, 0.0)]
    kv = pool_json(r, "kv")
    assert {k: kv[k] for k in ("used", "cached", "holders", "queue", "wait", "admissions", "evicted_entries")} \
        == {"used": 5.0, "cached": 2.0, "holders": 1.25, "queue": 0.25, "wait": 1 / 3, "admissions": 3,
            "evicted_entries": 0}
    gauges = report_json(r)["gauges"]
    assert {k: gauges["hg"][k] for k in ("mean", "min", "max")} == {"mean": 1.25, "min": 0.0, "max": 2.0}
    assert {k: gauges["fg"][k] for k in ("mean", "min", "max")} == {"mean": 4.0, "min": 0.0, "max": 12.0}


# kv[i] spills to cpu[i] over link[i] what is at least 2 units. s0 caches 3 in kv[0] at 1, s1 1 in kv[1]
# at 1.5. At 2 s2 holds 4 of kv[0] and s3 4 of kv[1]: each evicts the entry there. s0's 3 go to cpu[0]
# over link[0], a write of work 3 on a delay stage: they land at 5. s1's 1 is not spilled.
FAMILY = """
pool kv[2] { cap 4; spill cpu via link (size) when (size >= 2); }
pool cpu[2] { cap 10; }
stage link[2] : delay;
stage d : delay;
workload { arrive batch(4); }
session {
  branch (serial < 2) {
    hold kv[serial] (serial == 0 ? 3 : 1) { run d (1 + serial / 2); } cache (4);
    run d (4 - now); observe c0 = cachedin(cpu[0]); observe c1 = cachedin(cpu[1]); observe k = cachedin(kv[serial]);
    run d (2); observe c0 = cachedin(cpu[0]); observe c1 = cachedin(cpu[1]);
  }
  else { run d (2); hold kv[serial - 2] (4) { run d (1); } }
}
gauge m = max j in 2 (used(kv[j]));
gauge s = sum j in 2 (used(kv[j]));
run { horizon 10; }
"""


def test_a_family_spills_member_for_member(monkeypatch):
    """s0's cachedin(cpu[0]) is 0 at 4 (the write is under way) and 3 at 6; nobody has anything in cpu[1].
    kv[0]: used 3 on [0, 1], 4 on [2, 3]: 0.7; cached 3 on [1, 2]: 0.3; one entry of 3 evicted, one spill.
    kv[1]: used 1.5 + 4: 0.55; cached 1 on [1.5, 2]: 0.05; one entry of 1 evicted, no spill. cpu[0]: the
    written units take their room at the eviction, 3 on [2, 10]: 2.4. link[0]: one write, 3 s: present
    0.3, throughput 0.1. Gauges: max used over [0, 1] 3, [1, 1.5] 1, [2, 3] 4: 0.75; sum 4, 1, 8: 1.25."""
    r, o = run(FAMILY, monkeypatch)
    assert o["c0"] == [(0, 4.0, 0.0), (1, 4.0, 0.0), (0, 6.0, 3.0), (1, 6.0, 0.0)]
    assert [v for _s, _t, v in o["c1"]] == [0.0] * 4
    assert [v for _s, _t, v in o["k"]] == [0.0, 0.0]
    keys = ("used", "cached", "evicted_entries", "evicted_units", "spills", "admissions")
    kv0, kv1 = pool_json(r, "kv", 0), pool_json(r, "kv", 1)
    assert {k: kv0[k] for k in keys} == {"used": 0.7, "cached": 0.3, "evicted_entries": 1, "evicted_units": 3.0,
                                         "spills": 1, "admissions": 2}
    assert {k: kv1[k] for k in keys} == {"used": 0.55, "cached": 0.05, "evicted_entries": 1,
                                         "evicted_units": 1.0, "spills": 0, "admissions": 2}
    assert (pool_json(r, "cpu", 0)["cached"], pool_json(r, "cpu", 1)["cached"]) == (2.4, 0.0)
    links = {s["index"]: s for s in report_json(r)["stages"] if s["name"] == "link"}
    assert (links[0]["present"], links[0]["throughput"], links[1]["completions"]) == (0.3, 0.1, 0)
    gauges = report_json(r)["gauges"]
    assert (gauges["m"]["mean"], gauges["m"]["max"], gauges["s"]["mean"], gauges["s"]["max"]) == \
        (0.75, 4.0, 1.25, 8.0)


ARRIVALS = """
pool kv { cap 1; }
stage d : delay;
workload { arrive ARRIVE; }
session { hold kv (1) { run d (3); } observe done = now; }
run { horizon 100; warmup WARMUP; arrivals N; }
"""


@pytest.mark.parametrize("arrive, warmup, n, end, done, kv, d", [
    # renewal(2): arrivals at 2, 4, 6 (the first after one gap); the slot serves them over [2, 5], [5, 8],
    # [8, 11]: end 11. used 9 over 11; queue [4, 5] and [6, 8]: 3 over 11; waits 0, 1, 2: 1. d: 3
    # completions over 11, present 9 over 11.
    ("renewal(2)", 0, 3, 11.0, [5.0, 8.0, 11.0], {"used": 9 / 11, "queue": 3 / 11, "wait": 1.0},
     {"present": 9 / 11, "throughput": 3 / 11}),
    # the same over [1, 11]: 9 and 3 over 10
    ("renewal(2)", 1, 3, 11.0, [5.0, 8.0, 11.0], {"used": 0.9, "queue": 0.3, "wait": 1.0},
     {"present": 0.9, "throughput": 0.3}),
    # poisson starts with an arrival at 0 (program-reference's compatibility rule): one session, [0, 3]
    ("poisson(1)", 0, 1, 3.0, [3.0], {"used": 1.0, "queue": 0.0, "wait": 0.0},
     {"present": 1.0, "throughput": 1 / 3}),
])
def test_a_finite_run_ends_when_its_sessions_have(monkeypatch, arrive, warmup, n, end, done, kv, d):
    src = ARRIVALS.replace("ARRIVE", arrive).replace("WARMUP", str(warmup)).replace("arrivals N", f"arrivals {n}")
    r, o = run(src, monkeypatch)
    rep = report_json(r)
    assert (rep["end"], rep["horizon"], rep["arrivals"], rep["ended"]) == (end, 100.0, n, n)
    assert [t for _s, t, _v in o["done"]] == done
    got = pool_json(r, "kv")
    assert {k: got[k] for k in kv} == pytest.approx(kv, rel=1e-12)
    stage = next(s for s in rep["stages"] if s["name"] == "d")
    assert {k: stage[k] for k in d} == pytest.approx(d, rel=1e-12)


def test_a_tier_family_of_one_is_every_members(monkeypatch):
    """The same program with one tier and one link (`pool cpu[1]`, `stage link[1]`) and every prefix spilled
    (`when (size >= 1)`): kv[0]'s 3 and kv[1]'s 1 both go to cpu[0] over link[0], written from 2, landing
    at 5 and 3. s1 finds its 1 in cpu[0] at 4 and 6, s0 its 3 at 6 only. cpu[0]: 4 units on [2, 10]: 3.2;
    link[0]: 3 + 1 s of writes: present 0.4, two completions. kv[1] now spills once."""
    src = (FAMILY.replace("pool cpu[2]", "pool cpu[1]").replace("stage link[2]", "stage link[1]")
           .replace("when (size >= 2)", "when (size >= 1)").replace(" observe c1 = cachedin(cpu[1]);", ""))
    r, o = run(src, monkeypatch)
    assert o["c0"] == [(0, 4.0, 0.0), (1, 4.0, 1.0), (0, 6.0, 3.0), (1, 6.0, 1.0)]
    assert (pool_json(r, "kv", 0)["spills"], pool_json(r, "kv", 1)["spills"]) == (1, 1)
    assert pool_json(r, "cpu", 0)["cached"] == 3.2
    link = next(s for s in report_json(r)["stages"] if s["name"] == "link")
    assert (link["index"], link["present"], link["completions"]) == (0, 0.4, 2)


NO_OPTIONS = """
pool kv { }
stage d : delay;
workload { arrive batch(2); }
session { hold kv (1e12) { observe f = free(kv); observe b = blocksize(kv); observe u = used(kv); run d (1); } cache (1e12); observe c = cachedin(kv); }
run { horizon 2; }
"""


def test_every_option_is_optional(monkeypatch):
    """pool-reference.txt: "Every option is optional", `cap` "inf" by default, `block` none. Two holds of
    1e12 fit at once: used 2e12, free inf, a block of 1 (docs/language.md: blocksize of a pool without
    block); each caches 1e12 at 1. used 2e12 on [0, 1]: 1e12 over 2; cached 2e12 on [1, 2]: 1e12."""
    r, o = run(NO_OPTIONS, monkeypatch)
    assert [v for _s, _t, v in o["f"]] == [float("inf")] * 2
    assert [v for _s, _t, v in o["b"]] == [1.0, 1.0]
    assert [v for _s, _t, v in o["u"]] == [2e12, 2e12]
    assert o["c"] == [(0, 1.0, 1e12), (1, 1.0, 1e12)]
    kv = pool_json(r, "kv")
    assert (kv["used"], kv["cached"], kv["admissions"], kv["evicted_entries"]) == (1e12, 1e12, 2, 0)


DEFAULTS = """
pool kv { cap 4; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { hold kv (2) { run d (1); grow kv (2); observe g = now; run d (1); } }
  else { hold kv (2) { run d (2); } cache (2); run d (0.5); observe c = cachedin(kv); }
}
run { horizon 4; }
"""


def test_the_default_preempt_and_evict(monkeypatch):
    """`preempt none` by default: s0's growth at 1 (2 + 2 + 2 > 4) waits for room and resumes. At 2 s1
    releases and caches 2, and the growth takes the room, evicting that entry (cached prefixes never block;
    `evict lru` by default, the only entry): g = 2, s1 finds nothing cached at 2.5. used s0 2 on [0, 2], 4 on
    [2, 3]; s1 2 on [0, 2]: 12 over 4 = 3; holders 3 + 2 over 4; no preemption."""
    r, o = run(DEFAULTS, monkeypatch)
    assert o["g"] == [(0, 2.0, 2.0)]
    assert o["c"] == [(1, 2.5, 0.0)]
    kv = pool_json(r, "kv")
    assert {k: kv[k] for k in ("used", "cached", "holders", "preemptions", "evicted_entries", "evicted_units")} \
        == {"used": 3.0, "cached": 0.0, "holders": 1.25, "preemptions": 0, "evicted_entries": 1,
            "evicted_units": 2.0}
