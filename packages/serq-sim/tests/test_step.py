"""The step engine on the step clock (cost 1: iteration k runs [k, k+1]), hand-computed."""

from __future__ import annotations

import serq_sim
from irb import P, at, neg, roles, samples
from serq_ir import nodes as N


def engine(p: P, *, budget=100.0, chunk=None, serve=None, memory=None, size=1, reqs_cap=10.0):
    reqs = p.pool("reqs", cap=reqs_cap, admit_via=len(p.stages), size=size)
    e = p.stage("E", N.Step(budget=N.Num(value=budget), cost=N.Num(value=1.0),
                            chunk=None if chunk is None else N.Num(value=chunk),
                            serve=serve or N.ServeBy(), memory=memory), size=size)
    return reqs, e


def request(p: P, reqs, e, prefill, decode, kv=None, kv_units=1):
    pools = [(reqs, 1)] + ([(kv, kv_units)] if kv is not None else [])
    body = []
    if prefill:
        body += [p.run(e, prefill, "prefill", growing=kv), p.observe("first", "now")]
    if decode:
        body += [p.run(e, decode, "decode", growing=kv)]
    body.append(p.observe("done", "now"))
    return [p.hold(pools, body)]


def times(r, name):
    return {s: v for v, s in samples(r, name)}


def test_exclusive_prefill_displaces_tentative_decodes():
    def prog(serve):
        p = P()
        reqs, e = engine(p, budget=10.0, serve=serve)
        return p.build(roles(p, [request(p, reqs, e, 5, 3), request(p, reqs, e, 4, 2)]),
                       presets=[at(p, 0, 0), at(p, 2, 1)])

    r = serq_sim.run(prog(N.ServeExclusivePrefill()), check_invariants=True)
    # [0,1] A prefills 5 alone (first 1); [1,2] A decodes; at 2 B is admitted and its prefill displaces
    # A's tentative decode: [2,3] B's 4 alone (first 3); [3,4], [4,5] both decode: both done at 5.
    assert times(r, "first") == {0: 1.0, 1: 3.0}
    assert times(r, "done") == {0: 5.0, 1: 5.0}
    r = serq_sim.run(prog(N.ServeBy()), check_invariants=True)
    # serve admission: [2,3] A decodes next to B's prefill: A done at 4 (decodes at 1, 2, 3)
    assert times(r, "first") == {0: 1.0, 1: 3.0}
    assert times(r, "done") == {0: 4.0, 1: 5.0}


def test_serve_by_remaining():
    def prog(keys):
        p = P()
        reqs, e = engine(p, budget=3.0, chunk=2.0, serve=N.ServeBy(keys=keys))
        return p.build(roles(p, [request(p, reqs, e, 5, 0), request(p, reqs, e, 10, 0)]),
                       presets=[at(p, 0, 0), at(p, 0, 1)])

    # [0,1]: A admitted, 2 (chunk); B admitted with the 1 left. A has 3 left, B 9.
    # admission order = by (remaining) here: [1,2] A 2, B 1; [2,3] A 1 (done 3), B 2; B then 2, 2, 2.
    r = serq_sim.run(prog([N.Ctx(name="remaining")]))
    assert times(r, "done") == {0: 3.0, 1: 6.0}
    r = serq_sim.run(prog([]))
    assert times(r, "done") == {0: 3.0, 1: 6.0}
    # by (-remaining): the longest first: [1,2] B 2, A 1; [2,3] B 2, A 1; [3,4] B 2, A 1 (done 4);
    # B has 3 left: 2 then 1: done 6.
    r = serq_sim.run(prog([neg(N.Ctx(name="remaining"))]))
    assert times(r, "done") == {0: 4.0, 1: 6.0}


