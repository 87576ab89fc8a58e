"""Known defects, round 26 (serq-sim)."""

from __future__ import annotations

import pytest
import serq_frontend
from tiers import same_json

pytestmark = pytest.mark.timeout(120)

# 6. a step stage busy after the warm-up with one iteration no figure counts is said (unfinished-iteration):
# one request of 100 tokens on an engine whose cost reads kv_prefill, the units held on kv (one block)
ENGINE = """pool kv { cap 1e20; block BLOCK; }
stage E : step { budget 64; cost 1 + 0.0000001 * kv_prefill; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (100) { prefill on E (100) growing kv; }
}
run { horizon 100; warmup WARMUP; seed 1; }
"""


def _engine(block: str, warmup: str) -> dict:
    return serq_frontend.compile(source=ENGINE.replace("BLOCK", block).replace("WARMUP", warmup))


def test_an_iteration_past_the_run_planned_before_the_warmup_is_said(monkeypatch):
    # one block of 1e16 units: kv_prefill 1e16, an iteration of 1 + 1e9, planned at t = 0, ending at 1e9 + 1
    r = same_json(_engine("1e16", "10"), monkeypatch)
    engine = r["stages"][0]
    assert (engine["iterations"], engine["utilisation"]) == (0, 1.0)
    said = [(n, c) for n, c in zip(r["notes"], r["codes"]) if c == "unfinished-iteration"]
    assert said == [("warning: step stage E was busy after the warm-up with one iteration that no figure counts: "
                     "planned at t=0, before the warm-up's end (t=10), and still under way at the end of the run "
                     "(t=100); its cost ends it at t=1e+09; the cost reads kv_decode or kv_prefill, the units the "
                     "residents hold on kv (a block is 1e+16 units), not tokens; its iterations (0) and engine "
                     "figures describe no iteration of the run", "unfinished-iteration")]


@pytest.mark.parametrize("block, warmup, iterations", [
    ("1e16", "0", 1),  # planned after the warm-up (at it): counted, nothing to say
    ("16", "10", 0),  # blocks of 16: seven blocks, iterations of 1 s, done at t = 2, before the warm-up's end
])
def test_no_warning_otherwise(monkeypatch, block, warmup, iterations):
    r = same_json(_engine(block, warmup), monkeypatch)
    assert r["stages"][0]["iterations"] == iterations
    assert "unfinished-iteration" not in r["codes"]
