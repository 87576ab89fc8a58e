"""A `preempt` on a pool that nothing grows is told that it never applies.

A serving researcher wrote vLLM's priority policy with the preemption order on the request-slot pool, `pool reqs
{ …; queue by (prio, t0); preempt by (-prio, -t0) requeue tail; }`, beside `pool kv { …; preempt lifo; }`, and
compared it with first come first served. A pool preempts only when a hold grows past its room
(pool-reference.txt, `preempt`), and only `kv` is grown (the engine's `growing kv`), so the order on `reqs` never
applied and the runs were the memory pool's lifo, without a word. The compile now warns at such a `preempt` (any
but `none`), naming the pools the program does grow (serq_frontend.link, ``ungrown_preempts``). The IR is
unchanged: this is a warning.
"""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

PROGRAM = """pool reqs { cap 2; admit via engine; REQS }
pool kv { cap 18; block 1; evict lru; preempt lifo; }
stage engine : step { budget 100; cost 1; memory kv; }

workload {
  arrive poisson(0.12);
}

session {
  set prio = serial % 2;
  set t0 = now;
  hold reqs (1), kv (4) {
    run engine prefill (4) growing kv;
    run engine decode (6) growing kv;
  } cache (10);
  observe response = now - t0;
}

run { horizon 1000; seed 1; }
"""
WARNING = ("<source>:1:{col}: warning: pool `reqs` says how to preempt, and nothing grows it (no `grow`, `load` or "
           "run `growing reqs`): a pool preempts only when a hold grows past its room, so this never applies; the "
           "program grows `kv`, whose `preempt` decides")


def compiled(capsys, reqs: str):
    program = serq_frontend.compile(source=PROGRAM.replace("REQS", reqs))
    return program, capsys.readouterr().err


@pytest.mark.parametrize("reqs", ["preempt by (-prio, -t0) requeue tail;", "preempt lifo;"])
def test_a_preempt_on_a_pool_nothing_grows_is_told(capsys, reqs):
    program, err = compiled(capsys, reqs)
    col = PROGRAM.splitlines()[0].replace("REQS", reqs).index("preempt") + 1
    assert err.splitlines()[0] == WARNING.format(col=col), err
    # and it never applies: the run is the one without it, figure for figure
    plain, _ = compiled(capsys, "")
    a = serq_sim.run(program, seed=3).result
    b = serq_sim.run(plain, seed=3).result
    assert a.observes["response"].count > 100
    assert (a.observes["response"].count, a.observes["response"].mean) == (b.observes["response"].count,
                                                                              b.observes["response"].mean)
    assert [p.preemptions for p in a.pools] == [p.preemptions for p in b.pools] and a.pools[1].preemptions > 0


@pytest.mark.parametrize("reqs, body", [
    ("preempt none;", None),
    ("", None),
    ("preempt lifo;", "    grow reqs (1);\n"),
    ("preempt lifo;", "    load reqs (1);\n"),
])
def test_no_word_when_it_can_apply_or_says_none(capsys, reqs, body):
    text = PROGRAM.replace("REQS", reqs)
    if body is not None:
        text = text.replace("    run engine prefill (4) growing kv;\n", body + "    run engine prefill (4) growing kv;\n")
    serq_frontend.compile(source=text)
    assert "says how to preempt" not in capsys.readouterr().err


def test_a_pool_grown_by_a_growing_run_is_not_told(capsys):
    text = PROGRAM.replace("REQS", "").replace("pool kv { cap 18; block 1; evict lru; preempt lifo; }",
                                               "pool kv { cap 18; block 1; evict lru; preempt by (-prio); }")
    serq_frontend.compile(source=text)
    assert capsys.readouterr().err == ""
