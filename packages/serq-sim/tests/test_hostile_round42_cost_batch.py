"""A step stage's iteration cost that comes out NaN or negative is a run-time error that says which batch the
cost was computed for: the sums the cost expression reads (tokens, decoders, prefilled, residents,
kv_decode, kv_prefill). It said only `the iteration's cost is NaN`, leaving the user to guess the batch.

On the default tier the decode-only iteration below is a lazy one (its decoders are counted, not planned):
their KV is summed for the message as the general engine sums it, so both tiers say the same words."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_error

PROGRAM = """\
pool kv {{ cap 1000; }}
stage E : step {{ budget 64; cost {cost}; memory kv; }}
workload {{ arrive batch(2); }}
session {{ hold kv ({units}) {{ run E prefill (60); run E decode (5); }} end; }}
run {{ horizon 10; seed 1; }}
"""


@pytest.mark.parametrize(("cost", "units", "message"), [
    # iteration 1: 64 of the two prefills' 120 tokens, cost sqrt(14); 2: the first's decode and the second's
    # last 56, sqrt(7); 3: the two decoders alone, 2 tokens, sqrt(-48): NaN at sqrt(14) + sqrt(7) = 6.38741,
    # each decoder holding its session's 10 units (kv_decode 20)
    ("sqrt(tokens - 50)", 10,
     "at t=6.38741: stage E: the iteration's cost is NaN (its batch: tokens 2, decoders 2, prefilled 0, "
     "residents 2, kv_decode 20, kv_prefill 0; sessions 0, 1)"),
    # iteration 1 costs 1 (no decoder), iteration 2 has one decoder (holding 7) and one prefill of 56 (holding 7)
    ("1 - 2 * decoders", 7,
     "at t=1: stage E: the iteration's cost is negative (-1) (its batch: tokens 57, decoders 1, prefilled 56, "
     "residents 2, kv_decode 7, kv_prefill 7; sessions 0, 1)"),
    # the same iteration, read through the KV sums: 1 - (7 + 7) / 7
    ("1 - (kv_decode + kv_prefill) / 7", 7,
     "at t=0: stage E: the iteration's cost is negative (-1) (its batch: tokens 64, decoders 0, prefilled 64, "
     "residents 2, kv_decode 0, kv_prefill 14; sessions 0, 1)"),
])
def test_the_cost_error_names_its_batch(monkeypatch, cost, units, message):
    prog = serq_frontend.compile(source=PROGRAM.format(cost=cost, units=units))
    first = same_error(prog, monkeypatch).splitlines()[0]
    assert first.split(": error: ", 1)[1] == message
