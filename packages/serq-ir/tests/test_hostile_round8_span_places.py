"""An IR file's span is ``[file, line, col]`` with line and column from 1 (serq_ir.nodes.Place).

A span of line 0 or -1, or of column 0 or -2, was taken by ``serq check`` ("OK"), and a run-time error
there said ``rt.sq:-1:3: error: …`` (or ``rt.sq:7:-2:`` with a caret at the line's start): a place no
source has. It is refused where the IR is decoded, at its path.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir

SOURCE = """pool p { cap 10; }
stage s : fifo;
workload { arrive poisson(1); }
session { set x = serial - 5; hold p (x) { run s (1); } end; }
run { horizon 10; }
"""


def _ir() -> dict:
    return json.loads(serq_ir.encode(serq_frontend.compile(source=SOURCE)))


def _first_span(obj):
    if isinstance(obj, dict):
        if "span" in obj:
            return obj
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            found = _first_span(v)
            if found is not None:
                return found
    return None


@pytest.mark.parametrize(("line", "col", "index"), [(0, 1, 1), (-1, 3, 1), (4, 0, 2), (4, -2, 2)])
def test_a_span_outside_the_source_is_refused(line, col, index):
    ir = _ir()
    node = _first_span(ir)
    node["span"] = [node["span"][0], line, col]
    with pytest.raises(serq_ir.IRError, match=rf"a whole number at least 1 is wanted - at '\$.*\.span\[{index}\]'"):
        serq_ir.decode(json.dumps(ir), name="p.ir.json")


def test_spans_the_frontend_writes_are_taken():
    assert serq_ir.decode(json.dumps(_ir()), name="p.ir.json") is not None
