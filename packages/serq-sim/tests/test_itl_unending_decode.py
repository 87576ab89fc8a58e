"""A decoder of ``decode (inf)`` given part of a token (a fractional budget's last fraction) is no output
token of its request, by the rule of docs/language.md: its tokens left, rounded up, stay the same (inf).
StepStage._end rounded them up with math.ceil, which refuses an infinity: the run was an OverflowError
traceback on both tiers at the end of the first such iteration."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim

pytestmark = pytest.mark.timeout(60)

# Three requests of prompt 1 and decode (inf), budget 2.5 an iteration of cost 1 (times are iteration
# numbers), served in admission order A, B, C:
#   t=0  A prefills 1, B prefills 1, C prefills 0.5      end 1: A's and B's first tokens
#   t=1  A decodes 1, B decodes 1, C prefills 0.5        end 2: A, B a token; C's first token
#   t=k  A 1, B 1, C 0.5 (inf tokens left stay inf)      end k+1: A, B a token; none of C's   (k = 2, 3, 4)
# Until the horizon 5.5: A's and B's tokens at 1, 2, 3, 4, 5 (four gaps of 1 each), C's at 2 alone.
UNENDING = """
pool reqs { cap 8; admit via engine; }
stage engine : step { budget 2.5; cost 1; }
workload { arrive batch(3); }
session {
  set t0 = now;
  hold reqs (1) {
    prefill on engine (1);
    set tf = now;
    decode on engine (inf);
  }
  record request { sent = t0; first_token = tf; last_token = now; output = 1; }
}
run { horizon 5.5; warmup 0; }
"""


@pytest.mark.parametrize("tier", ["fast", "general"])
def test_part_of_a_token_of_an_unending_decode_is_no_output_token(tier, monkeypatch):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    report = serq_sim.run(serq_frontend.compile(source=UNENDING))
    assert report.result.end == 5.5 and not report.result.interrupted
    itl = report.result.requests.itl
    assert (itl.count, itl.mean, itl.median, itl.p99) == (8, 1.0, 1.0, 1.0)
