"""Helpers of the peer-program tests (test_peer_programs*.py): a program run on both tiers, its JSON report and
records compared, and a CI checked against a closed form."""

from __future__ import annotations

import json

import numpy as np
import serq_sim
from serq_report.json import encode_json


def run_both(prog, monkeypatch, **kw):
    """(JSON report, records as numpy columns or None) of the compiled program ``prog`` on the default tier and
    the general engine, which must give the same bytes and the same records (``kw``: serq_sim.run's). A
    program of several record tables gets {table: its columns}."""
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        r = serq_sim.run(prog, **kw)
        recs = None
        if len(r.record_names) > 1:
            recs = {n: {k: np.asarray(v) for k, v in r.records(n, kind="numpy").items()} for n in r.record_names}
        elif r.result.records:
            recs = {k: np.asarray(v) for k, v in r.records(kind="numpy").items()}
        out.append((encode_json(r), recs))
    assert out[0][0] == out[1][0]
    if out[0][1] is not None:
        flat = [(out[0][1], out[1][1])] if len(out[0][1]) and not isinstance(next(iter(out[0][1].values())), dict) \
            else [(out[0][1][n], out[1][1][n]) for n in out[0][1]]
        assert out[0][1].keys() == out[1][1].keys()
        for a, b in flat:
            assert a.keys() == b.keys()
            for k in a:
                assert np.array_equal(a[k], b[k]), k
    return json.loads(out[1][0]), out[1][1]


def covers(figure: dict, truth: float, width: float) -> None:
    """The CI of ``figure`` covers ``truth`` and its half-width is at most ``width`` of it."""
    assert abs(figure["mean"] - truth) <= figure["ci"], (figure["mean"], figure["ci"], truth)
    assert figure["ci"] <= width * truth, (figure["ci"], truth)


def stage(doc: dict, name: str) -> dict:
    """The one stage ``name`` of the JSON report ``doc``."""
    (s,) = [s for s in doc["stages"] if s["name"] == name]
    return s


def pool(doc: dict, name: str) -> dict:
    """The one pool ``name`` of the JSON report ``doc``."""
    (p,) = [p for p in doc["pools"] if p["name"] == name]
    return p
