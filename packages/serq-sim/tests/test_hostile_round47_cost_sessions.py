"""A step stage's cost that is negative or NaN at one iteration names the sessions of that iteration's batch.

Every run-time error names its statement, the simulated time and the session; the cost's named the stage, the
time and the batch's sums, and no session: ``at t=1: stage E: the iteration's cost is negative (-1) (its
batch: tokens 3, decoders 3, …)`` left the user to find which requests were in it. A batch of one session now
names it as every run-time error does (``at t=1, session 0: …``, with the trace row it replays), a batch of
several names them after the sums (``; sessions 0, 1, 2``), on both tiers.
"""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_error

pytestmark = pytest.mark.timeout(60)

# n sessions at 0, each holding 13 units of kv: a prefill of 10 tokens, then 3 decode tokens. Iteration 1
# (t = 0) serves the n prefills, 10 n tokens and no decoder: cost 1. Iteration 2 (t = 1) the n decoders,
# n tokens, each holding its 13 units (kv_decode 13 n): cost -1 once there are at least `least` of them.
PROGRAM = """pool kv {{ cap 1000; }}
stage E : step {{
  budget 100;
  cost decoders >= {least} ? -1 : 1;
  memory kv;
}}

workload {{
  arrive batch({n});
}}

session {{
  hold kv (13) {{
    run E prefill (10);
    run E decode (3);
  }};
  end;
}}

run {{ horizon inf; }}
"""


def _first(n: int, least: int, monkeypatch) -> str:
    return same_error(serq_frontend.compile(source=PROGRAM.format(n=n, least=least)), monkeypatch).splitlines()[0]


def test_a_batch_of_several_names_them(monkeypatch):
    assert _first(3, 2, monkeypatch) == (
        "<source>:4:8: error: at t=1: stage E: the iteration's cost is negative (-1) (its batch: tokens 3, decoders "
        "3, prefilled 0, residents 3, kv_decode 39, kv_prefill 0; sessions 0, 1, 2)")


def test_a_batch_of_one_names_it_as_every_error_does(monkeypatch):
    assert _first(1, 1, monkeypatch) == (
        "<source>:4:8: error: at t=1, session 0: stage E: the iteration's cost is negative (-1) (its batch: tokens "
        "1, decoders 1, prefilled 0, residents 1, kv_decode 13, kv_prefill 0)")


def test_a_large_batch_names_five_and_counts_them(monkeypatch):
    assert _first(7, 2, monkeypatch) == (
        "<source>:4:8: error: at t=1: stage E: the iteration's cost is negative (-1) (its batch: tokens 7, decoders "
        "7, prefilled 0, residents 7, kv_decode 91, kv_prefill 0; sessions 0, 1, 2, 3, 4, … (7 in all))")


def test_a_nan_cost_of_a_prefill_batch(monkeypatch):
    # iteration 1 already: (0 decoders) / 0 is NaN, the 3 prefills of 10 tokens each holding 13 (kv_prefill 39)
    src = PROGRAM.format(n=3, least=2).replace("decoders >= 2 ? -1 : 1", "decoders / decoders")
    assert same_error(serq_frontend.compile(source=src), monkeypatch).splitlines()[0] == (
        "<source>:4:8: error: at t=0: stage E: the iteration's cost is NaN (its batch: tokens 30, decoders 0, "
        "prefilled 30, residents 3, kv_decode 0, kv_prefill 39; sessions 0, 1, 2)")
