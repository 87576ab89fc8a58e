"""Known defects of the simulator's semantics and metrics, each worked out by hand from the language's
rules (docs/language.md, docs/simulator.md) on small programs of the step clock (cost 1 or 10: an
iteration planned at t runs over [t, t + cost])."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)


def _run(src: str, tier: str, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    return serq_sim.run(serq_frontend.compile(source=src))


# ---------------------------------------------------------------- a token given back to another's growth
#
# Two engines share the memory pool kv (cap 3, blocks of 1, preempt lifo): the candidates are the residents of
# both. Session 0 holds kv (1) and decodes 3 tokens on E1 (cost 1), growing kv; session 1 arrives at E2
# (cost 10) at 0.5 and holds kv (1). E1 plans [0, 1] (position 1, within the allocation), [1, 2] (grows to
# 2: used 3), and at 2 the growth to 3 does not fit: the victim is the holder admitted last, session 1,
# whose job E2 served one token in its iteration [0.5, 10.5]. That token is given back: the iteration runs
# to 10.5 serving nobody. Session 0 ends at 3; session 1 is admitted again then, and its whole run goes
# on E2 at 10.5, 20.5 and 30.5 (the hold executed again starts its run over).
#
# E2's statistics count 4 iterations (the one whose job was taken still ran) of which 3 served a job and
# 3 tokens: batch and tokens per iteration 3 / 4, token utilisation 3 / (4 * 64); the emptied iteration is
# in no composition class, as one that only preempted.

CROSS = """
pool kv { cap 3; block 1; preempt lifo; }
stage E1 : step { budget 64; cost 1; memory kv; }
stage E2 : step { budget 64; cost 10; memory kv; }
stage think : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (1) { decode on E1 (3) growing kv; }
  } else {
    run think (0.5);
    hold kv (1) { VICTIM }
  }
  record r { done = now; }
}
run { horizon 100; warmup WARM; }
"""


@pytest.mark.parametrize("tier", ["", "general"])
@pytest.mark.parametrize("victim, decode", [
    ("decode on E2 (3) growing kv;", True),  # a decoder planned job by job
    ("decode on E2 (3);", True),  # a decoder that grows nothing: planned as a count (lazy)
])
def test_a_decode_token_given_back_to_another_engines_growth_is_not_counted(tier, victim, decode, monkeypatch):
    report = _run(CROSS.replace("VICTIM", victim).replace("WARM", "0"), tier, monkeypatch)
    assert report.records(kind="numpy")["done"].tolist() == [3.0, 40.5]
    assert report.pool("kv").preemptions == 1
    e2 = report.stage("E2")
    assert (e2.iterations, e2.decode_only, e2.prefill_only, e2.mixed) == (4, 3, 0, 0)
    assert (e2.batch, e2.tokens, e2.token_utilisation) == (3 / 4, 3 / 4, 3 / (4 * 64))
    e1 = report.stage("E1")  # the grower's engine: 3 decode-only iterations of one token
    assert (e1.iterations, e1.decode_only, e1.batch, e1.tokens) == (3, 3, 1.0, 1.0)


@pytest.mark.parametrize("tier", ["", "general"])
def test_a_prefill_chunk_given_back_is_not_counted(tier, monkeypatch):
    """Session 1 prefills 1 token on E2 instead: its chunk of [0.5, 10.5] is given back, and the prefill
    runs again at 10.5 (ending at 20.5). 2 iterations, one prefill-only, 1 token and 1 job over 2."""
    report = _run(CROSS.replace("VICTIM", "prefill on E2 (1);").replace("WARM", "0"), tier, monkeypatch)
    assert report.records(kind="numpy")["done"].tolist() == [3.0, 20.5]
    e2 = report.stage("E2")
    assert (e2.iterations, e2.decode_only, e2.prefill_only, e2.mixed) == (2, 0, 1, 0)
    assert (e2.batch, e2.tokens) == (1 / 2, 1 / 2)


@pytest.mark.parametrize("tier", ["", "general"])
def test_an_iteration_planned_before_the_warm_up_gives_nothing_back(tier, monkeypatch):
    """Warm-up 1: E2's iteration planned at 0.5 was not counted, so the token it gives back at 2 takes
    nothing from the statistics: the 3 iterations from 10.5 on, each of one decode token."""
    src = CROSS.replace("VICTIM", "decode on E2 (3) growing kv;").replace("WARM", "1")
    e2 = _run(src, tier, monkeypatch).stage("E2")
    assert (e2.iterations, e2.decode_only, e2.batch, e2.tokens) == (3, 3, 1.0, 1.0)
