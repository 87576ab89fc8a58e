"""Known defects, round 36, in serq-ir.

3. An IR file of 200 000 pools was refused at ``$.pools[100000].size`` only after every key of the file had
   been scanned for one given twice and the whole program walked twice (its nesting, its references): seconds
   for a refusal that the families' sizes alone decide. The count of members is judged first now
   (serq_ir.validate.too_many_members), before any walk; what is checked is that no walk runs (the work done,
   not the time), and that the refusal and an allowed program's decoding are as before.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir
from serq_ir import codec, rules, validate
from serq_ir.errors import IRError

SOURCE = """pool m { cap 4; }
stage s : delay;
workload { arrive batch(1); }
session { hold m (1) { run s (1); } }
run { horizon 10; }
"""


def _ir(pools: int, stages: int = 1, size: int = 1) -> bytes:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=SOURCE), spans=False))
    d["pools"] = [dict(d["pools"][0], name=f"m{i}") for i in range(pools)]
    # (the session runs s0, a stage of one; the others are families of ``size``)
    d["stages"] += [dict(d["stages"][0], name=f"s{i}", size=size) for i in range(1, stages)]
    return json.dumps(d).encode()


@pytest.fixture
def walks(monkeypatch):
    """The walks a refusal of too many members must not take: each call counted."""
    calls = []

    def counted(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, call)

    counted(rules, "nesting_problem")
    counted(codec, "_keys_once")
    counted(validate, "_unheld")
    return calls


@pytest.mark.parametrize("pools, stages, size, path, what", [
    (rules.MAX_MEMBERS + 1, 1, 1, f"$.pools[{rules.MAX_MEMBERS}].size", "pools"),
    (1, 3, rules.MAX_MEMBERS // 2, "$.stages[2].size", "stages"),  # a family's members count
])
def test_too_many_members_are_refused_before_any_walk(walks, pools, stages, size, path, what):
    with pytest.raises(IRError) as info:
        serq_ir.decode(_ir(pools, stages, size), name="big.ir.json")
    assert str(info.value) == (f"error: big.ir.json: more than {rules.MAX_MEMBERS} {what} (a program has at most "
                               f"{rules.MAX_MEMBERS}, counting every member of every family) - at '{path}'")
    assert walks == []


def test_as_many_as_allowed_is_walked_and_decoded(walks):
    program = serq_ir.decode(_ir(1000, 3, rules.MAX_MEMBERS // 2 - 1))
    assert len(program.pools) == 1000 and [s.size for s in program.stages] == [1, *[rules.MAX_MEMBERS // 2 - 1] * 2]
    assert sorted(set(walks)) == ["_keys_once", "_unheld", "nesting_problem"]


def test_a_program_built_in_python_is_refused_the_same_way(walks):
    program = serq_ir.decode(_ir(3), check=False)
    import msgspec

    big = msgspec.structs.replace(program, pools=[msgspec.structs.replace(program.pools[0], size=rules.MAX_MEMBERS),
                                                  *program.pools[1:]])
    with pytest.raises(IRError, match=r"more than 100000 pools .* at '\$\.pools\[1\]\.size'"):
        validate.validate(big)
    assert walks == []
