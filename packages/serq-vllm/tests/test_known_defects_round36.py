"""Known defects, round 36, in serq-vllm.

2. The IR's ``builtin`` flag of an attribute was not checked against its name, and ``serq vllm target`` decided
   from it which slots could be a send time: an IR file that marked a program's own ``t0`` (``set t0 = now``,
   ``queue by (t0)``) ``builtin`` was refused as a waiting order that is not the order the requests were sent
   in. The flag is read nowhere now, the names decide (serq_ir.analysis.builtin_slots, docs/CONTRIBUTING-parts.md);
   since 40b7f949 an IR file whose flag lies is refused at its JSON path (serq_ir.validate), so no target is made
   from it at all.
"""

from __future__ import annotations

import msgspec
import pytest
import serq_frontend
import serq_ir
from serq_ir.analysis import builtin_slots
from serq_vllm.target import target

ENGINE = """use "vllm.sq";
pool reqs { cap 8; admit via engine; queue by (t0); }
pool kv { cap 100 * 16; block 16; evict lru; preempt lifo; }
stage engine : step {
  budget 64;
  cost 1;
  chunk long_prefill(reqs, 32);
  memory kv;
};
workload { arrive poisson(1); hidden o; turn { set o = 3; } }
session { turn; set t0 = now; vllm_request_at(reqs, kv, engine, 10, o, t0, inf, 32); }
"""


def _flagged(program, names: set[str], flag: bool):
    attrs = [msgspec.structs.replace(a, builtin=flag) if a.name in names else a for a in program.attributes]
    assert attrs != program.attributes
    return msgspec.structs.replace(program, attributes=attrs)


def test_a_send_time_marked_builtin_is_still_a_send_time(tmp_path):
    program = serq_frontend.compile(source=ENGINE)
    want = target(program)
    assert want["config"]["max_num_seqs"] == 8 and "scheduler_cls" not in want["config"]  # (t0: vLLM's own order)
    # the flag given in an IR file on a program's own attribute: refused where it stands, naming the attribute
    slot = [a.name for a in program.attributes].index("t0")
    with pytest.raises(serq_ir.IRError) as err:
        serq_ir.decode(serq_ir.encode(_flagged(program, {"t0"}, True)))
    assert f"$.attributes[{slot}].builtin" in str(err.value) and "'t0' is marked builtin" in str(err.value)
    # and believed nowhere where a lying program is made in memory: the target is the program's own
    assert target(_flagged(program, {"t0"}, True)) == want


def test_the_built_in_slots_are_decided_by_the_names():
    program = serq_frontend.compile(source=ENGINE)
    slots = {a.name: i for i, a in enumerate(program.attributes)}
    truth = frozenset(slots[n] for n in ("serial", "turn_no", "cached", "computed"))
    assert builtin_slots(program) == truth
    assert builtin_slots(_flagged(program, {"t0", "o"}, True)) == truth
    assert builtin_slots(_flagged(program, {"serial", "cached"}, False)) == truth
