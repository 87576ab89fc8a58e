"""Conformance of language.txt §3 on what a session does at its stages and between them, by hand, in cases
no earlier test held together:

* Stages: "ps(φ): every job at once, each at φ(present)/present", with a φ that reads `present` and one
  that reads a pool (docs/language.md, "When a ps capacity is read": φ is read when the jobs present
  change), and "fifo(c): c servers, jobs in arrival order at rate 1";
* Ties: "jobs of a ps stage with equal finish tags finish in the order they started", and "choose: the
  keys, in order, then the smallest index", over a stage family read through `queue(s[j])` (docs/language.md:
  the jobs at the stage, served or waiting);
* Workload: "init runs at arrival, turn at every turn statement", with a think time between turns;
* Branching: "branch with (p) takes the first block with probability p, and is sugar the parser rewrites to
  branch (~bernoulli(p))", inside a `loop` whose passes a draw ends.

Each table row is one program run on the tier serQ picks and on the general engine (conform.run: the JSON
reports and every observe's samples the same bytes); the stages are asserted as the JSON report reads them,
and every number is derived by hand in the row's comment.
"""

from __future__ import annotations

import pytest
import serq_frontend
from conform import report_json, run
from serq_ir.codec import encode


def _stages(report) -> dict:
    return {(s["name"], s["index"]): s for s in report_json(report)["stages"]}


def _at(samples) -> dict:
    return {s: t for s, t, _v in samples}


def _fields(got: dict, want: dict) -> dict:
    return {k: got[k] for k in want}


PS_PRESENT = """
stage p : ps(min(present, 2));
workload { arrive batch(3); }
session { run p (serial + 1); observe done = now; }
run { horizon 10; }
"""
# s1 starts at 0 with 2, s0 at 1 with 1 (after a delay of 1); then each runs 1 on a fifo.
PS_TIE = """
stage p : ps(1);
stage f : fifo;
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) { run d (1); run p (1); } else { run p (2); }
  observe left = now;
  run f (1);
  observe done = now;
}
run { horizon 10; }
"""
# s0 runs 4 on p from 0; s1 holds 3 of m from 1 to 11; s2 runs 1.5 on p from 2.
PS_READS_A_POOL = """
pool m { cap 10; }
stage p : ps(1 + used(m));
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) { run p (4); }
  branch (serial == 1) { run d (1); hold m (3) { run d (10); } }
  branch (serial == 2) { run d (2); run p (1.5); }
  observe done = now;
}
run { horizon 20; }
"""
# the same with a fourth session that runs no work on p at 1.5
PS_ZERO_RUN = PS_READS_A_POOL.replace("batch(3)", "batch(4)").replace(
    "  observe done = now;", "  branch (serial == 3) { run d (1.5); run p (0); }\n  observe done = now;")
FIFO2 = """
stage f : fifo(2);
workload { arrive batch(3); }
session { run f (serial == 0 ? 3 : serial); observe done = now; }
run { horizon 10; }
"""


