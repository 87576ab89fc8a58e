"""``work(S)`` and ``budget_left(S)`` of a step stage whose residents are ordered by kept ``serve by`` keys (a
``ranked`` stage): the sums are taken in admission order, the per-job planning's order, where the order can
change the float (fractions); where every term is a whole number and the sum is below 2**53 every order
gives the same exact sum, and the residents are not sorted for it (a sort of the residents at every read
was O(n log n) a read)."""

from __future__ import annotations

import struct

import pytest
import serq_frontend
import serq_sim.step.stage as stage_mod
from tiers import run_on_tier

# three residents admitted in the order s0, s1, s2 and served by -P, i.e. s2, s1, s0; the observer (s3)
# reads work(E) and budget_left(E) at 0.5, inside the first iteration (cost 1): nothing applied yet
PROGRAM = """
stage E : step {{ budget 100; cost 1; serve by (-P); chunk {chunk}; }}
stage d : delay;
workload {{ arrive batch(4); }}
session {{
  set P = serial;
  branch (serial < 3) {{
    run E prefill ({w0} + serial * {dw});
  }} else {{
    run d (0.5);
    observe w = work(E);
    observe b = budget_left(E);
  }}
}}
run {{ horizon 100; }}
"""


def _samples(src: str, tier: str):
    prog = serq_frontend.compile(source=src, sets={}, defs={})
    _, outcome, samples = run_on_tier(prog, tier)
    assert outcome[0] == "report", outcome
    return outcome, {k: struct.unpack(f"{len(v[0]) // 8}d", v[0]) for k, v in samples.items()}


def _count_sorts(monkeypatch) -> list[int]:
    calls = [0]
    real = stage_mod._admission

    def counted(job):
        calls[0] += 1
        return real(job)

    monkeypatch.setattr(stage_mod, "_admission", counted)
    return calls


@pytest.mark.parametrize("tier", ["", "general"])
def test_whole_terms_are_summed_without_a_sort(monkeypatch, tier):
    # prefills of 10, 30, 50 tokens, chunk 20: work 90, budget_left 100 - (10 + 20 + 20) = 50
    calls = _count_sorts(monkeypatch)
    _, s = _samples(PROGRAM.format(chunk="20", w0="10", dw="20"), tier)
    assert s["w"] == (90.0,)
    assert s["b"] == (50.0,)
    assert calls[0] == 0


@pytest.mark.parametrize("tier", ["", "general"])
def test_fractional_terms_are_summed_in_admission_order(monkeypatch, tier):
    # works 0.1, 0.4, 0.7: in admission order (0.1 + 0.4) + 0.7 = 1.2, in serving order 1.2000000000000002;
    # the admission order's is the reading
    calls = _count_sorts(monkeypatch)
    w = [0.1 + i * 0.3 for i in range(3)]
    admission = 0.0
    for x in w:
        admission += x
    serving = 0.0
    for x in reversed(w):
        serving += x
    assert admission != serving  # the case is one where the order shows
    _, s = _samples(PROGRAM.format(chunk="inf", w0="0.1", dw="0.3"), tier)
    assert s["w"] == (sum(w),)  # work() sums as Python's sum() does, in admission order
    assert s["b"] == (max(100.0 - admission, 0.0),)
    # the lazy planning keeps a ranked stage's residents in serving order and sorts them for this sum; the
    # per-job planning keeps them in admission order and never sorts
    assert (calls[0] > 0) == (tier == "")


def test_both_tiers_agree_byte_for_byte():
    for w0, dw, chunk in (("10", "20", "20"), ("0.1", "0.3", "inf"), ("9007199254740990", "3", "inf")):
        src = PROGRAM.format(chunk=chunk, w0=w0, dw=dw)
        a = _samples(src, "")[0]
        b = _samples(src, "general")[0]
        assert a == b
