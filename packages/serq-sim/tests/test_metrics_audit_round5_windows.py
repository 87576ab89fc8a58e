"""The measured window of the request metrics of a run stopped before its warm-up's end.

A run stopped by a bound (``--max-events``, ``--max-wall``; Ctrl-C alike) at ``end`` keeps the figures of what it
simulated (docs/simulator.md): the window the rates are over is ``[warmup, end]``. Stopped before the warm-up's
end it measured nothing: the window is empty, its length 0, and every rate over it NaN (null in JSON), as every
other time average of such a run is. The requests' ``duration`` was ``end - warmup`` as it came, negative: ``serq
run --warmup 50 --max-events 1000`` of examples/multi-turn/vllm.sq printed ``completed 0 over -35.5163 s``, and a
sweep's table held ``requests.duration`` -35.5.
"""

from __future__ import annotations

import math

import pytest
import serq_frontend
from tiers import same_json

# by hand: one session a second (batch arrivals of 1 at 0, 1, 2, ...), each waits 0.5 s and records one
# request (sent at its arrival, first and last token 0.5 s later, one token)
PROGRAM = """
stage wait : delay;
workload { arrive renewal(1); }
session {
  set t0 = now;
  run wait (0.5);
  record request { sent = t0; first_token = now; last_token = now; output = 1; prompt = 3; }
}
run { horizon 100; warmup 50; }
"""


def test_a_run_stopped_before_its_warm_up_s_end_measured_an_empty_window(monkeypatch):
    prog = serq_frontend.compile(source=PROGRAM, sets={}, defs={})
    r = same_json(prog, monkeypatch, max_events=40)
    assert r["partial"] == "max-events" and r["end"] < r["warmup"] == 50.0
    req = r["requests"]
    assert (req["completed"], req["duration"]) == (0, 0.0)  # it was end - warmup, below 0
    assert req["request_throughput"] is None and req["output_throughput"] is None
    assert req["total_token_throughput"] is None and req["ttft"]["count"] == 0
    assert r["mean_live"] is None  # the other averages over the window: NaN of no window, as before


def test_a_run_stopped_after_its_warm_up_s_end_keeps_end_minus_warmup(monkeypatch):
    # stopped at end > 50: the window is [50, end]; the sessions sent at 50, 51, ... recorded by end count
    prog = serq_frontend.compile(source=PROGRAM, sets={}, defs={})
    r = same_json(prog, monkeypatch, max_events=150)
    end = r["end"]
    assert r["partial"] == "max-events" and 60 < end < 100
    req = r["requests"]
    assert req["duration"] == end - 50.0
    # requests sent at 50, 51, ... and recorded 0.5 s later, by end
    done = sum(1 for k in range(50, 100) if k + 0.5 <= end)
    assert req["completed"] == done and req["request_throughput"] == done / (end - 50.0)
    assert req["total_token_throughput"] == 4 * done / (end - 50.0)


# by hand: one session a second from t = 0 holds one unit of p for 2.5 s, so from 2.5 on the sessions sent at
# k, k - 1 and k - 2 hold it in [k, k + 0.5) (3 units) and k and k - 1 in [k + 0.5, k + 1) (2 units)
GAUGED = """
stage wait : delay;
pool p { cap 5; }
workload { arrive renewal(1); }
session {
  hold p (1) { run wait (2.5); }
}
gauge inuse = used(p);
run { horizon 100; warmup 50; }
"""


def test_a_gauge_and_a_pool_s_used_are_time_averages_over_the_window(monkeypatch):
    # over [50, 100]: mean 2.5; min 2 and max 3 (each held a positive time); the CI over 20 windows of 2.5 s:
    # [50, 52.5] holds 3 over 1.5 s and 2 over 1 s (2.6), [52.5, 55] 3 over 1 s and 2 over 1.5 s (2.4), and so
    # on alternately: 20 means of 2.5 +- 0.1, sample variance 20 * 0.01 / 19, half-width 2.093 * 0.1 / sqrt(19)
    prog = serq_frontend.compile(source=GAUGED, sets={}, defs={})
    r = same_json(prog, monkeypatch)
    g = r["gauges"]["inuse"]
    assert (g["mean"], g["min"], g["max"]) == (2.5, 2.0, 3.0)
    assert g["ci"] == pytest.approx(2.093 * 0.1 / math.sqrt(19), rel=1e-12)
    assert r["pools"][0]["used"] == 2.5 and r["pools"][0]["holders"] == 2.5
    # stopped at 20.5, before the warm-up's end: no window, no average (NaN, null)
    r = same_json(prog, monkeypatch, max_events=40)
    assert r["end"] < 50 and r["gauges"]["inuse"] == {"mean": None, "ci": None, "min": None, "max": None}
    assert r["pools"][0]["used"] is None
