"""Conformance cases computed by hand for prefill/decode disaggregation and its queue sugar (language.txt
§2 *Queues*, *A KV transfer*: `D pull P latency x share …`, an entry `from` a source, the read, the
prefiller's lease), step-stage families (per-member `budget`, `chunk` and `serve by`, `member(…)` in
records, routing by `choose`), a trace replayed without `ordered`, and what a `hidden` attribute does
at run time. Each program runs on the tier serQ picks and on the general engine (SERQ_SIM_TIER=general),
which must agree; every expected value is worked out in the comment above it."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from conform import close, run


def figures(report, kind: str) -> dict:
    """``{label: stats}`` of the report's pools or stages, a member labelled ``name[index]``."""
    rows = report.result.pools if kind == "pool" else report.result.stages
    return {r.name if r.index is None else f"{r.name}[{r.index}]": r for r in rows}



# --- P/D disaggregation: the pull, the read, the lease ----------------------------------------------------

PD_SHARED = """
let x0 = 1;
queue P[2] : prefill {
  pool kv { cap 100; }
  serve delay;
  nic ps(10);
  prefill (prompt) {
    hold kv (prompt) { prefill (prompt / 10); } cache (prompt) lease kv (inf);
  }
}
queue D[1] : decode {
  pool kv { cap 100; }
  serve fifo;
  nic ps(10);
  decode (prompt) from src {
    hold kv (prompt) {
      transfer (prompt) from src to kv (prompt);
      mark got;
      decode (o);
    } cache (prompt);
  }
}
D pull P latency x0 share maxmin;
queue gw : gateway {
  serve delay;
  route {
    set prompt = serial == 0 ? 10 : 15;
    choose i in 2 by (i == serial ? 1 : 0);
    P[i].prefill (prompt);
    D[0].decode (prompt) from P[i];
    observe got = D.got;
    observe done = now;
    observe pi = i;
  }
}
workload { arrive batch(2); hidden o; init { set o = 1 + serial; } session { request gw; end; } }
run { horizon 10; }
"""


def test_pull_reads_share_the_nics_and_end_the_prefillers_lease(monkeypatch):
    # §2 Queues: `D pull P latency x0 share maxmin`; inside D's entry called `from P[i]`, `transfer` is
    # `run D.nic.latency[0] (x0); run P.nic[i], D.nic[0] (n); load D.kv[0] (n); release P.kv[i];`.
    # choose: s0 takes i = 1 (key 0 where i != serial), s1 i = 0, so `from P[i]` names the other member.
    # s0 (prompt 10) prefills on the delay stage P[1] for 1 s, s1 (15) on P[0] for 1.5 s; each leases
    # its P.kv (inf). D.kv (cap 100) admits both at once: s0 at 1, s1 at 1.5.
    # The wait x0: s0 [1, 2], s1 [1.5, 2.5]. The reads are flows over P.nic[i] (10/s) and D.nic[0] (10/s),
    # max-min: s0 alone [2, 2.5] at 10 (5 read, 5 left); both at 5 from 2.5 (D.nic full): s0 done at 3.5;
    # s1 has read 5 by then, 10 left alone at 10: done at 4.5. got (the mark) = 3.5, 4.5.
    # D is fifo(1): s0 decodes o = 1 on [3.5, 4.5], s1 o = 2 (o hidden, read by the entry's body) on
    # [4.5, 6.5]. done = 4.5, 6.5.
    r, o = run(PD_SHARED, monkeypatch)
    assert o["pi"] == [(0, 4.5, 1.0), (1, 6.5, 0.0)]  # observed at the end of the route
    assert o["got"] == [(0, 4.5, 3.5), (1, 6.5, 4.5)]
    assert [(s, t) for s, t, _ in o["done"]] == [(0, 4.5), (1, 6.5)]
    pools, stages = figures(r, "pool"), figures(r, "stage")
    # P.kv[1] (s0): 10 used on [0, 3.5] (the lease ends with the read), then cache (10) on [3.5, 10]:
    # 35 / 10 = 3.5 used, 65 / 10 = 6.5 cached. P.kv[0] (s1): 15 on [0, 4.5], cached on [4.5, 10]:
    # 67.5 / 10 = 6.75, 82.5 / 10 = 8.25; holders 0.45 (the lease is a holder).
    assert (pools["P.kv[1]"].used, pools["P.kv[1]"].cached) == (3.5, 6.5)
    assert (pools["P.kv[0]"].used, pools["P.kv[0]"].cached, pools["P.kv[0]"].holders) == (6.75, 8.25, 0.45)
    # D.kv[0]: s0 10 on [1, 4.5], s1 15 on [1.5, 6.5]: (35 + 75) / 10 = 11; cache (prompt) of what the
    # load computed: 10 on [4.5, 10], 15 on [6.5, 10]: (55 + 52.5) / 10 = 10.75.
    assert (pools["D.kv[0]"].used, pools["D.kv[0]"].cached) == (11.0, 10.75)
    # D.nic[0] carries rate 10 of 10 on [2, 4.5]: utilisation 0.25; present 1.5 + 2 job-seconds: 0.35;
    # service 1.5 and 2. P.nic[1] carries s0: 10 on [2, 2.5], 5 on [2.5, 3.5]: utilisation 10 / 10 / 10
    # = 0.1; P.nic[0] s1: 5 on [2.5, 3.5], 10 on [3.5, 4.5]: 0.15. The wait stage D.nic.latency[0]:
    # two jobs of 1 s, some job present on [1, 2.5]: 0.15.
    nic = stages["D.nic[0]"]
    assert (nic.utilisation, nic.present, nic.completions, nic.service) == (0.25, 0.35, 2, 1.75)
    assert close(stages["P.nic[1]"].utilisation, 0.1) and close(stages["P.nic[0]"].utilisation, 0.15)
    lat = stages["D.nic.latency[0]"]
    assert (lat.completions, lat.service, lat.utilisation) == (2, 1.0, 0.15)
    # D[0] fifo(1): busy on [3.5, 6.5], 3 / 10; completions 2.
    assert (stages["D[0]"].utilisation, stages["D[0]"].completions) == (0.3, 2)


