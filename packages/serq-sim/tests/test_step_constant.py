"""A step stage's chunk that is ``inf`` whatever the state (lib/vllm.sq's ``long_prefill(reqs, inf)``, a
test of plain pool counts choosing between two infinities) is no chunk: it is not evaluated every
iteration, and the run is the one its twin without a chunk gives, byte for byte; a chunk whose value can
differ, or whose test might fail or act (a call, a division, an observable of a stage; a draw is refused there), is still evaluated."""

from __future__ import annotations

from pathlib import Path

import pytest
import serq_frontend
from serq_ir import nodes as N
from serq_sim.step import StepStage
from serq_sim.step.common import constant
from tiers import run_on_tier

HERE = Path(__file__).resolve().parent
STRESS = HERE / "lazy" / "vllm_stress.sq"


def program(chunk: str, tmp_path, **sets):
    path = tmp_path / "p.sq"
    src = STRESS.read_text()
    assert "  chunk long_prefill(reqs, C);\n" in src
    path.write_text(src.replace("  chunk long_prefill(reqs, C);\n", f"  chunk {chunk};\n" if chunk else ""))
    return serq_frontend.compile(str(path), sets={k: float(v) for k, v in sets.items()})


def engine(sim) -> StepStage:
    (eng,) = [s for s in sim.stages if isinstance(s, StepStage)]
    return eng


@pytest.mark.parametrize("chunk, folded", [
    ("long_prefill(reqs, inf)", True),
    ("holders(reqs) + queued(kv) > 1 ? inf : inf", True),
    ("used(kv) - free(kv) * 2 < 3 ? inf : inf", True),
    ("residents > 2 ? inf : inf", True),
    ("long_prefill(reqs, 8)", False),
    ("holders(reqs) > 1 ? inf : 1e300", False),
    ("busy(engine) > 1 ? inf : inf", False),
    ("holders(reqs) / queued(reqs) > 1 ? inf : inf", False),
    ("floor(holders(reqs)) > 1 ? inf : inf", False),
])
def test_a_chunk_inf_whatever_the_state_is_no_chunk(chunk, folded, tmp_path):
    prog = program(chunk, tmp_path, blocks=60, rate=6)
    (st,) = [s for s in prog.stages if s.kind.__class__.__name__ == "Step"]
    assert (constant(st.kind.chunk) == float("inf")) == folded
    sim, got, got_samples = run_on_tier(prog, "")
    assert (engine(sim).chunk_fn is None) == folded
    assert got[0] == "report", got
    if folded:
        _s, ref, ref_samples = run_on_tier(program("", tmp_path, blocks=60, rate=6), "")
        assert got == ref
        assert got_samples == ref_samples


def test_constant_reads_numbers_and_equal_branches():
    assert constant(N.Num(value=2.5)) == 2.5
    assert constant(N.Num(value="inf")) == float("inf")
    same = N.Cond(test=N.Observable(name="holders", target=N.PoolRef(pool=0)), then=N.Num(value=1.0),
                  orelse=N.Num(value=1.0))
    assert constant(same) == 1.0
    assert constant(N.Cond(test=N.Num(value=1.0), then=N.Num(value=0.0), orelse=N.Num(value=-0.0))) is None
    assert constant(N.Cond(test=N.Num(value=1.0), then=N.Num(value=1.0), orelse=N.Num(value=2.0))) is None
    indexed = N.Cond(test=N.Observable(name="holders", target=N.PoolRef(pool=0, index=N.Num(value=0.0))),
                     then=N.Num(value=1.0), orelse=N.Num(value=1.0))
    assert constant(indexed) is None
    assert constant(N.Ctx(name="residents")) is None