def _tail_program(requeue):
    p = P()
    reqs = p.pool("reqs", cap=10.0, admit_via=0)
    kv = p.pool("kv", cap=4.0, block=1.0,
                preempt=N.PreemptBy(keys=[neg(N.Ctx(name="admission"))], requeue=requeue))
    e = p.stage("E", N.Step(budget=N.Num(value=100.0), cost=N.Num(value=1.0), memory=1))
    body = request(p, reqs, e, 0, 3, kv=kv, kv_units=1)
    return p.build(body, presets=[at(p, 0, 0), at(p, 0, 0), at(p, 0, 0)])


def test_preempt_by_requeue_tail_on_an_engine():
    # Each decodes 3 tokens growing kv (cap 4) from an allocation of 1. [0,1] A, B, C (used 3).
    # At 1: A grows (4); B's growth preempts the last admitted, C (to the queue). [1,2] A, B.
    # At 2: A's growth preempts B (the last admitted resident). requeue tail: queue [C, B].
    # A done 3. [3,4] C, B re-admitted; at 5 C's growth preempts B again; C done 6, B done 9.
    r = serq_sim.run(_tail_program("tail"), check_invariants=True)
    assert times(r, "done") == {0: 3.0, 2: 6.0, 1: 9.0}
    assert r.pool("kv").preemptions == 3
    # requeue head: B goes back ahead of C: B done 6, C 9
    r = serq_sim.run(_tail_program("head"), check_invariants=True)
    assert times(r, "done") == {0: 3.0, 1: 6.0, 2: 9.0}


def test_empty_preempting_iteration_and_a_hold_that_outgrows_the_pool():
    p = P()
    reqs = p.pool("reqs", cap=10.0, admit_via=0)
    kv = p.pool("kv", cap=2.0, block=1.0, preempt=N.PreemptBy(keys=[neg(N.Ctx(name="admission"))]))
    e = p.stage("E", N.Step(budget=N.Num(value=100.0), cost=N.Num(value=1.0), memory=1))
    prog = p.build(request(p, reqs, e, 0, 3, kv=kv), presets=[at(p, 0, 0)], horizon=9.5)
    r = serq_sim.run(prog, check_invariants=True)
    # A decodes at [0,1] (pos 1) and [1,2] (pos 2, kv full); at 2 its growth to 3 preempts itself: the
    # iteration [2,3] only preempted and lasts the cost at zero tokens. Its hold alone needs 3 > 2: language.txt
    # §3 re-executes it, so at 3 it is re-admitted and the cycle repeats (decodes [3,4], [4,5], preempted at 5;
    # again at 8): preempted at 2, 5, 8; the second preemption at the same position (2) is stuck, and the
    # stuck warning names the livelock. Iterations start at 0, 1, ..., 9 (9 < 9.5): 10.
    st = r.pool("kv")
    assert (st.preemptions, st.stuck, st.rejections) == (3, 1, 0)
    assert r.stage("E").iterations == 10
    assert samples(r, "done") == []
    assert any("preempted itself again and again at the same position" in n for n in r.result.notes)


def test_engine_families_pair_member_for_member():
    def prog(size):
        p = P()
        reqs, e = engine(p, budget=4.0, size=size)
        j = p.ex("j")
        rq = N.PoolRef(pool=reqs.pool, index=j if size > 1 else None)
        en = N.StageRef(stage=e.stage, index=j if size > 1 else None)
        return p.build(request(p, rq, en, 4, 0),
                       presets=[at(p, 0, 0, j=0), at(p, 0, 0, j=1), at(p, 0, 0, j=0)])

    # two engines: A and C share E[0] (A at [0,1], C at [1,2]), B has E[1] alone ([0,1])
    r = serq_sim.run(prog(2), check_invariants=True)
    assert times(r, "first") == {0: 1.0, 1: 1.0, 2: 2.0}
    assert [s.iterations for s in r.result.stages] == [2, 1]
    # one engine: one after another
    r = serq_sim.run(prog(1), check_invariants=True)
    assert times(r, "first") == {0: 1.0, 1: 2.0, 2: 3.0}