PD_LEASE = """
queue P : prefill {
  pool kv { cap 10; }
  serve delay;
  nic ps(10);
  prefill (prompt) {
    hold kv (prompt) { prefill (1); } cache (prompt) lease kv (inf);
  }
}
queue D : decode {
  pool kv { cap 10; }
  serve fifo;
  nic ps(10);
  decode (prompt) from src {
    hold kv (prompt) {
      transfer (prompt) from src to kv (prompt);
      mark got;
      decode (o);
    } cache (prompt);
  }
}
D pull P latency 1 share maxmin;
queue gw : gateway {
  serve delay;
  route {
    set prompt = 10;
    P.prefill (prompt);
    observe pdone = now;
    D.decode (prompt) from P;
    observe got = D.got;
    observe done = now;
  }
}
workload { arrive batch(2); hidden o; init { set o = 1 + serial; } session { request gw; end; } }
run { horizon 10; }
"""


def test_the_prefillers_lease_holds_its_blocks_until_the_decoder_has_read_them(monkeypatch):
    # §2 A KV transfer: the prefiller's blocks are leased until the decoder's read releases them; a lease
    # is neither evictable nor given back at the scope's end. Both pools have cap 10 and every prompt is
    # 10. s0: P.kv at 0, prefill [0, 1], lease; D.kv at 1, x0 [1, 2], read of 10 at 10/s [2, 3] (got 3),
    # the release at 3 ends the lease (P.kv caches 10); decode o = 1 on D [3, 4], D.kv caches 10 at 4.
    # s1 waits for P.kv until the lease ends at 3 (s0's cache there is evicted for it), prefills [3, 4];
    # D.kv at 4 (s0's cache evicted), x0 [4, 5], read [5, 6] (got 6), decode o = 2 [6, 8].
    r, o = run(PD_LEASE, monkeypatch)
    assert o["pdone"] == [(0, 1.0, 1.0), (1, 4.0, 4.0)]
    assert o["got"] == [(0, 4.0, 3.0), (1, 8.0, 6.0)]
    assert [(s, t) for s, t, _ in o["done"]] == [(0, 4.0), (1, 8.0)]
    pools = figures(r, "pool")
    # P.kv: used 10 on [0, 6] (s0's lease to 3, s1's to 6): 6; cached 10 on [6, 10]: 4; s1 queued
    # [0, 3]: queue 0.3, mean wait (0 + 3) / 2 = 1.5; one eviction of 10 units (s0's cache, at 3).
    pk = pools["P.kv"]
    assert (pk.used, pk.cached, pk.queue, pk.wait, pk.admissions) == (6.0, 4.0, 0.3, 1.5, 2)
    assert (pk.evicted_entries, pk.evicted_units) == (1, 10.0)
    # D.kv: s0 [1, 4], s1 [4, 8]: 7 used; cached on [8, 10]: 2; one eviction (s0's cache, at 4).
    dk = pools["D.kv"]
    assert (dk.used, dk.cached, dk.wait, dk.evicted_entries) == (7.0, 2.0, 0.0, 1)


