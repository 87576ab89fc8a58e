"""The simulator generates Python from the IR. Every name it writes into that source is one of the IR's
own (checked again for a Program built in Python, which skips decode's checks); every other string of the
IR (observe, pool, stage and extension names, file names, modes) is passed as a value, never as source."""

from __future__ import annotations

import pytest
import serq_ir
import serq_sim
from irb import P
from serq_ir import nodes as N


def planted(marker) -> str:
    return f"now if __import__('os').mkdir({str(marker)!r}) else now"


@pytest.mark.parametrize("tier", ["general", ""])
@pytest.mark.parametrize("where", ["ctx", "unary", "binary"])
def test_a_name_outside_the_ir_is_refused_not_run(tmp_path, monkeypatch, tier, where):
    monkeypatch.setenv("SERQ_SIM_TIER", tier)
    marker = tmp_path / "ran"
    p = P()
    s = p.stage("s", N.Fifo())
    bad = {"ctx": N.Ctx(name=planted(marker)),
           "unary": N.Unary(op=f"- 0 if __import__('os').mkdir({str(marker)!r}) else -", arg=N.Num(value=1.0)),
           "binary": N.Binary(op=f"+ (__import__('os').mkdir({str(marker)!r}) or 0) +", lhs=N.Num(value=1.0),
                              rhs=N.Num(value=1.0))}[where]
    prog = p.build([p.set_("t0", bad), N.Run(stages=[s], work=N.Num(value=1.0))], arrive=N.Batch(n=1),
                   horizon=10.0)
    with pytest.raises(serq_ir.IRError, match=r"is not one of the IR's"):
        serq_sim.run(prog)
    assert not marker.exists()


def test_strings_of_the_ir_reach_the_report_as_values(tmp_path, monkeypatch):
    # names that would be code if they were pasted into the generated source
    weird = "x'); __import__('os').mkdir('" + str(tmp_path / "ran") + "'); ('"
    p = P()
    s = p.stage(weird, N.Fifo())
    o = p.obs(weird + "o")
    prog = p.build([N.Run(stages=[s], work=N.Num(value=1.0)), N.Observe(observe=o, value=N.Ctx(name="now"))],
                   arrive=N.Batch(n=2), horizon=10.0)
    for tier in ("general", ""):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        report = serq_sim.run(serq_ir.decode(serq_ir.encode(prog)))
        assert report.result.observes[weird + "o"].count == 2
    assert not (tmp_path / "ran").exists()
