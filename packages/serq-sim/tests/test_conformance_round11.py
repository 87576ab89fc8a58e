"""Conformance cases for the settle over large families and the kept victim orders: the smallest programs
whose outcome follows from language.txt §3 (and pool-reference.txt `preempt`, docs/language.md) by hand, at
the sizes where the simulator takes its shortcuts:

* more than 8 step stages: the settle asks only the stages marked as possibly idle (docs/simulator.md, the
  settle loop), in the order of §3 Ties (stages that admit a pool in the order of the first pool each
  admits);
* more than 8 pools that can have growers or a queue of their own: only those a grower or a queued session
  joined are looked at;
* `preempt by` keys that read only attributes, numbers, `decoding` and `admission` through a strictly
  monotone term choose the victim from a kept order of the residents; `preempt lifo` on a stage ranked by
  kept `serve by` keys finds the victim among the residents kept in admission order.

Every case runs on the tier serQ picks and on SERQ_SIM_TIER=general (the per-job reference), whose reports
and every observe's samples must be the same bytes (conform.run); the family cases also against the walk
over every member at every settle (build._FEW_STEPS raised past the family's size), and against the same
program at 8 members where the semantics says the results correspond.

Conventions of the programs: `cost 1` (an iteration lasts 1), a prefill of 16 tokens on a budget of at
least 16 is one iteration, each decode token one iteration; `block 16`, so a hold of 16 is one block and
a decoder's first token (position 17) needs a second one.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import pool, run
from serq_report.json import encode_json
from serq_sim import build


def done_of(obs, name="done"):
    """{session: [times]} of an observe's samples."""
    out: dict = {}
    for s, t, _v in obs[name]:
        out.setdefault(s, []).append(t)
    return out


def walk_vs_marks(src: str, monkeypatch) -> None:
    """The program's report on both tiers is the walk's (every step stage asked, every pool looked at, at
    every settle) byte for byte."""
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    out = []
    for few in (8, 10**9):
        monkeypatch.setattr(build, "_FEW_STEPS", few)
        for tier in ("", "general"):
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
            r = serq_sim.run(prog)
            samples = {n: tuple(getattr(o, f).tobytes() for f in ("values", "times", "sessions", "turns"))
                       for n, o in r.observes.items()}
            out.append((encode_json(r), samples))
    assert all(o == out[0] for o in out[1:])


# --- (a) admissions at one instant across many stages: the order of the first pool each admits ------------