PD_STEP = """
let bs = 4;
queue P : prefill {
  pool reqs { cap 4; admit via P; }
  pool kv { cap 64; block bs; }
  serve step { budget 8; cost 1; memory kv; }
  nic ps(4);
  prefill (prompt) {
    hold reqs (1), kv (min(prompt, budget_left(P))) reserve (prompt) {
      prefill (prompt) growing kv;
    } cache (prompt) lease kv (inf);
  }
}
queue D : decode {
  pool reqs { cap 1; admit via D; }
  pool kv { cap 64; block bs; admit via D; }
  serve step { budget 8; cost 1; memory kv; }
  nic ps(4);
  decode (prompt) from src {
    hold kv (prompt) reserve (prompt), reqs (0) reserve (1) {
      transfer (prompt - 1) from src to kv (prompt - 1);
      hold reqs (1) {
        prefill (1) growing kv;
        mark first_token;
        decode (o - 1) growing kv;
      }
    } cache (prompt + o);
  }
}
D pull P latency 0.5 share maxmin;
queue gw : gateway {
  serve delay;
  route {
    set prompt = 8;
    P.prefill (prompt);
    observe pdone = now;
    D.decode (prompt) from P;
    observe ttft = D.first_token;
    observe done = now;
  }
}
workload { arrive batch(2); hidden o; init { set o = 3; } session { request gw; end; } }
run { horizon 20; }
"""


def test_step_engines_read_the_prompt_and_recompute_its_last_token(monkeypatch):
    # llmd_nixl_pull.sq's shape on the step clock (cost 1): P admits both prompts of 8 in its first
    # iteration (the header's budget_left: s0 takes 8 and leaves 0, so s1 waits: admission needs budget
    # left) — s0 prefills 8 in [0, 1]; s1 is admitted at the next iteration, prefills [1, 2].
    # D: `kv (prompt) reserve (prompt), reqs (0) reserve (1)` admits without taking the slot; the read
    # of prompt - 1 = 7 tokens over P.nic and D.nic (4/s each) after x0 = 0.5.
    # s0: D admits it when its scheduler plans at 1 (the queue is served by D; that planning schedules no
    # token, so it is no iteration): wait [1, 1.5], then the read of 7 at 4/s alone until s1's joins.
    # s1: at 2 D.kv has 64 - 8 = 56 free and reqs (0) reserve (1) fits (s0 took no slot yet): admitted
    # at 2, wait [2, 2.5]. s0 by 2.5 has read 4 (1 s at 4/s), 3 left; from 2.5 both share D.nic and
    # P.nic at 2 each: s0 done at 4.0. s1 read 3 by 4.0, 4 left alone at 4/s: done at 5.0.
    # s0 then takes D's one slot at 4: the iteration [4, 5] prefills its 1 token (first token at 5),
    # [5, 6] and [6, 7] decode o - 1 = 2: done at 7. s1 waits for the slot (reqs cap 1) until 7:
    # [7, 8] prefill (first token 8), [8, 9], [9, 10] decode: done at 10.
    r, o = run(PD_STEP, monkeypatch)
    assert o["pdone"] == [(0, 1.0, 1.0), (1, 2.0, 2.0)]
    assert o["ttft"] == [(0, 7.0, 5.0), (1, 10.0, 8.0)]
    assert [(s, t) for s, t, _ in o["done"]] == [(0, 7.0), (1, 10.0)]
    pools = figures(r, "pool")
    # P.kv leases 8 per request until the read ends: s0 [0, 4], s1 [1, 5]: (32 + 32) / 20 = 3.2.
    assert pools["P.kv"].used == 3.2
    # D: three iterations a request (the recomputed token, two decodes), 6; the admission steps at 1 and
    # 2 scheduled no token and are no iterations. Two runs a request complete there (prefill, decode): 4.
    d = figures(r, "stage")["D"]
    assert (d.iterations, d.completions) == (6, 4)


