"""Conformance of language.txt §2's `choose NAME in expr by ( expr , ... ); -- NAME := argmin over 0..n, keys
in order` and §3's Ties ("choose: the keys, in order, then the smallest index"), with stage and pool
families and computed member indices, by hand (docs/language.md: "A `choose` is among 1 to 100 000
candidates", "A `choose` key that is NaN does not order", "A computed member index is a whole number").

Each program runs on the tier serQ picks and on the general engine (conform.run: the JSON reports and every
observe's samples the same bytes); the member each session chose is observed, and the stages' and pools'
figures asserted as the JSON report reads them.
"""

from __future__ import annotations

import math

import pytest
from conform import refused, report_json, run, run_error

KEYS = """
stage d : delay;
workload { arrive batch(1); }
session {
  set z = serial - serial;
  set n = z / z;
  choose j in COUNT by (KEYS);
  observe c = j;
  run d (1);
}
run { horizon 2; }
"""


@pytest.mark.parametrize("count, keys, chosen", [
    # one key: the least, 5 - j over 0 … 3 is least at 3
    ("4", "5 - j", 3),
    # ties: every key 0, the smallest index
    ("4", "0", 0),
    # keys in order: j % 2 first (0 for 0 and 2), then -j among those: -2 < 0, so 2
    ("4", "j % 2, -j", 2),
    # the second key decides only where the first ties: (1, 0), (0, 5), (0, 4) → 2
    ("3", "j == 0 ? 1 : 0, j == 1 ? 5 : 4", 2),
    # an infinite key: -inf at 2 is least; inf everywhere ties, the smallest index
    ("3", "j == 2 ? -inf : 0", 2),
    ("3", "inf", 0),
    # -0 and 0 tie (a comparison, not the bits): the smallest index
    ("2", "j == 0 ? z : -z", 0),
    # a NaN key does not order (docs/language.md): met first and deciding, it stays; later, it never wins
    ("3", "j == 1 ? n : 5", 0),
    ("3", "j == 0 ? n : 5 - j", 0),
    ("3", "j == 2 ? n : 5 - j", 1),
    # one candidate: always 0
    ("1", "-100", 0),
    # a computed count: serial + 3 candidates (3), the least of -j is the last, 2
    ("serial + 3", "-j", 2),
    # a count that is a let-free constant expression
    ("(2 * 3)", "(j - 4) * (j - 4)", 4),
])
def test_choose_takes_the_least_keys_then_the_smallest_index(monkeypatch, count, keys, chosen):
    _r, obs = run(KEYS.replace("COUNT", count).replace("KEYS", keys), monkeypatch)
    assert obs["c"] == [(0, 0.0, float(chosen))]


def test_a_count_of_candidates_is_1_to_100000(monkeypatch):
    """A constant count of 0 does not link; a computed one (serial - serial) is a run-time error at the
    choose naming the time and the session; a fraction computed likewise."""
    assert refused(KEYS.replace("COUNT", "0").replace("KEYS", "j")).startswith("choose j: the count of candidates is 0")
    err = run_error(KEYS.replace("COUNT", "z").replace("KEYS", "j"), monkeypatch)
    assert "at t=0, session 0: choose j: the count of candidates is 0" in err
    err = run_error(KEYS.replace("COUNT", "z + 2.5").replace("KEYS", "j"), monkeypatch)
    assert "at t=0, session 0: choose j: the count of candidates is 2.5" in err


JSQ = """
pool kv[3] { cap 10; }
stage s[3] : fifo;
workload { arrive batch(5); }
session {
  choose j in 3 by (KEY);
  observe c = j;
  hold kv[j] (2 + j) { run s[j] (1 + serial); }
  observe t = now;
}
run { horizon 20; }
"""


@pytest.mark.parametrize("key, chosen, done, used, s0", [
    # Five sessions at 0 run in serial order, and a hold joins its pool's queue, admitted in the settle
    # after every ready session has run (§3, Configuration; docs/simulator.md, The settle loop). Counting
    # the pool's holders and queue, each session sees the ones before it: s0 → 0, s1 → 1, s2 → 2 (each
    # the least, ties to the smallest index), then all three have one: s3 → 0, s4 → 1. s[0] serves s0 (1 s)
    # then s3 (4 s): done at 1 and 5; s[1] s1 (2) then s4 (5): 2 and 7; s[2] s2 (3): 3. kv[j] holds 2 + j
    # a session from its admission at 0 to its run's end: kv[0] 2 · 1 + 2 · 5 = 12 over 20; kv[1] 3 · 2 +
    # 3 · 7 = 27; kv[2] 4 · 3 = 12. s[0]: busy 5 of 20; present 2 on [0, 1], 1 on [1, 5]: 6/20; waits 0, 1.
    ("queued(kv[j]) + holders(kv[j])", [0, 1, 2, 0, 1], {0: 1.0, 1: 2.0, 2: 3.0, 3: 5.0, 4: 7.0},
     {0: 0.6, 1: 1.35, 2: 0.6}, (0.25, 0.3, 2, 0.5)),
    # Counting the stage's jobs instead, nobody is at a stage while the sessions choose (each waits in kv's
    # queue until the settle): every key is 0, and all five go to member 0, served in turn: done at 1, 3,
    # 6, 10, 15; kv[0] holds 10, 8, 6, 4, 2 over [0, 1], [1, 3], [3, 6], [6, 10], [10, 15]: 70/20; s[0]
    # busy 15 of 20, present 5, 4, 3, 2, 1 likewise: 5 + 8 + 9 + 8 + 5 = 35 over 20; waits 0, 1, 3, 6, 10: 4.
    ("queue(s[j]) + busy(s[j])", [0, 0, 0, 0, 0], {0: 1.0, 1: 3.0, 2: 6.0, 3: 10.0, 4: 15.0},
     {0: 3.5, 1: 0.0, 2: 0.0}, (0.75, 1.75, 5, 4.0)),
])
def test_join_the_shortest_queue_over_a_family(monkeypatch, key, chosen, done, used, s0):
    r, obs = run(JSQ.replace("KEY", key), monkeypatch)
    assert [v for _s, _t, v in obs["c"]] == [float(c) for c in chosen]
    assert {s: t for s, t, _v in obs["t"]} == done
    j = report_json(r)
    assert {p["index"]: p["used"] for p in j["pools"] if p["name"] == "kv"} == pytest.approx(used, rel=1e-12)
    st = next(x for x in j["stages"] if x["name"] == "s" and x["index"] == 0)
    assert (st["utilisation"], st["present"], st["completions"], st["wait"]) == pytest.approx(s0, rel=1e-12)


