"""`Pool.caps`, each member's capacity where a family's members' caps differ (docs/language.md, "A family's
members' caps"): optional, so an IR file written before it reads as it did (version 2 still), and checked
as `cap` is, each at its JSON path: one a member, none negative or NaN, and not beside a `cap` of its own."""

from __future__ import annotations

import json

import msgspec
import pytest
import serq_ir
from ir_programs import mm1
from serq_ir import IRError
from serq_ir import nodes as n

pytestmark = pytest.mark.timeout(60)

def base() -> dict:
    """mm1 with a family of 2 pools, cap 4, whose member 1 each session holds around its run."""
    p = mm1()
    hold = n.Hold(pools=[n.HoldPool(pool=n.PoolRef(pool=0, index=n.Num(value=1.0)), units=n.Num(value=1.0))],
                  body=[p.session[1]])
    p = msgspec.structs.replace(p, pools=[n.Pool(name="kv", size=2, array=True, cap=4.0)],
                                session=[p.session[0], hold, p.session[2]])
    return json.loads(serq_ir.encode(p))


def with_pool(**fields) -> bytes:
    data = base()
    pool = {k: v for k, v in {**data["pools"][0], **fields}.items() if v is not None}
    return json.dumps({**data, "pools": [pool]}).encode()


def test_a_file_without_caps_reads_as_before_and_encodes_the_same():
    p = serq_ir.decode(with_pool())
    assert p.pools[0].caps is None and p.pools[0].cap == 4.0
    assert serq_ir.IR_VERSION == 2
    assert "caps" not in json.loads(serq_ir.encode(p))["pools"][0]


def test_a_file_with_caps_reads_each_members():
    p = serq_ir.decode(with_pool(cap=None, caps=[8, "inf"]))
    assert p.pools[0].caps == [8.0, "inf"] and p.pools[0].cap == "inf"
    assert serq_ir.decode(serq_ir.encode(p)) == p


@pytest.mark.parametrize("fields, path, words", [
    ({"caps": [8.0, 2.0]}, "$.pools[0].caps", "not both"),
    ({"cap": None, "caps": [8.0]}, "$.pools[0].caps", "a family of 2 has 2 caps, one a member, not 1"),
    ({"cap": None, "caps": [8.0, 2.0, 1.0]}, "$.pools[0].caps", "not 3"),
    ({"cap": None, "caps": [8.0, -1.0]}, "$.pools[0].caps[1]", "a capacity is negative (-1.0); it is a number at least 0, or \"inf\""),
    ({"cap": None, "caps": ["-inf", 1.0]}, "$.pools[0].caps[0]", "a capacity is negative (-inf); it is a number at least 0, or \"inf\""),
])
def test_caps_that_cannot_be_are_told_at_their_path(fields, path, words):
    with pytest.raises(IRError) as e:
        serq_ir.decode(with_pool(**fields))
    text = str(e.value)
    assert words in text and path in text, text