# --- step-stage families ------------------------------------------------------------------------------------

FAMILY = """
pool reqs[2] { admit via engine; }
pool kv[2] { cap 1000; }
stage engine[2] : step {
  budget used(kv) >= 20 ? 3 : 6;
  cost 1;
  chunk used(kv) >= 20 ? 2 : 3;
  serve by (used(kv) >= 20 ? -admission : 0);
  memory kv;
}
workload { arrive batch(4); }
session {
  choose j in 2 by (queued(reqs[j]) + holders(reqs[j]) >= 2 ? 1 : 0, j);
  set w = serial % 2 == 0 ? 6 : 7;
  hold reqs[j] (1), kv[j] (j == 0 ? 1 : 20) { run engine[j] prefill (w); }
  record req { m = member(engine[j]); w = w; done = now; }
}
run { horizon 100; }
"""


def test_a_step_family_serves_each_member_by_its_own_pools(monkeypatch):
    # §2 choose, docs/language.md (a step family's own expressions read their own members). The sessions
    # run before any admission (§3 settle): s0 sees no load anywhere and takes 0 (keys (0, 0) < (0, 1)),
    # s1 sees one waiting at reqs[0] (still < 2): 0; s2 sees 2 there: (1, 0) against (0, 1), takes 1;
    # s3 sees one at reqs[1]: 1. Work: s0, s2 6 tokens; s1, s3 7. Members hold kv 1 (engine[0]) or 20.
    # engine[0]: used(kv[0]) <= 2, so budget 6, chunk 3, admission order, on every iteration:
    #   it [0, 1]: s0 3, s1 3 (admitted in turn with the budget left); [1, 2]: s0 3 (done 2), s1 3;
    #   [2, 3]: s1 1 (done 3). 3 iterations, 13 tokens of 18 budgeted.
    # engine[1]: its first budget moment has no resident (used 0): budget 6, chunk 3: s2 3, s3 3. Then
    #   used 40: budget 3, chunk 2, -admission serves s3 first: [1, 2] s3 2 (2 left), s2 1 (2 left);
    #   [2, 3] s3 2 (done 3), s2 1 (1 left); at 3 used is 20, still budget 3, chunk 2: [3, 4] s2 1
    #   (done 4). 4 iterations, 13 tokens of 6 + 3 + 3 + 3 = 15. (Had engine[1] read kv[0], it would have
    #   run as engine[0]; in admission order s2 would be done at 3 and s3 at 4.)
    r, _ = run(FAMILY, monkeypatch)
    rows = r.records("req", kind="numpy")
    got = sorted(zip(rows["session"].tolist(), rows["m"].tolist(), rows["w"].tolist(), rows["done"].tolist()))
    assert got == [(0, 0, 6, 2.0), (1, 0, 7, 3.0), (2, 1, 6, 4.0), (3, 1, 7, 3.0)]
    stages = figures(r, "stage")
    e0, e1 = stages["engine[0]"], stages["engine[1]"]
    assert (e0.iterations, e1.iterations) == (3, 4)
    assert close(e0.token_utilisation, 13 / 18) and close(e1.token_utilisation, 13 / 15)
    assert close(e0.tokens, 13 / 3) and close(e1.tokens, 13 / 4)


def test_member_of_a_step_familys_own_member_is_its_index():
    # `member(X)` is the index of the member X names; in a step family's own expressions `engine` (or
    # `reqs`) without an index is each member's own, so `member(engine)` is each member's index: chunk 4 on
    # engine[0] (12 tokens in 3 iterations), 6 on engine[1] (2 iterations). It was refused, and before that
    # it linked as 0 on every member (3 iterations on engine[1] too).
    src = """
pool reqs[2] { admit via engine; }
stage engine[2] : step { budget 100; cost 1; chunk 4 + 2 * member(X); }
workload { arrive batch(1); }
session { hold reqs[M] (1) { run engine[M] prefill (12); } }
run { horizon 100; }
"""
    for x in ("engine", "reqs", "engine[1]"):
        for m, its in ((0, 3), (1, 2)):
            r = serq_sim.run(serq_frontend.compile(source=src.replace("member(X)", f"member({x})")
                                                   .replace("[M]", f"[{m}]")))
            if x == "engine[1]":  # an indexed member is a number there, as everywhere: chunk 6 on both
                its = 2
            assert figures(r, "stage")[f"engine[{m}]"].iterations == its, (x, m)