def reversed_stages(r: int, blocks: int = 3) -> str:
    """``r`` step stages e0 … e(r-1) declared in that order; pool qk (declared k-th) admitted by e(r-1-k);
    session k waits in qk. Every hold also takes one block of the shared kv (``blocks`` of them)."""
    stages = "\n".join(f"stage e{k} : step {{ budget 16; cost 1; memory kv; }}" for k in range(r))
    pools = "\n".join(f"pool q{k} {{ cap 1; admit via e{r - 1 - k}; }}" for k in range(r))
    body = ""
    for k in reversed(range(r)):
        hold = f"hold q{k} (1), kv (16) {{ prefill on e{r - 1 - k} (16); }}"
        body = hold if k == r - 1 else f"branch (serial == {k}) {{ {hold} }} else {{ {body} }}"
    return f"""
pool kv {{ cap {blocks} * 16; block 16; preempt none; }}
{pools}
{stages}
workload {{ arrive batch({r}); }}
session {{
  {body}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [8, 9, 12, 20])
def test_stages_admit_at_one_instant_in_the_order_of_the_first_pool_each_admits(monkeypatch, r):
    """§3 Ties: "where the heads of two queues both wait for room in one pool, or one stage serves several
    queues, the pool declared first is served first"; docs/simulator.md: the idle stages plan "as declared
    but those that admit a pool in the order of the first pool each admits".

    All r sessions join their queues at 0 (qk holds session k). kv has room for 3 holds. The stages plan
    in the order of their pools: e(r-1) (q0) first, then e(r-2) (q1), …, though e0 is declared first. So
    sessions 0, 1, 2 are admitted at 0 and finish their one-iteration prefill at 1; e(r-4) (q3) finds kv
    full and its head waits. At 1 the three release; the waiting stages are asked again in the same order:
    3, 4, 5 finish at 2, and so on: session k is done at floor(k / 3) + 1. (In the order the stages are
    declared it would be r-1, r-2, r-3 first.)"""
    src = reversed_stages(r)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {k: [float(k // 3 + 1)] for k in range(r)}
    kv = pool(rep, "kv")
    assert (kv.admissions, kv.preemptions) == (r, 0)
    walk_vs_marks(src, monkeypatch)


# --- (b) growers under `preempt none` across a family, grown when room frees --------------------------------

SHARED_GROWERS = """
let R = {r};
pool kv {{ cap 5 * 16; block 16; preempt none; }}
pool reqs[R] {{ cap 1; admit via e; }}
stage e[R] : step {{ budget 16; cost 1; memory kv; }}
workload {{ arrive batch(4); }}
session {{
  set j = R - 1 - 3 * serial;
  hold reqs[j] (1), kv (16) {{
    prefill on e[j] (16) growing kv;
    branch (serial == 2) {{ decode on e[j] (1); }} else {{ decode on e[j] (serial == 3 ? 4 : 1) growing kv; }}
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [10, 16])
def test_growers_of_one_pool_stall_in_the_order_the_engines_plan_and_grow_in_that_order(monkeypatch, r):
    """§3 Ties: "A pool's growers: the order they stalled, the head blocking the rest"; grow under
    `preempt none`: "the session waits and resumes where it was"; §3 Configuration: the stages start at
    the settle once no other event is pending at the instant.

    Sessions 0, 1, 2, 3 run on e[r-1], e[r-4], e[r-7], e[r-10] (one each); kv (5 blocks) is the memory of
    every engine. At 0 each is admitted (4 blocks) and prefills 16 tokens in [0, 1]. At 1 the four ends
    come first, then the engines plan in member order: e[r-10] (session 3) grows its decoder to a second
    block (5: full); e[r-7] (session 2, a decode that does not grow) takes its token; e[r-4] (session 1)
    stalls first, e[r-1] (session 0) second, and neither engine has a token to serve. At 2 session 2 is
    done and gives its block back: the head grower, session 1, grows (full again) and decodes in [2, 3];
    session 0 still waits. At 3 session 1 is done (2 blocks back): session 0 grows, decodes in [3, 4].
    Session 3's four tokens are [1, 2] … [4, 5]. (Stalled in serial order, 0 would be done at 3, 1 at 4.)"""
    src = SHARED_GROWERS.format(r=r)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {2: [2.0], 1: [3.0], 0: [4.0], 3: [5.0]}
    assert pool(rep, "kv").preemptions == 0
    walk_vs_marks(src, monkeypatch)


FAMILY_GROWERS = """
let R = {r};
pool reqs[R] {{ cap 2; admit via e; }}
pool kv[R] {{ cap 3 * 16; block 16; preempt none; }}
stage e[R] : step {{ budget 64; cost 1; memory kv; }}
workload {{ arrive batch(6); }}
session {{
  set j = R - 1 - 4 * floor(serial / 2);
  hold reqs[j] (1), kv[j] (16) {{
    prefill on e[j] (16) growing kv[j];
    decode on e[j] (1 + serial % 3) growing kv[j];
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [9, 12, 20])
def test_growers_wait_in_several_pools_of_a_family_and_grow_when_their_room_frees(monkeypatch, r):
    """grow under `preempt none` (the session waits and resumes where it was) in three pools of a family of
    r (more than 8 pools with growers: the settle looks only at the pools a grower joined).

    Sessions 2k and 2k+1 share engine e[r-1-4k] and its kv (3 blocks); decode lengths 1 + serial % 3
    (1, 2, 3, 1, 2, 3). Both are admitted at 0 and prefill in [0, 1] (2 blocks). At 1 the first admitted
    (A = 2k) grows to its second block (full) and decodes; the other (B) stalls. A is done at 1 + d_A and
    gives 2 blocks back; B grows then and decodes its d_B tokens: done at 1 + d_A + d_B.
    e[r-1]: 0 at 2, 1 at 2 + 2 = 4; e[r-5]: 2 at 4, 3 at 4 + 1 = 5; e[r-9]: 4 at 3, 5 at 3 + 3 = 6."""
    src = FAMILY_GROWERS.format(r=r)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {0: [2.0], 1: [4.0], 2: [4.0], 3: [5.0], 4: [3.0], 5: [6.0]}
    kvs = [p for p in rep.result.pools if p.name == "kv"]
    assert len(kvs) == r and sum(p.preemptions for p in kvs) == 0
    walk_vs_marks(src, monkeypatch)


# --- (c) a burst of victims under kept `preempt by` keys ------------------------------------------------------

BURST = """
pool kv {{ cap 8 * 16; block 16; preempt by {keys}; }}
pool reqs {{ cap 6; admit via engine; }}
stage engine : step {{ budget 1000; cost 1; memory kv; }}
workload {{ arrive batch({n}); }}
session {{
  set p = {p};
  hold reqs (1), kv (16) {{
    observe h = holders(reqs);
    prefill on engine (16) growing kv;
    {rest}
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""

DECODE = "decode on engine (1) growing kv;"
# even sessions prefill a second 16 tokens (decoding 0, a second block), odd ones decode a token
MIXED = f"branch (serial % 2 == 0) {{ prefill on engine (16) growing kv; }} else {{ {DECODE} }}"


def burst(keys: str, *, p: str = "0", n: int = 6, rest: str = DECODE, family: int = 0) -> str:
    src = BURST.format(keys=keys, p=p, n=n, rest=rest)
    if family:  # the same engine in a family of step stages whose other members nobody uses
        src = src.replace("pool reqs {", f"let R = {family};\npool idle[R] {{ cap 1; admit via spare; }}\n"
                          "stage spare[R] : step { budget 1; cost 1; }\npool reqs {")
    return src


# Every case: sessions 0 … 5 admitted at 0 in serial order (admission order), one block each (6 of 8), their
# 16-token prefills in [0, 1]. At 1 each grows to a second block, in serving order (admission order):
# 0 and 1 take the two free blocks; each later grower finds kv full and preempts the candidate with the
# least keys (the residents of the engine, the grower included), ties to the last admitted. The victims
# re-enter reqs' queue (requeue head: each ahead of those before it), and nobody is admitted in an
# iteration that preempted. At 2 the others are done and give their blocks back; the victims are
# admitted again (h: the holders of reqs at their admission, so their order), prefill in [2, 3] and finish
# their second run in [3, 4].
@pytest.mark.parametrize("keys, p, rest, victims", [
    # keys (serial % 5, -admission): 2's growth preempts 5 (key (0, -a5) < (0, -a0): the later admitted);
    # 3's growth finds 0 (2 blocks) the least of 0 … 4; 4 grows in the room left
    ("(serial % 5, -admission)", "0", DECODE, [5, 0]),
    # (decoding, -admission): the even sessions prefill (decoding 0), the odd decode. 2's growth preempts
    # the last admitted prefill, 4; 3's the last admitted of 0 and 2, 2 (its planned tokens given back);
    # 5 grows in the room left
    ("(decoding, -admission)", "0", MIXED, [4, 2]),
    # (p, serial % 3) with p = 0 for all: ties of 0 and 3 (0), 1 and 4, 2 and 5. 2's growth preempts 3
    # (the later of the least pair); 4's growth finds 0 (2 blocks) the least; 5 grows
    ("(p, serial % 3)", "0", DECODE, [3, 0]),
    # (p, serial % 3) with p = serial % 2: order 0 (0,0), 4 (0,1), 2 (0,2), 3, 1, 5. 2's growth preempts 0;
    # 3 grows in what 0 left; 4's growth finds itself the least: it is its own victim, and the serving
    # goes on (a policy other than lifo): 5 grows in the block 4 gave back
    ("(p, serial % 3)", "serial % 2", DECODE, [0, 4]),
])
@pytest.mark.parametrize("family", [0, 12])
def test_a_burst_of_victims_under_kept_keys(monkeypatch, keys, p, rest, victims, family):
    """pool-reference.txt `preempt`: "Preempt the candidate with the least keys, compared in order; ties
    go to the last admitted"; requeue head (the default) "places it first"; the grower can be its own
    victim, and under keys other than lifo's the serving goes on past it (docs/language.md). The schedule
    above the cases gives: the others done at 2; the victims done at 4, the later victim (preempted
    second) admitted first."""
    src = burst(keys, p=p, rest=rest, family=family)
    rep, obs = run(src, monkeypatch)
    others = [s for s in range(6) if s not in victims]
    assert done_of(obs) == {**{s: [2.0] for s in others}, **{s: [4.0] for s in victims}}
    # h at admission: 1 … 6 at 0 in serial order; at 2 the second victim (requeued last, at the head) sees 1
    first, second = victims
    assert {s: v for s, t, v in obs["h"] if t == 2.0} == {second: 1.0, first: 2.0}
    assert [(s, v) for s, t, v in obs["h"] if t == 0.0] == [(s, float(s + 1)) for s in range(6)]
    assert pool(rep, "kv").preemptions == 2
    if family:
        walk_vs_marks(src, monkeypatch)



@pytest.mark.parametrize("requeue, order", [
    # head: each victim first, the later ahead of the earlier (0, then 5), then 6, which waited since 0
    ("requeue head", [0, 5, 6]),
    # tail: each victim a newcomer behind 6, the earlier (5) ahead of the later (0)
    ("requeue tail", [6, 5, 0]),
])
@pytest.mark.parametrize("family", [0, 12])
def test_victims_re_enter_at_the_head_or_the_tail(monkeypatch, requeue, order, family):
    """pool-reference.txt `preempt`: "requeue head (the default) places it first, ahead of policy keys.
    requeue tail treats it as a newcomer: FIFO places it last"; docs/language.md: "under requeue head the
    later victim is ahead of the earlier … and under requeue tail behind it".

    The first case of the burst above, with a seventh session that waits in reqs (cap 6) from 0. The
    victims are 5 and then 0; at 2 the three are admitted in the queue's order (h = 1, 2, 3), each prefills
    in [2, 3] and decodes in [3, 4] (6 of the 8 blocks)."""
    src = burst(f"(serial % 5, -admission) {requeue}", n=7, family=family)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {**{s: [2.0] for s in (1, 2, 3, 4)}, **{s: [4.0] for s in (0, 5, 6)}}
    assert {s: v for s, t, v in obs["h"] if t == 2.0} == {s: float(k + 1) for k, s in enumerate(order)}
    assert pool(rep, "kv").preemptions == 2
    if family:
        walk_vs_marks(src, monkeypatch)


# --- (d) a self-victim under kept `serve by` keys: lifo stops the serving, other keys go on ------------------

SERVE_KEYS = """
pool kv { cap 6 * 16; block 16; PREEMPT }
pool reqs { cap 6; admit via engine; }
stage engine : step { budget 1000; cost 1; memory kv; serve by (-serial); }
workload { arrive batch(6); }
session {
  set p = 0;
  hold reqs (1), kv (16) {
    observe h = holders(reqs);
    prefill on engine (16) growing kv;
    decode on engine (1) growing kv;
  }
  observe done = now;
  end;
}
run { horizon 100; }
"""


@pytest.mark.parametrize("family", [0, 12])
@pytest.mark.parametrize("preempt, first, later", [
    # lifo: at 1 the engine serves 5 first (serve by (-serial)); kv is full (6 blocks), 5 is the last
    # admitted: its own victim, and the serving stops there: an iteration of no token that preempted, [1, 2].
    # At 2: 4 grows into 5's block; 3's growth preempts the last admitted resident, 4 (2 blocks); 3 grows;
    # 2 grows; 1's growth preempts 3; 1 and 0 grow. 2, 1, 0 decode in [2, 3]. At 3 they are done; the queue
    # is 3, 4, 5 (each victim at the head), admitted, prefill in [3, 4], decode in [4, 5]
    ("preempt lifo;", 3.0, 5.0),
    # by (-serial), requeue head: the same victims in the same order, but 5's self-preemption does not stop
    # the serving: the growths of 2 … 0 happen at 1, the three are done at 2, the victims at 4
    ("preempt by (-serial);", 2.0, 4.0),
    # by (p), p = 0 for all: every candidate ties, the victim is the last admitted (not the last served):
    # the victims of lifo, and the serving goes on as under (-serial)
    ("preempt by (p);", 2.0, 4.0),
])
def test_a_self_victim_stops_the_serving_under_lifo_and_not_under_other_keys(monkeypatch, preempt, first, later,
                                                                             family):
    """pool-reference.txt `preempt`: `lifo` preempts the last admitted (not the last served: the residents
    are served by (-serial), the reverse of their admission); the grower can be its own victim;
    docs/language.md ("A grower that preempts itself, and the residents after it"): under lifo the
    residents after it get nothing in that iteration, under any other order the serving goes on; §3: an
    iteration that schedules no token but preempted lasts C."""
    src = SERVE_KEYS.replace("PREEMPT", preempt)
    if family:
        src = src.replace("pool reqs {", f"let R = {family};\npool idle[R] {{ cap 1; admit via spare; }}\n"
                          "stage spare[R] : step { budget 1; cost 1; }\npool reqs {")
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {**{s: [first] for s in (0, 1, 2)}, **{s: [later] for s in (3, 4, 5)}}
    assert {s: v for s, t, v in obs["h"] if t == first} == {3: 1.0, 4: 2.0, 5: 3.0}
    assert pool(rep, "kv").preemptions == 3
    if family:
        walk_vs_marks(src, monkeypatch)


# --- (e) a stage marked by another's planning: this pass when its place comes after, else the next ---------

RELAY = """
let R = {r};
pool q[R] {{ cap 2; admit via e; }}
pool kv {{ cap 16; block 16; preempt none; }}
stage e[R] : step {{ budget 16; cost 1; memory kv; }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  set k = serial == 0 ? {a} : {b};
  run d (1);
  hold q[5] (1) {{
    hold q[k] (1), kv (16) {{ prefill on e[k] (16); }}
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [10, 14])
@pytest.mark.parametrize("a, b, done", [
    # 0 waits for e[2] (before e[5]: the next pass), 1 for e[7] (after e[5]: this pass): 1 takes kv
    (2, 7, {0: [3.0], 1: [2.0]}),
    (7, 2, {0: [2.0], 1: [3.0]}),
    # both before e[5]: the next pass, in member order
    (2, 3, {0: [2.0], 1: [3.0]}),
    (3, 2, {0: [3.0], 1: [2.0]}),
    # both after: this pass, in member order
    (8, 6, {0: [3.0], 1: [2.0]}),
])
def test_a_queue_joined_during_a_planning_is_served_in_the_stages_order(monkeypatch, r, a, b, done):
    """§3 Configuration: after every event the interpreter runs the ready sessions and then "starts an
    iteration on every idle step stage that has residents or a waiting queue it serves" (the stages in
    their order, §3 Ties), until nothing changes; docs/simulator.md: a stage marked by another's planning
    is asked in this pass when its place comes after that stage's, else in the next pass.

    At 0 every stage is asked and none has anything to do. Sessions 0 and 1 join q[5] at 1 (after a delay),
    are admitted by e[5]'s planning (e[5] then has nothing to serve) and at once join q[a] and q[b], each
    hold also taking kv, which has room for one. The walk over the stages continues after e[5] and starts
    again from e[0]: the session whose stage comes first in that walk is admitted and prefills in [1, 2];
    the other waits, is admitted when kv frees at 2, and is done at 3."""
    src = RELAY.format(r=r, a=a, b=b)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == done
    walk_vs_marks(src, monkeypatch)


# --- (f) differential: members nobody uses change nothing; 8 members (the walk) against 9 and more --------

LOADED = """
let R = {r};
pool reqs[R] {{ cap 3; admit via e; }}
pool kv[R] {{ cap 6 * 16; block 16; {preempt} }}
pool side[R] {{ cap 1; }}
stage e[R] : step {{ budget 40; cost 0.01 + 0.001 * tokens; memory kv; {serve} }}
stage t[R] : fifo;
workload {{ arrive poisson(150); }}
session {{
  choose j in 8 by (holders(reqs[j]) + queued(reqs[j]), j);
  set p = serial % 3;
  hold reqs[j] (1), kv[j] (16) {{
    prefill on e[j] (16 + serial % 20) growing kv[j];
    decode on e[j] (2 + serial % 30) growing kv[j];
  }}
  hold side[j] (1) {{ run t[j] (0.002 * (1 + serial % 4)); }}
  observe done = now;
  end;
}}
run {{ {run} }}
"""


def _members_below(report_json: str, n: int) -> dict:
    """The report without the stages and pools of member ``n`` and above."""
    import json

    d = json.loads(report_json)
    d["stages"] = [s for s in d["stages"] if s["index"] is None or s["index"] < n]
    d["pools"] = [p for p in d["pools"] if p["index"] is None or p["index"] < n]
    return d


@pytest.mark.timeout(120)
@pytest.mark.parametrize("preempt, serve", [
    ("preempt none;", ""),
    ("evict lru; preempt lifo;", ""),
    ("evict lru; preempt lifo;", "serve by (-p, remaining);"),
    ("preempt by (serial % 5, -admission);", ""),
    ("preempt by (decoding, -admission) requeue tail;", "serve by (p);"),
    ("preempt by (p, serial % 3) requeue tail;", ""),
])
def test_members_nobody_uses_change_nothing(monkeypatch, preempt, serve):
    """§3: a stage with neither residents nor a waiting queue starts nothing, and a pool with neither
    growers nor a queue admits nothing: the sessions choose among members 0 … 7 only, so the program with
    8 members (each stage asked and each pool looked at at every settle) and with 9 or 16 (only the marked
    ones) must give the same samples and the same report for members 0 … 7. Each also against the walk
    and the general tier, byte for byte."""
    base = None
    for r in (8, 9, 16):
        # under preempt none two growers of one engine can wait for each other for good (a request grows to 5
        # blocks of the 6): that run ends at its horizon
        run_ = "horizon 1.5; seed 7;" if "none" in preempt else "horizon 1e9; seed 7; arrivals 150;"
        src = LOADED.format(r=r, preempt=preempt, serve=serve, run=run_)
        rep, obs = run(src, monkeypatch)
        got = (_members_below(encode_json(rep), 8), obs)
        if base is None:
            base = got
            kv = [p for p in rep.result.pools if p.name == "kv"]
            if "none" in preempt:  # (the case is one of pressure: growers wait, or the victims are chosen)
                assert got[0]["arrivals"] > 150
            else:
                assert sum(p.preemptions for p in kv) > 5
                assert got[0]["ended"] == 150
        else:
            assert got == base
        if r == 9:
            walk_vs_marks(src, monkeypatch)


# --- (g) iterations of many members ending at one instant ----------------------------------------------------

def ends_at_one_instant(r: int) -> str:
    """``reversed_stages``' program with room for every hold, and after it a hold of one slot (a pool no
    stage admits) around a unit of work at a fifo stage."""
    return reversed_stages(r, blocks=r).replace("observe done = now;", "hold slot (1) { run desk (1); }\n  "
                                                "observe done = now;").replace(
        "pool kv {", "pool slot { cap 1; }\nstage desk : fifo;\npool kv {")


@pytest.mark.parametrize("r", [9, 13])
def test_iterations_ending_at_one_instant_end_in_the_order_they_were_scheduled(monkeypatch, r):
    """§3 Ties: "Events at one instant: the order they were scheduled; sessions run in the order they became
    ready"; "A pool's queue: … the order the sessions joined the queue".

    Every session is admitted at 0 (kv has room for all), by the stages in the order of their pools (e(r-1)
    for q0 first, …): the iterations are scheduled in that order, session k's k-th, and all end at 1.
    Each session becomes ready at its iteration's end and joins slot's queue: session k is k-th, holds the
    slot in [k + 1, k + 2] and is done at k + 2."""
    src = ends_at_one_instant(r)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {k: [float(k + 2)] for k in range(r)}
    assert pool(rep, "slot").admissions == r
    walk_vs_marks(src, monkeypatch)


# --- (h) many pools with queues of their own ----------------------------------------------------------------

SLOTS = """
let R = {r};
pool slot[R] {{ cap 1; {queue} }}
stage d : delay;
workload {{ arrive batch(3 * R); }}
session {{
  run d (0.5);
  hold slot[serial % R] (1) {{ run d (1 + serial % 3); }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [8, 10, 17])
@pytest.mark.parametrize("queue", ["queue fifo;", "queue by (-serial);"])
def test_many_pools_with_queues_of_their_own_admit_in_their_queues_order(monkeypatch, r, queue):
    """§3 Configuration: the settle "runs every ready session, then retries growers and admissions at every
    pool not served by a stage"; Ties: a pool's queue is its keys, then the order the sessions joined.

    Pool slot[j] (cap 1) gets sessions j, j + r, j + 2r, at 0.5 (after a delay: at 0 the settle found
    every pool with no queue), in serial order, each at the settle of its own delay's end (events in the
    order they were scheduled): j finds the slot free, j + r and j + 2r wait. Each holds the slot for
    1 + serial % 3 (the three at different residues for r = 8, 10 and 17). fifo: then j + r, then j + 2r;
    by (-serial): j + 2r first. Each is done when the ones before it in the slot's order and it have held
    the slot."""
    src = SLOTS.format(r=r, queue=queue)
    rep, obs = run(src, monkeypatch)
    expect = {}
    for j in range(r):
        order = [j, j + 2 * r, j + r] if "by" in queue else [j, j + r, j + 2 * r]
        t = 0.5
        for s in order:
            t += 1 + s % 3
            expect[s] = [t]
    assert done_of(obs) == expect
    walk_vs_marks(src, monkeypatch)


# --- (i) a victim at another member of the family, taken out of its running iteration ----------------------

ACROSS = """
let R = {r};
pool q[R] {{ cap 1; admit via e; }}
pool kv {{ cap 4 * 16; block 16; preempt lifo; }}
stage e[R] : step {{ budget 16; cost 1; memory kv; }}
stage d : delay;
workload {{ arrive batch(2); }}
session {{
  branch (serial == 0) {{
    hold q[6] (1), kv (32) {{ prefill on e[6] (32) growing kv; decode on e[6] (1) growing kv; }}
  }} else {{
    run d (0.5);
    hold q[1] (1), kv (16) {{ prefill on e[1] (16) growing kv; decode on e[1] (1) growing kv; }}
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [8, 10, 16])
def test_a_growth_at_one_member_preempts_the_last_admitted_resident_of_another(monkeypatch, r):
    """pool-reference.txt `preempt` (lifo: the last admitted) and docs/language.md ("The preemption
    candidates of a pool several engines count": the residents of every engine, by their latest admission;
    a growth at one engine can preempt a resident of another, taking it out of that engine's running
    iteration, which still ends when planned).

    Session 0 is admitted at e[6] at 0 (2 blocks) and prefills 32 tokens in [0, 1] and [1, 2]. Session 1
    is admitted at e[1] at 0.5 (1 block), prefills in [0.5, 1.5] and at 1.5 grows to a second block (4 of 4)
    to decode in [1.5, 2.5]. At 2 session 0's decoder needs a third block: the last admitted resident is
    session 1, at e[1]: preempted (its 2 blocks back), re-queued in q[1]. Session 0 grows and decodes in
    [2, 3]. e[1]'s iteration ends at 2.5 as planned; e[1] admits session 1 again (1 block, 4 of 4), which
    prefills in [2.5, 3.5]; session 0 is done at 3 (3 blocks back); session 1 grows at 3.5 and decodes in
    [3.5, 4.5]."""
    src = ACROSS.format(r=r)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {0: [3.0], 1: [4.5]}
    assert pool(rep, "kv").preemptions == 1
    walk_vs_marks(src, monkeypatch)


# --- (j) the head grower blocks the rest, in pools of a family no stage admits ------------------------------

HEAD_GROWER = """
let R = {r};
pool mem[R] {{ cap 4; preempt none; }}
stage d : delay;
workload {{ arrive batch(8); }}
session {{
  set j = serial < 4 ? 3 : R - 1;
  set i = serial % 4;
  hold mem[j] (1) {{
    branch (i == 1) {{ run d (0.25); grow mem[j] (2); }}
    branch (i == 2) {{ run d (0.5); grow mem[j] (1); }}
    run d (i == 3 ? 2 : 1);
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [9, 12])
def test_the_head_grower_blocks_the_rest_in_many_pools(monkeypatch, r):
    """§3 grow under `preempt none`: "the session waits and resumes where it was"; Ties: "A pool's growers:
    the order they stalled, the head blocking the rest".

    In each of mem[3] and mem[r-1] (cap 4) four sessions (i = 0 … 3) hold 1 at 0 (4 of 4). i = 1 asks 2 more
    at 0.25 and stalls first; i = 2 asks 1 more at 0.5 and stalls second. At 1 i = 0 gives its unit back
    (3 used): the head needs 2 (5 > 4) and blocks i = 2, whose 1 would fit. At 2 i = 3 gives its unit back
    (2 used): the head grows (4), runs [2, 3] and is done at 3 (3 units back); i = 2 grows then, runs
    [3, 4], done at 4. (Without the head's blocking, i = 2 would be done at 2.)"""
    src = HEAD_GROWER.format(r=r)
    rep, obs = run(src, monkeypatch)
    times = {0: 1.0, 1: 3.0, 2: 4.0, 3: 2.0}
    assert done_of(obs) == {s: [times[s % 4]] for s in range(8)}
    walk_vs_marks(src, monkeypatch)


# --- (k) two families of engines: the family whose pools are declared first plans first ---------------------

TWO_FAMILIES = """
let R = {r};
pool kv {{ cap R * 16; block 16; preempt none; }}
pool pe[R] {{ cap 1; admit via e; }}
pool pf[R] {{ cap 1; admit via f; }}
stage f[R] : step {{ budget 16; cost 1; memory kv; }}
stage e[R] : step {{ budget 16; cost 1; memory kv; }}
workload {{ arrive batch(2 * R); }}
session {{
  branch (serial < R) {{
    hold pf[serial] (1), kv (16) {{ prefill on f[serial] (16); }}
  }} else {{
    hold pe[serial - R] (1), kv (16) {{ prefill on e[serial - R] (16); }}
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("r", [4, 5, 9])
def test_the_engines_whose_pools_are_declared_first_admit_first(monkeypatch, r):
    """§3 Ties: "where the heads of two queues both wait for room in one pool … the pool declared first is
    served first"; docs/simulator.md: the stages "in the order of the first pool each admits".

    f[R] is declared before e[R], but pe (e's pools) before pf. kv has room for R holds. At 0 the e engines
    plan first: sessions R … 2R-1 are admitted and done at 1; f's heads find kv full and wait, are
    admitted at 1 and done at 2. (2R step stages: 8 and 10, the walk and the marked stages, and 18.)"""
    src = TWO_FAMILIES.format(r=r)
    rep, obs = run(src, monkeypatch)
    assert done_of(obs) == {s: [2.0 if s < r else 1.0] for s in range(2 * r)}
    walk_vs_marks(src, monkeypatch)


# --- (l) a victim among many lazy decoders --------------------------------------------------------------------

MANY_DECODERS = """
pool reqs {{ cap 100; admit via e; }}
pool kv {{ cap 141 * 16; block 16; {preempt} }}
stage e : step {{ budget 2000; cost 1; memory kv; }}
stage d : delay;
workload {{ arrive batch(71); }}
session {{
  branch (serial == 0) {{
    hold kv (16) {{ run d (2.5); prefill on e (48) growing kv; }}
  }} else {{
    hold reqs (1), kv (32) {{ prefill on e (16); decode on e (10); }}
  }}
  observe done = now;
  end;
}}
run {{ horizon 100; }}
"""


@pytest.mark.parametrize("preempt, victim", [
    ("preempt lifo;", 70),
    # the least key is 0 for serial % 7 == 3 (3, 10, …, 66): the last admitted of them
    ("preempt by (serial % 7 == 3 ? 0 : 1, -admission);", 66),
])
def test_a_victim_among_many_decoders_that_grow_nothing(monkeypatch, preempt, victim):
    """pool-reference.txt `preempt` (lifo: the last admitted; by keys: the least, ties to the last admitted)
    among more residents than a planning finds by a walk of each (71).

    Session 0 takes one block of kv (a pool no stage admits) at 0 and is away at d until 2.5. Sessions 1 …
    70 are admitted by e at 0 in that order (2 blocks each: 141 of 141), prefill 16 in [0, 1] and decode 10
    tokens without growing in [1, 2] … [10, 11]: done at 11. At 2.5 session 0's prefill of 48 joins e; at 3
    it grows to 3 blocks: kv is full, the victim (a decoder, 2 blocks) is preempted; session 0 prefills in
    [3, 4] and is done at 4 (3 blocks back). No admission at 3 (the iteration preempted); at 4 the victim is
    admitted again, prefills in [4, 5] and decodes its 10 tokens in [5, 15]."""
    src = MANY_DECODERS.format(preempt=preempt)
    rep, obs = run(src, monkeypatch)
    expect = {s: [11.0] for s in range(1, 71)}
    expect[0] = [4.0]
    expect[victim] = [15.0]
    assert done_of(obs) == expect
    assert pool(rep, "kv").preemptions == 1
