"""Known defects, round 37, in serq-ir.

5. An IR file's declarations that cannot be paired were named with their sizes in brackets, ``stage e[1]:
   memory kv[3] cannot be paired``, which reads as members of index 1 and 3 (of a stage e and a pool kv that
   have no such member). Each is named with its size in words, ``stage E (a family of 2) names pool kv (a
   family of 3) as its memory``, by one rule (serq_ir.rules.family): a step stage's memory, a pool's ``admit
   via`` and a spill's tier and link.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir
from serq_ir.errors import IRError
from serq_ir.rules import PAIRING

# ---------------------------------------------------------------- 5. a family's size is no index

SPILL = ("pool kv[2] { cap 32; block 16; evict lru; spill one via bus (1) when (1); }\n"
         "pool one { cap 64; }\nstage bus : fifo;\n"
         "workload { arrive batch(1); }\nsession { hold kv[0] (1) { } end; }\nrun { horizon 1; }\n")
STEP = ("pool kv { cap 100; block 4; }\nstage e : step { budget 8; cost 1; memory kv; }\n"
        "workload { arrive batch(1); }\nsession { hold kv (2) { run e prefill (2); } end; }\nrun { horizon 1; }\n")


def _refusal(source: str, change) -> str:
    d = json.loads(serq_ir.encode(serq_frontend.compile(source=source), spans=False))
    change(d)
    with pytest.raises(IRError) as e:
        serq_ir.decode(json.dumps(d), name="p.ir.json")
    return str(e.value)


def test_a_step_stages_memory_of_another_size_names_both_sizes_in_words():
    said = _refusal(STEP, lambda d: d["pools"][0].update(size=3))
    assert said == ("error: p.ir.json: stage e (a family of 1) names pool kv (a family of 3) as its memory, and the "
                    f"two cannot be paired ({PAIRING}) - at '$.stages[0].kind.memory'")
    assert "[" not in said.split(" - at ")[0]


@pytest.mark.parametrize("field, which, said", [
    ("tier", "one", "spills to pool one (a family of 3)"),
    ("link", "bus", "spills over stage bus (a family of 3)"),
])
def test_a_spill_to_a_family_of_another_size_names_both_sizes_in_words(field, which, said):
    def change(d):
        table = d["pools"] if field == "tier" else d["stages"]
        next(x for x in table if x["name"] == which)["size"] = 3
    assert _refusal(SPILL, change) == (f"error: p.ir.json: pool kv (a family of 2) {said}, and the two cannot be "
                                       f"paired ({PAIRING}); name one member by index - at "
                                       f"'$.pools[0].spill.{field}'")