# --- a trace replayed without `ordered` ---------------------------------------------------------------------

TRACE_PROGRAM = """
stage d : delay;
workload { arrive batch(6); trace "t.csv"; }
session {
  loop {
    turn;
    observe row = new * 100 + out;
    branch (more) { run d (think); } else { end; }
  }
}
run { horizon 100; }
"""


def test_without_ordered_every_arrival_replays_one_whole_trace_session(tmp_path, monkeypatch):
    # §3 Workload / docs/language.md: without `ordered` each arrival replays a trace session drawn at
    # random (with replacement), whole and in turn order. With one trace session every arrival replays
    # it: turns (new, out) = (3, 1) then (5, 2), the think time 1.5 between: rows 301 at 0, 502 at 1.5.
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n7,1,5,2,0,0\n7,0,3,1,1.5,0\n")
    (tmp_path / "p.sq").write_text(TRACE_PROGRAM)
    r, o = run("", monkeypatch, path=tmp_path / "p.sq")
    assert o["row"] == [(s, 0.0, 301.0) for s in range(6)] + [(s, 1.5, 502.0) for s in range(6)]
    assert (r.result.arrivals, r.result.ended, r.result.turns) == (6, 6, 12)
    # Two trace sessions, A = (1, 1), (2, 1), (3, 1) and B = (9, 9) alone: whichever an arrival draws, its
    # turns are that session's, so each session observes 101, 201, 301 at 0, 0, 0, or 909 once.
    (tmp_path / "t.csv").write_text("session,turn,new,out,think,forced\n"
                                    "0,0,1,1,0,0\n1,0,9,9,0,0\n0,1,2,1,0,0\n0,2,3,1,0,0\n")
    for seed in range(1, 6):
        prog = serq_frontend.compile(path=str(tmp_path / "p.sq"))
        rep = serq_sim.run(prog, seed=seed)
        ob = rep.observe("row")
        per: dict[int, list[float]] = {}
        for s, v in sorted(zip(ob.sessions.tolist(), ob.values.tolist())):
            per.setdefault(s, []).append(v)
        assert sorted(per) == list(range(6))
        assert all(v in ([101.0, 201.0, 301.0], [909.0]) for v in per.values())


# --- hidden attributes at run time --------------------------------------------------------------------------


def test_a_hidden_attribute_is_read_where_the_session_reads_it(monkeypatch):
    # §3 hidden: a hidden attribute may be read in a session statement, a run and a hold's cache (and its
    # lease time: docs/language.md, the Session moment); only the scheduler's positions refuse it. A value
    # a `set` computes from it is the session's own and is not hidden (docs/language.md): vllm.sq's
    # next prompt K + n, with K = prompt + o, is read by the next admission. o = 3: x = 4 is held at 0;
    # run o (3 s), grow o (7 held), the scope ends at 3 and the lease (o = 3 s) keeps the 7 until 6,
    # when cache (x + o = 7) applies; at 8 the 7 are cached.
    _, o = run("""
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); hidden o; init { set o = 3; } }
session {
  set x = o + 1;
  hold kv (x) { observe a = used(kv); run d (o); grow kv (o); } cache (x + o) lease kv (o);
  observe u = used(kv);
  run d (2.5);
  observe u2 = used(kv);
  run d (2.5);
  observe u3 = used(kv);
  observe c = cachedin(kv);
}
run { horizon 100; }
""", monkeypatch)
    assert [o[n][0][1:] for n in ("a", "u", "u2", "u3", "c")] == [
        (0.0, 4.0), (3.0, 7.0), (5.5, 7.0), (8.0, 0.0), (8.0, 7.0)]
    with pytest.raises(serq_frontend.CompileError):  # the scheduler's position: the hold's units
        serq_frontend.compile(source="""
pool kv { cap 100; }
workload { arrive batch(1); hidden o; init { set o = 3; } }
session { hold kv (o) { } }
run { horizon 100; }
""")
