"""A draw is made only at the moments that draw, in an IR file as in the source.

The description says a pool's queue key, a preemption key and a step stage's serve key may not draw, and
the linker refuses a draw in those and in a ps capacity, a step stage's budget, chunk and cost, and a
gauge. An IR file was held to the moments' context variables but not to this: its draw in any of them
ran, from a stream taken in schedule order. Each case below is a program the linker accepts with a number
where the draw goes, and that number made a draw in its IR.
"""

from __future__ import annotations

import json

import pytest
import serq_frontend
import serq_ir

pytestmark = pytest.mark.timeout(60)

MARK = 0.123456789  # the number the draw replaces

PROGRAM = """pool m { cap 64; QUEUE PREEMPT block 1; EVICT SPILL }
pool o { cap 64; block 1; }
stage s : ps(PS);
stage e : step { budget BUDGET; CHUNK cost COST; SERVE memory m; }
stage l : delay;
GAUGE
workload { arrive ARRIVE; }
session { hold m (UNITS) { run e prefill (WORK); } end; }
run { horizon 10; }
"""
DEFAULTS = {"QUEUE": "", "PREEMPT": "", "EVICT": "", "SPILL": "", "PS": "present", "BUDGET": "64",
            "CHUNK": "", "COST": "0.01", "SERVE": "", "GAUGE": "", "ARRIVE": "poisson(1)", "UNITS": "1",
            "WORK": "1"}
M = f"{MARK!r}"

REFUSED = {  # where the number goes, the JSON path of the draw and its moment
    "QUEUE": (f"queue by (waited * {M});", "$.pools[0].queue.keys[0].rhs", "Queue"),
    "PREEMPT": (f"preempt by (admission * {M});", "$.pools[0].preempt.keys[0].rhs", "Victim"),
    "PS": (f"present * {M}", "$.stages[0].kind.capacity.rhs", "Ps"),
    "BUDGET": (f"residents * {M} + 64", "$.stages[1].kind.budget.lhs.rhs", "Budget"),
    "CHUNK": (f"chunk residents * {M} + 16;", "$.stages[1].kind.chunk.lhs.rhs", "Budget"),
    "COST": (f"tokens * {M}", "$.stages[1].kind.cost.rhs", "Cost"),
    "SERVE": (f"serve by (remaining * {M});", "$.stages[1].kind.serve.keys[0].rhs", "Serve"),
    "GAUGE": (f"gauge g = used(m) * {M};", "$.gauges[0].value.rhs", "Gauge"),
}
ACCEPTED = {
    "EVICT": f"evict by (age * {M});",
    "SPILL": f"spill o via l (size * {M}) when (size * {M} > 0);",
    "ARRIVE": f"renewal(1 + now * {M})",
    "UNITS": f"1 + serial * {M}",
    "WORK": f"1 + serial * {M}",
}


def _ir_with_a_draw(where: str, text: str) -> str:
    src = PROGRAM
    for k, v in {**DEFAULTS, where: text}.items():
        src = src.replace(k, v)
    ir = json.loads(serq_ir.encode(serq_frontend.compile(source=src), spans=False))
    found = []

    def swap(x):
        if isinstance(x, dict):
            if x.get("kind") == "Num" and x.get("value") == MARK:
                found.append(1)
                return {"kind": "Draw", "dist": "exp", "args": [{"kind": "Num", "value": 2.0}]}
            return {k: swap(v) for k, v in x.items()}
        if isinstance(x, list):
            return [swap(v) for v in x]
        return x

    ir = swap(ir)
    assert found  # the number is in the IR, where the draw goes
    return json.dumps(ir)


@pytest.mark.parametrize("where", sorted(REFUSED))
def test_a_draw_where_nothing_may_draw_is_refused_at_its_place(where):
    text, path, moment = REFUSED[where]
    with pytest.raises(serq_ir.IRError) as e:
        serq_ir.decode(_ir_with_a_draw(where, text), name="bad.ir.json")
    message = str(e.value)
    assert f"~exp draws at the {moment} moment, which may not draw" in message
    assert path in message


@pytest.mark.parametrize("where", sorted(ACCEPTED))
def test_a_draw_where_the_language_draws_is_taken(where):
    program = serq_ir.decode(_ir_with_a_draw(where, ACCEPTED[where]), name="good.ir.json")
    assert "Draw(" in repr(program)


def test_the_source_refuses_the_same_places():
    for where, (text, _, _) in REFUSED.items():
        src = PROGRAM
        for k, v in {**DEFAULTS, where: text.replace(M, "~exp(2)")}.items():
            src = src.replace(k, v)
        with pytest.raises(Exception, match="may not draw") as e:
            serq_frontend.compile(source=src)
        assert getattr(type(e.value), "serq_user_error", False), where
