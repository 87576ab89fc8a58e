"""Report labels: a pool or stage declared without a size reports no index (`kv`); a member of an array
keeps its index (`kv[0]`) even when the array has one member, so a sweep over a family size keeps its
labels at 1."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_sim
from serq_report.text import render_text

SRC = """let N = 2;
pool kv { cap 100; }
pool slot[N] { cap 4; }
stage e[N] : fifo;
stage single : delay;
workload { arrive poisson(1); }
session {
  choose j in N by (queue(e[j]));
  hold kv (1), slot[j] (1) { run e[j] (0.1); run single (0.1); }
  end;
}
run { horizon 20; }
"""


def _rows(text: str, kind: str) -> list[str]:
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(kind + " "))
    out = []
    for line in lines[i + 1:]:
        if not line.strip():
            break
        out.append(line.split()[0])
    return out


@pytest.mark.parametrize("tier", ["general", ""])
@pytest.mark.parametrize("n, members", [(1, ["[0]"]), (2, ["[0]", "[1]"])])
def test_single_and_array_labels(n, members, tier, monkeypatch):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    program = serq_frontend.compile(source=SRC, sets={"N": n})
    report = serq_sim.run(program, seed=1)
    r = report.result
    assert [(p.name, p.index) for p in r.pools] == [("kv", None)] + [("slot", i) for i in range(n)]
    assert [(s.name, s.index) for s in r.stages] == [("e", i) for i in range(n)] + [("single", None)]
    text = render_text(report)
    assert _rows(text, "pool") == ["kv"] + [f"slot{m}" for m in members]
    assert _rows(text, "stage") == [f"e{m}" for m in members] + ["single"]
    # the accessors take a single pool without an index, an array's member by its index
    assert report.pool("kv") is r.pools[0] and report.pool("slot", 0) is r.pools[1]
    assert report.stage("single").name == "single"
