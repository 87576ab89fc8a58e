"""An audit of serq sweep and serq compare against hand-computable cases: an M/M/1 queue swept over its
arrival rate against 1/(mu - lambda), arms that differ by a known amount or not at all under common random
numbers, the same table from every engine and every rerun, and the text they print."""

from __future__ import annotations

import sys
from pathlib import Path

from serq_sweep.pairing import render

SERQ = str(Path(sys.executable).parent / "serq")


def test_compare_lines_up_a_figure_named_in_wide_characters():
    # an IR file's observe named 延迟 (two wide characters: four columns on a terminal); each cell padded
    # to the columns it takes (written out by hand)
    row = {"a": 1.0, "b": 2.0, "diff": 1.0, "ci_paired": 0.5, "ci_unpaired": 0.75, "variance_reduction": 0.5}
    rows = [{"arm": "2", "base": "1", "figure": "observes.延迟.mean", **row},
            {"arm": "2", "base": "1", "figure": "events", **row}]
    assert render(rows, 0, 3).split("\n") == [
        "2 - 1, paired over 3 seeds (95 % CIs):",
        "  figure" + " " * 14 + "A  B  B - A  paired ±  unpaired ±  var. reduction",
        "  observes.延迟.mean  1  2      1       0.5        0.75          50.0 %",
        "  events" + " " * 14 + "1  2      1       0.5        0.75          50.0 %",
        "",
    ]
