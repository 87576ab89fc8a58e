"""An IR file whose pool names itself as its spill tier is refused at the tier, as the linker refuses
``spill kv`` in ``pool kv`` (serq_ir.rules.spills_to_itself): a pool evicts only while it makes room, and a
spill into a pool making room writes nothing, so such a spill never writes (it was accepted, spills 0)."""

from __future__ import annotations

import json

import pytest
import serq_ir
from serq_ir import IRError
from serq_ir import nodes as n

pytestmark = pytest.mark.timeout(60)

SAID = ("spills to itself: it evicts only while it makes room, and a spill into a pool making room writes nothing, "
        "so this spill never writes; spill to another pool (a tier)")


def program_json(size: int, tier: int, index: float | None) -> dict:
    attrs = [n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES]
    ref = n.PoolRef(pool=tier, index=None if index is None else n.Num(value=index))
    spill = n.Spill(tier=ref, link=n.StageRef(stage=0), work=n.Num(value=1.0), when=n.Num(value=1.0))
    pools = [n.Pool(name="kv", size=size, array=size > 1, cap=4.0, spill=spill), n.Pool(name="cpu", size=size,
                                                                                       array=size > 1, cap=8.0)]
    hold = n.HoldPool(pool=n.PoolRef(pool=0, index=None if size == 1 else n.Num(value=0.0)), units=n.Num(value=1.0))
    program = n.Program(version=n.IR_VERSION, attributes=attrs, pools=pools,
                        stages=[n.Stage(name="l", kind=n.Fifo())],
                        workload=n.Workload(arrive=n.Poisson(rate=1.0)),
                        session=[n.Hold(pools=[hold], body=[n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=1.0))])],
                        run=n.RunSettings(horizon=10.0))
    return json.loads(serq_ir.encode(program, spans=False))


def load(tmp_path, doc: dict):
    path = tmp_path / "p.ir.json"
    path.write_text(json.dumps(doc))
    return serq_ir.load(path)


@pytest.mark.parametrize("size, index", [(1, None), (1, 0.0), (2, None)])
def test_a_pool_spilling_to_itself_is_refused_at_its_tier(tmp_path, size, index):
    with pytest.raises(IRError) as info:
        load(tmp_path, program_json(size, 0, index))
    first = str(info.value).splitlines()[0]
    assert first.endswith(f"pool 'kv' {SAID} - at '$.pools[0].spill.tier'"), first


@pytest.mark.parametrize("size, tier, index", [(1, 1, None), (2, 1, None), (2, 0, 1.0)])
def test_a_spill_to_another_pool_or_member_is_valid(tmp_path, size, tier, index):
    program = load(tmp_path, program_json(size, tier, index))
    assert program.pools[0].spill.tier.pool == tier