CACHE_AFFINITY = """
pool kv[2] { cap 100; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial < 2) {
    hold kv[serial] (10 * (serial + 1)) { run d (1); } cache (10 * (serial + 1));
  } else {
    run d (2);
    choose j in 2 by (-cachedin(kv[j]), used(kv[j]));
    observe c = j;
    observe most = max k in 2 (used(kv[k]) + cachedin(kv[k]));
    observe least = min k in 2 (holders(kv[k]));
  }
}
run { horizon 3; }
"""


def test_a_key_reads_each_member_of_a_family(monkeypatch):
    """s0 caches 10 in kv[0], s1 20 in kv[1] (at 1). At 2 s2 chooses the most cached of its own (it has
    none: cachedin is the session's own prefix, 0 on both), then the least used (0 on both): 0. The
    aggregates write the members out: max(0 + 0, 0 + 0) — cachedin is s2's own — and min(0, 0)."""
    _r, obs = run(CACHE_AFFINITY, monkeypatch)
    assert obs["c"] == [(2, 2.0, 0.0)] and obs["most"] == [(2, 2.0, 0.0)] and obs["least"] == [(2, 2.0, 0.0)]


def test_a_sessions_own_prefix_chooses_its_member(monkeypatch):
    """The same with one session: s0 caches 10 in kv[1] at 1, then chooses by -cachedin: kv[1] (-10 < 0)."""
    src = ("pool kv[2] { cap 100; }\nstage d : delay;\nworkload { arrive batch(1); }\n"
           "session { hold kv[1] (10) { run d (1); } cache (10); choose j in 2 by (-cachedin(kv[j])); "
           "observe c = j; observe u = max k in 2 (cachedin(kv[k])); }\nrun { horizon 3; }\n")
    _r, obs = run(src, monkeypatch)
    assert obs["c"] == [(0, 1.0, 1.0)] and obs["u"] == [(0, 1.0, 10.0)]


@pytest.mark.parametrize("index, message", [
    # s0 names kv[0] and goes on; s1, at 1, names no member and stops the run there
    ("serial / 2", "pool kv: index 0.5 is not a whole number (the family has 2)"),
    ("serial + 1", "pool kv: index 2 out of range (the family has 2)"),
    ("serial * -1", "pool kv: index -1 out of range (the family has 2)"),
])
def test_a_computed_member_index_is_a_whole_member(monkeypatch, index, message):
    src = ("pool kv[2] { cap 100; }\nstage d : delay;\nworkload { arrive batch(2); }\n"
           f"session {{ run d (serial); hold kv[{index}] (1) {{ run d (1); }} }}\nrun {{ horizon 3; }}\n")
    assert run_error(src, monkeypatch).endswith(f"error: at t=1, session 1: {message}")


def test_a_uniform_key_routes_uniformly(monkeypatch):
    """`choose j in 4 by (~uniform(0, 1))`: each candidate's draw its own, so each member is chosen with
    probability 1/4: 4 000 sessions, each count within 4 standard deviations (√(4000 · 3/16) ≈ 27.4) of
    1 000, and a chi-square of 3 degrees of freedom below its 0.999 quantile, 16.27."""
    src = ("stage d : delay;\nworkload { arrive batch(4000); }\n"
           "session { choose j in 4 by (~uniform(0, 1)); observe c = j; run d (1); }\nrun { horizon 2; seed 2; }\n")
    _r, obs = run(src, monkeypatch)
    counts = [sum(1 for _s, _t, v in obs["c"] if v == k) for k in range(4)]
    assert sum(counts) == 4000 and all(abs(c - 1000) <= 4 * math.sqrt(750) for c in counts), counts
    assert sum((c - 1000) ** 2 / 1000 for c in counts) < 16.27
