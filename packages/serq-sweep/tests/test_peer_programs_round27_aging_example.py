"""examples/single-turn/aging.sq's comment, as its `serq compare` gives it: over seeds 1..5 strict priority
(`--def qkey=prio`) gives the last class a p99 wait of 73 s against aging's 28, the first class 6.3 s against
26, and the same mean wait over all requests within its paired CI (6.84 against 6.79 s, +0.06 ± 0.12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from serq_sweep import compare

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "single-turn" / "aging.sq")


def test_the_examples_comparison_is_as_its_comment_says():
    table = compare(EXAMPLE, defs={"qkey": ["prio - waited / A", "prio"]}, seeds="1..5",
                    figures=["wait_2.p99", "wait_0.p99", "wait.mean"], workers=0, progress=False)
    rows = {r["figure"]: r for r in (table.to_dict("records") if hasattr(table, "to_dict") else table)}
    last, first, mean = rows["observes.wait_2.p99"], rows["observes.wait_0.p99"], rows["observes.wait.mean"]
    assert (round(last["b"]), round(last["a"])) == (73, 28)
    assert (round(first["b"], 1), round(first["a"])) == (6.3, 26)
    assert (round(mean["b"], 2), round(mean["a"], 2)) == (6.84, 6.79)
    assert mean["diff"] == pytest.approx(0.06, abs=0.005) and mean["ci_paired"] == pytest.approx(0.12, abs=0.005)
    assert abs(mean["diff"]) < mean["ci_paired"]