@pytest.mark.parametrize("src, done, name, want", [
    # φ = min(present, 2): three jobs of 1, 2, 3 at 2/3 each until s0 is done at 1.5 (each has run 1);
    # two at 1 each: s1's last 1 at 2.5; s2 alone at min(1, 2) = 1: its last 1 at 3.5. present 3 · 1.5 +
    # 2 + 1 = 7.5 over 10; utilisation (some job present) 3.5 over 10; service (1.5 + 2.5 + 3.5) / 3.
    (PS_PRESENT, {0: 1.5, 1: 2.5, 2: 3.5}, "p",
     {"present": 0.75, "utilisation": 0.35, "service": 2.5, "completions": 3}),
    # s1 alone over [0, 1] (1 of its 2 left); from 1 both at 1/2: each has 1 left, both done at 3, the
    # finish tags equal (0 + 2, 1 + 1): s1 started first, so it leaves first and the fifo serves it over
    # [3, 4] and s0 over [4, 5]. p: present 3 + 2 over 10, service (3 + 2) / 2; f: waits 0 and 1.
    (PS_TIE, {1: 4.0, 0: 5.0}, "f", {"present": 0.3, "wait": 0.5, "service": 1.0, "completions": 2}),
    # φ is read when the jobs present change: 1 + 0 at 0, so s0 runs at 1 and still at 1 after s1 takes 3
    # of m at 1; at 2 s2 arrives: φ = 1 + 3 = 4, 2 each: s2's 1.5 in 0.75 (done at 2.75), s0's 2 left
    # less 1.5; alone at 4: its 0.5 in 0.125, done at 2.875. (Read at every instant, s0 would have run at
    # 4 from 1 and been done at 1.75.) present 2.875 + 0.75 over 20; utilisation 2.875 over 20.
    (PS_READS_A_POOL, {2: 2.75, 0: 2.875, 1: 11.0}, "p",
     {"present": 3.625 / 20, "utilisation": 2.875 / 20, "service": (2.875 + 0.75) / 2, "completions": 2}),
    # A run of no work at 1.5 completes at once and is no job of p: φ is not read again then (read then,
    # s0 would run at 4 from 1.5 and be done at 2.25, s2 at 2.5); the figures are the row above's.
    (PS_ZERO_RUN, {3: 1.5, 2: 2.75, 0: 2.875, 1: 11.0}, "p",
     {"present": 3.625 / 20, "utilisation": 2.875 / 20, "service": (2.875 + 0.75) / 2, "completions": 2}),
    # fifo(2), works 3, 1, 2: s0 and s1 start at 0; s2 waits for s1 (done at 1) and runs over [1, 3].
    # present 3 on [0, 1], 2 on [1, 3]: 7 over 10; utilisation 2 busy servers over [0, 3]: 6 / (2 · 10).
    (FIFO2, {1: 1.0, 0: 3.0, 2: 3.0}, "f",
     {"present": 0.7, "utilisation": 0.3, "wait": 1 / 3, "service": 2.0, "completions": 3}),
])
def test_shared_and_multi_server_stages(monkeypatch, src, done, name, want):
    r, o = run(src, monkeypatch)
    assert _at(o["done"]) == done
    assert _fields(_stages(r)[(name, None)], want) == want
    if src is PS_TIE:
        assert _at(o["left"]) == {0: 3.0, 1: 3.0}


