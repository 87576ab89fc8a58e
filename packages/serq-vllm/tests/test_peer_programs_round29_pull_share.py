"""examples/pd-disaggregation/pull_share.sq's header, checked by hand on both simulator tiers: three reads of 9
tokens of KV through one prefiller's NIC (10 tokens/s) and two decoders' (5 each), two of them on D[0].

Under ``share maxmin`` A's and B's reads run at 2.5 tokens/s (D[0]'s NIC shared by two) and C's at 5 (D[1]'s
NIC, which P's NIC still has room for: 10 - 2 x 2.5); under ``share bottleneck`` each read takes its equal share
at its tightest NIC, min(10/3, 5/2) = 2.5 for A and B and min(10/3, 5/1) = 10/3 for C. Every read starts at
t + 1.5 (prefill [t, t + 1], the decoder's admission at t + 1, the latency 0.5), and a decoder serves a read's
first token in the iteration after it lands, then one token a second:

    A, B   read 9 / 2.5 = 3.6 s: lands t + 5.1, first token t + 6.1, done t + 8.1 (both shares)
    C      maxmin 9 / 5 = 1.8 s: lands t + 3.3, first token t + 4.3, done t + 6.3
           bottleneck 9 / (10/3) = 2.7 s: lands t + 4.2, first token t + 5.2, done t + 7.2
"""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
import serq_sim

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "pd-disaggregation" / "pull_share.sq"


def _run(monkeypatch, tier, share):
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    source = EXAMPLE.read_text()
    pull = "D pull P latency x0 share maxmin;"
    assert source.count(pull) == 1
    report = serq_sim.run(serq_frontend.compile(source=source.replace(pull, f"D pull P latency x0 share {share};")))
    return report


@pytest.mark.parametrize("tier", ["default", "general"])
@pytest.mark.parametrize("share, c_first, c_done", [("maxmin", 4.3, 6.3), ("bottleneck", 5.2, 7.2)])
def test_every_request_of_every_group_is_the_hand_trace(monkeypatch, tier, share, c_first, c_done):
    report = _run(monkeypatch, tier, share)
    df = report.records()
    assert len(df) == 60 and not report.warnings
    for row in df.itertuples(index=False):
        group, third = divmod(row.session, 3)
        t = 10.0 * group
        first, done = (c_first, c_done) if third == 2 else (6.1, 8.1)
        assert (row.sent, row.engine) == (t, 1 if third == 2 else 0), row
        assert row.first_token == pytest.approx(t + first, abs=1e-9), row
        assert row.last_token == pytest.approx(t + done, abs=1e-9), row
    # the header's means: (6.1 + 6.1 + C's TTFT) / 3, E2E two seconds more
    m = report.result.requests
    assert m.ttft.mean == pytest.approx((12.2 + c_first) / 3, rel=1e-12)
    assert m.e2el.mean == pytest.approx((16.2 + c_done) / 3, rel=1e-12)
    assert report.result.observes["ttft"].mean == pytest.approx((12.2 + c_first) / 3, rel=1e-12)
