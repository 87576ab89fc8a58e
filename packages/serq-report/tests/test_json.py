from __future__ import annotations

import json

import msgspec
from serq_ir.report import Result
from serq_report import encode_json, render

KEYS = [
    "report_version",
    "serq_version",
    "program",
    "horizon",
    "end",
    "warmup",
    "seed",
    "events",
    "arrivals",
    "ended",
    "turns",
    "mean_live",
    "interrupted",
    "partial",
    "observes",
    "instants",
    "records",
    "requests",
    "stages",
    "pools",
    "gauges",
    "notes",
    "codes",
]


def test_keys_in_struct_order(report):
    doc = json.loads(render(report, "json"))
    assert list(doc) == KEYS == list(Result.__struct_fields__)


def test_non_finite_numbers_are_null(report):
    doc = json.loads(render(report, "json"))
    assert doc["observes"]["empty"] == {"count": 0, "mean": None, "ci": None, "cv2": None, "p50": None, "p90": None, "p95": None,
                                       "p99": None}
    assert doc["gauges"]["spread"] == {"mean": None, "ci": None, "min": None, "max": None}
    assert doc["stages"][0]["iterations"] is None


def test_shape(report):
    data = encode_json(report)
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")
    assert data.splitlines()[1] == b'  "report_version": 7,'
    # Pretty-printing changes only whitespace.
    assert json.loads(data) == json.loads(msgspec.json.encode(report.result))


def test_byte_deterministic(report, fake_report):
    copy = msgspec.structs.replace(report.result)
    assert encode_json(report) == encode_json(fake_report(copy)) == encode_json(report.result)