CHOOSE = """
stage s[3] : fifo;
workload { arrive batch(4); }
session {
  choose j in 3 by (KEYS);
  observe c = j;
  run s[j] (2);
  observe done = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("keys, chosen, busy", [
    # The four sessions run in the order they became ready, s0 … s3, each joining its stage before the
    # next chooses: s0 sees queues 0, 0, 0 and takes the smallest index, 0; s1 0 of 1, 0, 0 → 1; s2 → 2;
    # s3 sees 1, 1, 1: the smallest index again, 0, and waits there for s0 (done at 4).
    ("queue(s[j])", {0: 0, 1: 1, 2: 2, 3: 0}, 0),
    # A second key -j breaks the ties towards the largest index: s0 → 2, s1 → 1, s2 → 0, s3 (1, 1, 1) → 2.
    ("queue(s[j]), -j", {0: 2, 1: 1, 2: 0, 3: 2}, 2),
    # A key every candidate ties on: the smallest index, 0, for all four, served one after the other.
    ("1", {0: 0, 1: 0, 2: 0, 3: 0}, None),
])
def test_choose_breaks_ties_by_the_next_key_then_the_smallest_index(monkeypatch, keys, chosen, busy):
    r, o = run(CHOOSE.replace("KEYS", keys), monkeypatch)
    assert {s: int(v) for s, _t, v in o["c"]} == chosen
    stages = _stages(r)
    if busy is None:
        # one fifo takes all four: done at 2, 4, 6, 8; waits 0, 2, 4, 6; present 2 · (1 + 2 + 3 + 4) / 10
        assert _at(o["done"]) == {0: 2.0, 1: 4.0, 2: 6.0, 3: 8.0}
        assert _fields(stages[("s", 0)], {"completions": 4, "wait": 3.0, "present": 2.0}) == \
            {"completions": 4, "wait": 3.0, "present": 2.0}
        return
    # the member taken twice: its first job over [0, 2], s3's over [2, 4] (wait 2); present 2 + 4 over 10
    assert _at(o["done"]) == {0: 2.0, 1: 2.0, 2: 2.0, 3: 4.0}
    for k in range(3):
        want = ({"completions": 2, "wait": 1.0, "present": 0.6, "utilisation": 0.4} if k == busy else
                {"completions": 1, "wait": 0.0, "present": 0.2, "utilisation": 0.2})
        assert _fields(stages[("s", k)], want) == want


# Two sessions; `init` sets K = 0 at arrival and each `turn;` adds 10; a turn runs K / 10 on one fifo, then
# thinks 2 on a delay stage and turns again, three turns in all.
TURNS = """
stage s : fifo;
stage think : delay;
workload { arrive batch(2); init { set K = 0; } turn { set K = K + 10; } }
session {
  turn;
  loop {
    run s (K / 10);
    observe k = K;
    branch (turn_no < 3) { run think (2); turn; } else { end; }
  }
}
run { horizon 20; }
"""


def test_turns_and_think_times_by_hand(monkeypatch):
    """Turn 1 (K 10, 1 s of work): s0 over [0, 1], s1 waits and runs over [1, 2]. s0 thinks over [1, 3],
    turns (K 20) and runs over [3, 5]; s1 thinks over [2, 4], turns and waits for s0 until 5: [5, 7]. s0
    thinks over [5, 7] and runs 3 over [7, 10]; s1 thinks over [7, 9] and waits until 10: [10, 13].

    turns 6; s: waits 0, 1, 0, 1, 0, 1 (mean 0.5), present (1 + 2) + (2 + 3) + (3 + 4) = 15 over 20, busy
    [0, 2], [3, 13]: 12 over 20; think: four runs of 2, present 8 over 20, some job present on [1, 4] and
    [5, 9]: 7 over 20; live: 10 + 13 over 20."""
    r, o = run(TURNS, monkeypatch)
    assert o["k"] == [(0, 1.0, 10.0), (1, 2.0, 10.0), (0, 5.0, 20.0), (1, 7.0, 20.0), (0, 10.0, 30.0),
                      (1, 13.0, 30.0)]
    j = report_json(r)
    assert (j["turns"], j["ended"], j["mean_live"]) == (6, 2, 1.15)
    stages = _stages(r)
    assert _fields(stages[("s", None)], {"completions": 6, "wait": 0.5, "present": 0.75, "utilisation": 0.6}) \
        == {"completions": 6, "wait": 0.5, "present": 0.75, "utilisation": 0.6}
    assert _fields(stages[("think", None)], {"completions": 4, "present": 0.4, "utilisation": 0.35}) == \
        {"completions": 4, "present": 0.4, "utilisation": 0.35}


# Each pass of the loop runs 1 on a delay stage and goes on with probability 1/2.
DRAWN_LOOP = """
stage s : delay;
workload { arrive batch(50); init { set n = 0; } }
session {
  loop {
    set n = n + 1;
    run s (1);
    branch with (0.5) { } else { observe passes = n; observe done = now; end; }
  }
}
run { horizon 1000; }
"""


@pytest.mark.parametrize("form", ["branch with (0.5)", "branch (~bernoulli(0.5))"])
def test_a_loop_a_draw_ends(monkeypatch, form):
    """`branch with (p)` is `branch (~bernoulli(p))` (the same IR, so the same run), and a loop repeats its
    block until an `end;` does: every session ends (50 of 50 under a horizon of 1000), each at the time
    of its passes (one of 1 s each, nothing waits on a delay stage), and the stage's completions are their
    sum. Seed 1 ends the sessions after 1, 2, 3, 4, 5, 6 and 8 passes (a geometric count: 19, 19, 7, 1,
    2, 1, 1), so the loop went round more than once."""
    src = DRAWN_LOOP.replace("branch with (0.5)", form)
    assert encode(serq_frontend.compile(source=src, sets={}, defs={}), spans=False) == \
        encode(serq_frontend.compile(source=DRAWN_LOOP, sets={}, defs={}), spans=False)
    r, o = run(src, monkeypatch)
    passes = {s: v for s, _t, v in o["passes"]}
    assert len(passes) == 50
    assert {s: t for s, t, _v in o["done"]} == passes
    assert sorted(passes.values()).count(1.0) == 19 and max(passes.values()) == 8.0
    j = report_json(r)
    assert (j["arrivals"], j["ended"]) == (50, 50)
    assert _stages(r)[("s", None)]["completions"] == sum(passes.values()) == 106
